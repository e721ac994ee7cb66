/* dmem.h: the benchmark driver's guest memory: one sealed memfd shared with the back-end. */
#ifndef BENCH_DMEM_H
#define BENCH_DMEM_H

#include <stddef.h>
#include <stdint.h>

/*
 * The driver plays a guest: its "RAM" is a memfd mapped shared into this process and handed to the
 * back-end by SET_MEM_TABLE as one region at guest-physical address 0. Rings and request buffers are
 * carved from it by a bump allocator at setup; nothing is freed until dmem_destroy().
 * The memfd is sealed against shrinking (F_SEAL_SHRINK), so the back-end's mapping can never turn into
 * SIGBUS under it. Allocation is single-threaded (setup); reads and writes through the returned
 * pointers are the owning job's business.
 */
struct dmem {
	int fd;
	uint8_t *base; /* our mapping; also the region's userspace_addr */
	uint64_t size;
	uint64_t next; /* bump pointer (offset == guest-physical address) */
};

/* Create size bytes (rounded up to 2 MiB) of sealed, shared memory. 0 or negative errno. */
__attribute__((warn_unused_result)) int dmem_create(struct dmem *m, uint64_t size);
void dmem_destroy(struct dmem *m);

/*
 * Allocate len bytes aligned to align (a power of two), zeroed. Returns the guest-physical address,
 * or UINT64_MAX when the memory is exhausted.
 */
uint64_t dmem_alloc(struct dmem *m, uint64_t len, uint64_t align);

/* The one door from a guest-physical range to our pointer: NULL unless [gpa, gpa+len) is inside. */
void *dmem_ptr(const struct dmem *m, uint64_t gpa, uint64_t len);

/* The front-end user address (as SET_VRING_ADDR wants it) of a guest-physical address. */
uint64_t dmem_uaddr(const struct dmem *m, uint64_t gpa);

#endif
