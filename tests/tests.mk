# tests: the runner, fuzz target rules, unit tests of vmm/ and arch/x86/ boot code.

UNIT_TESTS += boot cli_parse config guest_mem seccomp short_io xfer privilege blk_durable fs_hang uring
# The sealed io_urings of virtio-blk, virtio-fs and virtio-console: declared opcodes run, everything
# else is EACCES.
test_uring_SRCS := $(FS_CORE_SRCS) $(FS_DEV_SRCS) $(BLK_SRCS) $(CONSOLE_SRCS) $(VIRTIO_SRCS) $(VIRTIO_FAKES) \
	tests/unit/test_uring.c
test_xfer_SRCS := devices/virtio/xfer.c tests/unit/test_xfer.c
# Short transfers end to end: both devices over a scripted host FUSE mount (root; skipped otherwise).
test_short_io_SRCS := $(SPEC_SRCS) $(FS_CORE_SRCS) $(FS_DEV_SRCS) $(BLK_SRCS) $(VIRTIO_SRCS) $(VIRTIO_FAKES) \
	tests/support/mmio_driver.c tests/support/host_fuse.c tests/support/fs_guest.c vmm/seccomp.c \
	tests/unit/test_short_io.c
# virtio-blk writethrough and WRITE_ZEROES without fallocate, on a scripted host FUSE mount (root).
test_blk_durable_SRCS := $(SPEC_SRCS) $(FS_CORE_SRCS) $(BLK_SRCS) $(VIRTIO_SRCS) $(VIRTIO_FAKES) \
	tests/support/mmio_driver.c tests/support/host_fuse.c vmm/seccomp.c tests/unit/test_blk_durable.c
# A READ that never completes does not wedge reset or teardown (root, /dev/fuse).
test_fs_hang_SRCS := $(SPEC_SRCS) $(FS_CORE_SRCS) $(FS_DEV_SRCS) $(VIRTIO_SRCS) $(VIRTIO_FAKES) \
	tests/support/mmio_driver.c tests/support/host_fuse.c tests/support/fs_guest.c vmm/seccomp.c \
	tests/unit/test_fs_hang.c
test_seccomp_SRCS := vmm/seccomp.c tests/unit/test_seccomp.c
test_privilege_SRCS := vmm/privilege.c tests/unit/test_privilege.c
test_boot_SRCS := arch/x86/boot.c vmm/guest_mem.c tests/unit/test_boot.c
test_cli_parse_SRCS := vmm/cli_parse.c tests/unit/test_cli_parse.c
# The typed configuration's checks (the devices' own included).
# libringvm's life cycle with real VMs (firmware payloads), through the public API only.
UNIT_TESTS += lib
test_lib_SRCS := $(LIB_SRCS) tests/unit/test_lib.c
test_config_SRCS := vmm/config.c vmm/errmsg.c devices/blk/blk_spec.c devices/fs/fs_config.c tests/unit/test_config.c
test_guest_mem_SRCS := vmm/guest_mem.c vmm/bus.c tests/unit/test_guest_mem.c

# The terminal driver of the interactive tests, on its own (no VM).
HOST_TESTS += tests/test-pty-drive.sh

include tests/bench/bench.mk

# libFuzzer targets: FUZZERS += name, fuzz_name_SRCS := sources (one defines LLVMFuzzerTestOneInput).
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
# make fuzz FUZZ_SECONDS=N: every target for N seconds (default 600) from its corpus in the tree
# (<folder>/fuzz-seeds/NAME, next to the target's source), then the corpus is minimized and kept there.
FUZZ_SECONDS ?= 600
.PHONY: fuzz fuzz-build
# A target's corpus: fuzz-seeds/NAME beside the source that defines LLVMFuzzerTestOneInput.
fuzz_seeds_of = $(dir $(lastword $(fuzz_$(1)_SRCS)))fuzz-seeds/$(1)
fuzz: fuzz-build
	$(Q)rc=0; $(foreach f,$(FUZZERS),mkdir -p $(call fuzz_seeds_of,$(f)); \
		FUZZ_KEEP=1 tests/fuzz.sh $(BUILD_ROOT)/fuzz/$(f) $(FUZZ_SECONDS) $(call fuzz_seeds_of,$(f)) || rc=1;) \
		exit $$rc

# Packages the build and the tests need, from Debian's archive; `make deps` installs what is missing.
DEPS_PKGS += build-essential clang liburing-dev libseccomp-dev libcap-ng-dev qemu-system-x86 \
	busybox-static fio e2fsprogs musl-tools acpica-tools cpio kmod zstd xz-utils gdb python3
# fs_backends.sh: a FUSE file system and an NFS server (run inside the KVM lab only) under the shares.
DEPS_PKGS += bindfs nfs-kernel-server
DEPS_STAMP := $(BUILD_ROOT)/.deps-ok
deps: $(DEPS_STAMP)
$(DEPS_STAMP): Makefile tests/tests.mk tests/bench/bench.mk dist/dist.mk vmm/vmm.mk
	@tests/deps.sh $(sort $(DEPS_PKGS))
	@mkdir -p $(dir $@) && touch $@

# Everything `make test` needs: both builds, the fuzzers, the guests (6.1 and 6.12) and the lab.
test: all
	$(Q)$(MAKE) --no-print-directory guest-bpo
	$(Q)$(MAKE) --no-print-directory SAN=1 build/san/ringvm unit
	$(Q)$(MAKE) --no-print-directory fuzz-build
	$(Q)tests/run

# make test-tree: a kernel build tree as --kernel (tests/integration/tree.sh) on `make ktree`'s tree.
# Not in `make test`: building the tree from linux-source takes longer than CI's budget allows
# (README, "A kernel build tree as the kernel").
.PHONY: test-tree
test-tree: all ktree
	$(Q)LAB_ARGS="--timeout 1800" TESTS=tests/integration/tree.sh tests/with-kvm tests/integration/run-all

# make run CMD='uname -a': the README's demo; through the KVM lab where /dev/kvm cannot boot Linux.
CMD ?= uname -a
run: all
	$(Q)tests/demo $(CMD)

# Benchmarks: figures, never pass/fail. In the KVM lab where the host needs it.
.PHONY: bench bench-boot bench-blk bench-fs bench-uring-meta bench-devloop bench-stdio
bench: bench-boot bench-blk bench-fs bench-uring-meta bench-devloop bench-stdio
# Why virtio-fs runs metadata inline: one statx/openat/mkdirat inline vs through io_uring, on the host.
$(B)/bench/uring_meta: tests/bench/uring_meta.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LDLIBS)
ALL_TARGETS += $(B)/bench/uring_meta
bench-uring-meta: $(B)/bench/uring_meta
	$(Q)$< $${BENCH_DIR:-/var/tmp}
bench-boot: all
	$(Q)LAB_ARGS="--timeout 3600" tests/with-kvm tests/bench/boot.sh $(BOOTS)
# Peers (QEMU with an iothread, QEMU + virtiofsd, 9p) run beside ringvm in the same session.
bench-blk: all
	$(Q)tests/bench/peers/prepare.sh blk
	$(Q)LAB_ARGS="--cpus 2 --memory 4G --timeout 3600" tests/with-kvm tests/bench/blk.sh
bench-fs: all lab
	$(Q)tests/bench/peers/prepare.sh fs
	$(Q)LAB_ARGS="--cpus 2 --memory 4G --timeout 3600" tests/with-kvm tests/bench/fs.sh
# The command's stdio (virtio-console ports) vs a virtio-fs read in the same guest vs the serial console.
# 2 vCPUs: the ports' queue workers do not share L1's only CPU with the guest's vCPU.
bench-stdio: all
	$(Q)LAB_ARGS="--cpus 2 --memory 4G --timeout 3600" tests/with-kvm tests/bench/stdio.sh

# Test tool: an embedder forwarding its own signals with ringvm_signal() (tests/integration/streams.sh).
# (The Makefile names $(LIB) after including this file: the path is spelled out.)
$(B)/tests/embed_signal: tests/support/embed_signal.c $(B)/libringvm.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)
ALL_TARGETS += $(B)/tests/embed_signal

# Test tool: the fs server over the host's /dev/fuse (tests/integration/fs.sh --host-fuse, and the
# integration tests' FUSE-backed shares), no VM.
FS_HOST_MOUNT_SRCS := $(FS_CORE_SRCS) tests/support/host_fuse.c tests/support/fuse_host_mount.c
$(B)/tests/fuse_host_mount: $(call objs_of,$(B)/obj,FS_HOST_MOUNT_SRCS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)
ALL_TARGETS += $(B)/tests/fuse_host_mount
# The kernel developer's round trip on `make ktree`'s tree: ringvm vs virtiofsd + QEMU microvm.
bench-devloop: all ktree
	$(Q)LAB_ARGS="--timeout 3600" tests/with-kvm tests/bench/devloop.sh $(ROUNDS)
