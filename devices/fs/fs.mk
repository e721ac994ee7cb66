# devices/fs: virtio-fs, an in-process FUSE passthrough server. Included by devices/devices.mk
# after VIRTIO_SRCS and VIRTIO_FAKES are defined.

# The FUSE server, independent of virtio (decoder, tables, operations).
FS_CORE_SRCS := devices/fs/fuse_decode.c devices/fs/inode.c devices/fs/handle.c devices/fs/fs_budget.c \
	devices/fs/passthrough.c devices/fs/fs_common.c devices/fs/fs_attr.c devices/fs/fs_creds.c devices/fs/fs_entry.c devices/fs/fs_file.c \
	devices/fs/fs_dir.c devices/fs/fs_xattr.c devices/virtio/xfer.c
# The device and its config.
FS_DEV_SRCS := devices/fs/fs_config.c devices/fs/virtio_fs.c

LIB_SRCS += $(FS_CORE_SRCS) $(FS_DEV_SRCS) devices/fs/fs_kind.c
# virtiofs speaks FUSE; overlay puts a tmpfs over a read-only ringvm.root= share.
KIND_GUEST_MODULES += virtiofs fuse overlay

FS_TESTS := fuse_decode fs_server virtio_fs fs_policy fs_mounts fs_limits fs_confined
UNIT_TESTS += $(FS_TESTS)
test_fuse_decode_SRCS := devices/fs/fuse_decode.c devices/fs/test_fuse_decode.c
test_fs_server_SRCS := $(FS_CORE_SRCS) devices/fs/test_fs_server.c
test_fs_policy_SRCS := $(SPEC_SRCS) $(FS_CORE_SRCS) devices/fs/fs_config.c tests/support/fs_call.c devices/fs/test_fs_policy.c
test_fs_mounts_SRCS := $(FS_CORE_SRCS) tests/support/fs_call.c devices/fs/test_fs_mounts.c
# Every FUSE operation served under the virtio-fs worker's seccomp filter.
test_fs_confined_SRCS := $(FS_CORE_SRCS) tests/support/fs_call.c vmm/seccomp.c devices/fs/test_fs_confined.c
test_fs_limits_SRCS := $(FS_CORE_SRCS) tests/support/fs_call.c devices/fs/test_fs_limits.c
test_virtio_fs_SRCS := $(SPEC_SRCS) $(FS_CORE_SRCS) $(FS_DEV_SRCS) $(VIRTIO_SRCS) $(VIRTIO_FAKES) tests/support/mmio_driver.c \
	vmm/seccomp.c devices/fs/test_virtio_fs.c

FUZZERS += fuse_decode
fuzz_fuse_decode_SRCS := devices/fs/fuse_decode.c devices/fs/fuzz_fuse_decode.c


