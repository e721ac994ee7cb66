/* cpu.h: x86 vCPU state at boot: CPUID, MSRs, and the registers each Linux entry point expects. */
#ifndef RINGVM_X86_CPU_H
#define RINGVM_X86_CPU_H

#include <stdint.h>

#include "arch/x86/boot.h"
#include "vmm/guest_mem.h"

struct kvm_cpuid2;

/*
 * Fetch KVM_GET_SUPPORTED_CPUID from the /dev/kvm fd into a malloc'd table (caller frees).
 * Returns 0 or -errno.
 */
__attribute__((warn_unused_result)) int x86_cpuid_supported(int kvm_fd, struct kvm_cpuid2 **out);

/*
 * Give vCPU `index` of `nr_cpus` its CPUID: a copy of the supported table with its APIC ID, the
 * topology, the hypervisor bit and the TSC-deadline timer, and without the PMU (not virtualised).
 * Applies it with KVM_SET_CPUID2 on vcpu_fd. Returns 0 or -errno.
 */
__attribute__((warn_unused_result)) int x86_cpuid_apply(int vcpu_fd, const struct kvm_cpuid2 *supported,
						       unsigned int index, unsigned int nr_cpus);

/* The MSRs every vCPU starts with (fast strings, write-back MTRR default). 0 or -errno. */
__attribute__((warn_unused_result)) int x86_msrs_apply(int vcpu_fd);

/* Write the GDT and identity page tables the boot vCPU uses (in guest RAM). 0 or -errno. */
__attribute__((warn_unused_result)) int x86_boot_tables_write(const struct guest_mem *gm);

/* Registers of the boot vCPU for the kernel's entry kind (long mode or PVH 32-bit). 0 or -errno. */
__attribute__((warn_unused_result)) int x86_boot_regs_apply(int vcpu_fd, const struct x86_kernel *k);

/* LAPIC LINT0 as ExtINT and LINT1 as NMI, as firmware leaves them. 0 or -errno. */
__attribute__((warn_unused_result)) int x86_lapic_setup(int vcpu_fd);

#endif
