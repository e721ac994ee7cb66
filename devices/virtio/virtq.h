/* virtq.h: the device side of a split virtqueue (virtio 1.x section 2.7), and a Reader/Writer over a chain. */
#ifndef RINGVM_VIRTQ_H
#define RINGVM_VIRTQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <linux/virtio_ring.h>

#include "vmm/guest_mem.h"

/*
 * A split virtqueue in guest memory, as the driver lays it out (2.7, alignments from 2.7.2):
 *
 *   descriptor table (16-byte aligned)   avail ring (2-aligned)         used ring (4-aligned)
 *   +------+------+-------+------+       +-------+-----+--------+----+  +-------+-----+-----------+----+
 *   | addr | len  | flags | next | x N   | flags | idx | ring[N] | ue |  | flags | idx | {id,len}[N] | ae |
 *   +------+------+-------+------+       +-------+-----+--------+----+  +-------+-----+-----------+----+
 *                                          ue = used_event (EVENT_IDX)     ae = avail_event (EVENT_IDX)
 *
 * The driver writes descriptors and avail; the device (us) writes used. Everything read from guest
 * memory is hostile: the three areas are checked once, over their full length, by vq_init(); every
 * descriptor is copied into a local before it is looked at; a broken ring is reported (-EPROTO) so the
 * transport can set DEVICE_NEEDS_RESET (2.1.2), never obeyed and never a crash.
 *
 * Threading: a struct virtq is owned by exactly one thread at a time: the transport's vCPU thread until
 * activation, then the queue's worker thread (worker.h) until it is stopped.
 */

/* Where the driver put the rings; filled from the transport's queue registers. */
struct vq_layout {
	uint16_t size; /* Queue Size: a power of 2, 1..32768 (2.7: "Queue Size ... power of 2") */
	uint64_t desc_gpa;
	uint64_t avail_gpa;
	uint64_t used_gpa;
	/* First avail entry to pop, and where the used ring continues: 0 for a fresh ring (2.7.13);
	 * the index an earlier back-end stopped at when vhost-user moves a running ring
	 * (SET_VRING_BASE). Every chain before it is taken as completed. */
	uint16_t start_idx;
};

struct virtq {
	const struct guest_mem *gm;
	uint16_t size;
	bool event_idx; /* VIRTIO_RING_F_EVENT_IDX negotiated */
	bool indirect;  /* VIRTIO_RING_F_INDIRECT_DESC negotiated */
	bool broken;    /* a driver bug was seen; the queue stops popping until reset */
	const char *why; /* the rule the driver broke, for the operator: set with every -EPROTO,
			    -EBADMSG and -EFAULT from vq_avail_count()/vq_pop() (a static string) */

	/* Host views of the three areas, valid over their full length (checked by vq_init). */
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;

	uint16_t last_avail; /* next avail ring entry to pop (free-running, wraps at 2^16) */
	uint16_t used_idx;   /* next used ring entry to fill; published to used->idx by vq_publish() */
	uint16_t published;  /* used->idx as we last wrote it (the guest may scribble on the ring) */
	uint16_t signalled_used; /* `published` when the driver was last considered for notification */

	unsigned int max_segs; /* hop budget: descriptors in one chain, direct + indirect (<= size) */
};

/*
 * A popped descriptor chain, already walked and validated: the guest buffers as host iovecs, the
 * device-readable ones first (iov[0 .. nr_readable)), then the device-writable ones
 * (iov[nr_readable .. nr_readable + nr_writable)). The iov array is caller-owned storage of max_segs
 * entries (the worker gives each request slot its own). Zero-length descriptors are dropped.
 */
struct vq_chain {
	uint16_t head; /* head descriptor index: the id the used element must carry */
	struct iovec *iov;
	unsigned int nr_readable;
	unsigned int nr_writable;
	uint64_t readable_len; /* total bytes, each < 2^32 by construction of the walk */
	uint64_t writable_len;
};

/*
 * Validate the rings at activation (the driver set DRIVER_OK): size a power of two and at most
 * max_size, each area aligned per 2.7.2 and inside guest RAM over its full length (including the
 * event fields when EVENT_IDX is negotiated). max_segs bounds a chain (clamped to 1..size).
 * Popping starts at layout->start_idx and used entries are written from the same index.
 * Returns 0, -EINVAL (bad size/alignment) or -EFAULT (an area outside RAM); vq_init_why() names it.
 * Caller: the transport, on the thread that handles the status write, before the worker starts.
 */
__attribute__((warn_unused_result)) int vq_init(struct virtq *vq, const struct guest_mem *gm,
						const struct vq_layout *layout, uint16_t max_size,
						uint64_t features, unsigned int max_segs);

/* The rule a vq_init() error stands for, for the operator ("ring area outside guest memory ..."). */
const char *vq_init_why(int err);

/*
 * Number of chains the driver has made available and we have not popped. -EPROTO when avail->idx is
 * more than `size` ahead of what we popped (2.7.13: a driver bug); the queue is then marked broken.
 */
__attribute__((warn_unused_result)) int vq_avail_count(struct virtq *vq);

/*
 * Pop the next available chain into `chain` (whose iov must hold vq->max_segs entries) and walk it:
 *   - every descriptor index < size; every buffer inside guest RAM (gm_ptr over its full length);
 *   - at most max_segs descriptors in total, so a loop (direct or inside an indirect table) ends;
 *   - INDIRECT_DESC only if negotiated, at most once per chain, never with NEXT on the same
 *     descriptor (2.7.5.3.1), table length a non-zero multiple of 16 and <= max_segs entries;
 *     no nested indirect descriptor inside a table;
 *   - every device-readable descriptor before every device-writable one (2.7.4.2);
 *   - total length of each direction below 2^32.
 * Returns 1 (popped), 0 (nothing available), or a negative errno:
 *   -EPROTO  the ring itself is broken (avail idx jump, head index out of range): queue marked broken,
 *            the device must go NEEDS_RESET;
 *   -EBADMSG the chain is malformed (loop, bad index in the chain, indirect misuse, order): the chain is
 *            consumed, chain->head is valid, and the caller should complete it with vq_push(head, 0)
 *            -- or treat it as a driver bug and go NEEDS_RESET; the worker does the latter;
 *   -EFAULT  a buffer outside guest RAM: same as -EBADMSG.
 * Caller: the queue's owner thread.
 */
__attribute__((warn_unused_result)) int vq_pop(struct virtq *vq, struct vq_chain *chain);

/* Give back the last popped chain (backpressure): the next vq_pop() returns it again. */
void vq_unpop(struct virtq *vq);

/*
 * Add a used element {head, written} to the used ring, not yet visible to the driver: the used index
 * is published by vq_publish(), once per worker pass, so a batch costs one barrier and one store.
 */
void vq_push(struct virtq *vq, uint16_t head, uint32_t written);

/* Make all pushed used elements visible (store-release of used->idx after the elements). */
void vq_publish(struct virtq *vq);

/*
 * After vq_publish(): must the driver be interrupted? With EVENT_IDX, true when used_event lies in
 * the window of entries published since the last decision (2.7.10, vring_need_event()); without it,
 * true unless the driver set VRING_AVAIL_F_NO_INTERRUPT. False when nothing was published since the
 * last decision. Closes the window (vq_notify_decided).
 */
bool vq_should_notify(struct virtq *vq);

/*
 * The same question without deciding it: the number of entries in the window when the driver wants
 * an interrupt for them, 0 when it does not (or the window is empty). The window stays open, and
 * grows with each vq_publish(), until vq_notify_decided(): a caller may hold an interrupt back and
 * ask again later, and a due interrupt stays due (2.7.10 requires it be sent, not when).
 */
unsigned int vq_notify_pending(struct virtq *vq);

/* Close the window: what was published so far has been considered for an interrupt. */
void vq_notify_decided(struct virtq *vq);

/*
 * Tell the driver which avail index we want a kick for (EVENT_IDX: avail_event = last_avail), or
 * enable/disable kicks with VRING_USED_F_NO_NOTIFY without EVENT_IDX. Returns true when more chains
 * arrived meanwhile (the caller must pop again instead of sleeping: a kick may have been skipped).
 */
bool vq_enable_kicks(struct virtq *vq, bool enable);

/*
 * Like vq_enable_kicks(vq, true), but with EVENT_IDX ask for the kick only once the driver has
 * added n more chains (avail_event = last_avail + n - 1; n 0 is taken as 1): for a receive queue
 * whose driver re-posts each buffer as it consumes one, n no more than the filled buffers it still
 * holds (vq_driver_unconsumed), so a driver that keeps consuming always reaches the kick. A driver
 * that waits with fewer than n new chains gets no kick: the caller must come back on its own
 * (worker.c sleeps with a timeout then). Without EVENT_IDX the same as enabling kicks (each chain
 * kicks: VRING_USED_F_NO_NOTIFY is all or nothing). Returns true when chains arrived meanwhile.
 */
bool vq_enable_kicks_after(struct virtq *vq, uint16_t n);

/*
 * With EVENT_IDX: how many published used entries the driver has not taken yet, as its used_event
 * says (Linux writes the index of the next entry it will take there at each virtqueue_get_buf while
 * it wants interrupts). A guess from hostile memory, for pacing only: 0 without EVENT_IDX or when
 * the word says nothing sensible (ahead of what we published, or more than the ring holds).
 */
uint16_t vq_driver_unconsumed(const struct virtq *vq);

/*
 * 2.7.10's vring_need_event(): true when `event` (the driver's used_event or avail_event) lies in
 * [old, new_idx), the entries made visible since `old`, computed modulo 2^16.
 */
static inline bool vq_need_event(uint16_t event, uint16_t new_idx, uint16_t old)
{
	return (uint16_t)(new_idx - event - 1) < (uint16_t)(new_idx - old);
}

/* The six index and flag words of a ring as guest memory holds them at the moment of reading. */
struct vq_ring_words {
	uint16_t avail_flags, avail_idx, used_event; /* the driver's: avail ring */
	uint16_t used_flags, used_idx, avail_event;  /* the device's: used ring */
};

/*
 * Read them (relaxed loads through the areas vq_init checked with gm_ptr, event words included
 * whether or not EVENT_IDX was negotiated). For the state report (virtq_state.h): any thread may
 * call it while the VM lives; words written concurrently may be a moment old, never torn.
 */
void vq_ring_words(const struct virtq *vq, struct vq_ring_words *w);

/*
 * Reader and Writer: cursors over the readable / writable part of a chain. Devices parse requests
 * only through these; they never index iovecs or descriptors themselves. All lengths are bytes.
 * They hold host pointers into guest RAM: valid while the VM lives; the contents may change under
 * us at any time (the guest is hostile), so copy what you validate.
 */
struct vq_cursor {
	const struct iovec *iov;
	unsigned int nr;     /* iovecs in this direction */
	unsigned int idx;    /* current iovec */
	size_t off;          /* offset in iov[idx] */
	size_t remaining;    /* bytes left from the cursor to the end of the direction */
};
struct vq_reader {
	struct vq_cursor c;
};
struct vq_writer {
	struct vq_cursor c;
	size_t written; /* bytes written or handed out through vq_writer_iov() so far */
};

void vq_reader_init(struct vq_reader *r, const struct vq_chain *chain);
void vq_writer_init(struct vq_writer *w, const struct vq_chain *chain);

static inline size_t vq_reader_remaining(const struct vq_reader *r)
{
	return r->c.remaining;
}
static inline size_t vq_writer_remaining(const struct vq_writer *w)
{
	return w->c.remaining;
}

/* Copy the next len bytes out / in. All or nothing: -EMSGSIZE (and no progress) if fewer remain. */
__attribute__((warn_unused_result)) int vq_reader_read(struct vq_reader *r, void *dst, size_t len);
__attribute__((warn_unused_result)) int vq_writer_write(struct vq_writer *w, const void *src,
							size_t len);

/* Advance without copying. -EMSGSIZE (no progress) if fewer than len bytes remain. */
__attribute__((warn_unused_result)) int vq_reader_skip(struct vq_reader *r, size_t len);
__attribute__((warn_unused_result)) int vq_writer_skip(struct vq_writer *w, size_t len);

/*
 * Zero-copy: describe the next len bytes as host iovecs in out[0 .. *nr) (at most max entries) and
 * advance past them, for io_uring readv/writev straight between a file and guest memory. Writer
 * bytes handed out count as written (the device reports the real count at completion).
 * -EMSGSIZE if fewer than len bytes remain, -E2BIG if more than max iovecs would be needed; no
 * progress on error. len 0 gives *nr = 0.
 */
__attribute__((warn_unused_result)) int vq_reader_iov(struct vq_reader *r, size_t len,
						      struct iovec *out, unsigned int max,
						      unsigned int *nr);
__attribute__((warn_unused_result)) int vq_writer_iov(struct vq_writer *w, size_t len,
						      struct iovec *out, unsigned int max,
						      unsigned int *nr);

/* Total bytes of an iovec array. */
size_t vq_iov_len(const struct iovec *iov, unsigned int nr);

#endif
