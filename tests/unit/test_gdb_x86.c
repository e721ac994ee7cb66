/* test_gdb_x86.c: the x86-64 register layout the gdb stub sends, and the target description it names. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "tests/unit/tap.h"
#include "vmm/gdb_arch.h"

/* The regnum of register `name` in the description, or -1. */
static int regnum_of(const char *xml, const char *name, unsigned int *bits)
{
	char key[64];
	snprintf(key, sizeof(key), "<reg name=\"%s\" bitsize=\"", name);
	const char *p = strstr(xml, key);
	if (!p)
		return -1;
	*bits = 0;
	sscanf(p + strlen(key), "%u", bits);
	const char *r = strstr(p, "regnum=\"");
	int n = -1;
	if (r)
		sscanf(r + 8, "%d", &n);
	return n;
}

int main(void)
{
	static char xml[16384];
	ssize_t len = gdb_arch_target_xml(xml, sizeof(xml));
	TAP_CHECK(len > 0 && strstr(xml, "<architecture>i386:x86-64</architecture>"), "an x86-64 description");
	TAP_CHECK(gdb_arch_target_xml(xml, 100) == -ENOSPC, "a buffer too small is refused");
	len = gdb_arch_target_xml(xml, sizeof(xml));

	/* Every register once, numbered in wire order, sizes adding up to the 'g' packet. */
	unsigned int count = 0, bits_total = 0;
	for (const char *p = xml; (p = strstr(p, "<reg ")); p++)
		count++;
	TAP_CHECK(count == gdb_arch_nr_regs(), "one <reg> per register");
	struct gdb_arch_regs *r = gdb_arch_regs_new();
	uint8_t v[16];
	for (unsigned int i = 0; i < gdb_arch_nr_regs(); i++)
		bits_total += 8u * (unsigned int)gdb_arch_reg_get(r, i, v);
	TAP_CHECK(bits_total == 8 * gdb_arch_regs_size(), "register sizes add up to the g packet");
	unsigned int bits;
	TAP_CHECK(regnum_of(xml, "rax", &bits) == 0 && bits == 64, "rax is register 0, 64 bits");
	TAP_CHECK(regnum_of(xml, "rip", &bits) == 16 && bits == 64, "rip is register 16 (gdb's amd64 order)");
	TAP_CHECK(regnum_of(xml, "eflags", &bits) == 17 && bits == 32, "eflags 17, 32 bits");
	TAP_CHECK(regnum_of(xml, "cs", &bits) == 18 && regnum_of(xml, "st0", &bits) == 24 && bits == 80,
		  "segments then the x87 stack");
	TAP_CHECK(regnum_of(xml, "cr3", &bits) > 0 && regnum_of(xml, "efer", &bits) > 0 &&
			  strstr(xml, "org.gnu.gdb.i386.core") && strstr(xml, "org.gnu.gdb.i386.sse") &&
			  strstr(xml, "org.gnu.gdb.i386.segments"),
		  "control registers, and gdb's own feature names");

	/* Writes: sizes, selectors, eflags' upper half, the x87 tag word. */
	uint8_t rip[8] = { 0x78, 0x56, 0x34, 0x12, 0, 0, 0, 0 };
	TAP_CHECK(gdb_arch_reg_set(r, 16, rip, 8) == 0 && gdb_arch_pc(r) == 0x12345678, "rip set");
	TAP_CHECK(gdb_arch_reg_set(r, 16, rip, 4) == -EINVAL, "a wrong size is refused");
	TAP_CHECK(gdb_arch_reg_set(r, 9999, rip, 8) == -EINVAL && gdb_arch_reg_get(r, 9999, v) == -EINVAL,
		  "an unknown register is refused");
	uint8_t sel[4] = { 0x10, 0, 0, 0 }, zero[4] = { 0 };
	TAP_CHECK(gdb_arch_reg_set(r, 18, sel, 4) == -EPERM, "changing cs is refused");
	TAP_CHECK(gdb_arch_reg_set(r, 18, zero, 4) == 0, "writing back cs unchanged is fine");
	uint8_t fl[4] = { 0x46, 0x02, 0, 0 };
	TAP_CHECK(gdb_arch_reg_set(r, 17, fl, 4) == 0 && gdb_arch_reg_get(r, 17, v) == 4 && v[0] == 0x46 &&
			  v[1] == 0x02,
		  "eflags round trip");
	/* st0 = 1.0 (exponent 0x3fff, integer bit set); tags: R0 valid, R1 empty ... set through ftag. */
	uint8_t one[10] = { 0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0x3f };
	TAP_CHECK(gdb_arch_reg_set(r, 24, one, 10) == 0, "st0 set");
	uint8_t tag[4] = { 0xfc, 0xff, 0, 0 }; /* R0 not empty, R1..R7 empty */
	TAP_CHECK(gdb_arch_reg_set(r, 34, tag, 4) == 0 && gdb_arch_reg_get(r, 34, v) == 4 && v[0] == 0xfc &&
			  v[1] == 0xff,
		  "ftag: R0 holding 1.0 is valid (00), the others empty (11)");
	uint8_t zero10[10] = { 0 };
	TAP_CHECK(gdb_arch_reg_set(r, 24, zero10, 10) == 0 && gdb_arch_reg_get(r, 34, v) == 4 && v[0] == 0xfd,
		  "ftag: R0 holding +0 is 'zero' (01)");
	uint8_t lo[4] = { 0x44, 0x33, 0x22, 0x11 }, hi[4] = { 0x88, 0x77, 0x66, 0x55 };
	TAP_CHECK(gdb_arch_reg_set(r, 36, lo, 4) == 0 && gdb_arch_reg_set(r, 35, hi, 4) == 0 &&
			  gdb_arch_reg_get(r, 36, v) == 4 && !memcmp(v, lo, 4) && gdb_arch_reg_get(r, 35, v) == 4 &&
			  !memcmp(v, hi, 4),
		  "fioff and fiseg are the two halves of the 64-bit FPU instruction pointer");
	gdb_arch_regs_free(r);

	TAP_CHECK(gdb_arch_hw_point_check(GDB_POINT_WRITE, 0x1000, 8) == 0, "an aligned 8-byte watchpoint");
	TAP_CHECK(gdb_arch_hw_point_check(GDB_POINT_WRITE, 0x1004, 8) == -EINVAL, "an unaligned one is refused");
	TAP_CHECK(gdb_arch_hw_point_check(GDB_POINT_ACCESS, 0x1000, 3) == -EINVAL, "3 bytes is no DR7 length");
	TAP_CHECK(gdb_arch_hw_point_check(GDB_POINT_HW, 0x1003, 1) == 0, "an execute breakpoint anywhere");
	TAP_CHECK(gdb_arch_hw_point_check(GDB_POINT_SW, 0x1000, 1) == -EINVAL, "a software point is no DR slot");
	return tap_done();
}
