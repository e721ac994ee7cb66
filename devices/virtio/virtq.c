/* virtq.c: split virtqueue validation, chain walking and used-ring publication (virtio 1.x 2.7). */
#include "devices/virtio/virtq.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

/*
 * Guest-shared ring fields are read and written with __atomic builtins: the guest changes them
 * concurrently, and a plain access could be torn or re-read by the compiler after validation.
 */
static uint16_t vq_load16(const uint16_t *p)
{
	return le16toh(__atomic_load_n(p, __ATOMIC_RELAXED));
}

static void vq_store16(uint16_t *p, uint16_t v)
{
	__atomic_store_n(p, htole16(v), __ATOMIC_RELAXED);
}

/* used_event sits after avail->ring[size]; avail_event after used->ring[size] (2.7.10). */
static uint16_t *vq_used_event(const struct virtq *vq)
{
	return (uint16_t *)&vq->avail->ring[vq->size];
}

static uint16_t *vq_avail_event(const struct virtq *vq)
{
	return (uint16_t *)&vq->used->ring[vq->size];
}

int vq_init(struct virtq *vq, const struct guest_mem *gm, const struct vq_layout *layout,
	    uint16_t max_size, uint64_t features, unsigned int max_segs)
{
	memset(vq, 0, sizeof(*vq));
	uint32_t size = layout->size;
	/* 2.7: Queue Size is a power of 2; 4.2.2: it must not exceed QueueNumMax. */
	if (size == 0 || size > 32768 || (size & (size - 1)) || size > max_size)
		return -EINVAL;
	if (layout->desc_gpa % VRING_DESC_ALIGN_SIZE ||
	    layout->avail_gpa % VRING_AVAIL_ALIGN_SIZE || layout->used_gpa % VRING_USED_ALIGN_SIZE)
		return -EINVAL;

	/* 2.7 table "Virtqueue Part Sizes": the event fields are part of the layout either way. */
	uint64_t desc_len = 16ULL * size;
	uint64_t avail_len = 6ULL + 2ULL * size;
	uint64_t used_len = 6ULL + 8ULL * size;
	vq->desc = gm_ptr(gm, layout->desc_gpa, desc_len);
	vq->avail = gm_ptr(gm, layout->avail_gpa, avail_len);
	vq->used = gm_ptr(gm, layout->used_gpa, used_len);
	if (!vq->desc || !vq->avail || !vq->used) {
		memset(vq, 0, sizeof(*vq));
		return -EFAULT;
	}
	/* The host views must be as aligned as the addresses, since the ring fields are accessed in
	   place: vhost-user maps a region at any offset in its fd (mmap_offset), so an aligned
	   guest-physical address can land on an odd host one. */
	if ((uintptr_t)vq->desc % VRING_DESC_ALIGN_SIZE ||
	    (uintptr_t)vq->avail % VRING_AVAIL_ALIGN_SIZE ||
	    (uintptr_t)vq->used % VRING_USED_ALIGN_SIZE) {
		memset(vq, 0, sizeof(*vq));
		return -EINVAL;
	}
	vq->gm = gm;
	vq->size = (uint16_t)size;
	vq->event_idx = features & (1ULL << VIRTIO_RING_F_EVENT_IDX);
	vq->indirect = features & (1ULL << VIRTIO_RING_F_INDIRECT_DESC);
	if (max_segs == 0 || max_segs > size)
		max_segs = size;
	vq->max_segs = max_segs;
	/*
	 * The driver starts from idx 0 on a fresh ring (2.7.13); a moved ring continues where the
	 * previous back-end stopped, which had completed everything it popped. Reading the indices
	 * back from the ring would trust the guest.
	 */
	vq->last_avail = layout->start_idx;
	vq->used_idx = layout->start_idx;
	vq->published = layout->start_idx;
	vq->signalled_used = layout->start_idx;
	return 0;
}

const char *vq_init_why(int err)
{
	if (err == -EFAULT)
		return "a ring area lies outside guest memory (virtio 1.x 2.7)";
	if (err == -EINVAL)
		return "queue size not a power of two within the maximum, or a ring area misaligned, "
		       "in guest memory or where its region is mapped (virtio 1.x 2.7, 2.7.2)";
	return "the ring could not be set up";
}

/* Record why the chain or ring was refused; returns err for the caller's return statement. */
static int vq_refuse(struct virtq *vq, int err, const char *why)
{
	vq->why = why;
	return err;
}

int vq_avail_count(struct virtq *vq)
{
	if (vq->broken)
		return -EPROTO; /* vq->why still says why */
	/*
	 * Acquire: orders this read of avail->idx before our reads of the ring entries and descriptors
	 * the driver wrote before publishing it (pairs with the driver's write barrier, 2.7.13).
	 */
	uint16_t idx = le16toh(__atomic_load_n(&vq->avail->idx, __ATOMIC_ACQUIRE));
	uint16_t pending = (uint16_t)(idx - vq->last_avail);
	if (pending > vq->size) {
		vq->broken = true;
		return vq_refuse(vq, -EPROTO,
				 "avail idx ran more than the queue size ahead of the device (2.7.13)");
	}
	return pending;
}

/* Record one non-empty buffer; enforce readable-before-writable (2.7.4.2) and the 2^32 total. */
static int vq_add_seg(struct virtq *vq, struct vq_chain *c, void *host, uint32_t len,
		      bool writable)
{
	unsigned int n = c->nr_readable + c->nr_writable;
	if (n >= vq->max_segs)
		return vq_refuse(vq, -EBADMSG, "a chain has more buffers than the device's segment "
				 "budget (a descriptor loop?) (2.7.5.3)");
	if (writable) {
		if (c->writable_len + len > UINT32_MAX)
			return vq_refuse(vq, -EBADMSG, "a chain's writable buffers total 4 GiB or more");
		c->writable_len += len;
		c->nr_writable++;
	} else {
		if (c->nr_writable)
			return vq_refuse(vq, -EBADMSG, "a device-readable buffer follows a "
					 "device-writable one in a chain (2.7.4.2)");
		if (c->readable_len + len > UINT32_MAX)
			return vq_refuse(vq, -EBADMSG, "a chain's readable buffers total 4 GiB or more");
		c->readable_len += len;
		c->nr_readable++;
	}
	c->iov[n].iov_base = host;
	c->iov[n].iov_len = len;
	return 0;
}

/* Walk the chain starting at head into c. Every descriptor is copied to a local exactly once. */
static int vq_walk(struct virtq *vq, uint16_t head, struct vq_chain *c)
{
	/* Bytes, not struct pointers: an indirect table need not be aligned, so only memcpy reads it. */
	const uint8_t *table = (const uint8_t *)vq->desc;
	uint32_t table_len = vq->size;
	uint32_t idx = head;
	bool in_indirect = false;
	/* Hop budget: max_segs buffers plus one indirect descriptor; a loop runs out of it. */
	unsigned int hops = vq->max_segs + 1;

	for (;;) {
		if (hops-- == 0)
			return vq_refuse(vq, -EBADMSG, "a chain is longer than the device's segment "
					 "budget (a descriptor loop?) (2.7.5.3)");
		struct vring_desc d;
		memcpy(&d, table + (size_t)idx * sizeof(d), sizeof(d));
		uint64_t addr = le64toh(d.addr);
		uint32_t len = le32toh(d.len);
		uint16_t flags = le16toh(d.flags);
		uint16_t next = le16toh(d.next);

		if (flags & VRING_DESC_F_INDIRECT) {
			/* 2.7.5.3.1: only if negotiated, never nested, never together with NEXT. */
			if (!vq->indirect)
				return vq_refuse(vq, -EBADMSG, "an indirect descriptor without "
						 "VIRTIO_RING_F_INDIRECT_DESC (2.7.5.3.1)");
			if (in_indirect)
				return vq_refuse(vq, -EBADMSG, "an indirect descriptor inside an "
						 "indirect table (2.7.5.3.1)");
			if (flags & VRING_DESC_F_NEXT)
				return vq_refuse(vq, -EBADMSG, "an indirect descriptor with "
						 "VIRTQ_DESC_F_NEXT set (2.7.5.3.1)");
			if (len == 0 || len % sizeof(struct vring_desc) ||
			    len / sizeof(struct vring_desc) > vq->max_segs)
				return vq_refuse(vq, -EBADMSG, "an indirect table whose length is not "
						 "a multiple of 16 within the segment budget (2.7.5.3.1)");
			table = gm_ptr(vq->gm, addr, len);
			if (!table)
				return vq_refuse(vq, -EFAULT, "an indirect table outside guest memory");
			table_len = len / sizeof(struct vring_desc);
			in_indirect = true;
			idx = 0;
			continue;
		}
		if (len) {
			void *host = gm_ptr(vq->gm, addr, len);
			if (!host)
				return vq_refuse(vq, -EFAULT, "a buffer outside guest memory");
			int err = vq_add_seg(vq, c, host, len, flags & VRING_DESC_F_WRITE);
			if (err)
				return err;
		}
		if (!(flags & VRING_DESC_F_NEXT))
			return 0;
		if (next >= table_len)
			return vq_refuse(vq, -EBADMSG, "a descriptor's next index is beyond its table "
					 "(2.7.5.2)");
		idx = next;
	}
}

int vq_pop(struct virtq *vq, struct vq_chain *chain)
{
	int avail = vq_avail_count(vq);
	if (avail <= 0)
		return avail;
	uint16_t head = vq_load16(&vq->avail->ring[vq->last_avail & (vq->size - 1)]);
	if (head >= vq->size) {
		vq->broken = true;
		return vq_refuse(vq, -EPROTO, "an avail ring entry names a descriptor beyond the queue "
				 "size (2.7.6)");
	}
	vq->last_avail++;
	chain->head = head;
	chain->nr_readable = 0;
	chain->nr_writable = 0;
	chain->readable_len = 0;
	chain->writable_len = 0;
	int err = vq_walk(vq, head, chain);
	if (err) {
		chain->nr_readable = chain->nr_writable = 0;
		chain->readable_len = chain->writable_len = 0;
		return err;
	}
	return 1;
}

void vq_unpop(struct virtq *vq)
{
	vq->last_avail--;
}

void vq_push(struct virtq *vq, uint16_t head, uint32_t written)
{
	struct vring_used_elem *e = &vq->used->ring[vq->used_idx & (vq->size - 1)];
	__atomic_store_n(&e->id, htole32(head), __ATOMIC_RELAXED);
	__atomic_store_n(&e->len, htole32(written), __ATOMIC_RELAXED);
	vq->used_idx++;
}

void vq_publish(struct virtq *vq)
{
	if (vq->used_idx == vq->published)
		return;
	/* Release: the used elements written by vq_push() become visible before the new used->idx. */
	__atomic_store_n(&vq->used->idx, htole16(vq->used_idx), __ATOMIC_RELEASE);
	vq->published = vq->used_idx;
}

unsigned int vq_notify_pending(struct virtq *vq)
{
	uint16_t old = vq->signalled_used;
	uint16_t now = vq->published;
	if (old == now)
		return 0;
	/*
	 * Full barrier: orders our used->idx store before the load of used_event / avail->flags, so
	 * a driver that re-enables interrupts after reading the old used->idx is not missed
	 * (mirrors the driver's barrier between writing used_event and re-reading used->idx).
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!vq->event_idx)
		return (vq_load16(&vq->avail->flags) & VRING_AVAIL_F_NO_INTERRUPT) ? 0
										  : (uint16_t)(now - old);
	/* 2.7.10: notify when used_event is in [old, now), computed modulo 2^16. */
	uint16_t event = vq_load16(vq_used_event(vq));
	return vq_need_event(event, now, old) ? (uint16_t)(now - old) : 0;
}

void vq_notify_decided(struct virtq *vq)
{
	vq->signalled_used = vq->published;
}

bool vq_should_notify(struct virtq *vq)
{
	bool want = vq_notify_pending(vq) != 0;
	vq_notify_decided(vq);
	return want;
}

/* 2.7.10: the driver kicks when its new avail idx passes avail_event, i.e. for the chain at
   avail_event: n chains from last_avail on means the one at last_avail + n - 1. */
static bool vq_kicks_set(struct virtq *vq, bool enable, uint16_t n)
{
	if (vq->event_idx) {
		if (enable)
			vq_store16(vq_avail_event(vq), (uint16_t)(vq->last_avail + n - 1));
	} else {
		vq_store16(&vq->used->flags, enable ? 0 : VRING_USED_F_NO_NOTIFY);
	}
	/*
	 * Full barrier: orders the avail_event / flags store before re-reading avail->idx; otherwise
	 * a chain the driver added just before seeing our store would get neither a kick nor a pop.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (vq->broken)
		return false;
	return le16toh(__atomic_load_n(&vq->avail->idx, __ATOMIC_ACQUIRE)) != vq->last_avail;
}

bool vq_enable_kicks(struct virtq *vq, bool enable)
{
	return enable ? vq_enable_kicks_after(vq, 1) : vq_kicks_set(vq, false, 1);
}

bool vq_enable_kicks_after(struct virtq *vq, uint16_t n)
{
	return vq_kicks_set(vq, true, n ? n : 1);
}

uint16_t vq_driver_unconsumed(const struct virtq *vq)
{
	if (!vq->event_idx)
		return 0;
	uint16_t n = (uint16_t)(vq->published - vq_load16(vq_used_event(vq)));
	return n <= vq->size ? n : 0;
}

void vq_ring_words(const struct virtq *vq, struct vq_ring_words *w)
{
	w->avail_flags = vq_load16(&vq->avail->flags);
	w->avail_idx = vq_load16(&vq->avail->idx);
	w->used_event = vq_load16(vq_used_event(vq));
	w->used_flags = vq_load16(&vq->used->flags);
	w->used_idx = vq_load16(&vq->used->idx);
	w->avail_event = vq_load16(vq_avail_event(vq));
}
