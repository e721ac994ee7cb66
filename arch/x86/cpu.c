/* cpu.c: CPUID, MSRs, page tables and boot registers for x86-64 vCPUs. */
#include "cpu.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arch/x86/msr.h"
#include "vmm/layout.h"

/* CPUID bits we touch (Intel SDM vol. 2A, CPUID; AMD APM vol. 3). */
#define CPUID_1_ECX_TSC_DEADLINE (1u << 24)
#define CPUID_1_ECX_HYPERVISOR (1u << 31)
#define CPUID_1_EDX_HTT (1u << 28)

/* Control register and EFER bits. */
#define X86_CR0_PE 0x1ULL
#define X86_CR0_ET 0x10ULL
#define X86_CR0_PG 0x80000000ULL
#define X86_CR4_PAE 0x20ULL
#define EFER_LME 0x100ULL
#define EFER_LMA 0x400ULL

/* Page-table entry bits. */
#define PTE_PRESENT 0x1ULL
#define PTE_RW 0x2ULL
#define PTE_PS 0x80ULL

/* GDT selectors: Linux's boot protocol wants __BOOT_CS = 0x10, __BOOT_DS = 0x18. */
#define GDT_SEL_CODE 0x10
#define GDT_SEL_DATA 0x18
#define GDT_SEL_TSS 0x20

int x86_cpuid_supported(int kvm_fd, struct kvm_cpuid2 **out)
{
	for (unsigned int nent = 64; nent <= 4096; nent *= 2) {
		struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + nent * sizeof(c->entries[0]));
		if (!c)
			return -ENOMEM;
		c->nent = nent;
		if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c) == 0) {
			*out = c;
			return 0;
		}
		int err = errno;
		free(c);
		if (err != E2BIG)
			return -err;
	}
	return -E2BIG;
}

int x86_cpuid_apply(int vcpu_fd, const struct kvm_cpuid2 *supported, unsigned int index,
		    unsigned int nr_cpus)
{
	size_t size = sizeof(*supported) + supported->nent * sizeof(supported->entries[0]);
	struct kvm_cpuid2 *c = malloc(size);
	if (!c)
		return -ENOMEM;
	memcpy(c, supported, size);

	for (unsigned int i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];
		switch (e->function) {
		case 1:
			/* EBX[31:24] initial APIC ID, EBX[23:16] logical processors per package. */
			e->ebx = (e->ebx & 0xffffu) | ((nr_cpus & 0xffu) << 16) | (index << 24);
			e->ecx |= CPUID_1_ECX_HYPERVISOR | CPUID_1_ECX_TSC_DEADLINE;
			if (nr_cpus > 1)
				e->edx |= CPUID_1_EDX_HTT;
			break;
		case 0xa:
			/* No PMU: KVM's vPMU is not something a microVM wants to expose. */
			e->eax = e->ebx = e->ecx = e->edx = 0;
			break;
		case 0xb:
		case 0x1f:
			/* Extended topology: every subleaf reports this vCPU's x2APIC ID in EDX. */
			e->edx = index;
			break;
		default:
			break;
		}
	}
	int ret = ioctl(vcpu_fd, KVM_SET_CPUID2, c) < 0 ? -errno : 0;
	free(c);
	return ret;
}

int x86_msrs_apply(int vcpu_fd)
{
	static const struct kvm_msr_entry init[] = {
		{ .index = MSR_IA32_SYSENTER_CS }, { .index = MSR_IA32_SYSENTER_ESP },
		{ .index = MSR_IA32_SYSENTER_EIP }, { .index = MSR_STAR },
		{ .index = MSR_CSTAR },            { .index = MSR_KERNEL_GS_BASE },
		{ .index = MSR_SYSCALL_MASK },     { .index = MSR_LSTAR },
		{ .index = MSR_IA32_TSC },
		{ .index = MSR_IA32_MISC_ENABLE, .data = MSR_IA32_MISC_ENABLE_FAST_STRING },
		{ .index = MSR_MTRR_DEF_TYPE, .data = MSR_MTRR_ENABLE_WB },
	};
	const unsigned int n = sizeof(init) / sizeof(init[0]);
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e[sizeof(init) / sizeof(init[0])];
	} msrs;
	memset(&msrs, 0, sizeof(msrs));
	msrs.hdr.nmsrs = n;
	memcpy(msrs.e, init, sizeof(init));
	int ret = ioctl(vcpu_fd, KVM_SET_MSRS, &msrs);
	if (ret < 0)
		return -errno;
	/* KVM_SET_MSRS returns how many it set; a short count means KVM refused one. */
	return (unsigned int)ret == n ? 0 : -EINVAL;
}

int x86_boot_tables_write(const struct guest_mem *gm)
{
	/* Flat segments: null, null, 64-bit code (also used as 32-bit code for PVH, see below), data, TSS. */
	static const uint64_t gdt[] = {
		0,
		0,
		0x00af9b000000ffffULL, /* 0x10: code, L=1 */
		0x00cf93000000ffffULL, /* 0x18: data, 4 GiB */
		0x00008b0000000067ULL, /* 0x20: 32-bit TSS (busy), limit 0x67 */
	};
	int ret = gm_write(gm, LAYOUT_GDT, gdt, sizeof(gdt));
	if (ret)
		return ret;

	/* Identity map of the first 4 GiB with 2 MiB pages: PML4[0] -> PDPT[0..3] -> PD pages. */
	uint64_t pml4 = LAYOUT_PDPT | PTE_PRESENT | PTE_RW;
	ret = gm_write(gm, LAYOUT_PML4, &pml4, sizeof(pml4));
	for (uint64_t i = 0; i < 4 && !ret; i++) {
		uint64_t pdpte = (LAYOUT_PD + i * 4096) | PTE_PRESENT | PTE_RW;
		ret = gm_write(gm, LAYOUT_PDPT + i * 8, &pdpte, sizeof(pdpte));
	}
	for (uint64_t i = 0; i < 4 * 512 && !ret; i++) {
		uint64_t pde = (i << 21) | PTE_PRESENT | PTE_RW | PTE_PS;
		ret = gm_write(gm, LAYOUT_PD + i * 8, &pde, sizeof(pde));
	}
	return ret;
}

static struct kvm_segment flat_segment(uint16_t selector, uint8_t type, uint8_t l, uint8_t db)
{
	return (struct kvm_segment){
		.base = 0,
		.limit = 0xffffffff,
		.selector = selector,
		.type = type,
		.present = 1,
		.dpl = 0,
		.db = db,
		.s = 1,
		.l = l,
		.g = 1,
	};
}

int x86_boot_regs_apply(int vcpu_fd, const struct x86_kernel *k)
{
	struct kvm_sregs sregs;
	if (ioctl(vcpu_fd, KVM_GET_SREGS, &sregs) < 0)
		return -errno;

	bool long_mode = k->kind == X86_ENTRY_LINUX64;
	/* PVH enters 32-bit protected mode with paging off; Linux64 enters long mode. */
	struct kvm_segment code = flat_segment(GDT_SEL_CODE, 0xb, long_mode, !long_mode);
	struct kvm_segment data = flat_segment(GDT_SEL_DATA, 0x3, 0, 1);
	sregs.cs = code;
	sregs.ds = sregs.es = sregs.fs = sregs.gs = sregs.ss = data;
	sregs.tr = (struct kvm_segment){ .selector = GDT_SEL_TSS, .limit = 0x67, .type = 0xb,
					  .present = 1 };
	sregs.gdt.base = LAYOUT_GDT;
	sregs.gdt.limit = 5 * 8 - 1;
	sregs.idt.base = 0;
	sregs.idt.limit = 0;
	if (long_mode) {
		sregs.cr3 = LAYOUT_PML4;
		sregs.cr4 |= X86_CR4_PAE;
		sregs.cr0 |= X86_CR0_PE | X86_CR0_PG | X86_CR0_ET;
		sregs.efer |= EFER_LME | EFER_LMA;
	} else {
		sregs.cr0 = (sregs.cr0 | X86_CR0_PE | X86_CR0_ET) & ~X86_CR0_PG;
		sregs.cr4 = 0;
		sregs.efer = 0;
	}
	if (ioctl(vcpu_fd, KVM_SET_SREGS, &sregs) < 0)
		return -errno;

	struct kvm_regs regs;
	memset(&regs, 0, sizeof(regs));
	regs.rflags = 0x2; /* bit 1 is reserved-one */
	regs.rip = k->entry;
	regs.rsp = LAYOUT_BOOT_STACK;
	if (long_mode)
		regs.rsi = LAYOUT_ZERO_PAGE;
	else
		regs.rbx = LAYOUT_PVH_START_INFO;
	if (ioctl(vcpu_fd, KVM_SET_REGS, &regs) < 0)
		return -errno;
	return 0;
}

/* LVT delivery modes (Intel SDM vol. 3A, 10.5.1). */
#define APIC_LVT0 0x350
#define APIC_LVT1 0x360
#define APIC_MODE_NMI 0x4
#define APIC_MODE_EXTINT 0x7

static void lvt_set_mode(struct kvm_lapic_state *l, unsigned int reg, uint32_t mode)
{
	uint32_t v;
	memcpy(&v, &l->regs[reg], sizeof(v));
	v = (v & ~0x700u) | (mode << 8);
	memcpy(&l->regs[reg], &v, sizeof(v));
}

int x86_lapic_setup(int vcpu_fd)
{
	struct kvm_lapic_state lapic;
	if (ioctl(vcpu_fd, KVM_GET_LAPIC, &lapic) < 0)
		return -errno;
	lvt_set_mode(&lapic, APIC_LVT0, APIC_MODE_EXTINT);
	lvt_set_mode(&lapic, APIC_LVT1, APIC_MODE_NMI);
	if (ioctl(vcpu_fd, KVM_SET_LAPIC, &lapic) < 0)
		return -errno;
	return 0;
}
