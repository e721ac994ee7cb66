# devices/blk: virtio-blk disks. Included by devices/devices.mk (devices/kinds.h lists the kind).
BLK_SRCS := devices/blk/blk_spec.c devices/blk/blk_req.c devices/blk/blk.c
LIB_SRCS += $(BLK_SRCS) devices/blk/blk_kind.c
KIND_GUEST_MODULES += virtio_blk
# Its part in the CLI only (vmm/cli_kind.h: --disk, "disks", serve blk's options), never in the library.
CLI_KIND_SRCS += devices/blk/blk_cli.c
