/* dvq.c: a guest driver's split virtqueue: add, publish, kick with EVENT_IDX, reap, sleep. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "tests/bench/device/dvq.h"
#include "tests/bench/device/stats.h"

/* used_event lives after avail->ring[size], avail_event after used->ring[size] (2.7.10). */
static volatile uint16_t *used_event(struct dvq *vr)
{
	return (volatile uint16_t *)&vr->avail->ring[vr->size];
}

static volatile uint16_t *avail_event(struct dvq *vr)
{
	return (volatile uint16_t *)&vr->used->ring[vr->size];
}

int dvq_init(struct dvq *vr, struct dmem *mem, uint16_t size, unsigned int slots, bool event_idx,
	       bool indirect)
{
	uint64_t n = size;

	memset(vr, 0, sizeof(*vr));
	vr->kick_fd = vr->call_fd = -1;
	if (!size || (size & (size - 1)) || !slots)
		return -EINVAL;
	if (!indirect && (uint64_t)slots * DVQ_SLOT_DESCS > size)
		return -EINVAL;
	if (indirect && slots > size)
		return -EINVAL;
	vr->mem = mem;
	vr->size = size;
	vr->event_idx = event_idx;
	vr->indirect = indirect;
	vr->desc_gpa = dmem_alloc(mem, 16 * n, 16);
	vr->avail_gpa = dmem_alloc(mem, 6 + 2 * n, 2);
	vr->used_gpa = dmem_alloc(mem, 6 + 8 * n, 4);
	vr->indirect_gpa = indirect ? dmem_alloc(mem, 16ull * DVQ_SLOT_DESCS * slots, 16) : 0;
	if (vr->desc_gpa == UINT64_MAX || vr->avail_gpa == UINT64_MAX || vr->used_gpa == UINT64_MAX ||
	    vr->indirect_gpa == UINT64_MAX)
		return -ENOMEM;
	vr->desc = dmem_ptr(mem, vr->desc_gpa, 16 * n);
	vr->avail = dmem_ptr(mem, vr->avail_gpa, 6 + 2 * n);
	vr->used = dmem_ptr(mem, vr->used_gpa, 6 + 8 * n);
	if (indirect)
		vr->tables = dmem_ptr(mem, vr->indirect_gpa, 16ull * DVQ_SLOT_DESCS * slots);
	vr->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	vr->call_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vr->kick_fd < 0 || vr->call_fd < 0) {
		int err = -errno;

		dvq_destroy(vr);
		return err;
	}
	return 0;
}

void dvq_destroy(struct dvq *vr)
{
	if (vr->kick_fd >= 0)
		close(vr->kick_fd);
	if (vr->call_fd >= 0)
		close(vr->call_fd);
	vr->kick_fd = vr->call_fd = -1;
}

static void put_chain(struct vring_desc *d, uint16_t first, const struct dvq_seg *segs,
		      unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		d[i].addr = segs[i].gpa;
		d[i].len = segs[i].len;
		d[i].flags = (uint16_t)((segs[i].writable ? VRING_DESC_F_WRITE : 0) |
					(i + 1 < n ? VRING_DESC_F_NEXT : 0));
		d[i].next = (uint16_t)(first + i + 1);
	}
}

uint16_t dvq_add(struct dvq *vr, unsigned int slot, const struct dvq_seg *segs, unsigned int n)
{
	uint16_t head;

	if (vr->indirect) {
		/* One descriptor (index = slot) pointing at the slot's own table (2.7.5.3). */
		head = (uint16_t)slot;
		put_chain(&vr->tables[slot * DVQ_SLOT_DESCS], 0, segs, n);
		vr->desc[head].addr = vr->indirect_gpa + 16ull * DVQ_SLOT_DESCS * slot;
		vr->desc[head].len = 16 * n;
		vr->desc[head].flags = VRING_DESC_F_INDIRECT;
		vr->desc[head].next = 0;
	} else {
		head = (uint16_t)(slot * DVQ_SLOT_DESCS);
		put_chain(&vr->desc[head], head, segs, n);
	}
	vr->avail->ring[vr->avail_idx % vr->size] = head;
	vr->avail_idx++;
	return head;
}

int dvq_kick(struct dvq *vr)
{
	uint16_t old = vr->kicked_idx, now = vr->avail_idx;
	bool notify;
	uint64_t one = 1;

	if (old == now)
		return 0;
	/* Descriptors and ring entries before the index that makes them visible (2.7.13: the driver
	   "performs a suitable memory barrier" before updating idx). */
	__atomic_store_n(&vr->avail->idx, now, __ATOMIC_RELEASE);
	/* The idx store before the read of the device's avail_event/flags: a full barrier, or the device
	   could go to sleep having not seen the idx while we read a stale "don't kick" (2.7.13.4). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	vr->kicked_idx = now;
	if (vr->event_idx)
		notify = vring_need_event(*avail_event(vr), now, old);
	else
		notify = !(__atomic_load_n(&vr->used->flags, __ATOMIC_RELAXED) & VRING_USED_F_NO_NOTIFY);
	if (!notify)
		return 0;
	vr->kicks++;
	if (write(vr->kick_fd, &one, sizeof(one)) != sizeof(one))
		return -errno;
	return 0;
}

int dvq_get_used(struct dvq *vr, unsigned int max_slots, unsigned int *slot, uint32_t *len)
{
	/* Acquire: the element and the buffers it describes after the device's idx store. */
	uint16_t idx = __atomic_load_n(&vr->used->idx, __ATOMIC_ACQUIRE);
	struct vring_used_elem e;

	if (idx == vr->last_used)
		return 0;
	if ((uint16_t)(idx - vr->last_used) > vr->size)
		return -EPROTO;
	e = vr->used->ring[vr->last_used % vr->size];
	vr->last_used++;
	if (vr->indirect) {
		if (e.id >= max_slots)
			return -EPROTO;
		*slot = e.id;
	} else {
		if (e.id % DVQ_SLOT_DESCS || e.id / DVQ_SLOT_DESCS >= max_slots)
			return -EPROTO;
		*slot = e.id / DVQ_SLOT_DESCS;
	}
	*len = e.len;
	return 1;
}

int dvq_wait(struct dvq *vr, int timeout_ms)
{
	struct pollfd p = { .fd = vr->call_fd, .events = POLLIN };
	uint64_t v;
	int n;

	if (vr->event_idx)
		*used_event(vr) = vr->last_used;
	else
		vr->avail->flags = 0;
	/* used_event before the re-read of used->idx: else a completion between the two is missed
	   and its interrupt suppressed (2.7.10). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&vr->used->idx, __ATOMIC_ACQUIRE) != vr->last_used)
		return 0;
	if (vr->halt_poll_us) {
		uint64_t end = now_ns() + (uint64_t)vr->halt_poll_us * 1000u;

		do {
			/* Jobs sharing this CPU yield to each other (KVM's halt-poll likewise gives
			   way when another task wants the CPU); one alone spins. */
			if (vr->halt_poll_yield)
				sched_yield();
			else
				__builtin_ia32_pause();
			if (__atomic_load_n(&vr->used->idx, __ATOMIC_ACQUIRE) != vr->last_used) {
				vr->halt_polls++;
				return 0;
			}
		} while (now_ns() < end);
		/* Calls the device sent for replies a poll already took: drop them (the eventfd is
		   non-blocking), then look once more, so the sleep below waits for a new one only. */
		if (read(vr->call_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			return -errno;
		if (__atomic_load_n(&vr->used->idx, __ATOMIC_ACQUIRE) != vr->last_used)
			return 0;
	}
	vr->waits++;
	do
		n = poll(&p, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ETIMEDOUT;
	if (read(vr->call_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}
