/*
 * test_tsc.c: arch/x86/tsc.c on this host's /dev/kvm. A vCPU whose TSC KVM runs is left alone; a
 * vCPU given a rate its host cannot scale to (the VM-wide KVM_SET_TSC_KHZ before the vCPU exists:
 * what a kvm module loaded before its host's TSC calibration was final does to every VM) has a TSC
 * that KVM computes as 0, and x86_tsc_ensure_running gives it the host's rate and a moving TSC.
 * Skipped (counted) without /dev/kvm, or where KVM scales TSC rates or lacks the VM-wide ioctl (the
 * standing TSC cannot be made there).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "arch/x86/tsc.h"
#include "tests/unit/tap.h"

struct kvm_pair {
	int vm_fd;
	int vcpu_fd;
};

/* A VM whose default TSC rate is the host's times `scale` (1: untouched) and its vCPU 0.
   0, -errno, or -ENOTSUP when KVM will not take a VM-wide rate. */
static int pair_open(int kvm_fd, double scale, struct kvm_pair *p, unsigned int *khz_default)
{
	p->vcpu_fd = -1;
	p->vm_fd = ioctl(kvm_fd, KVM_CREATE_VM, 0);
	if (p->vm_fd < 0)
		return -errno;
	int khz = ioctl(p->vm_fd, KVM_GET_TSC_KHZ, 0);
	*khz_default = khz > 0 ? (unsigned int)khz : 0;
	if (scale != 1.0) {
		if (khz <= 0 || ioctl(p->vm_fd, KVM_SET_TSC_KHZ, (unsigned long)(khz * scale)) < 0)
			return -ENOTSUP;
	}
	p->vcpu_fd = ioctl(p->vm_fd, KVM_CREATE_VCPU, 0UL);
	return p->vcpu_fd < 0 ? -errno : 0;
}

static void pair_close(struct kvm_pair *p)
{
	if (p->vcpu_fd >= 0)
		close(p->vcpu_fd);
	if (p->vm_fd >= 0)
		close(p->vm_fd);
}

/* Whether the vCPU's TSC, read 1 ms apart, moved. */
static bool moved(int vcpu_fd)
{
	uint64_t a = 0, b = 0;
	if (x86_tsc_read(vcpu_fd, &a))
		return false;
	usleep(1000);
	return !x86_tsc_read(vcpu_fd, &b) && b != a;
}

static void test_running_left_alone(int kvm_fd)
{
	struct kvm_pair p;
	unsigned int khz = 0;
	TAP_CHECK(pair_open(kvm_fd, 1.0, &p, &khz) == 0, "a VM and a vCPU at KVM's own rate");
	struct x86_tsc_fix fix = { .set = true };
	TAP_CHECK(x86_tsc_ensure_running(p.vcpu_fd, &fix) == 0, "a running TSC: ensure_running succeeds");
	TAP_CHECK(!fix.set, "a running TSC: its rate is not touched");
	TAP_CHECK(ioctl(p.vcpu_fd, KVM_GET_TSC_KHZ, 0) == (int)khz, "a running TSC: the vCPU keeps KVM's rate");
	TAP_CHECK(moved(p.vcpu_fd), "a running TSC moves");
	pair_close(&p);
}

/* A VM-wide rate 1 % off the host's: below (what the lab saw) and above. */
static void test_standing_mended(int kvm_fd, double scale, const char *name)
{
	char what[160];
	struct kvm_pair p;
	unsigned int khz = 0;
	int ret = pair_open(kvm_fd, scale, &p, &khz);
	if (ret == -ENOTSUP) {
		printf("ok %d # SKIP %s: KVM takes no VM-wide TSC rate here\n", ++tap_count, name);
		pair_close(&p);
		return;
	}
	snprintf(what, sizeof(what), "%s: a VM at %.0f kHz and a vCPU", name, khz * scale);
	TAP_CHECK(ret == 0, what);
	if (ret) {
		pair_close(&p);
		return;
	}
	if (moved(p.vcpu_fd)) {
		printf("ok %d # SKIP %s: this host's KVM scales TSC rates, so the TSC runs\n", ++tap_count,
		       name);
		pair_close(&p);
		return;
	}
	uint64_t tsc = 1;
	snprintf(what, sizeof(what), "%s: KVM computes the vCPU's TSC as 0 (the state to mend)", name);
	TAP_CHECK(x86_tsc_read(p.vcpu_fd, &tsc) == 0 && tsc == 0, what);
	struct x86_tsc_fix fix;
	snprintf(what, sizeof(what), "%s: ensure_running succeeds", name);
	TAP_CHECK(x86_tsc_ensure_running(p.vcpu_fd, &fix) == 0, what);
	snprintf(what, sizeof(what), "%s: it says it set the rate, from the one KVM kept", name);
	TAP_CHECK(fix.set && fix.khz_kept == (unsigned int)(khz * scale), what);
	snprintf(what, sizeof(what), "%s: the vCPU now has the host's rate (%u kHz)", name, khz);
	TAP_CHECK(fix.khz_set == khz && ioctl(p.vcpu_fd, KVM_GET_TSC_KHZ, 0) == (int)khz, what);
	snprintf(what, sizeof(what), "%s: the vCPU's TSC moves", name);
	TAP_CHECK(moved(p.vcpu_fd), what);
	pair_close(&p);
}

int main(void)
{
	int kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm_fd < 0) {
		printf("ok 1 # SKIP no /dev/kvm\n1..1\n");
		return 0;
	}
	uint64_t tsc;
	TAP_CHECK(x86_tsc_read(-1, &tsc) == -EBADF, "x86_tsc_read of no vCPU: -EBADF");
	test_running_left_alone(kvm_fd);
	test_standing_mended(kvm_fd, 0.99, "1 % below the host's rate");
	test_standing_mended(kvm_fd, 1.01, "1 % above the host's rate");
	close(kvm_fd);
	return tap_done();
}
