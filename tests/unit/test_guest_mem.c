/* test_guest_mem.c: the one door to guest memory refuses every range not wholly inside RAM. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "tests/unit/tap.h"
#include "vmm/bus.h"
#include "vmm/guest_mem.h"
#include "vmm/layout.h"

static int reads;
static void dummy_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	reads++;
	memset(data, (int)off, len);
}
static const struct bus_ops dummy_ops = { .read = dummy_read };

/* The VmFlags line of the mapping that starts at addr in /proc/self/smaps (" rd wr ... hg dd"). */
static int vm_flags(const void *addr, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[512];
	bool in = false;
	int ret = -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		char c;
		if (sscanf(line, "%lx-%lx%c", &start, &end, &c) == 3 && c == ' ')
			in = start == (unsigned long)addr;
		else if (in && !strncmp(line, "VmFlags:", 8)) {
			snprintf(out, len, "%s", line + 8);
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* Nothing is mapped in [addr, addr + len): a mapping placed there without replacing one succeeds. */
static bool addr_free(void *addr, size_t len)
{
	void *p = mmap(addr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		return false;
	munmap(p, len);
	return p == addr;
}

/* The mapping starting at addr has these permissions ("rw-p") and, when rss_kb, its Rss. */
static bool map_is(const void *addr, const char *perms, long *rss_kb)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return false;
	char line[512], p[5] = "";
	bool in = false, found = false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		char c;
		if (sscanf(line, "%lx-%lx %4s%c", &start, &end, p, &c) == 4 && c == ' ') {
			if (in)
				break;
			in = start == (unsigned long)addr;
			found = in && !strcmp(p, perms);
			if (found && !rss_kb)
				break;
		} else if (in && rss_kb && sscanf(line, "Rss: %ld kB", rss_kb) == 1) {
			break;
		}
	}
	fclose(f);
	return found;
}

int main(void)
{
	static uint8_t low[8192], high[4096];
	struct gm_region r[2] = { { .gpa = 0, .size = sizeof(low), .host = low },
				  { .gpa = 1ULL << 32, .size = sizeof(high), .host = high } };
	struct guest_mem gm;
	TAP_CHECK(gm_init_from(&gm, r, 2) == 0, "test memory built");
	TAP_CHECK(gm_ptr(&gm, 0, 8192) == low, "whole first region");
	TAP_CHECK(gm_ptr(&gm, 8191, 1) == low + 8191, "last byte");
	TAP_CHECK(gm_ptr(&gm, 8191, 2) == NULL, "range crossing the end of a region");
	TAP_CHECK(gm_ptr(&gm, 8192, 0) == NULL, "zero-length range just past the end");
	TAP_CHECK(gm_ptr(&gm, 8192, 1) == NULL, "gap between regions");
	TAP_CHECK(gm_ptr(&gm, (1ULL << 32) + 4095, 1) == high + 4095, "second region");
	TAP_CHECK(gm_ptr(&gm, 1, UINT64_MAX) == NULL, "length overflow");
	TAP_CHECK(gm_ptr(&gm, UINT64_MAX, 2) == NULL, "address overflow");
	TAP_CHECK(gm_ptr(&gm, (1ULL << 32) + 1, UINT64_MAX - (1ULL << 32)) == NULL, "huge length in region 2");
	uint32_t v = 0x11223344, w = 0;
	TAP_CHECK(gm_write(&gm, 100, &v, 4) == 0 && gm_read(&gm, 100, &w, 4) == 0 && w == v, "write then read");
	TAP_CHECK(gm_write(&gm, 8190, &v, 4) == -EFAULT && gm_read(&gm, 8190, &w, 4) == -EFAULT,
		  "copies across the end fail with -EFAULT");
	TAP_CHECK(gm_init_from(&gm, r, 0) == -EINVAL && gm_init_from(&gm, r, GM_MAX_REGIONS + 1) == -EINVAL,
		  "region count checked");

	/* vhost-user: front-end user addresses translate to guest-physical inside one region only. */
	struct gm_region u[2] = { { .gpa = 0, .size = sizeof(low), .host = low, .uva = 0x7f0000000000 },
				  { .gpa = 1ULL << 32, .size = sizeof(high), .host = high,
				    .uva = 0x7f0000010000 } };
	uint64_t g = 0;
	TAP_CHECK(gm_init_from(&gm, u, 2) == 0, "memory with front-end user addresses built");
	TAP_CHECK(gm_uva_to_gpa(&gm, 0x7f0000000010, 16, &g) == 0 && g == 0x10, "uva -> gpa, region 1");
	TAP_CHECK(gm_uva_to_gpa(&gm, 0x7f0000010000 + 4095, 1, &g) == 0 && g == (1ULL << 32) + 4095,
		  "uva -> gpa, last byte of region 2");
	TAP_CHECK(gm_uva_to_gpa(&gm, 0x7f0000000000 + 8191, 2, &g) == -EFAULT,
		  "a user range crossing a region's end is refused");
	TAP_CHECK(gm_uva_to_gpa(&gm, 0x7f0000002000, 1, &g) == -EFAULT, "a user address between regions");
	TAP_CHECK(gm_uva_to_gpa(&gm, 0x7f0000000001, UINT64_MAX, &g) == -EFAULT, "user length overflow");
	TAP_CHECK(gm_uva_to_gpa(&gm, 0, 1, &g) == -EFAULT, "user address 0 means none");
	struct gm_region ov[2] = { u[0], u[1] };
	ov[1].gpa = 4096;
	TAP_CHECK(gm_init_from(&gm, ov, 2) == -EINVAL, "regions overlapping in guest-physical space refused");
	ov[1] = u[1];
	ov[1].uva = u[0].uva + 4096;
	TAP_CHECK(gm_init_from(&gm, ov, 2) == -EINVAL, "regions overlapping in user space refused");
	ov[1].uva = UINT64_MAX - 10;
	TAP_CHECK(gm_init_from(&gm, ov, 2) == -EINVAL, "a user range that wraps refused");

	struct guest_mem real;
	TAP_CHECK(gm_create(&real, 64ULL << 20) == 0 && real.nr_regions == 1,
		  "RAM below the hole: one region");
	char flags[512];
	TAP_CHECK(vm_flags(real.map, flags, sizeof(flags)) == 0 && strstr(flags, " hg") && strstr(flags, " dc") &&
			  (uintptr_t)real.map % (2u << 20) == 0,
		  "guest RAM starts on a 2 MiB boundary, is advised for huge pages (hg), and is not copied to forked "
		  "children (dc)");
	gm_destroy(&real);
	TAP_CHECK(gm_create(&real, LAYOUT_MMIO_HOLE_START + (64ULL << 20)) == 0 && real.nr_regions == 2 &&
			  real.regions[1].gpa == LAYOUT_MMIO_HOLE_END && real.regions[1].size == 64ULL << 20,
		  "RAM above the hole: split at the MMIO hole");
	TAP_CHECK(gm_ptr(&real, LAYOUT_MMIO_HOLE_START, 1) == NULL, "the MMIO hole is not RAM");
	gm_destroy(&real);
	TAP_CHECK(gm_create(&real, 1000) == -EINVAL, "tiny or unaligned RAM refused");

	/* Unmapping with I/O abandoned (guest_mem.h: gm_unmap). */
	TAP_CHECK(gm_create(&real, 32ULL << 20) == 0, "RAM for the unmapping rule");
	void *ram = real.map;
	gm_destroy(&real);
	TAP_CHECK(addr_free(ram, 32u << 20), "nothing abandoned: destroyed RAM gives its addresses back");
	TAP_CHECK(gm_create(&real, 32ULL << 20) == 0, "RAM again");
	ram = real.map;
	memset(ram, 0x5a, 32u << 20);
	gm_io_abandoned(); /* as a queue worker that gave up on a request does */
	struct guest_mem later;
	TAP_CHECK(gm_create(&later, 32ULL << 20) == 0, "RAM made after the abandon");
	gm_destroy(&real);
	TAP_CHECK(!addr_free(ram, 32u << 20) && map_is(ram, "---p", NULL),
		  "I/O abandoned while it lived: its addresses stay reserved, inaccessible");
	long rss = -1;
	TAP_CHECK(map_is(ram, "---p", &rss) && rss == 0, "the reservation holds none of its memory");
	void *later_ram = later.map;
	gm_destroy(&later);
	TAP_CHECK(addr_free(later_ram, 32u << 20),
		  "RAM made after the abandon (no request of before can point into it): given back");

	struct bus bus;
	memset(&bus, 0, sizeof(bus));
	TAP_CHECK(bus_add(&bus, 0x100, 8, &dummy_ops, NULL) == 0, "bus range added");
	TAP_CHECK(bus_add(&bus, 0x107, 2, &dummy_ops, NULL) == -EEXIST, "overlapping range refused");
	TAP_CHECK(bus_add(&bus, 0x108, 0, &dummy_ops, NULL) == -EINVAL, "empty range refused");
	TAP_CHECK(bus_add(&bus, UINT64_MAX, 2, &dummy_ops, NULL) == -EINVAL, "wrapping range refused");
	uint8_t d[4] = { 0 };
	TAP_CHECK(bus_read(&bus, 0x102, d, 1) == 0 && d[0] == 2 && reads == 1, "read dispatched with offset");
	TAP_CHECK(bus_read(&bus, 0x107, d, 2) == -ENOENT && d[0] == 0xff, "access straddling the end unmapped");
	TAP_CHECK(bus_write(&bus, 0x100, d, 1) == -ENOENT, "write to a range without write op: unmapped");
	return tap_done();
}
