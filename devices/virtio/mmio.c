/* mmio.c: the virtio-mmio v2 register file mapped onto the virtio core, with KVM's eventfds. */
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

#include "devices/virtio/core.h"
#include "vmm/layout.h"

/* 4.2.2: MagicValue is "virt" in little-endian; Version 2 is the non-legacy interface. */
#define MMIO_MAGIC 0x74726976u
#define MMIO_VERSION 2u
#define MMIO_VENDOR 0x4d565252u /* "RRVM": any value is allowed; drivers only print it */

struct virtio_mmio {
	struct vm *vm;
	uint64_t base;
	uint32_t gsi;
	int irqfd;
	bool ioeventfd_set[VIRTIO_DEV_MAX_QUEUES]; /* KVM delivers QueueNotify to the kick fd */

	pthread_mutex_t lock; /* serialises register accesses, hence every core call */
	uint32_t isr;	      /* atomic: InterruptStatus, set by workers, cleared by InterruptACK */
	uint32_t dev_features_sel;
	uint32_t drv_features_sel;
	uint32_t queue_sel;
	struct virtio_core core; /* the device model; its queues' kick_fd are our eventfds */
};

static void mmio_raise(struct virtio_mmio *t, uint32_t why)
{
	__atomic_fetch_or(&t->isr, why, __ATOMIC_SEQ_CST);
	/* The ISR bit is set before the edge, so the guest's handler sees why it was called. */
	uint64_t one = 1;
	if (write(t->irqfd, &one, sizeof(one)) < 0)
		return; /* counter saturated: an interrupt is already pending */
}

/* Core callback (worker thread): used buffers were published and the driver wants to hear. The
   ISR bit first; the worker then writes the irqfd (fixed for the transport's life) itself. */
static int mmio_vring_interrupt(void *opaque, unsigned int queue)
{
	struct virtio_mmio *t = opaque;
	__atomic_fetch_or(&t->isr, VIRTIO_MMIO_INT_VRING, __ATOMIC_SEQ_CST);
	return t->irqfd;
}

static void mmio_config_interrupt(void *opaque)
{
	mmio_raise(opaque, VIRTIO_MMIO_INT_CONFIG);
}

/* NEEDS_RESET reaches the driver as a configuration change interrupt (2.1.2, 4.2.3.4). */
static void mmio_needs_reset(void *opaque, unsigned int queue)
{
	mmio_raise(opaque, VIRTIO_MMIO_INT_CONFIG);
}

static const struct virtio_transport_ops mmio_transport_ops = {
	.vring_interrupt = mmio_vring_interrupt,
	.config_interrupt = mmio_config_interrupt,
	.needs_reset = mmio_needs_reset,
};

/* Status 0 (3.1.1 step 1, 4.2.2.1): the core stops and drains the workers; we forget registers. */
static void mmio_reset(struct virtio_mmio *t)
{
	virtio_core_reset(&t->core);
	t->dev_features_sel = t->drv_features_sel = 0;
	t->queue_sel = 0;
	__atomic_store_n(&t->isr, 0, __ATOMIC_SEQ_CST);
}

/* Queue registers may change only between FEATURES_OK and DRIVER_OK. */
static struct virtio_core_queue *mmio_writable_queue(struct virtio_mmio *t)
{
	if (!virtio_core_queues_configurable(&t->core) || t->queue_sel >= t->core.dev->nr_queues)
		return NULL;
	return &t->core.q[t->queue_sel];
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
	struct virtio_core_queue *q;
	switch (off) {
	case VIRTIO_MMIO_DEVICE_FEATURES_SEL:
		t->dev_features_sel = val;
		break;
	case VIRTIO_MMIO_DRIVER_FEATURES_SEL:
		t->drv_features_sel = val;
		break;
	case VIRTIO_MMIO_DRIVER_FEATURES: {
		uint64_t f = t->core.driver_features;
		if (t->drv_features_sel < 2) {
			mmio_set_half(&f, t->drv_features_sel == 1, val);
			virtio_core_set_features(&t->core, f); /* ignored outside DRIVER..FEATURES_OK */
		}
		break;
	}
	case VIRTIO_MMIO_QUEUE_SEL:
		t->queue_sel = val;
		break;
	case VIRTIO_MMIO_QUEUE_NUM:
		if ((q = mmio_writable_queue(t)) && !q->ready)
			q->layout.size = val <= 0xffff ? (uint16_t)val : 0;
		break;
	case VIRTIO_MMIO_QUEUE_READY:
		if ((q = mmio_writable_queue(t)))
			q->ready = val & 1;
		break;
	case VIRTIO_MMIO_QUEUE_DESC_LOW:
	case VIRTIO_MMIO_QUEUE_DESC_HIGH:
		if ((q = mmio_writable_queue(t)) && !q->ready)
			mmio_set_half(&q->layout.desc_gpa, off == VIRTIO_MMIO_QUEUE_DESC_HIGH, val);
		break;
	case VIRTIO_MMIO_QUEUE_AVAIL_LOW:
	case VIRTIO_MMIO_QUEUE_AVAIL_HIGH:
		if ((q = mmio_writable_queue(t)) && !q->ready)
			mmio_set_half(&q->layout.avail_gpa, off == VIRTIO_MMIO_QUEUE_AVAIL_HIGH, val);
		break;
	case VIRTIO_MMIO_QUEUE_USED_LOW:
	case VIRTIO_MMIO_QUEUE_USED_HIGH:
		if ((q = mmio_writable_queue(t)) && !q->ready)
			mmio_set_half(&q->layout.used_gpa, off == VIRTIO_MMIO_QUEUE_USED_HIGH, val);
		break;
	case VIRTIO_MMIO_QUEUE_NOTIFY:
		/* Reached only without an ioeventfd for this queue: forward the kick to its eventfd. */
		if (val < t->core.dev->nr_queues) {
			uint64_t one = 1;
			if (write(t->core.q[val].kick_fd, &one, sizeof(one)) < 0)
				break; /* saturated: a kick is pending anyway */
		}
		break;
	case VIRTIO_MMIO_INTERRUPT_ACK:
		__atomic_fetch_and(&t->isr, ~val, __ATOMIC_SEQ_CST);
		break;
	case VIRTIO_MMIO_STATUS:
		if (val == 0)
			mmio_reset(t);
		else
			virtio_core_write_status(&t->core, val);
		break;
	default:
		break; /* read-only or legacy registers (GuestPageSize, QueueAlign, QueuePFN) */
	}
}

static uint32_t mmio_read_reg(struct virtio_mmio *t, uint64_t off)
{
	const struct virtio_dev *dev = t->core.dev;
	const struct virtio_core_queue *q =
		t->queue_sel < dev->nr_queues ? &t->core.q[t->queue_sel] : NULL;
	switch (off) {
	case VIRTIO_MMIO_MAGIC_VALUE:
		return MMIO_MAGIC;
	case VIRTIO_MMIO_VERSION:
		return MMIO_VERSION;
	case VIRTIO_MMIO_DEVICE_ID:
		return dev->device_id;
	case VIRTIO_MMIO_VENDOR_ID:
		return MMIO_VENDOR;
	case VIRTIO_MMIO_DEVICE_FEATURES:
		if (t->dev_features_sel >= 2)
			return 0;
		return (uint32_t)(virtio_core_offered(&t->core) >> (32 * t->dev_features_sel));
	case VIRTIO_MMIO_QUEUE_NUM_MAX:
		return q ? dev->queue_max_size : 0;
	case VIRTIO_MMIO_QUEUE_READY:
		return q ? q->ready : 0;
	case VIRTIO_MMIO_INTERRUPT_STATUS:
		return __atomic_load_n(&t->isr, __ATOMIC_SEQ_CST);
	case VIRTIO_MMIO_STATUS:
		return virtio_core_status(&t->core);
	case VIRTIO_MMIO_SHM_LEN_LOW:
	case VIRTIO_MMIO_SHM_LEN_HIGH:
		return 0xffffffffu; /* 4.2.2: length ~0 means "no shared memory region" */
	case VIRTIO_MMIO_CONFIG_GENERATION:
		return virtio_core_generation(&t->core);
	default:
		return 0;
	}
}

static void mmio_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	struct virtio_mmio *t = opaque;
	struct virtio_dev *dev = t->core.dev;
	memset(data, 0, len);
	pthread_mutex_lock(&t->lock);
	if (off >= VIRTIO_MMIO_CONFIG) {
		uint64_t coff = off - VIRTIO_MMIO_CONFIG;
		if (coff < dev->config_size && len <= dev->config_size - coff)
			dev->ops->config_read(dev, (uint32_t)coff, data, len);
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
	struct virtio_dev *dev = t->core.dev;
	pthread_mutex_lock(&t->lock);
	if (off >= VIRTIO_MMIO_CONFIG) {
		uint64_t coff = off - VIRTIO_MMIO_CONFIG;
		if (dev->ops->config_write && coff < dev->config_size &&
		    len <= dev->config_size - coff)
			dev->ops->config_write(dev, (uint32_t)coff, data, len);
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
	for (unsigned int i = 0; i < t->core.dev->nr_queues; i++) {
		struct virtio_core_queue *q = &t->core.q[i];
		if (t->ioeventfd_set[i] &&
		    vm_ioeventfd(t->vm, q->kick_fd, t->base + VIRTIO_MMIO_QUEUE_NOTIFY, 4, true, i,
				 false) < 0)
			fprintf(stderr, "ringvm: virtio-mmio: removing ioeventfd failed\n");
		t->ioeventfd_set[i] = false;
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
	if (!virtio_core_dev_ok(dev))
		return -EINVAL;
	struct virtio_mmio *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->vm = vm;
	t->irqfd = -1;
	int err = vm_alloc_virtio_mmio(vm, &t->base, &t->gsi);
	if (err)
		goto err_free;
	char where[48];
	snprintf(where, sizeof(where), "virtio-mmio@0x%llx", (unsigned long long)t->base);
	err = virtio_core_init(&t->core, dev, vm_guest_mem(vm), &mmio_transport_ops, t, where);
	if (err)
		goto err_free;
	pthread_mutex_init(&t->lock, NULL);

	t->irqfd = eventfd(0, EFD_CLOEXEC);
	if (t->irqfd < 0) {
		err = -errno;
		goto err_unbind;
	}
	err = vm_irqfd(vm, t->irqfd, t->gsi, true);
	if (err) {
		close(t->irqfd);
		t->irqfd = -1;
		goto err_unbind;
	}
	for (unsigned int i = 0; i < dev->nr_queues; i++) {
		struct virtio_core_queue *q = &t->core.q[i];
		/* Blocking eventfd: io_uring then waits on it by polling instead of failing EAGAIN. */
		q->kick_fd = eventfd(0, EFD_CLOEXEC);
		if (q->kick_fd < 0) {
			err = -errno;
			goto err_fds;
		}
		/* Without an ioeventfd the kick traps to mmio_write, which forwards it: slower, same. */
		t->ioeventfd_set[i] = vm_ioeventfd(vm, q->kick_fd, t->base + VIRTIO_MMIO_QUEUE_NOTIFY,
						   4, true, i, true) == 0;
	}
	err = vm_register_mmio(vm, t->base, LAYOUT_VIRTIO_MMIO_SIZE, &mmio_bus_ops, t);
	if (err)
		goto err_fds;
	*out = t;
	return 0;

err_fds:
	mmio_close_fds(t);
err_unbind:
	virtio_core_fini(&t->core);
	pthread_mutex_destroy(&t->lock);
err_free:
	free(t);
	return err;
}

int virtio_mmio_prepare(struct virtio_mmio *t, int (*confine)(void *), void *opaque)
{
	pthread_mutex_lock(&t->lock);
	int err = virtio_core_prepare(&t->core, confine, opaque);
	pthread_mutex_unlock(&t->lock);
	return err;
}

void virtio_mmio_destroy(struct virtio_mmio *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	mmio_reset(t);
	pthread_mutex_unlock(&t->lock);
	virtio_core_fini(&t->core);
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

struct virtio_core *virtio_mmio_core(struct virtio_mmio *t)
{
	return &t->core;
}
