# devices: virtio transport, rings, per-queue workers, and each device in its own folder.
VIRTIO_SRCS := devices/virtio/virtq.c devices/virtio/chain.c devices/virtio/uring.c \
	devices/virtio/worker.c devices/virtio/worker_life.c devices/virtio/pace.c \
	devices/virtio/core.c devices/virtio/mmio.c devices/virtio/xfer.c devices/virtio/virtq_state.c
BLK_SRCS := devices/blk/blk_spec.c devices/blk/blk_req.c devices/blk/blk.c
LIB_SRCS += $(VIRTIO_SRCS) $(BLK_SRCS)

# Test doubles shared with other devices' tests (virtio-fs links them too).
VIRTIO_FAKES := devices/virtio/fake_vm.c devices/virtio/fake_ring.c vmm/guest_mem.c
# Device configs from CLI spec strings (the CLI's parser, then the library's checks).
SPEC_SRCS := tests/support/spec.c vmm/cli_parse.c devices/blk/blk_spec.c devices/fs/fs_config.c

UNIT_TESTS += virtq mmio blk_spec blk_req blk_e2e pace worker_pace virtq_state
test_pace_SRCS := devices/virtio/pace.c tests/unit/test_pace.c
test_worker_pace_SRCS := $(VIRTIO_SRCS) $(VIRTIO_FAKES) tests/unit/test_worker_pace.c
# The state report of a queue (SIGUSR2): a fake ring's known state, a real worker's answer.
test_virtq_state_SRCS := $(VIRTIO_SRCS) $(VIRTIO_FAKES) tests/unit/test_virtq_state.c
test_virtq_SRCS := devices/virtio/virtq.c devices/virtio/chain.c $(VIRTIO_FAKES) \
	tests/unit/test_virtq.c
test_mmio_SRCS := $(VIRTIO_SRCS) $(VIRTIO_FAKES) tests/unit/test_mmio.c
test_blk_spec_SRCS := $(SPEC_SRCS) devices/blk/blk_spec.c tests/unit/test_blk_spec.c
test_blk_req_SRCS := devices/blk/blk_req.c devices/virtio/virtq.c devices/virtio/chain.c \
	$(VIRTIO_FAKES) tests/unit/test_blk_req.c
test_blk_e2e_SRCS := $(SPEC_SRCS) $(VIRTIO_SRCS) $(BLK_SRCS) $(VIRTIO_FAKES) vmm/seccomp.c \
	tests/unit/test_blk_e2e.c

# libFuzzer targets: the chain walker (+ Reader/Writer) and the blk request parser.
FUZZERS += virtq blkreq
fuzz_virtq_SRCS := devices/virtio/virtq.c devices/virtio/chain.c vmm/guest_mem.c \
	devices/virtio/fuzz_ring.c devices/virtio/fuzz_virtq.c
fuzz_blkreq_SRCS := devices/blk/blk_req.c devices/virtio/virtq.c devices/virtio/chain.c \
	vmm/guest_mem.c devices/virtio/fuzz_ring.c devices/blk/fuzz_blkreq.c
include devices/fs/fs.mk
include devices/vhost_user/vhost_user.mk
include devices/console/console.mk
