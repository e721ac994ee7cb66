/* guest_mem.h: guest RAM and the one door from guest-physical addresses to host pointers. */
#ifndef RINGVM_GUEST_MEM_H
#define RINGVM_GUEST_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Regions: 2 for ringvm's own RAM (below and above the MMIO hole); a vhost-user front-end may send
   up to 8 (devices/vhost_user/vu_msg.h VU_MAX_MEM_REGIONS). */
#define GM_MAX_REGIONS 8

struct gm_region {
	uint64_t gpa;  /* first guest-physical address */
	uint64_t size; /* bytes */
	uint8_t *host; /* host mapping of gpa */
	uint64_t offset; /* offset of this region in the RAM mapping (or the memfd) */
	uint64_t uva;  /* vhost-user: where the front-end maps gpa in its own address space (ring
			  addresses arrive as such); 0 for memory ringvm owns */
};

/*
 * Guest RAM. Immutable after gm_create() returns, so any thread may call gm_ptr() without locks.
 */
struct guest_mem {
	struct gm_region regions[GM_MAX_REGIONS];
	unsigned int nr_regions;
	int memfd;        /* backing memfd, or -1 (gm_create's anonymous RAM, test memory) */
	uint64_t ram_size; /* total RAM bytes */
	void *map;        /* gm_create: one mapping of all the RAM */
	uint64_t abandon_mark; /* gm_create: gm_abandon_mark() when map was made (gm_unmap) */
};

/*
 * Create guest RAM of ram_size bytes, private anonymous memory on a 2 MiB boundary advised for
 * transparent huge pages, laid out around the MMIO hole (vmm/layout.h). Returns 0 or -errno.
 */
__attribute__((warn_unused_result)) int gm_create(struct guest_mem *gm, uint64_t ram_size);

/*
 * Build guest memory over caller-owned host buffers or mappings (unit tests, fuzzers, a vhost-user
 * front-end's memory table). regions[] are copied. -EINVAL for no region or too many, an empty or
 * wrapping region, or two regions overlapping in guest-physical space (or, when they have user
 * addresses, in the front-end's address space): every address must have one meaning.
 */
__attribute__((warn_unused_result)) int gm_init_from(struct guest_mem *gm,
						     const struct gm_region *regions,
						     unsigned int nr);

void gm_destroy(struct guest_mem *gm);

/*
 * Guest memory outlives its mapping's users only while no I/O into it was abandoned. A queue worker
 * that gives up on a request the kernel cannot cancel (a read a hung file system never answers:
 * devices/virtio/worker.h "Stop") leaves the kernel holding the request's user addresses: when the
 * file system answers, minutes later, an io_uring worker copies into them (or, for a write, out of
 * them). Unmapped by then, and the address given to whatever ringvm or an embedding program maps
 * next, that copy would overwrite or leak unrelated memory. So:
 * - gm_io_abandoned(): a worker abandoned I/O (process-wide: the worker does not know which mapping
 *   its request's buffers are in, and over-approximating only keeps address space);
 * - gm_abandon_mark(): the count now; a mapping records it when it is made;
 * - gm_unmap(): gives a mapping back, unless I/O was abandoned since it was made: then the range is
 *   replaced by an inaccessible reservation (PROT_NONE, no memory behind it), so the late copy fails
 *   (EFAULT) and nothing else can ever be placed there. The memory itself is released either way
 *   (pages an abandoned direct I/O pinned stay with that I/O until it ends).
 * Abandons are rare (a hung file system, and each costs the worker's one-second stop wait), so the
 * address space kept is bounded by the guest memory mapped at each.
 */
void gm_io_abandoned(void);
uint64_t gm_abandon_mark(void);
void gm_unmap(void *addr, size_t len, uint64_t mark);

/*
 * The one door: the host pointer for guest range [gpa, gpa + len), or NULL when any byte of it is
 * outside a single RAM region or the range overflows. len 0 is allowed (returns the pointer for gpa
 * if gpa is inside a region). Every access to guest memory in ringvm goes through this function.
 */
void *gm_ptr(const struct guest_mem *gm, uint64_t gpa, uint64_t len);

/*
 * vhost-user: the guest-physical address of the front-end's user address range [uva, uva + len), which
 * must lie inside one region's user range (checked as in gm_ptr: no sum can wrap). 0 and *gpa, or
 * -EFAULT. Only for memory built with user addresses; the result still goes through gm_ptr().
 */
__attribute__((warn_unused_result)) int gm_uva_to_gpa(const struct guest_mem *gm, uint64_t uva,
						       uint64_t len, uint64_t *gpa);

/* Copy helpers over gm_ptr(): 0 or -EFAULT. */
__attribute__((warn_unused_result)) int gm_read(const struct guest_mem *gm, uint64_t gpa, void *dst,
						 uint64_t len);
__attribute__((warn_unused_result)) int gm_write(const struct guest_mem *gm, uint64_t gpa,
						  const void *src, uint64_t len);

#endif
