/* tsc.h: a vCPU's TSC as KVM computes it, and the rate KVM sometimes gives a vCPU but cannot run. */
#ifndef RINGVM_X86_TSC_H
#define RINGVM_X86_TSC_H

#include <stdbool.h>
#include <stdint.h>

/* The vCPU's TSC as KVM itself computes it (KVM_GET_MSRS): what its timers count from. 0 or -errno. */
__attribute__((warn_unused_result)) int x86_tsc_read(int vcpu_fd, uint64_t *tsc);

/* What x86_tsc_ensure_running found and did. */
struct x86_tsc_fix {
	bool set;	       /* the vCPU's TSC stood still and it was given the host's rate */
	unsigned int khz_kept; /* the rate KVM had given it (kHz, KVM_GET_TSC_KHZ; 0 if unknown) */
	unsigned int khz_set;  /* the rate it runs at now (kHz) */
};

/*
 * Make sure KVM runs this new vCPU's TSC, before anything reads or arms it.
 * KVM gives each new vCPU the TSC rate its host had when the kvm module loaded. A nested host whose
 * kernel refined its TSC calibration after that (seen in the KVM lab: 2593.9 then 2596.1 MHz) and
 * that cannot scale a TSC gives the vCPU no rate at all: KVM then computes its TSC as 0 for ever
 * (dmesg: "user requested TSC rate below hardware speed"), and a TSC-deadline timer armed from it
 * fires minutes late, so the guest stands still. Such a vCPU gets KVM_SET_TSC_KHZ 0, the host's own
 * current rate, which needs no scaling. A vCPU whose TSC runs is left as it is (fix->set false).
 * Returns 0, -EIO when the TSC stands still even then, or -errno from KVM.
 */
__attribute__((warn_unused_result)) int x86_tsc_ensure_running(int vcpu_fd, struct x86_tsc_fix *fix);

#endif
