/* test_guest_mem.c: the one door to guest memory refuses every range not wholly inside RAM. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/proc_maps.h"
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
	struct pm_map pm;
	TAP_CHECK(pm_at(real.map, &pm) && pm.start == (uintptr_t)real.map && strstr(pm.vm_flags, " hg") &&
			  strstr(pm.vm_flags, " dc") &&
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
	TAP_CHECK(pm_range_free((uintptr_t)ram, 32u << 20), "nothing abandoned: destroyed RAM gives its addresses back");
	TAP_CHECK(gm_create(&real, 32ULL << 20) == 0, "RAM again");
	ram = real.map;
	memset(ram, 0x5a, 32u << 20);
	gm_io_abandoned(); /* as a queue worker that gave up on a request does */
	struct guest_mem later;
	TAP_CHECK(gm_create(&later, 32ULL << 20) == 0, "RAM made after the abandon");
	gm_destroy(&real);
	bool reserved = pm_at(ram, &pm) && pm.start == (uintptr_t)ram && !strcmp(pm.perms, "---p");
	TAP_CHECK(!pm_range_free((uintptr_t)ram, 32u << 20) && reserved,
		  "I/O abandoned while it lived: its addresses stay reserved, inaccessible");
	TAP_CHECK(reserved && pm.rss_kb == 0, "the reservation holds none of its memory");
	void *later_ram = later.map;
	gm_destroy(&later);
	TAP_CHECK(pm_range_free((uintptr_t)later_ram, 32u << 20),
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
