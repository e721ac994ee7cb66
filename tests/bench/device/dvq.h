/* dvq.h: the driver's side of a split virtqueue (virtio 1.x 2.7) with EVENT_IDX, in dmem memory. */
#ifndef BENCH_DVQ_H
#define BENCH_DVQ_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/virtio_ring.h>

#include "tests/bench/device/dmem.h"

/*
 * What a guest driver does with one queue: lay out desc/avail/used (2.7.2 alignments), add buffer
 * chains, publish them and kick the device when it asked to be kicked (EVENT_IDX: avail_event,
 * 2.7.10), then read used elements back and sleep on the call eventfd when there are none, having
 * first told the device where to interrupt (used_event) and checked once more.
 * Descriptors are not managed by a free list: each request slot of a job owns a fixed run of
 * DVQ_SLOT_DESCS descriptors (or one descriptor and a private indirect table), so the head index of
 * a chain is the slot's number times DVQ_SLOT_DESCS and a used id maps straight back to its slot.
 * Everything the device writes (used ring) is checked before use: an id that is not a head the driver
 * has outstanding is reported (-EPROTO), never followed.
 * Threading: one thread owns a vring (the job driving that queue).
 */

/* Descriptors one request slot owns (FUSE WRITE: header, data, reply is the longest chain: 3). */
#define DVQ_SLOT_DESCS 4

/* One buffer of a chain, given by its guest-physical address. */
struct dvq_seg {
	uint64_t gpa;
	uint32_t len;
	bool writable;
};

struct dvq {
	const struct dmem *mem;
	uint16_t size;
	bool event_idx;
	bool indirect;
	uint64_t desc_gpa, avail_gpa, used_gpa, indirect_gpa;
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	struct vring_desc *tables; /* indirect: DVQ_SLOT_DESCS entries per slot */
	uint16_t avail_idx;	   /* next avail entry we fill (free-running) */
	uint16_t kicked_idx;	   /* avail->idx at the last notification decision */
	uint16_t last_used;	   /* next used entry we read */
	int kick_fd, call_fd;	   /* eventfds: we write kick, the device writes call */
	unsigned int halt_poll_us; /* dvq_wait looks at the used ring this long before it sleeps */
	bool halt_poll_yield;	   /* ... yielding the CPU between looks (other jobs share it) */
	uint64_t kicks, waits;	   /* counters for the report: notifications sent, sleeps */
	uint64_t halt_polls;	   /* waits a halt-poll ended without sleeping */
};

/*
 * Allocate the rings for `size` entries (a power of two, >= slots * DVQ_SLOT_DESCS unless
 * indirect) in mem, and the kick and call eventfds. 0 or negative errno.
 */
__attribute__((warn_unused_result)) int dvq_init(struct dvq *vr, struct dmem *mem, uint16_t size,
						   unsigned int slots, bool event_idx, bool indirect);
void dvq_destroy(struct dvq *vr);

/*
 * Write slot's chain (n <= DVQ_SLOT_DESCS segments, readable ones first) and put its head in the
 * avail ring; the device sees it only after dvq_kick(). Returns the head index.
 */
uint16_t dvq_add(struct dvq *vr, unsigned int slot, const struct dvq_seg *segs, unsigned int n);

/* Publish the added chains (avail->idx) and kick the device if it wants a notification. 0 or -errno. */
__attribute__((warn_unused_result)) int dvq_kick(struct dvq *vr);

/*
 * The next used element: 1 and its slot and written length, 0 when none. -EPROTO when the device
 * returned an id that is not a slot head below max_slots.
 */
__attribute__((warn_unused_result)) int dvq_get_used(struct dvq *vr, unsigned int max_slots,
						       unsigned int *slot, uint32_t *len);

/*
 * Wait until the device has used something, as a guest vCPU waits for its interrupt: re-enable the
 * interrupt (used_event), then, like KVM's halt-polling of a halted vCPU (its halt_poll_ns, 200 us by
 * default), look at the used ring for up to vr->halt_poll_us before sleeping on the call eventfd.
 * The device still sees an interrupt asked for and sends it, as to a real guest; what the poll
 * saves is the driver's own wake-up, which a KVM guest does not pay either. 0 (something was used,
 * or a call arrived), -ETIMEDOUT after timeout_ms, or a negative errno from poll/read.
 */
__attribute__((warn_unused_result)) int dvq_wait(struct dvq *vr, int timeout_ms);

#endif
