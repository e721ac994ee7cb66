/* mmio.c: the virtio-mmio v2 register file, status state machine, eventfds and queue workers. */
#define _GNU_SOURCE
#include "devices/virtio/mmio.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <linux/virtio_mmio.h>

#include "vmm/layout.h"

/* 4.2.2: MagicValue is "virt" in little-endian; Version 2 is the non-legacy interface. */
#define MMIO_MAGIC 0x74726976u
#define MMIO_VERSION 2u
#define MMIO_VENDOR 0x4d565252u /* "RRVM": any value is allowed; drivers only print it */

/* Ring features every device gets from the transport. */
#define MMIO_TRANSPORT_FEATURES                                                                    \
	((1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_RING_F_EVENT_IDX) |                        \
	 (1ULL << VIRTIO_RING_F_INDIRECT_DESC))

struct mmio_queue {
	/* Registers: written by the driver under t->lock while the device is not live. */
	uint16_t num;
	bool ready;
	uint64_t desc, avail, used;
	int kick_fd;	    /* ioeventfd target; the worker reads it, we own it */
	bool ioeventfd_set; /* KVM delivers QueueNotify writes straight to kick_fd */
	struct virtq vq;    /* owned by the worker while it runs */
	struct vq_worker *worker;
};

struct virtio_mmio {
	struct vm *vm;
	struct virtio_dev *dev;
	uint64_t base;
	uint32_t gsi;
	int irqfd;

	pthread_mutex_t lock; /* protects every field below except those marked atomic */
	uint32_t status;      /* atomic: workers add NEEDS_RESET without the lock */
	uint32_t isr;	      /* atomic: InterruptStatus, set by workers, cleared by InterruptACK */
	uint32_t generation;  /* atomic: ConfigGeneration, bumped by virtio_config_changed */
	uint32_t dev_features_sel;
	uint32_t drv_features_sel;
	uint64_t driver_features;
	uint32_t queue_sel;
	bool live; /* DRIVER_OK accepted: workers running, queue registers locked */
	struct mmio_queue q[VIRTIO_DEV_MAX_QUEUES];
};

static uint64_t mmio_offered(const struct virtio_mmio *t)
{
	return t->dev->features | MMIO_TRANSPORT_FEATURES;
}

static void mmio_raise(struct virtio_mmio *t, uint32_t why)
{
	__atomic_fetch_or(&t->isr, why, __ATOMIC_SEQ_CST);
	/* The ISR bit is set before the edge, so the guest's handler sees why it was called. */
	uint64_t one = 1;
	if (write(t->irqfd, &one, sizeof(one)) < 0)
		return; /* counter saturated: an interrupt is already pending */
}

/* Worker callback: used buffers were published and the driver wants to hear about it. */
static void mmio_vring_interrupt(void *opaque)
{
	mmio_raise(opaque, VIRTIO_MMIO_INT_VRING);
}

/* Driver bug (2.1.2): set DEVICE_NEEDS_RESET and tell the driver through a config interrupt. */
static void mmio_needs_reset(void *opaque)
{
	struct virtio_mmio *t = opaque;
	__atomic_fetch_or(&t->status, VIRTIO_CONFIG_S_NEEDS_RESET, __ATOMIC_SEQ_CST);
	mmio_raise(t, VIRTIO_MMIO_INT_CONFIG);
}

void virtio_config_changed(struct virtio_dev *dev)
{
	struct virtio_mmio *t = dev->transport;
	if (!t)
		return;
	__atomic_fetch_add(&t->generation, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&t->status, __ATOMIC_SEQ_CST) & VIRTIO_CONFIG_S_DRIVER_OK)
		mmio_raise(t, VIRTIO_MMIO_INT_CONFIG);
}

static void mmio_stop_workers(struct virtio_mmio *t)
{
	for (unsigned int i = 0; i < t->dev->nr_queues; i++) {
		vq_worker_stop(t->q[i].worker);
		t->q[i].worker = NULL;
	}
}

/* Status 0 (3.1.1 step 1, 4.2.2.1): stop and drain the workers, then forget everything. */
static void mmio_reset(struct virtio_mmio *t)
{
	mmio_stop_workers(t);
	if (t->live && t->dev->ops->reset)
		t->dev->ops->reset(t->dev);
	t->live = false;
	for (unsigned int i = 0; i < t->dev->nr_queues; i++) {
		struct mmio_queue *q = &t->q[i];
		q->num = 0;
		q->ready = false;
		q->desc = q->avail = q->used = 0;
		memset(&q->vq, 0, sizeof(q->vq));
	}
	t->dev_features_sel = t->drv_features_sel = 0;
	t->driver_features = 0;
	t->dev->driver_features = 0;
	t->queue_sel = 0;
	__atomic_store_n(&t->isr, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&t->status, 0, __ATOMIC_SEQ_CST);
}

/* DRIVER_OK: validate every ready queue, let the device activate, start one worker per queue. */
static int mmio_go_live(struct virtio_mmio *t)
{
	struct virtio_dev *dev = t->dev;
	const struct guest_mem *gm = vm_guest_mem(t->vm);
	for (unsigned int i = 0; i < dev->nr_queues; i++) {
		struct mmio_queue *q = &t->q[i];
		if (!q->ready)
			continue;
		struct vq_layout layout = {
			.size = q->num,
			.desc_gpa = q->desc,
			.avail_gpa = q->avail,
			.used_gpa = q->used,
		};
		int err = vq_init(&q->vq, gm, &layout, dev->queue_max_size, t->driver_features,
				  dev->max_segs);
		if (err)
			return err;
	}
	dev->driver_features = t->driver_features;
	int err = dev->ops->activate(dev, t->driver_features);
	if (err)
		return err;
	t->live = true;
	for (unsigned int i = 0; i < dev->nr_queues; i++) {
		struct mmio_queue *q = &t->q[i];
		if (!q->ready)
			continue;
		struct vq_worker_config cfg = {
			.dev = dev,
			.ops = dev->queue_ops,
			.queue_index = i,
			.vq = &q->vq,
			.priv_size = dev->req_priv_size,
			.kick_fd = q->kick_fd,
			.poll_us = dev->poll_us,
			.max_inflight = dev->max_inflight,
			.allowed_ops = dev->allowed_ops,
			.nr_allowed_ops = dev->nr_allowed_ops,
			.allowed_sqe_flags = dev->allowed_sqe_flags,
			.interrupt = mmio_vring_interrupt,
			.needs_reset = mmio_needs_reset,
			.opaque = t,
		};
		err = vq_worker_start(&cfg, &q->worker);
		if (err)
			return err; /* the caller resets nothing: NEEDS_RESET, workers stop at reset */
	}
	return 0;
}

/*
 * A Status write (2.1, 3.1.1). Bits only accumulate until a write of 0; each new bit needs its
 * predecessor: ACKNOWLEDGE -> DRIVER -> FEATURES_OK -> DRIVER_OK. An out-of-order or clearing
 * write is ignored (the driver sees the unchanged value when it reads Status back).
 */
static void mmio_write_status(struct virtio_mmio *t, uint32_t val)
{
	if (val == 0) {
		mmio_reset(t);
		return;
	}
	uint32_t old = __atomic_load_n(&t->status, __ATOMIC_SEQ_CST);
	uint32_t cur = old & ~(uint32_t)VIRTIO_CONFIG_S_NEEDS_RESET;
	val &= ~(uint32_t)VIRTIO_CONFIG_S_NEEDS_RESET; /* device-owned bit */
	if ((val & cur) != cur)
		return; /* 2.1.1: the driver MUST NOT clear a status bit */
	uint32_t add = val & ~cur;
	if (add & VIRTIO_CONFIG_S_FAILED) {
		__atomic_fetch_or(&t->status, VIRTIO_CONFIG_S_FAILED, __ATOMIC_SEQ_CST);
		add &= ~(uint32_t)VIRTIO_CONFIG_S_FAILED;
	}
	if (add & VIRTIO_CONFIG_S_ACKNOWLEDGE) {
		cur |= VIRTIO_CONFIG_S_ACKNOWLEDGE;
		__atomic_fetch_or(&t->status, VIRTIO_CONFIG_S_ACKNOWLEDGE, __ATOMIC_SEQ_CST);
	}
	if ((add & VIRTIO_CONFIG_S_DRIVER) && (cur & VIRTIO_CONFIG_S_ACKNOWLEDGE)) {
		cur |= VIRTIO_CONFIG_S_DRIVER;
		__atomic_fetch_or(&t->status, VIRTIO_CONFIG_S_DRIVER, __ATOMIC_SEQ_CST);
	}
	if ((add & VIRTIO_CONFIG_S_FEATURES_OK) && (cur & VIRTIO_CONFIG_S_DRIVER)) {
		/* 3.1.1 step 5-6: refuse a subset we did not offer, or a legacy driver (6.1). */
		uint64_t f = t->driver_features;
		if ((f & ~mmio_offered(t)) || !(f & (1ULL << VIRTIO_F_VERSION_1)))
			return;
		cur |= VIRTIO_CONFIG_S_FEATURES_OK;
		__atomic_fetch_or(&t->status, VIRTIO_CONFIG_S_FEATURES_OK, __ATOMIC_SEQ_CST);
	}
	if ((add & VIRTIO_CONFIG_S_DRIVER_OK) && (cur & VIRTIO_CONFIG_S_FEATURES_OK) && !t->live &&
	    !(old & VIRTIO_CONFIG_S_NEEDS_RESET)) {
		__atomic_fetch_or(&t->status, VIRTIO_CONFIG_S_DRIVER_OK, __ATOMIC_SEQ_CST);
		if (mmio_go_live(t) < 0)
			mmio_needs_reset(t);
	}
}

/* Queue registers may change only between FEATURES_OK and DRIVER_OK, on a queue not yet ready. */
static struct mmio_queue *mmio_writable_queue(struct virtio_mmio *t)
{
	uint32_t status = __atomic_load_n(&t->status, __ATOMIC_SEQ_CST);
	if (t->live || (status & VIRTIO_CONFIG_S_DRIVER_OK) ||
	    !(status & VIRTIO_CONFIG_S_FEATURES_OK))
		return NULL;
	if (t->queue_sel >= t->dev->nr_queues)
		return NULL;
	return &t->q[t->queue_sel];
}

static void mmio_set_half(uint64_t *v, bool high, uint32_t val)
{
	if (high)
		*v = (*v & 0xffffffffULL) | ((uint64_t)val << 32);
	else
		*v = (*v & ~0xffffffffULL) | val;
}

static void mmio_write_reg(struct virtio_mmio *t, uint64_t off, uint32_t val)
{
	struct mmio_queue *q;
	switch (off) {
	case VIRTIO_MMIO_DEVICE_FEATURES_SEL:
		t->dev_features_sel = val;
		break;
	case VIRTIO_MMIO_DRIVER_FEATURES_SEL:
		t->drv_features_sel = val;
		break;
	case VIRTIO_MMIO_DRIVER_FEATURES: {
		/* 3.1.1: features are written after DRIVER and frozen by FEATURES_OK. */
		uint32_t status = __atomic_load_n(&t->status, __ATOMIC_SEQ_CST);
		if (!(status & VIRTIO_CONFIG_S_DRIVER) || (status & VIRTIO_CONFIG_S_FEATURES_OK))
			break;
		if (t->drv_features_sel < 2)
			mmio_set_half(&t->driver_features, t->drv_features_sel == 1, val);
		break;
	}
	case VIRTIO_MMIO_QUEUE_SEL:
		t->queue_sel = val;
		break;
	case VIRTIO_MMIO_QUEUE_NUM:
		if ((q = mmio_writable_queue(t)) && !q->ready)
			q->num = val <= 0xffff ? (uint16_t)val : 0;
		break;
	case VIRTIO_MMIO_QUEUE_READY:
		if ((q = mmio_writable_queue(t)))
			q->ready = val & 1;
		break;
	case VIRTIO_MMIO_QUEUE_DESC_LOW:
	case VIRTIO_MMIO_QUEUE_DESC_HIGH:
		if ((q = mmio_writable_queue(t)) && !q->ready)
			mmio_set_half(&q->desc, off == VIRTIO_MMIO_QUEUE_DESC_HIGH, val);
		break;
	case VIRTIO_MMIO_QUEUE_AVAIL_LOW:
	case VIRTIO_MMIO_QUEUE_AVAIL_HIGH:
		if ((q = mmio_writable_queue(t)) && !q->ready)
			mmio_set_half(&q->avail, off == VIRTIO_MMIO_QUEUE_AVAIL_HIGH, val);
		break;
	case VIRTIO_MMIO_QUEUE_USED_LOW:
	case VIRTIO_MMIO_QUEUE_USED_HIGH:
		if ((q = mmio_writable_queue(t)) && !q->ready)
			mmio_set_half(&q->used, off == VIRTIO_MMIO_QUEUE_USED_HIGH, val);
		break;
	case VIRTIO_MMIO_QUEUE_NOTIFY:
		/* Reached only without an ioeventfd for this queue: forward the kick to its eventfd. */
		if (val < t->dev->nr_queues) {
			uint64_t one = 1;
			if (write(t->q[val].kick_fd, &one, sizeof(one)) < 0)
				break; /* saturated: a kick is pending anyway */
		}
		break;
	case VIRTIO_MMIO_INTERRUPT_ACK:
		__atomic_fetch_and(&t->isr, ~val, __ATOMIC_SEQ_CST);
		break;
	case VIRTIO_MMIO_STATUS:
		mmio_write_status(t, val);
		break;
	default:
		break; /* read-only or legacy registers (GuestPageSize, QueueAlign, QueuePFN) */
	}
}

static uint32_t mmio_read_reg(struct virtio_mmio *t, uint64_t off)
{
	const struct mmio_queue *q = t->queue_sel < t->dev->nr_queues ? &t->q[t->queue_sel] : NULL;
	switch (off) {
	case VIRTIO_MMIO_MAGIC_VALUE:
		return MMIO_MAGIC;
	case VIRTIO_MMIO_VERSION:
		return MMIO_VERSION;
	case VIRTIO_MMIO_DEVICE_ID:
		return t->dev->device_id;
	case VIRTIO_MMIO_VENDOR_ID:
		return MMIO_VENDOR;
	case VIRTIO_MMIO_DEVICE_FEATURES:
		if (t->dev_features_sel >= 2)
			return 0;
		return (uint32_t)(mmio_offered(t) >> (32 * t->dev_features_sel));
	case VIRTIO_MMIO_QUEUE_NUM_MAX:
		return q ? t->dev->queue_max_size : 0;
	case VIRTIO_MMIO_QUEUE_READY:
		return q ? q->ready : 0;
	case VIRTIO_MMIO_INTERRUPT_STATUS:
		return __atomic_load_n(&t->isr, __ATOMIC_SEQ_CST);
	case VIRTIO_MMIO_STATUS:
		return __atomic_load_n(&t->status, __ATOMIC_SEQ_CST);
	case VIRTIO_MMIO_SHM_LEN_LOW:
	case VIRTIO_MMIO_SHM_LEN_HIGH:
		return 0xffffffffu; /* 4.2.2: length ~0 means "no shared memory region" */
	case VIRTIO_MMIO_CONFIG_GENERATION:
		return __atomic_load_n(&t->generation, __ATOMIC_SEQ_CST);
	default:
		return 0;
	}
}

static void mmio_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	struct virtio_mmio *t = opaque;
	memset(data, 0, len);
	pthread_mutex_lock(&t->lock);
	if (off >= VIRTIO_MMIO_CONFIG) {
		uint64_t coff = off - VIRTIO_MMIO_CONFIG;
		if (coff < t->dev->config_size && len <= t->dev->config_size - coff)
			t->dev->ops->config_read(t->dev, (uint32_t)coff, data, len);
	} else if (len == 4 && off % 4 == 0) {
		/* 4.2.2.2: registers are accessed 32 bits wide and aligned; others read 0. */
		uint32_t v = mmio_read_reg(t, off);
		memcpy(data, &v, 4);
	}
	pthread_mutex_unlock(&t->lock);
}

static void mmio_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	struct virtio_mmio *t = opaque;
	pthread_mutex_lock(&t->lock);
	if (off >= VIRTIO_MMIO_CONFIG) {
		uint64_t coff = off - VIRTIO_MMIO_CONFIG;
		if (t->dev->ops->config_write && coff < t->dev->config_size &&
		    len <= t->dev->config_size - coff)
			t->dev->ops->config_write(t->dev, (uint32_t)coff, data, len);
	} else if (len == 4 && off % 4 == 0) {
		uint32_t v;
		memcpy(&v, data, 4);
		mmio_write_reg(t, off, v);
	}
	pthread_mutex_unlock(&t->lock);
}

static const struct bus_ops mmio_bus_ops = {
	.read = mmio_read,
	.write = mmio_write,
};

static void mmio_close_fds(struct virtio_mmio *t)
{
	for (unsigned int i = 0; i < t->dev->nr_queues; i++) {
		struct mmio_queue *q = &t->q[i];
		if (q->ioeventfd_set &&
		    vm_ioeventfd(t->vm, q->kick_fd, t->base + VIRTIO_MMIO_QUEUE_NOTIFY, 4, true, i,
				 false) < 0)
			fprintf(stderr, "ringvm: virtio-mmio: removing ioeventfd failed\n");
		q->ioeventfd_set = false;
		if (q->kick_fd >= 0)
			close(q->kick_fd);
		q->kick_fd = -1;
	}
	if (t->irqfd >= 0) {
		if (vm_irqfd(t->vm, t->irqfd, t->gsi, false) < 0)
			fprintf(stderr, "ringvm: virtio-mmio: removing irqfd failed\n");
		close(t->irqfd);
	}
	t->irqfd = -1;
}

int virtio_mmio_create(struct vm *vm, struct virtio_dev *dev, struct virtio_mmio **out)
{
	if (dev->nr_queues == 0 || dev->nr_queues > VIRTIO_DEV_MAX_QUEUES ||
	    dev->queue_max_size == 0 || dev->queue_max_size > 32768 ||
	    (dev->queue_max_size & (dev->queue_max_size - 1)) || !dev->ops || !dev->queue_ops ||
	    !dev->ops->config_read || !dev->ops->activate)
		return -EINVAL;
	struct virtio_mmio *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->vm = vm;
	t->dev = dev;
	t->irqfd = -1;
	for (unsigned int i = 0; i < VIRTIO_DEV_MAX_QUEUES; i++)
		t->q[i].kick_fd = -1;
	pthread_mutex_init(&t->lock, NULL);

	int err = vm_alloc_virtio_mmio(vm, &t->base, &t->gsi);
	if (err)
		goto err_free;
	t->irqfd = eventfd(0, EFD_CLOEXEC);
	if (t->irqfd < 0) {
		err = -errno;
		goto err_free;
	}
	err = vm_irqfd(vm, t->irqfd, t->gsi, true);
	if (err) {
		close(t->irqfd);
		t->irqfd = -1;
		goto err_free;
	}
	for (unsigned int i = 0; i < dev->nr_queues; i++) {
		struct mmio_queue *q = &t->q[i];
		/* Blocking eventfd: io_uring then waits on it by polling instead of failing EAGAIN. */
		q->kick_fd = eventfd(0, EFD_CLOEXEC);
		if (q->kick_fd < 0) {
			err = -errno;
			goto err_fds;
		}
		/* Without an ioeventfd the kick traps to mmio_write, which forwards it: slower, same. */
		q->ioeventfd_set = vm_ioeventfd(vm, q->kick_fd, t->base + VIRTIO_MMIO_QUEUE_NOTIFY,
						4, true, i, true) == 0;
	}
	err = vm_register_mmio(vm, t->base, LAYOUT_VIRTIO_MMIO_SIZE, &mmio_bus_ops, t);
	if (err)
		goto err_fds;
	dev->transport = t;
	*out = t;
	return 0;

err_fds:
	mmio_close_fds(t);
err_free:
	pthread_mutex_destroy(&t->lock);
	free(t);
	return err;
}

void virtio_mmio_destroy(struct virtio_mmio *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	mmio_reset(t);
	pthread_mutex_unlock(&t->lock);
	t->dev->transport = NULL;
	mmio_close_fds(t);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

uint64_t virtio_mmio_base(const struct virtio_mmio *t)
{
	return t->base;
}

uint32_t virtio_mmio_gsi(const struct virtio_mmio *t)
{
	return t->gsi;
}
