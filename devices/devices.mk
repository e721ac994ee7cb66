# devices: virtio transport, rings, per-queue workers, and each device in its own folder.
# Their tests are registered in tests/ (tests/unit/unit.mk, tests/fuzz/fuzz.mk).
VIRTIO_SRCS := devices/virtio/virtq.c devices/virtio/chain.c devices/virtio/uring.c \
	devices/virtio/worker.c devices/virtio/worker_life.c devices/virtio/pace.c \
	devices/virtio/core.c devices/virtio/mmio.c devices/virtio/xfer.c devices/virtio/virtq_state.c
BLK_SRCS := devices/blk/blk_spec.c devices/blk/blk_req.c devices/blk/blk.c
# The table of device kinds (kind.h); each kind's entry is in its folder (NAME_kind.c), with the
# guest kernel modules its devices need (KIND_GUEST_MODULES: guest/guest.mk puts them in the
# initramfs, in this order).
LIB_SRCS += $(VIRTIO_SRCS) $(BLK_SRCS) devices/kinds.c devices/blk/blk_kind.c
KIND_GUEST_MODULES := virtio_blk
# Its part in the CLI only (vmm/cli_kind.h: --disk, "disks"), never in the library.
CLI_KIND_SRCS += devices/blk/blk_cli.c

include devices/fs/fs.mk
include devices/vhost_user/vhost_user.mk
include devices/console/console.mk

# The kinds' CLI parts join the CLI (vmm/vmm.mk) once every folder has added its own.
CLI_SRCS += $(CLI_KIND_SRCS)
