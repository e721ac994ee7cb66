/* test_pagewalk.c: the debugger's page-table walk, against tables built by hand in fake guest memory. */
#include <errno.h>
#include <string.h>

#include "arch/x86/pagewalk.h"
#include "tests/unit/tap.h"

#define RAM_SIZE (4u << 20)
#define P 0x1ULL
#define RW 0x2ULL
#define PS 0x80ULL
#define NX (1ULL << 63)
#define CR0_PG (1ULL << 31)
#define CR4_PSE (1ULL << 4)
#define CR4_PAE (1ULL << 5)
#define CR4_LA57 (1ULL << 12)
#define EFER_LMA (1ULL << 10)

static uint8_t ram[RAM_SIZE] __attribute__((aligned(4096)));

static void put64(uint64_t gpa, uint64_t v)
{
	memcpy(ram + gpa, &v, 8);
}

static void put32(uint64_t gpa, uint32_t v)
{
	memcpy(ram + gpa, &v, 4);
}

/* Translate and compare; *left is checked when want_left is not 0. */
static int xlate(const struct guest_mem *gm, const struct x86_mmu *m, uint64_t va, uint64_t want,
		 uint64_t want_left)
{
	uint64_t gpa = 0, left = 0;
	int ret = x86_gva_to_gpa(gm, m, va, &gpa, &left);
	return ret == 0 && gpa == want && (!want_left || left == want_left);
}

static int xlate_err(const struct guest_mem *gm, const struct x86_mmu *m, uint64_t va)
{
	uint64_t gpa, left;
	return x86_gva_to_gpa(gm, m, va, &gpa, &left);
}

int main(void)
{
	struct gm_region r = { .gpa = 0, .size = RAM_SIZE, .host = ram };
	struct guest_mem gm;
	TAP_CHECK(gm_init_from(&gm, &r, 1) == 0, "fake guest memory");

	/* No paging: linear is physical, truncated to 32 bits. */
	struct x86_mmu flat = { .cr0 = 0x11 };
	TAP_CHECK(xlate(&gm, &flat, 0x12345, 0x12345, 0x1000 - 0x345), "paging off: identity");
	TAP_CHECK(xlate(&gm, &flat, 0x100012345ULL, 0x12345, 0), "paging off: 32-bit linear addresses");

	/*
	 * 4-level paging, tables at 0x1000 (PML4), 0x2000 (PDPT), 0x3000 (PD), 0x4000 (PT):
	 *   0xffffffff80000000 + 0x5000 -> 4 KiB page at 0x200000 (PML4[511], PDPT[510], PD[0], PT[5])
	 *   0x0000000000400000          -> 2 MiB page at 0x200000 (PML4[0], PDPT[0] = PD 0xc000, PD[2])
	 *   0x0000008040000000          -> 1 GiB page at 0x40000000 (PML4[1], PDPT 0xd000[1])
	 */
	put64(0x1000 + 511 * 8, 0x2000 | P | RW);
	put64(0x2000 + 510 * 8, 0x3000 | P | RW);
	put64(0x3000 + 0 * 8, 0x4000 | P | RW);
	put64(0x4000 + 5 * 8, 0x200000 | P | RW | NX);
	put64(0x1000 + 0 * 8, 0xb000 | P);
	put64(0xb000 + 0 * 8, 0xc000 | P);
	put64(0xc000 + 2 * 8, 0x200000 | P | PS);
	put64(0x1000 + 1 * 8, 0xd000 | P);
	put64(0xd000 + 1 * 8, 0x40000000ULL | P | PS);
	struct x86_mmu lm = { .cr0 = CR0_PG | 1, .cr3 = 0x1000, .cr4 = CR4_PAE, .efer = EFER_LMA | 0x100 };
	TAP_CHECK(xlate(&gm, &lm, 0xffffffff80005123ULL, 0x200123, 0x1000 - 0x123),
		  "4-level: a 4 KiB page in the upper half (NX ignored)");
	TAP_CHECK(xlate(&gm, &lm, 0x400000 + 0x12345, 0x200000 + 0x12345, 0x200000 - 0x12345),
		  "4-level: a 2 MiB page");
	TAP_CHECK(xlate(&gm, &lm, 0x8040000000ULL + 0x123456, 0x40123456, (1ULL << 30) - 0x123456),
		  "4-level: a 1 GiB page (the physical address need not be RAM)");
	lm.cr3 = 0x1000 | 0x5; /* PCID bits in CR3[11:0] are not part of the table address */
	TAP_CHECK(xlate(&gm, &lm, 0xffffffff80005000ULL, 0x200000, 0), "CR3's low bits (PCID) are ignored");
	lm.cr3 = 0x1000;
	TAP_CHECK(xlate_err(&gm, &lm, 0xffffffff80006000ULL) == -EFAULT, "a PTE not present: -EFAULT");
	TAP_CHECK(xlate_err(&gm, &lm, 0xffffffff40000000ULL) == -EFAULT, "a PDPTE not present: -EFAULT");
	TAP_CHECK(xlate_err(&gm, &lm, 0x0000800000000000ULL) == -EINVAL, "a non-canonical address: -EINVAL");
	TAP_CHECK(xlate_err(&gm, &lm, 0xffff7fffffffffffULL) == -EINVAL, "non-canonical below the upper half");
	/* A table pointer outside guest RAM is refused by the door, not followed. */
	put64(0x1000 + 2 * 8, 0x7ffff000ULL | P);
	TAP_CHECK(xlate_err(&gm, &lm, 0x10000000000ULL) == -EFAULT, "a table outside guest RAM: -EFAULT");
	lm.cr3 = RAM_SIZE; /* the PML4 itself lies just past the end of RAM */
	TAP_CHECK(xlate_err(&gm, &lm, 0x8000000000ULL) == -EFAULT, "CR3 past the end of RAM: -EFAULT");
	lm.cr3 = 0x1000;

	/* 5-level paging: PML5 at 0x5000, entry 0 -> the PML4 above; entry 511 -> the same PML4. */
	put64(0x5000 + 0 * 8, 0x1000 | P);
	put64(0x5000 + 511 * 8, 0x1000 | P);
	struct x86_mmu la57 = lm;
	la57.cr3 = 0x5000;
	la57.cr4 |= CR4_LA57;
	TAP_CHECK(xlate(&gm, &la57, 0x400000, 0x200000, 0), "5-level: a 2 MiB page through the PML5");
	TAP_CHECK(xlate(&gm, &la57, 0xffffffff80005000ULL, 0x200000, 0), "5-level: upper half (PML5[511])");
	TAP_CHECK(xlate_err(&gm, &la57, 0xfe00000000000000ULL) == -EINVAL, "5-level: 57-bit canonical check");
	TAP_CHECK(xlate_err(&gm, &la57, 0x0000800000400000ULL) == -EFAULT,
		  "5-level: an address canonical only with 57 bits is walked (PML5[256] not present)");

	/* PAE: PDPT at 0x6020 (32-byte aligned), PD at 0x7000, PT at 0x8000. */
	put64(0x6020 + 3 * 8, 0x7000 | P);
	put64(0x7000 + 0 * 8, 0x8000 | P);
	put64(0x8000 + 1 * 8, 0x300000 | P);
	put64(0x7000 + 1 * 8, 0x200000 | P | PS);
	struct x86_mmu pae = { .cr0 = CR0_PG | 1, .cr3 = 0x6020, .cr4 = CR4_PAE };
	TAP_CHECK(xlate(&gm, &pae, 0xc0001010, 0x300010, 0x1000 - 0x10), "PAE: a 4 KiB page");
	TAP_CHECK(xlate(&gm, &pae, 0xc0200010, 0x200010, 0x200000 - 0x10), "PAE: a 2 MiB page");
	TAP_CHECK(xlate_err(&gm, &pae, 0x00001000) == -EFAULT, "PAE: a PDPTE not present");

	/* 32-bit paging: PD at 0x9000, PT at 0xa000; a 4 MiB page with PSE-36 high bits. */
	put32(0x9000 + 1 * 4, 0xa000 | P);
	put32(0xa000 + 2 * 4, 0x123000 | P);
	put32(0x9000 + 2 * 4, 0x00c00000 | P | PS | (0x3u << 13));
	struct x86_mmu p32 = { .cr0 = CR0_PG | 1, .cr3 = 0x9000, .cr4 = CR4_PSE };
	TAP_CHECK(xlate(&gm, &p32, 0x00402abc, 0x123abc, 0), "32-bit: a 4 KiB page");
	TAP_CHECK(xlate(&gm, &p32, 0x00812345, 0x300c12345ULL, 0x400000 - 0x12345),
		  "32-bit: a 4 MiB page with PSE-36 bits");
	p32.cr4 = 0; /* without PSE the PS bit is ignored: the PDE points to a page table at 12 MiB */
	TAP_CHECK(xlate_err(&gm, &p32, 0x00800000) == -EFAULT,
		  "32-bit without PSE: PS ignored, the walk goes on to a table outside RAM");
	TAP_CHECK(xlate_err(&gm, &p32, 0x10000000) == -EFAULT, "32-bit: a PDE not present");
	return tap_done();
}
