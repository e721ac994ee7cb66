/* vio.c: virtio-mmio discovery, the status handshake and a driver-side split ring (virtio 1.x 2.7, 4.2). */
#include "firmware/attack/vio.h"

#include "firmware/attack/rt.h"
#include "vmm/layout.h"

#define VIO_MAGIC 0x74726976u

void vdev_find(uint32_t device_id, unsigned int nth, struct vdev *out)
{
	for (unsigned int w = 0; w < LAYOUT_VIRTIO_MMIO_MAX; w++) {
		uint64_t base = LAYOUT_VIRTIO_MMIO_START + w * LAYOUT_VIRTIO_MMIO_SIZE;
		struct vdev d = { .base = base, .window = w };
		if (vreg(&d, VIRTIO_MMIO_MAGIC_VALUE) != VIO_MAGIC)
			break; /* windows are handed out in order: the first empty one ends the list */
		if (vreg(&d, VIRTIO_MMIO_DEVICE_ID) != device_id)
			continue;
		if (nth-- == 0) {
			d.device_id = device_id;
			*out = d;
			return;
		}
	}
	rt_fail("no such virtio device", device_id);
}

uint64_t vdev_features(const struct vdev *d)
{
	vreg_w(d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	uint64_t lo = vreg(d, VIRTIO_MMIO_DEVICE_FEATURES);
	vreg_w(d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	uint64_t hi = vreg(d, VIRTIO_MMIO_DEVICE_FEATURES);
	return lo | hi << 32;
}

void vdev_reset(const struct vdev *d)
{
	vreg_w(d, VIRTIO_MMIO_STATUS, 0);
	CHECK(vreg(d, VIRTIO_MMIO_STATUS) == 0, "status after reset", vreg(d, VIRTIO_MMIO_STATUS));
}

void vdev_negotiate(const struct vdev *d, uint64_t features)
{
	uint64_t want = features | (1ULL << VIRTIO_F_VERSION_1);
	CHECK((vdev_features(d) & want) == want, "device lacks features", want);
	vreg_w(d, VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	vreg_w(d, VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	vreg_w(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	vreg_w(d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)want);
	vreg_w(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	vreg_w(d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(want >> 32));
	uint32_t s = VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK;
	vreg_w(d, VIRTIO_MMIO_STATUS, s);
	CHECK(vreg(d, VIRTIO_MMIO_STATUS) == s, "FEATURES_OK refused", vreg(d, VIRTIO_MMIO_STATUS));
}

uint32_t vdev_driver_ok(const struct vdev *d)
{
	vreg_w(d, VIRTIO_MMIO_STATUS, vreg(d, VIRTIO_MMIO_STATUS) | VIRTIO_CONFIG_S_DRIVER_OK);
	return vreg(d, VIRTIO_MMIO_STATUS);
}

void dq_program(const struct vdev *d, uint16_t index, uint32_t num, uint64_t desc, uint64_t avail,
		uint64_t used, bool ready)
{
	vreg_w(d, VIRTIO_MMIO_QUEUE_SEL, index);
	vreg_w(d, VIRTIO_MMIO_QUEUE_NUM, num);
	vreg_w(d, VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)desc);
	vreg_w(d, VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(desc >> 32));
	vreg_w(d, VIRTIO_MMIO_QUEUE_AVAIL_LOW, (uint32_t)avail);
	vreg_w(d, VIRTIO_MMIO_QUEUE_AVAIL_HIGH, (uint32_t)(avail >> 32));
	vreg_w(d, VIRTIO_MMIO_QUEUE_USED_LOW, (uint32_t)used);
	vreg_w(d, VIRTIO_MMIO_QUEUE_USED_HIGH, (uint32_t)(used >> 32));
	if (ready)
		vreg_w(d, VIRTIO_MMIO_QUEUE_READY, 1);
}

void dq_setup(const struct vdev *d, struct dq *q, uint16_t index, uint16_t size)
{
	vreg_w(d, VIRTIO_MMIO_QUEUE_SEL, index);
	uint32_t max = vreg(d, VIRTIO_MMIO_QUEUE_NUM_MAX);
	CHECK(max >= size, "QueueNumMax too small", max);
	*q = (struct dq){ .d = d, .index = index, .size = size };
	/* Event fields included (2.7: they are part of the layout whether or not EVENT_IDX is on). */
	q->desc = rt_alloc(16u * size, 16);
	q->avail = rt_alloc(6u + 2u * size, 2);
	q->used = rt_alloc(6u + 8u * size, 4);
	dq_program(d, index, size, (uint64_t)q->desc, (uint64_t)q->avail, (uint64_t)q->used, true);
	CHECK(vreg(d, VIRTIO_MMIO_QUEUE_READY) == 1, "QueueReady did not stick", index);
}

void vdev_start(const struct vdev *d, uint64_t extra_features, struct dq *qs, unsigned int nq,
		uint16_t size)
{
	vdev_reset(d);
	vdev_negotiate(d, extra_features);
	for (unsigned int i = 0; i < nq; i++)
		dq_setup(d, &qs[i], (uint16_t)i, size);
	uint32_t s = vdev_driver_ok(d);
	CHECK(s == (VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK |
		    VIRTIO_CONFIG_S_DRIVER_OK),
	      "DRIVER_OK not accepted", s);
}

uint16_t dq_chain(struct dq *q, const struct vbuf *bufs, unsigned int n)
{
	uint16_t head = q->next_desc;
	for (unsigned int i = 0; i < n; i++) {
		uint16_t idx = (uint16_t)((head + i) % q->size);
		struct vring_desc *de = &q->desc[idx];
		de->addr = (uint64_t)bufs[i].addr;
		de->len = bufs[i].len;
		de->flags = (uint16_t)((bufs[i].write ? VRING_DESC_F_WRITE : 0) |
				       (i + 1 < n ? VRING_DESC_F_NEXT : 0));
		de->next = (uint16_t)((idx + 1) % q->size);
	}
	q->next_desc = (uint16_t)((head + n) % q->size);
	return head;
}

void dq_push(struct dq *q, uint16_t head)
{
	q->avail->ring[q->avail_idx % q->size] = head;
	rt_mb(); /* the entry before the index the device acquires */
	q->avail_idx++;
	*(volatile uint16_t *)&q->avail->idx = q->avail_idx;
	rt_mb();
}

void dq_notify(struct dq *q)
{
	vreg_w(q->d, VIRTIO_MMIO_QUEUE_NOTIFY, q->index);
}

void dq_submit(struct dq *q, uint16_t head)
{
	dq_push(q, head);
	dq_notify(q);
}

bool dq_wait(struct dq *q, uint32_t *id, uint32_t *len, unsigned int ms)
{
	uint64_t deadline = rt_deadline_ms(ms);
	while (*(volatile uint16_t *)&q->used->idx == q->last_used) {
		if (rt_past(deadline))
			return false;
		rt_relax();
	}
	rt_mb(); /* the element after the index */
	struct vring_used_elem *e = &q->used->ring[q->last_used % q->size];
	*id = *(volatile uint32_t *)&e->id;
	*len = *(volatile uint32_t *)&e->len;
	q->last_used++;
	return true;
}

uint32_t dq_roundtrip(struct dq *q, const struct vbuf *bufs, unsigned int n)
{
	uint16_t head = dq_chain(q, bufs, n);
	dq_submit(q, head);
	uint32_t id, len;
	CHECK(dq_wait(q, &id, &len, 10000), "no completion within 10 s", head);
	CHECK(id == head, "used id is not the head", id);
	return len;
}

bool vdev_wait_status(const struct vdev *d, uint32_t bit, unsigned int ms)
{
	uint64_t deadline = rt_deadline_ms(ms);
	while (!(vreg(d, VIRTIO_MMIO_STATUS) & bit)) {
		if (rt_past(deadline))
			return false;
		rt_relax();
	}
	return true;
}
