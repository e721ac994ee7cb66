# tests: every test's registration, the test tools, packages, and the make targets that run tests.

# How each kind of test is registered (one way per kind; README, "Tests"):
#   unit tests        tests/unit/unit.mk     UNIT_TESTS += NAME, test_NAME_SRCS := ...
#   fuzzers           tests/fuzz/fuzz.mk     FUZZERS += NAME, fuzz_NAME_SRCS := ...
#   host scripts      tests/host/host.mk     HOST_TESTS += SCRIPT (SAN_HOST_TESTS: both builds)
#   integration       a script in tests/integration/ (run-all lists them; its SAN_TESTS the short list)
include tests/unit/unit.mk
include tests/fuzz/fuzz.mk
include tests/host/host.mk
include tests/support/support.mk

include tests/bench/bench.mk

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
	$(Q)$(MAKE) --no-print-directory SAN=1 build/san/ringvm build/san/bench/device-driver build/san/tests/tsc_skew.so unit
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

# The kernel developer's round trip on `make ktree`'s tree: ringvm vs virtiofsd + QEMU microvm.
bench-devloop: all ktree
	$(Q)LAB_ARGS="--timeout 3600" tests/with-kvm tests/bench/devloop.sh $(ROUNDS)
