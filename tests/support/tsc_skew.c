/*
 * tsc_skew.c: LD_PRELOAD into ringvm (tests/boot/state.py). Just before the first KVM_CREATE_VCPU it
 * gives the VM a default TSC rate 1 % below the host's (the VM-wide KVM_SET_TSC_KHZ): on purpose, the
 * state that a kvm module loaded before its host's TSC calibration was final leaves every VM in. On a
 * host that cannot scale TSC rates KVM then computes each new vCPU's TSC as 0. One line on stderr
 * says what it did and whether this host's KVM scales TSC rates (then nothing is broken).
 */
#define _GNU_SOURCE
#include <linux/kvm.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int ioctl(int fd, unsigned long request, ...)
{
	static int skewed;
	va_list ap;
	va_start(ap, request);
	unsigned long arg = va_arg(ap, unsigned long);
	va_end(ap);
	if (request == KVM_CREATE_VCPU && !skewed) {
		skewed = 1;
		long khz = syscall(SYS_ioctl, fd, KVM_GET_TSC_KHZ, 0UL);
		long scales = syscall(SYS_ioctl, fd, KVM_CHECK_EXTENSION, (unsigned long)KVM_CAP_TSC_CONTROL);
		long set = khz > 0 ? syscall(SYS_ioctl, fd, KVM_SET_TSC_KHZ, (unsigned long)(khz * 99 / 100)) : -1;
		fprintf(stderr, "tsc_skew: the VM's TSC rate %s %ld kHz (KVM's was %ld); scales TSC rates: %s\n",
			set == 0 ? "set to" : "NOT set to", khz * 99 / 100, khz, scales > 0 ? "yes" : "no");
	}
	return (int)syscall(SYS_ioctl, fd, request, arg);
}
