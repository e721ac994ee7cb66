/* mmio_driver.c: a virtio-mmio driver over a fake VM, for device unit tests (mmio_driver.h). */
#define _GNU_SOURCE
#include "tests/support/mmio_driver.h"

#include <string.h>
#include <unistd.h>

#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_ring.h>

uint32_t md_rd32(struct mmio_driver *d, uint64_t off)
{
	return fake_vm_read32(d->vm, d->base + off);
}

void md_wr32(struct mmio_driver *d, uint64_t off, uint32_t val)
{
	fake_vm_write32(d->vm, d->base + off, val);
}

int md_bring_up(struct mmio_driver *d, struct vm *vm, unsigned int nq, uint16_t qsize,
		uint64_t features)
{
	const struct fake_vm_mmio *m;
	const struct fake_vm_irqfd *irq;
	uint64_t want = features | (1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_RING_F_INDIRECT_DESC);
	const uint32_t s_feat = VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER;

	if (nq == 0 || nq > MD_MAX_QUEUES)
		return -1;
	d->vm = vm;
	d->nq = nq;
	if (fake_vm_mmios(vm, &m) != 1 || fake_vm_irqfds(vm, &irq) != 1)
		return -2;
	d->base = m[0].base;
	d->gsi = irq[0].gsi;
	if (md_rd32(d, VIRTIO_MMIO_MAGIC_VALUE) != 0x74726976)
		return -3;
	md_wr32(d, VIRTIO_MMIO_STATUS, 0);
	md_wr32(d, VIRTIO_MMIO_STATUS, s_feat);
	md_wr32(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	md_wr32(d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(want >> 32));
	md_wr32(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	md_wr32(d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)want);
	md_wr32(d, VIRTIO_MMIO_STATUS, s_feat | VIRTIO_CONFIG_S_FEATURES_OK);
	if (!(md_rd32(d, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_FEATURES_OK))
		return -4;
	for (unsigned int q = 0; q < nq; q++) {
		struct fake_ring *r = &d->rings[q];
		struct vq_layout l;

		fake_ring_init(r, fake_vm_ram(vm), fake_vm_ram_size(vm), qsize,
			       0x10000 * (uint64_t)(nq - q));
		l = fake_ring_layout(r);
		md_wr32(d, VIRTIO_MMIO_QUEUE_SEL, q);
		if (md_rd32(d, VIRTIO_MMIO_QUEUE_NUM_MAX) < qsize)
			return -5;
		md_wr32(d, VIRTIO_MMIO_QUEUE_NUM, qsize);
		md_wr32(d, VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)l.desc_gpa);
		md_wr32(d, VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(l.desc_gpa >> 32));
		md_wr32(d, VIRTIO_MMIO_QUEUE_AVAIL_LOW, (uint32_t)l.avail_gpa);
		md_wr32(d, VIRTIO_MMIO_QUEUE_AVAIL_HIGH, (uint32_t)(l.avail_gpa >> 32));
		md_wr32(d, VIRTIO_MMIO_QUEUE_USED_LOW, (uint32_t)l.used_gpa);
		md_wr32(d, VIRTIO_MMIO_QUEUE_USED_HIGH, (uint32_t)(l.used_gpa >> 32));
		md_wr32(d, VIRTIO_MMIO_QUEUE_READY, 1);
	}
	md_wr32(d, VIRTIO_MMIO_STATUS, s_feat | VIRTIO_CONFIG_S_FEATURES_OK |
					       VIRTIO_CONFIG_S_DRIVER_OK);
	if (md_rd32(d, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET)
		return -6;
	return 0;
}

uint64_t md_alloc(struct mmio_driver *d, uint64_t len)
{
	return fake_ring_alloc(&d->rings[0], len);
}

void *md_host(struct mmio_driver *d, uint64_t gpa)
{
	return fake_ring_host(&d->rings[0], gpa);
}

bool md_wait_used(struct mmio_driver *d, unsigned int q, uint32_t *id, uint32_t *len)
{
	/* A bound for hangs only: the answer is what the device put in the used ring. */
	for (int i = 0; i < 20000; i++) {
		if (fake_ring_used(&d->rings[q], id, len))
			return true;
		usleep(500);
	}
	return false;
}

uint16_t md_send(struct mmio_driver *d, unsigned int q, const void *req, uint32_t len,
		 const uint32_t *rsplit, uint32_t wcap, const uint32_t *wsplit, uint64_t *wgpa_out)
{
	struct fake_buf bufs[16];
	unsigned int n = 0, i;
	uint32_t prev = 0;
	uint64_t wgpa = 0;
	uint16_t head;

	for (i = 0; rsplit && rsplit[i] && n < 7; i++) {
		bufs[n].gpa = md_alloc(d, rsplit[i] - prev);
		bufs[n].len = rsplit[i] - prev;
		bufs[n].writable = false;
		memcpy(md_host(d, bufs[n].gpa), (const char *)req + prev, bufs[n].len);
		prev = rsplit[i];
		n++;
	}
	if (len > prev) {
		bufs[n].gpa = md_alloc(d, len - prev);
		bufs[n].len = len - prev;
		bufs[n].writable = false;
		memcpy(md_host(d, bufs[n].gpa), (const char *)req + prev, bufs[n].len);
		n++;
	}
	if (wcap) {
		wgpa = md_alloc(d, wcap);
		prev = 0;
		for (i = 0; wsplit && wsplit[i] && n < 15; i++) {
			bufs[n++] = (struct fake_buf){ wgpa + prev, wsplit[i] - prev, true };
			prev = wsplit[i];
		}
		bufs[n++] = (struct fake_buf){ wgpa + prev, wcap - prev, true };
	}
	head = fake_ring_add_chain(&d->rings[q], bufs, n);
	fake_ring_publish(&d->rings[q], head);
	fake_vm_kick(d->vm, d->base + VIRTIO_MMIO_QUEUE_NOTIFY, q);
	if (wgpa_out)
		*wgpa_out = wgpa;
	return head;
}

int64_t md_roundtrip(struct mmio_driver *d, unsigned int q, const void *req, uint32_t len,
		     const uint32_t *rsplit, uint32_t wcap, const uint32_t *wsplit, void *out)
{
	uint32_t id, used;
	uint64_t wgpa;

	md_send(d, q, req, len, rsplit, wcap, wsplit, &wgpa);
	if (!md_wait_used(d, q, &id, &used))
		return -1;
	if (wcap && out)
		memcpy(out, md_host(d, wgpa), wcap);
	return used;
}
