# devices/fs: virtio-fs, an in-process FUSE passthrough server. Included by devices/devices.mk.

# The FUSE server, independent of virtio (decoder, tables, operations).
FS_CORE_SRCS := devices/fs/fuse_decode.c devices/fs/inode.c devices/fs/handle.c devices/fs/fs_budget.c devices/fs/fs_close.c \
	devices/fs/passthrough.c devices/fs/fs_common.c devices/fs/fs_attr.c devices/fs/fs_creds.c devices/fs/fs_entry.c devices/fs/fs_file.c \
	devices/fs/fs_dir.c devices/fs/fs_xattr.c devices/virtio/xfer.c
# The device and its config.
FS_DEV_SRCS := devices/fs/fs_config.c devices/fs/virtio_fs.c

LIB_SRCS += $(FS_CORE_SRCS) $(FS_DEV_SRCS) devices/fs/fs_kind.c
# virtiofs speaks FUSE; overlay puts a tmpfs over a read-only ringvm.root= share.
KIND_GUEST_MODULES += virtiofs fuse overlay
# Its part in the CLI only (vmm/cli_kind.h: --share, --root, --fs-limits and their JSON keys).
# `ringvm serve fs`'s options (virtiofsd's spellings) too.
CLI_KIND_SRCS += devices/fs/fs_cli.c devices/fs/fs_serve_cli.c
