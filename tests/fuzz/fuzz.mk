# tests/fuzz/fuzz.mk: every libFuzzer target, in one list. Included by tests/tests.mk.
#
# A fuzzer is tests/fuzz/fuzz_NAME.c (it defines LLVMFuzzerTestOneInput), registered with two lines:
#   FUZZERS += NAME
#   fuzz_NAME_SRCS := the exact sources it links
# Its corpus is tests/fuzz/seeds/NAME, kept in the tree. `make fuzz-build` builds build/fuzz/NAME
# (clang, ASan + UBSan + libFuzzer); tests/run (ONLY=fuzz) runs each for FUZZ_SECONDS through
# tests/fuzz/run.sh; `make fuzz` runs each longer and keeps what it learnt in the corpus.

# The chain walker (+ Reader/Writer) and the blk request parser, over rings built from the input.
FUZZ_RING := devices/virtio/virtq.c devices/virtio/chain.c vmm/guest_mem.c tests/fuzz/fuzz_ring.c
FUZZERS += virtq blkreq
fuzz_virtq_SRCS := $(FUZZ_RING) tests/fuzz/fuzz_virtq.c
fuzz_blkreq_SRCS := devices/blk/blk_req.c $(FUZZ_RING) tests/fuzz/fuzz_blkreq.c
# The FUSE request decoder.
FUZZERS += fuse_decode
fuzz_fuse_decode_SRCS := devices/fs/fuse_decode.c tests/fuzz/fuzz_fuse_decode.c
# The FUSE server itself: sessions of hostile requests against a real directory, confinement and
# fds checked after each.
FUZZERS += fs_server
fuzz_fs_server_SRCS := $(FS_CORE_SRCS) tests/fuzz/fuzz_fs_server.c
# The vhost-user message decoder: header and message rules.
FUZZERS += vu_decode
fuzz_vu_decode_SRCS := devices/vhost_user/vu_decode.c tests/fuzz/fuzz_vu_decode.c
# The vhost-user back-end's connection state machine: sessions of messages and rings from the input
# (tests/fuzz/vu_session.c; tests/support/vu_front.c plays the front-end), against virtio-blk and
# virtio-fs on their real workers, with the device's own requests among the messages.
FUZZERS += vu_session vu_session_fs
FUZZ_VU_SESSION := $(VU_SRCS) $(VU_VIRTIO) devices/virtio/xfer.c vmm/guest_mem.c $(VU_FRONT) \
	tests/fuzz/vu_session.c
fuzz_vu_session_SRCS := $(FUZZ_VU_SESSION) $(BLK_SRCS) tests/fuzz/fuzz_vu_session.c
fuzz_vu_session_fs_SRCS := $(FUZZ_VU_SESSION) $(FS_CORE_SRCS) $(FS_DEV_SRCS) tests/fuzz/fuzz_vu_session_fs.c
# The gdb stub: the receiver and every packet handler, over the x86 registers and page walk.
FUZZERS += gdb_stub
fuzz_gdb_stub_SRCS := vmm/gdb_packet.c vmm/gdb_cmds.c arch/x86/gdb_x86.c arch/x86/pagewalk.c \
	vmm/guest_mem.c tests/fuzz/fuzz_gdb_stub.c
# PID 1's command-line decoder and its mount list.
FUZZERS += guest_cmdline guest_mounts
fuzz_guest_cmdline_SRCS := guest/cmdline.c tests/fuzz/fuzz_guest_cmdline.c
fuzz_guest_mounts_SRCS := guest/mounts.c guest/cmdline.c tests/fuzz/fuzz_guest_mounts.c

FUZZ_CC := clang
FUZZ_CFLAGS := -std=gnu11 -g -O1 -I. -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_BINS := $(addprefix $(BUILD_ROOT)/fuzz/,$(FUZZERS))
$(BUILD_ROOT)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<
$(BUILD_ROOT)/fuzz/%: $$(call objs_of,$(BUILD_ROOT)/fuzz/obj,fuzz_$$*_SRCS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZLD  $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $^ -luring -lpthread
fuzz-build: $(FUZZ_BINS)
# make fuzz FUZZ_SECONDS=N: every target for N seconds (default 600) from its corpus, then the corpus
# is minimized and kept in tests/fuzz/seeds/NAME.
FUZZ_SECONDS ?= 600
.PHONY: fuzz fuzz-build
fuzz: fuzz-build
	$(Q)rc=0; $(foreach f,$(FUZZERS),mkdir -p tests/fuzz/seeds/$(f); \
		FUZZ_KEEP=1 tests/fuzz/run.sh $(BUILD_ROOT)/fuzz/$(f) $(FUZZ_SECONDS) || rc=1;) \
		exit $$rc
