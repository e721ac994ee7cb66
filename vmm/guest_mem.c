/* guest_mem.c: guest RAM (private anonymous memory), and the bounds-checked translation of guest addresses. */
#define _GNU_SOURCE
#include "guest_mem.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "layout.h"

#define GM_HUGE (2ULL << 20)

/*
 * ram_size bytes of private anonymous memory starting on a 2 MiB boundary: KVM maps a huge page
 * into the guest only where host and guest addresses agree modulo its size, and Linux before 6.7
 * does not align large anonymous mappings by itself. NULL with errno on failure.
 */
static void *gm_map_aligned(uint64_t ram_size)
{
	size_t len = (size_t)ram_size + GM_HUGE;
	uint8_t *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	uint8_t *start = (uint8_t *)(((uintptr_t)raw + GM_HUGE - 1) & ~(uintptr_t)(GM_HUGE - 1));
	if (start > raw)
		munmap(raw, (size_t)(start - raw));
	size_t tail = (size_t)(raw + len - (start + ram_size));
	if (tail)
		munmap(start + ram_size, tail);
	return start;
}

int gm_create(struct guest_mem *gm, uint64_t ram_size)
{
	memset(gm, 0, sizeof(*gm));
	gm->memfd = -1;
	if (ram_size < (16ULL << 20) || ram_size % 4096)
		return -EINVAL;

	/*
	 * Private anonymous memory, not a memfd: transparent huge pages back it where the host's THP
	 * mode is "madvise" (Debian's default), and KVM then maps the guest with 2 MiB EPT/NPT pages:
	 * far fewer faults while the guest first touches its RAM, which a nested or emulated host pays
	 * dearly. A memfd is shmem, whose huge pages the host allows separately (shmem_enabled, "never"
	 * by default). The devices run in this process: nothing needs the memory shared.
	 * MAP_NORESERVE: RAM the guest never touches costs the host nothing.
	 */
	void *map = gm_map_aligned(ram_size);
	if (!map)
		return -errno;
	/* Failure only costs speed. */
	(void)madvise(map, ram_size, MADV_HUGEPAGE);
	/* A child (a helper ringvm starts) must not share the guest's pages copy-on-write. */
	(void)madvise(map, ram_size, MADV_DONTFORK);

	gm->map = map;
	gm->ram_size = ram_size;
	gm->abandon_mark = gm_abandon_mark();

	uint64_t low = ram_size < LAYOUT_MMIO_HOLE_START ? ram_size : LAYOUT_MMIO_HOLE_START;
	gm->regions[0] = (struct gm_region){ .gpa = 0, .size = low, .host = map, .offset = 0 };
	gm->nr_regions = 1;
	if (ram_size > low) {
		gm->regions[1] = (struct gm_region){
			.gpa = LAYOUT_MMIO_HOLE_END,
			.size = ram_size - low,
			.host = (uint8_t *)map + low,
			.offset = low,
		};
		gm->nr_regions = 2;
	}
	return 0;
}

int gm_init_from(struct guest_mem *gm, const struct gm_region *regions, unsigned int nr)
{
	memset(gm, 0, sizeof(*gm));
	gm->memfd = -1;
	if (nr == 0 || nr > GM_MAX_REGIONS)
		return -EINVAL;
	for (unsigned int i = 0; i < nr; i++) {
		const struct gm_region *r = &regions[i];
		if (r->size == 0 || r->gpa + r->size < r->gpa || r->uva + r->size < r->uva)
			return -EINVAL;
		for (unsigned int j = 0; j < i; j++) {
			const struct gm_region *o = &regions[j];
			/* [a, a+n) and [b, b+m) overlap when a < b+m and b < a+n (no sum wraps). */
			if (r->gpa < o->gpa + o->size && o->gpa < r->gpa + r->size)
				return -EINVAL;
			if (r->uva && o->uva && r->uva < o->uva + o->size && o->uva < r->uva + r->size)
				return -EINVAL;
		}
		gm->regions[i] = *r;
		gm->ram_size += r->size;
	}
	gm->nr_regions = nr;
	return 0;
}

void gm_destroy(struct guest_mem *gm)
{
	if (gm->map)
		gm_unmap(gm->map, (size_t)gm->ram_size, gm->abandon_mark);
	if (gm->memfd >= 0)
		close(gm->memfd);
	memset(gm, 0, sizeof(*gm));
	gm->memfd = -1;
}

/* I/O abandoned so far in this process (guest_mem.h: gm_unmap). */
static uint64_t gm_abandoned;

void gm_io_abandoned(void)
{
	__atomic_add_fetch(&gm_abandoned, 1, __ATOMIC_SEQ_CST);
}

uint64_t gm_abandon_mark(void)
{
	return __atomic_load_n(&gm_abandoned, __ATOMIC_SEQ_CST);
}

void gm_unmap(void *addr, size_t len, uint64_t mark)
{
	if (gm_abandon_mark() == mark) {
		munmap(addr, len);
		return;
	}
	/* In place of the mapping, atomically: nothing can be mapped at addr in between. Should
	   even that fail (no memory for the kernel's bookkeeping), the mapping stays: memory kept
	   is better than memory reused. */
	(void)mmap(addr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

void *gm_ptr(const struct guest_mem *gm, uint64_t gpa, uint64_t len)
{
	for (unsigned int i = 0; i < gm->nr_regions; i++) {
		const struct gm_region *r = &gm->regions[i];
		if (gpa < r->gpa)
			continue;
		uint64_t off = gpa - r->gpa;
		/* Written as subtractions so that no sum can wrap: off < size, len <= size - off. */
		if (off >= r->size || len > r->size - off)
			continue;
		return r->host + off;
	}
	return NULL;
}

int gm_uva_to_gpa(const struct guest_mem *gm, uint64_t uva, uint64_t len, uint64_t *gpa)
{
	for (unsigned int i = 0; i < gm->nr_regions; i++) {
		const struct gm_region *r = &gm->regions[i];
		if (!r->uva || uva < r->uva)
			continue;
		uint64_t off = uva - r->uva;
		if (off >= r->size || len > r->size - off)
			continue;
		*gpa = r->gpa + off; /* off < size and gpa + size does not wrap (gm_init_from) */
		return 0;
	}
	return -EFAULT;
}

int gm_read(const struct guest_mem *gm, uint64_t gpa, void *dst, uint64_t len)
{
	const void *src = gm_ptr(gm, gpa, len);
	if (!src)
		return -EFAULT;
	memcpy(dst, src, len);
	return 0;
}

int gm_write(const struct guest_mem *gm, uint64_t gpa, const void *src, uint64_t len)
{
	void *dst = gm_ptr(gm, gpa, len);
	if (!dst)
		return -EFAULT;
	memcpy(dst, src, len);
	return 0;
}
