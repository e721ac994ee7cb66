# devices/vhost_user: the vhost-user back-end transport (ringvm serve). Included by devices/devices.mk.

# The message decoder (pure), the memory table, socket I/O and the connection state machine.
VU_SRCS := devices/vhost_user/vu_decode.c devices/vhost_user/vu_mem.c devices/vhost_user/vu_io.c \
	devices/vhost_user/vu_backend.c
LIB_SRCS += $(VU_SRCS)

UNIT_TESTS += vu_decode
test_vu_decode_SRCS := devices/vhost_user/vu_decode.c tests/unit/test_vu_decode.c

# libFuzzer: the decoder, header and message rules, with a seed corpus in fuzz-seeds/vu_decode.
FUZZERS += vu_decode
fuzz_vu_decode_SRCS := devices/vhost_user/vu_decode.c devices/vhost_user/fuzz_vu_decode.c

# End to end: the back-end on a socketpair, a test front-end (tests/support/vu_front.c) with fake rings
# in a memfd, real devices and workers.
VU_FRONT := tests/support/vu_front.c devices/virtio/fake_ring.c
UNIT_TESTS += vu_blk
VU_VIRTIO := devices/virtio/virtq.c devices/virtio/chain.c devices/virtio/uring.c \
	devices/virtio/worker.c devices/virtio/worker_life.c devices/virtio/pace.c \
	devices/virtio/core.c devices/virtio/virtq_state.c
test_vu_blk_SRCS := $(SPEC_SRCS) $(VU_SRCS) $(VU_VIRTIO) $(BLK_SRCS) devices/virtio/xfer.c vmm/guest_mem.c $(VU_FRONT) \
	vmm/seccomp.c tests/unit/test_vu_blk.c
UNIT_TESTS += vu_fs
test_vu_fs_SRCS := $(VU_SRCS) $(VU_VIRTIO) $(FS_CORE_SRCS) $(FS_DEV_SRCS) vmm/guest_mem.c \
	$(VU_FRONT) vmm/seccomp.c tests/unit/test_vu_fs.c

# Test tool: the same front-end against a running `ringvm serve` (tests/boot/serve.sh).
VU_PROBE_SRCS := tests/support/vu_probe.c $(VU_FRONT) $(VU_SRCS) $(VU_VIRTIO) vmm/guest_mem.c
$(B)/tests/vu_probe: $(call objs_of,$(B)/obj,VU_PROBE_SRCS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)
ALL_TARGETS += $(B)/tests/vu_probe
