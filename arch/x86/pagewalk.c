/* pagewalk.c: the x86 page-table walk a debugger needs (Intel SDM vol. 3A, chapter 4), read-only. */
#include "arch/x86/pagewalk.h"

#include <errno.h>

#define CR0_PG (1ULL << 31)
#define CR4_PSE (1ULL << 4)
#define CR4_PAE (1ULL << 5)
#define CR4_LA57 (1ULL << 12)
#define EFER_LMA (1ULL << 10)

#define PTE_P 0x1ULL
#define PTE_PS 0x80ULL
/* Physical-address bits of a 64-bit entry: 12..51 (4.5, tables 4-15 to 4-20; MAXPHYADDR <= 52). */
#define PTE_ADDR_MASK 0x000ffffffffff000ULL

/* Read the 64-bit entry at table + index*8, through the one door. */
static int read_pte64(const struct guest_mem *gm, uint64_t table, uint64_t index, uint64_t *pte)
{
	return gm_read(gm, (table & PTE_ADDR_MASK) + index * 8, pte, sizeof(*pte));
}

/* A page of 2^shift bytes at `base` (already aligned) maps va. */
static int leaf(uint64_t base, unsigned int shift, uint64_t va, uint64_t *gpa, uint64_t *left)
{
	uint64_t mask = (1ULL << shift) - 1;
	*gpa = base + (va & mask);
	*left = (1ULL << shift) - (va & mask);
	return 0;
}

/* 4-level or 5-level paging (4.5). */
static int walk_long(const struct guest_mem *gm, const struct x86_mmu *mmu, uint64_t va, uint64_t *gpa,
		     uint64_t *left)
{
	unsigned int levels = (mmu->cr4 & CR4_LA57) ? 5 : 4;
	unsigned int va_bits = 12 + 9 * levels; /* 48 or 57 */
	/* Canonical: bits va_bits-1..63 all equal. */
	int64_t top = (int64_t)va >> (va_bits - 1);
	if (top != 0 && top != -1)
		return -EINVAL;
	uint64_t table = mmu->cr3;
	for (unsigned int level = levels; level >= 1; level--) {
		unsigned int shift = 12 + 9 * (level - 1);
		uint64_t pte;
		if (read_pte64(gm, table, (va >> shift) & 0x1ff, &pte))
			return -EFAULT;
		if (!(pte & PTE_P))
			return -EFAULT;
		/* PS means a 1 GiB page in a PDPTE and a 2 MiB page in a PDE; it is reserved above. */
		if (level == 1 || ((level == 2 || level == 3) && (pte & PTE_PS)))
			return leaf(pte & PTE_ADDR_MASK & ~((1ULL << shift) - 1), shift, va, gpa, left);
		table = pte;
	}
	return -EFAULT; /* not reached: level 1 always ends the walk */
}

/* PAE paging (4.4): four PDPTEs at CR3[31:5], then a PD and a PT of 64-bit entries. */
static int walk_pae(const struct guest_mem *gm, const struct x86_mmu *mmu, uint32_t va, uint64_t *gpa,
		    uint64_t *left)
{
	uint64_t pdpte, pde, pte;
	if (gm_read(gm, (mmu->cr3 & 0xffffffe0ULL) + (uint64_t)(va >> 30) * 8, &pdpte, sizeof(pdpte)))
		return -EFAULT;
	if (!(pdpte & PTE_P))
		return -EFAULT;
	if (read_pte64(gm, pdpte, (va >> 21) & 0x1ff, &pde) || !(pde & PTE_P))
		return -EFAULT;
	if (pde & PTE_PS)
		return leaf(pde & PTE_ADDR_MASK & ~((1ULL << 21) - 1), 21, va, gpa, left);
	if (read_pte64(gm, pde, (va >> 12) & 0x1ff, &pte) || !(pte & PTE_P))
		return -EFAULT;
	return leaf(pte & PTE_ADDR_MASK, 12, va, gpa, left);
}

/* 32-bit paging (4.3): 32-bit entries; with CR4.PSE a PDE may map 4 MiB (PSE-36 high bits). */
static int walk_32(const struct guest_mem *gm, const struct x86_mmu *mmu, uint32_t va, uint64_t *gpa,
		   uint64_t *left)
{
	uint32_t pde, pte;
	if (gm_read(gm, (mmu->cr3 & 0xfffff000ULL) + (uint64_t)(va >> 22) * 4, &pde, sizeof(pde)))
		return -EFAULT;
	if (!(pde & PTE_P))
		return -EFAULT;
	if ((pde & PTE_PS) && (mmu->cr4 & CR4_PSE)) {
		uint64_t base = (pde & 0xffc00000u) | ((uint64_t)((pde >> 13) & 0xff) << 32);
		return leaf(base, 22, va, gpa, left);
	}
	if (gm_read(gm, (pde & 0xfffff000u) + (uint64_t)((va >> 12) & 0x3ff) * 4, &pte, sizeof(pte)))
		return -EFAULT;
	if (!(pte & PTE_P))
		return -EFAULT;
	return leaf(pte & 0xfffff000u, 12, va, gpa, left);
}

int x86_gva_to_gpa(const struct guest_mem *gm, const struct x86_mmu *mmu, uint64_t va, uint64_t *gpa,
		   uint64_t *left)
{
	if (!(mmu->cr0 & CR0_PG)) /* linear is physical, 32 bits wide; report 4 KiB steps all the same */
		return leaf((uint32_t)va & ~0xfffULL, 12, va, gpa, left);
	if (mmu->efer & EFER_LMA)
		return walk_long(gm, mmu, va, gpa, left);
	if (mmu->cr4 & CR4_PAE)
		return walk_pae(gm, mmu, (uint32_t)va, gpa, left);
	return walk_32(gm, mmu, (uint32_t)va, gpa, left);
}
