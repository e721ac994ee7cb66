/* vio.h: the driver side of virtio-mmio for the attack payloads: device discovery, status, split rings. */
#ifndef ATTACK_VIO_H
#define ATTACK_VIO_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_ring.h>

/* A device in one of ringvm's virtio-mmio windows (vmm/layout.h). */
struct vdev {
	uint64_t base;
	uint32_t device_id;
	unsigned int window;
};

/* The nth (0-based) window holding device_id; fails the case when there is none. */
void vdev_find(uint32_t device_id, unsigned int nth, struct vdev *out);

/* 32-bit register access at an offset of the window (4.2.2.2: the only width registers honour). */
static inline uint32_t vreg(const struct vdev *d, uint32_t off)
{
	return *(volatile uint32_t *)(d->base + off);
}
static inline void vreg_w(const struct vdev *d, uint32_t off, uint32_t v)
{
	*(volatile uint32_t *)(d->base + off) = v;
}

/* The 64 feature bits the device offers. */
uint64_t vdev_features(const struct vdev *d);

/* Write 0 to Status and check it reads back 0. */
void vdev_reset(const struct vdev *d);

/* ACKNOWLEDGE, DRIVER, driver features, FEATURES_OK; checks FEATURES_OK stuck. */
void vdev_negotiate(const struct vdev *d, uint64_t features);

/* Status |= DRIVER_OK; returns the status read back. */
uint32_t vdev_driver_ok(const struct vdev *d);

/* The rings of a queue, driver side. Descriptors are handed out round-robin from next_desc. */
struct dq {
	const struct vdev *d;
	uint16_t index, size;
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint16_t avail_idx; /* next avail->idx to publish */
	uint16_t last_used; /* used elements consumed */
	uint16_t next_desc;
};

/* Allocate rings of `size` entries and program queue `index` (QueueSel, Num, addresses, Ready). */
void dq_setup(const struct vdev *d, struct dq *q, uint16_t index, uint16_t size);

/* Program queue registers with raw values (attacks on the layout): no checks. */
void dq_program(const struct vdev *d, uint16_t index, uint32_t num, uint64_t desc, uint64_t avail,
		uint64_t used, bool ready);

/* Reset, negotiate VERSION_1 (+ extra), set up queues 0..nq-1 of `size`, DRIVER_OK; checks it. */
void vdev_start(const struct vdev *d, uint64_t extra_features, struct dq *qs, unsigned int nq,
		uint16_t size);

/* One guest buffer of a chain. */
struct vbuf {
	const void *addr;
	uint32_t len;
	bool write;
};

/* Write n descriptors (NEXT-linked) for bufs from next_desc; returns the head index. */
uint16_t dq_chain(struct dq *q, const struct vbuf *bufs, unsigned int n);

/* Put head on the avail ring, publish avail->idx, notify. */
void dq_submit(struct dq *q, uint16_t head);
/* Publish only (no notify) / notify only. */
void dq_push(struct dq *q, uint16_t head);
void dq_notify(struct dq *q);

/*
 * Wait up to ms for the next used element: true with {id, len} (consumed), false on timeout.
 */
bool dq_wait(struct dq *q, uint32_t *id, uint32_t *len, unsigned int ms);

/* Chain + submit + wait; fails the case on timeout or a wrong id. Returns the used length. */
uint32_t dq_roundtrip(struct dq *q, const struct vbuf *bufs, unsigned int n);

/* Wait up to ms for Status to carry bit `bit`; true when it did. */
bool vdev_wait_status(const struct vdev *d, uint32_t bit, unsigned int ms);

#endif
