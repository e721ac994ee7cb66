/* mmio_driver.h: the guest driver's side of a virtio-mmio device on a fake VM, for unit tests. */
#ifndef RINGVM_MMIO_DRIVER_H
#define RINGVM_MMIO_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

#include "tests/support/fake_ring.h"
#include "tests/support/fake_vm.h"

#define MD_MAX_QUEUES 8

/*
 * What Linux's virtio_mmio driver does, reduced to what tests need: find the device window, reset,
 * negotiate VERSION_1 + INDIRECT_DESC (+ extra device features), lay out every queue's rings low in
 * RAM (highest queue first; the data heap of queue 0 spans the rest of RAM: md_alloc), DRIVER_OK.
 * Then send chains and wait for their used elements. One test thread drives it; the device's
 * workers run on their own threads.
 */
struct mmio_driver {
	struct vm *vm;
	uint64_t base; /* the window's guest-physical base */
	uint32_t gsi;
	unsigned int nq;
	struct fake_ring rings[MD_MAX_QUEUES];
};

/*
 * Bring up the only virtio-mmio window registered on vm: nq queues of qsize entries, 64 KiB apart
 * from gpa 0. Returns 0, or a negative step number saying which step failed.
 */
int md_bring_up(struct mmio_driver *d, struct vm *vm, unsigned int nq, uint16_t qsize,
		uint64_t features);

/* 32-bit register access at an offset in the window. */
uint32_t md_rd32(struct mmio_driver *d, uint64_t off);
void md_wr32(struct mmio_driver *d, uint64_t off, uint32_t val);

/* Guest RAM for buffers (zeroed, 16-aligned; 0 when exhausted) and its host view. */
uint64_t md_alloc(struct mmio_driver *d, uint64_t len);
void *md_host(struct mmio_driver *d, uint64_t gpa);

/* Wait for the next used element of queue q: true with {id, len}, false after 10 s (a hang). */
bool md_wait_used(struct mmio_driver *d, unsigned int q, uint32_t *id, uint32_t *len);

/*
 * Send like md_roundtrip but do not wait: returns the chain's head (the id its used element will
 * carry); *wgpa gets the guest address of the writable buffer (0 when wcap is 0).
 */
uint16_t md_send(struct mmio_driver *d, unsigned int q, const void *req, uint32_t len,
		 const uint32_t *rsplit, uint32_t wcap, const uint32_t *wsplit, uint64_t *wgpa);

/*
 * Send req[0 .. len) as readable descriptors split at the offsets in rsplit (0-terminated, may be
 * NULL), followed by wcap bytes of writable buffer split at wsplit, on queue q; kick; wait for its
 * completion. Returns the used length, or -1 on timeout; the writable bytes are copied to out.
 */
int64_t md_roundtrip(struct mmio_driver *d, unsigned int q, const void *req, uint32_t len,
		     const uint32_t *rsplit, uint32_t wcap, const uint32_t *wsplit, void *out);

#endif
