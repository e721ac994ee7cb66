/* fake_ring.h: the driver's side of a split virtqueue in fake guest RAM, for unit tests and fuzzers. */
#ifndef RINGVM_FAKE_RING_H
#define RINGVM_FAKE_RING_H

#include <stdbool.h>
#include <stdint.h>

#include "devices/virtio/virtq.h"

/*
 * Lays out desc/avail/used in a caller-provided RAM buffer (guest-physical address == offset) the way
 * a driver would, adds chains, publishes them, and reads the used ring back. It writes the raw ring
 * words, so a test can also build every malformed shape (loops, bad indices, indirect misuse).
 * Not thread-safe; with a running worker, publish only from the test thread.
 */
struct fake_ring {
	uint8_t *ram;
	uint64_t ram_size;
	uint16_t size;
	uint64_t desc, avail, used; /* guest-physical addresses */
	uint16_t next_desc;         /* next free descriptor (wraps; tests keep few chains in flight) */
	uint16_t avail_idx;         /* next avail entry the driver publishes */
	uint16_t used_seen;         /* used entries consumed by fake_ring_used() */
	uint64_t heap, heap_end;    /* bump allocator for data buffers */
};

/* One buffer of a chain. */
struct fake_buf {
	uint64_t gpa;
	uint32_t len;
	bool writable;
};

/*
 * Rings at gpa `base` (16-aligned), data heap from the end of the rings to the end of RAM.
 * Zeroes the ring area.
 */
void fake_ring_init(struct fake_ring *r, uint8_t *ram, uint64_t ram_size, uint16_t size,
		    uint64_t base);

/* The layout to give vq_init(). */
struct vq_layout fake_ring_layout(const struct fake_ring *r);

/* Allocate len bytes of zeroed guest RAM (16-aligned); 0 when the heap is exhausted. */
uint64_t fake_ring_alloc(struct fake_ring *r, uint64_t len);

/* Host pointer for a gpa inside RAM (tests only; no bounds check beyond an assert-free clamp). */
void *fake_ring_host(struct fake_ring *r, uint64_t gpa);

/* Write descriptor idx of the main table (any index < size) or of a table at gpa `table`. */
void fake_ring_set_desc(struct fake_ring *r, uint16_t idx, uint64_t addr, uint32_t len,
			uint16_t flags, uint16_t next);
void fake_ring_set_table_desc(struct fake_ring *r, uint64_t table, uint16_t idx, uint64_t addr,
			      uint32_t len, uint16_t flags, uint16_t next);

/* Chain bufs[0..n) through consecutive free descriptors; returns the head index. */
uint16_t fake_ring_add_chain(struct fake_ring *r, const struct fake_buf *bufs, unsigned int n);

/*
 * Put bufs[0..n) in a fresh indirect table and a single INDIRECT descriptor pointing at it;
 * returns the head index.
 */
uint16_t fake_ring_add_indirect(struct fake_ring *r, const struct fake_buf *bufs, unsigned int n);

/* Make head available: avail->ring[avail_idx % size] = head, then avail->idx = ++avail_idx. */
void fake_ring_publish(struct fake_ring *r, uint16_t head);

/* Raw writes of avail->idx, avail->flags and used_event (avail->ring[size]). */
void fake_ring_set_avail_idx(struct fake_ring *r, uint16_t idx);
void fake_ring_set_avail_flags(struct fake_ring *r, uint16_t flags);
void fake_ring_set_used_event(struct fake_ring *r, uint16_t v);

/* used->idx, used->flags and avail_event (used->ring[size]) as the device wrote them. */
uint16_t fake_ring_used_idx(const struct fake_ring *r);
uint16_t fake_ring_used_flags(const struct fake_ring *r);
uint16_t fake_ring_avail_event(const struct fake_ring *r);

/* The next used element not yet consumed: true and {id, len}, or false when none. */
bool fake_ring_used(struct fake_ring *r, uint32_t *id, uint32_t *len);

#endif
