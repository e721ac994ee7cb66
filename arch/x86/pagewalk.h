/* pagewalk.h: guest-virtual to guest-physical addresses, by walking the guest's own page tables. */
#ifndef RINGVM_X86_PAGEWALK_H
#define RINGVM_X86_PAGEWALK_H

#include <stdint.h>

#include "vmm/guest_mem.h"

/* The registers that decide how a linear address is translated (Intel SDM vol. 3A, 4.1). */
struct x86_mmu {
	uint64_t cr0;
	uint64_t cr3;
	uint64_t cr4;
	uint64_t efer;
};

/*
 * Translate linear address va as the vCPU would, without touching accessed/dirty bits: no paging
 * (CR0.PG clear: va itself, truncated to 32 bits), 32-bit paging (4 KiB and, with CR4.PSE, 4 MiB
 * pages), PAE (4 KiB, 2 MiB), 4-level and 5-level (CR4.LA57) long-mode paging (4 KiB, 2 MiB, 1 GiB).
 * Every table entry is read through gm_read(), the one door to guest memory. Permissions are not
 * checked: a debugger may look at what the guest itself may not.
 *
 * On success *gpa is the physical address and *left the bytes from va to the end of its page
 * (so [va, va + *left) maps contiguously). Returns 0, -EFAULT when an entry is not present or a
 * table lies outside guest RAM, -EINVAL for a non-canonical address in long mode.
 */
__attribute__((warn_unused_result)) int x86_gva_to_gpa(const struct guest_mem *gm, const struct x86_mmu *mmu,
						       uint64_t va, uint64_t *gpa, uint64_t *left);

#endif
