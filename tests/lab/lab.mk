# tests/lab: the KVM lab (a QEMU TCG machine with emulated SVM, for hosts whose /dev/kvm is PVM).
#
# The lab's files live in build/lab whatever SAN says: L1's kernel and initramfs do not depend on how
# ringvm is compiled. kvm-smoke follows $(B) like every test binary.

LAB_DIR := $(BUILD_ROOT)/lab
LAB_KERNEL := $(LAB_DIR)/kernel
LAB_INITRAMFS := $(LAB_DIR)/initramfs.cpio
LAB_VMLINUX := $(LAB_DIR)/vmlinux

# fetch-kernel.sh makes vmlinuz and version together, and does nothing when both exist.
$(LAB_KERNEL)/version:
	@$(if $(Q),echo "  FETCH   $(LAB_KERNEL)")
	$(Q)guest/fetch-kernel.sh amd64 $(LAB_KERNEL)

# L1 boots the bare ELF kernel through PVH: the bzImage decompressor alone takes ~5 s under TCG.
$(LAB_VMLINUX): $(LAB_KERNEL)/version guest/extract-vmlinux.sh
	@$(if $(Q),echo "  UNXZ    $@")
	$(Q)guest/extract-vmlinux.sh $(LAB_KERNEL)/vmlinuz $@ >/dev/null

$(LAB_INITRAMFS): $(LAB_KERNEL)/version tests/lab/init tests/lab/modprobe tests/lab/mkinitramfs.sh \
		guest/kmod-closure.sh
	@$(if $(Q),echo "  CPIO    $@")
	$(Q)tests/lab/mkinitramfs.sh $(LAB_KERNEL) $@ >/dev/null

$(B)/tests/kvm-smoke: tests/lab/kvm-smoke.c tests/unit/tap.h arch/x86/tsc.c arch/x86/tsc.h arch/x86/msr.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ tests/lab/kvm-smoke.c arch/x86/tsc.c

ALL_TARGETS += $(LAB_VMLINUX) $(LAB_INITRAMFS) $(B)/tests/kvm-smoke

# `make lab` builds only what tests/lab/run needs; `make lab-selftest` boots a few labs to check it.
.PHONY: lab lab-selftest
lab: $(LAB_VMLINUX) $(LAB_INITRAMFS) $(B)/tests/kvm-smoke
lab-selftest: lab
	tests/lab/selftest
