/* msr.h: the x86 MSR numbers ringvm and its tests read or set through KVM (Intel SDM vol. 4). */
#ifndef RINGVM_ARCH_X86_MSR_H
#define RINGVM_ARCH_X86_MSR_H

#define MSR_IA32_TSC 0x10
#define MSR_IA32_APIC_BASE 0x1b
#define MSR_IA32_SYSENTER_CS 0x174
#define MSR_IA32_SYSENTER_ESP 0x175
#define MSR_IA32_SYSENTER_EIP 0x176
#define MSR_IA32_MISC_ENABLE 0x1a0
#define MSR_IA32_MISC_ENABLE_FAST_STRING 1ULL
#define MSR_MTRR_DEF_TYPE 0x2ff
#define MSR_MTRR_ENABLE_WB ((1ULL << 11) | 6) /* MTRRs on, default type write-back */
#define MSR_IA32_TSC_DEADLINE 0x6e0
#define MSR_STAR 0xc0000081
#define MSR_LSTAR 0xc0000082
#define MSR_CSTAR 0xc0000083
#define MSR_SYSCALL_MASK 0xc0000084
#define MSR_KERNEL_GS_BASE 0xc0000102

#endif
