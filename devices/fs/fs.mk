# devices/fs: virtio-fs, an in-process FUSE passthrough server. Included by devices/devices.mk
# after VIRTIO_SRCS and VIRTIO_FAKES are defined.

# The FUSE server, independent of virtio (decoder, tables, operations).
FS_CORE_SRCS := devices/fs/fuse_decode.c devices/fs/inode.c devices/fs/handle.c \
	devices/fs/passthrough.c devices/fs/fs_common.c devices/fs/fs_attr.c devices/fs/fs_creds.c devices/fs/fs_entry.c devices/fs/fs_file.c \
	devices/fs/fs_dir.c devices/fs/fs_xattr.c
# The device and its CLI parsing.
FS_DEV_SRCS := devices/fs/fs_config.c devices/fs/virtio_fs.c

LIB_SRCS += $(FS_CORE_SRCS) $(FS_DEV_SRCS)

FS_TESTS := fuse_decode fs_server virtio_fs
UNIT_TESTS += $(FS_TESTS)
test_fuse_decode_SRCS := devices/fs/fuse_decode.c devices/fs/test_fuse_decode.c
test_fs_server_SRCS := $(FS_CORE_SRCS) devices/fs/test_fs_server.c
test_virtio_fs_SRCS := $(FS_CORE_SRCS) $(FS_DEV_SRCS) $(VIRTIO_SRCS) $(VIRTIO_FAKES) \
	devices/fs/test_virtio_fs.c

FUZZERS += fuse_decode
fuzz_fuse_decode_SRCS := devices/fs/fuse_decode.c devices/fs/fuzz_fuse_decode.c


# Test tool: the same server over the host's /dev/fuse (tests/integration/fs.sh can run without a VM).
FS_HOST_MOUNT_SRCS := $(FS_CORE_SRCS) devices/fs/fuse_host_mount.c
$(B)/tests/fuse_host_mount: $(call objs_of,$(B)/obj,FS_HOST_MOUNT_SRCS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
ALL_TARGETS += $(B)/tests/fuse_host_mount
