/* core.c: the virtio device model every transport shares: status, features, queue workers, reset. */
#define _GNU_SOURCE
#include "devices/virtio/core.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <linux/virtio_ids.h>

#include "devices/virtio/virtq_state.h"

/* "virtio-blk", "virtio-fs", or the number, for messages. */
static void core_kind(uint32_t id, char *buf, size_t len)
{
	switch (id) {
	case VIRTIO_ID_BLOCK:
		snprintf(buf, len, "virtio-blk");
		break;
	case VIRTIO_ID_FS:
		snprintf(buf, len, "virtio-fs");
		break;
	case VIRTIO_ID_CONSOLE:
		snprintf(buf, len, "virtio-console");
		break;
	default:
		snprintf(buf, len, "virtio device %u", id);
		break;
	}
}

/* The queue's name in the spec's words, for the state report: blk 5.2.2, fs 5.11.2, console 5.3.2. */
static void core_queue_name(uint32_t id, unsigned int q, char *buf, size_t len)
{
	switch (id) {
	case VIRTIO_ID_BLOCK:
		snprintf(buf, len, "requestq%u", q);
		break;
	case VIRTIO_ID_FS:
		if (q == 0)
			snprintf(buf, len, "hiprio");
		else
			snprintf(buf, len, "requestq%u", q - 1);
		break;
	case VIRTIO_ID_CONSOLE:
		if (q == 2 || q == 3)
			snprintf(buf, len, "control-%s", q == 2 ? "receiveq" : "transmitq");
		else
			snprintf(buf, len, "port%u-%s", q < 2 ? 0 : q / 2 - 1,
				 q % 2 ? "transmitq" : "receiveq");
		break;
	default:
		snprintf(buf, len, "queue%u", q);
		break;
	}
}

bool virtio_core_dev_ok(const struct virtio_dev *dev)
{
	return dev->nr_queues > 0 && dev->nr_queues <= VIRTIO_DEV_MAX_QUEUES &&
	       dev->queue_max_size > 0 && dev->queue_max_size <= 32768 &&
	       !(dev->queue_max_size & (dev->queue_max_size - 1)) && dev->ops && dev->queue_ops &&
	       dev->ops->config_read && dev->ops->activate;
}

int virtio_core_init(struct virtio_core *c, struct virtio_dev *dev, const struct guest_mem *gm,
		     const struct virtio_transport_ops *ops, void *opaque, const char *where)
{
	if (!virtio_core_dev_ok(dev) || !ops || !ops->vring_interrupt || !ops->config_interrupt ||
	    !ops->needs_reset)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->dev = dev;
	c->gm = gm;
	c->ops = ops;
	c->opaque = opaque;
	c->ring_max = dev->queue_max_size;
	char kind[32];
	core_kind(dev->device_id, kind, sizeof(kind));
	snprintf(c->name, sizeof(c->name), "%s on %s", kind, where);
	for (unsigned int i = 0; i < VIRTIO_DEV_MAX_QUEUES; i++) {
		char qname[32];
		c->q[i].kick_fd = -1;
		c->q[i].core = c;
		c->q[i].index = i;
		core_queue_name(dev->device_id, i, qname, sizeof(qname));
		snprintf(c->q[i].name, sizeof(c->q[i].name), "\"%s\" q%u %s", c->name, i, qname);
	}
	dev->transport = c;
	return 0;
}

void virtio_core_set_ring_max(struct virtio_core *c, uint16_t n)
{
	if (n > c->dev->queue_max_size && !(n & (n - 1)))
		c->ring_max = n;
}

void virtio_core_fini(struct virtio_core *c)
{
	virtio_core_reset(c);
	for (unsigned int i = 0; i < c->dev->nr_queues; i++) {
		vq_worker_destroy(c->q[i].worker);
		c->q[i].worker = NULL;
	}
	c->dev->transport = NULL;
}

uint64_t virtio_core_offered(const struct virtio_core *c)
{
	return c->dev->features | VIRTIO_CORE_TRANSPORT_FEATURES;
}

bool virtio_core_features_ok(const struct virtio_core *c, uint64_t features)
{
	/* 3.1.1 step 5-6: refuse a subset we did not offer, or a legacy driver (6.1). */
	return !(features & ~virtio_core_offered(c)) && (features & (1ULL << VIRTIO_F_VERSION_1));
}

uint32_t virtio_core_status(const struct virtio_core *c)
{
	return __atomic_load_n(&c->status, __ATOMIC_SEQ_CST);
}

uint32_t virtio_core_generation(const struct virtio_core *c)
{
	return __atomic_load_n(&c->generation, __ATOMIC_SEQ_CST);
}

void virtio_core_set_features(struct virtio_core *c, uint64_t features)
{
	/* 3.1.1: features are written after DRIVER and frozen by FEATURES_OK. */
	uint32_t status = virtio_core_status(c);
	if ((status & VIRTIO_CONFIG_S_DRIVER) && !(status & VIRTIO_CONFIG_S_FEATURES_OK))
		c->driver_features = features;
}

void virtio_core_accept_features(struct virtio_core *c, uint64_t features)
{
	c->driver_features = features;
}

bool virtio_core_queues_configurable(const struct virtio_core *c)
{
	uint32_t status = virtio_core_status(c);
	return !c->activated && !(status & VIRTIO_CONFIG_S_DRIVER_OK) &&
	       (status & VIRTIO_CONFIG_S_FEATURES_OK);
}

void virtio_core_needs_reset(struct virtio_core *c, unsigned int i, const char *why)
{
	if (i == VIRTIO_CORE_NO_QUEUE)
		fprintf(stderr, "ringvm: %s: device needs reset: %s\n", c->name, why);
	else
		fprintf(stderr, "ringvm: %s queue %u: device needs reset: %s\n", c->name, i, why);
	__atomic_fetch_or(&c->status, VIRTIO_CONFIG_S_NEEDS_RESET, __ATOMIC_SEQ_CST);
	c->ops->needs_reset(c->opaque, i);
}

void virtio_config_changed(struct virtio_dev *dev)
{
	struct virtio_core *c = dev->transport;
	if (!c)
		return;
	__atomic_fetch_add(&c->generation, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->activated, __ATOMIC_SEQ_CST))
		c->ops->config_interrupt(c->opaque);
}

/* Worker callbacks: opaque is the queue. */
static int core_vring_interrupt(void *opaque)
{
	struct virtio_core_queue *q = opaque;
	return q->core->ops->vring_interrupt(q->core->opaque, q->index);
}

static void core_worker_failed(void *opaque, const char *why)
{
	struct virtio_core_queue *q = opaque;
	virtio_core_needs_reset(q->core, q->index, why);
}

/* vq_init over the queue's layout with the negotiated features. */
static int core_queue_validate(struct virtio_core *c, struct virtio_core_queue *q)
{
	return vq_init(&q->vq, c->gm, &q->layout, c->ring_max, c->driver_features,
		       c->dev->max_segs);
}

/* The queue's worker: its thread and sealed io_uring, made once and kept across resets. */
static int core_queue_worker(struct virtio_core *c, struct virtio_core_queue *q)
{
	struct virtio_dev *dev = c->dev;
	struct vq_worker_config cfg = {
		.dev = dev,
		.ops = dev->queue_ops,
		.queue_index = q->index,
		.ring_max = c->ring_max,
		.priv_size = dev->req_priv_size,
		.event_fd = dev->ops->queue_event_fd ? dev->ops->queue_event_fd(dev, q->index) : -1,
		.poll_us = dev->poll_us,
		.max_inflight = dev->max_inflight,
		.rules = dev->ring_rules,
		.confine = c->confine,
		.confine_opaque = c->confine_opaque,
		.interrupt = core_vring_interrupt,
		.needs_reset = core_worker_failed,
		.opaque = q,
		.name = q->name,
	};
	if (q->worker)
		return 0;
	return vq_worker_create(&cfg, &q->worker);
}

static int core_queue_run(struct virtio_core *c, struct virtio_core_queue *q)
{
	int err = core_queue_worker(c, q);
	return err ? err : vq_worker_start(q->worker, &q->vq, q->kick_fd);
}

int virtio_core_prepare(struct virtio_core *c, int (*confine)(void *), void *confine_opaque)
{
	c->confine = confine;
	c->confine_opaque = confine_opaque;
	for (unsigned int i = 0; i < c->dev->nr_queues; i++) {
		int err = core_queue_worker(c, &c->q[i]);
		if (err)
			return err;
	}
	return 0;
}

static int core_activate(struct virtio_core *c)
{
	struct virtio_dev *dev = c->dev;
	dev->driver_features = c->driver_features;
	int err = dev->ops->activate(dev, c->driver_features);
	if (err)
		return err;
	__atomic_store_n(&c->activated, true, __ATOMIC_SEQ_CST);
	return 0;
}

int virtio_core_go_live(struct virtio_core *c)
{
	struct virtio_dev *dev = c->dev;
	for (unsigned int i = 0; i < dev->nr_queues; i++) {
		struct virtio_core_queue *q = &c->q[i];
		if (!q->ready)
			continue;
		int err = core_queue_validate(c, q);
		if (err) {
			virtio_core_needs_reset(c, i, vq_init_why(err));
			return err;
		}
	}
	int err = core_activate(c);
	if (err) {
		virtio_core_needs_reset(c, VIRTIO_CORE_NO_QUEUE, "the device refused activation");
		return err;
	}
	for (unsigned int i = 0; i < dev->nr_queues; i++) {
		struct virtio_core_queue *q = &c->q[i];
		if (!q->ready)
			continue;
		err = core_queue_run(c, q);
		if (err) {
			/* Workers started so far stop at reset. */
			virtio_core_needs_reset(c, i, "its worker could not start (host resources)");
			return err;
		}
	}
	return 0;
}

int virtio_core_queue_start(struct virtio_core *c, unsigned int i, const char **why)
{
	if (i >= c->dev->nr_queues || vq_worker_running(c->q[i].worker)) {
		*why = "no such queue, or it is already running";
		return -EINVAL;
	}
	struct virtio_core_queue *q = &c->q[i];
	if (!virtio_core_features_ok(c, c->driver_features)) {
		*why = "no acceptable feature set was negotiated (VERSION_1 is required)";
		return -EPROTO;
	}
	int err = core_queue_validate(c, q);
	if (err) {
		*why = vq_init_why(err);
		return err;
	}
	if (!c->activated) {
		err = core_activate(c);
		if (err) {
			*why = "the device refused activation";
			return err;
		}
	}
	err = core_queue_run(c, q);
	if (err)
		*why = "the queue's worker could not start (host resources)";
	return err;
}

int virtio_core_queue_fits(const struct virtio_core *c, const struct guest_mem *gm,
			   const struct vq_layout *l, const char **why)
{
	struct virtq scratch;
	int err = vq_init(&scratch, gm, l, c->ring_max, c->driver_features, c->dev->max_segs);
	if (err)
		*why = vq_init_why(err);
	return err;
}

uint16_t virtio_core_queue_stop(struct virtio_core *c, unsigned int i)
{
	struct virtio_core_queue *q = &c->q[i];
	if (vq_worker_running(q->worker)) {
		/* A pause, not a reset: in-flight requests complete as they would have (bounded). */
		vq_worker_stop_drain(q->worker, VIRTIO_CORE_PAUSE_DRAIN_MS);
		/* Drained: everything popped was pushed and published, so used idx == last_avail. */
		q->layout.start_idx = q->vq.last_avail;
	}
	return q->layout.start_idx;
}

bool virtio_core_queue_running(const struct virtio_core *c, unsigned int i)
{
	return vq_worker_running(c->q[i].worker);
}

void virtio_core_reset(struct virtio_core *c)
{
	struct virtio_dev *dev = c->dev;
	for (unsigned int i = 0; i < dev->nr_queues; i++)
		vq_worker_stop(c->q[i].worker);
	if (c->activated && dev->ops->reset)
		dev->ops->reset(dev);
	__atomic_store_n(&c->activated, false, __ATOMIC_SEQ_CST);
	for (unsigned int i = 0; i < dev->nr_queues; i++) {
		struct virtio_core_queue *q = &c->q[i];
		memset(&q->layout, 0, sizeof(q->layout));
		q->ready = false;
		memset(&q->vq, 0, sizeof(q->vq));
	}
	c->driver_features = 0;
	dev->driver_features = 0;
	__atomic_store_n(&c->status, 0, __ATOMIC_SEQ_CST);
}

void virtio_core_write_status(struct virtio_core *c, uint32_t val)
{
	if (val == 0) {
		virtio_core_reset(c);
		return;
	}
	uint32_t old = virtio_core_status(c);
	uint32_t cur = old & ~(uint32_t)VIRTIO_CONFIG_S_NEEDS_RESET;
	val &= ~(uint32_t)VIRTIO_CONFIG_S_NEEDS_RESET; /* device-owned bit */
	if ((val & cur) != cur)
		return; /* 2.1.1: the driver MUST NOT clear a status bit */
	uint32_t add = val & ~cur;
	if (add & VIRTIO_CONFIG_S_FAILED) {
		__atomic_fetch_or(&c->status, VIRTIO_CONFIG_S_FAILED, __ATOMIC_SEQ_CST);
		add &= ~(uint32_t)VIRTIO_CONFIG_S_FAILED;
	}
	if (add & VIRTIO_CONFIG_S_ACKNOWLEDGE) {
		cur |= VIRTIO_CONFIG_S_ACKNOWLEDGE;
		__atomic_fetch_or(&c->status, VIRTIO_CONFIG_S_ACKNOWLEDGE, __ATOMIC_SEQ_CST);
	}
	if ((add & VIRTIO_CONFIG_S_DRIVER) && (cur & VIRTIO_CONFIG_S_ACKNOWLEDGE)) {
		cur |= VIRTIO_CONFIG_S_DRIVER;
		__atomic_fetch_or(&c->status, VIRTIO_CONFIG_S_DRIVER, __ATOMIC_SEQ_CST);
	}
	if ((add & VIRTIO_CONFIG_S_FEATURES_OK) && (cur & VIRTIO_CONFIG_S_DRIVER)) {
		if (!virtio_core_features_ok(c, c->driver_features))
			return;
		cur |= VIRTIO_CONFIG_S_FEATURES_OK;
		__atomic_fetch_or(&c->status, VIRTIO_CONFIG_S_FEATURES_OK, __ATOMIC_SEQ_CST);
	}
	if ((add & VIRTIO_CONFIG_S_DRIVER_OK) && (cur & VIRTIO_CONFIG_S_FEATURES_OK) &&
	    !c->activated && !(old & VIRTIO_CONFIG_S_NEEDS_RESET)) {
		__atomic_fetch_or(&c->status, VIRTIO_CONFIG_S_DRIVER_OK, __ATOMIC_SEQ_CST);
		if (virtio_core_go_live(c) < 0)
			return; /* NEEDS_RESET is set, its reason logged: the driver resets */
	}
}

/* One line of the state report about queue q that its worker does not write: what it is. */
static void core_state_say(int fd, unsigned int seq, const struct virtio_core_queue *q,
			   const char *what)
{
	char line[256];
	int n = snprintf(line, sizeof(line), "ringvm-state: #%u vq %s %s\n", seq, q->name, what);
	if (n < 0)
		return;
	size_t len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	if (write(fd, line, len) < 0) {
		/* nowhere to say it */
	}
}

unsigned int virtio_core_state_request(struct virtio_core *c, unsigned int seq, int fd)
{
	unsigned int asked = 0;
	for (unsigned int i = 0; i < c->dev->nr_queues; i++) {
		struct virtio_core_queue *q = &c->q[i];
		if (q->worker && vq_worker_state_request(q->worker, seq, fd) == 0) {
			asked++;
			continue;
		}
		char what[64];
		snprintf(what, sizeof(what), "stopped status=0x%x", virtio_core_status(c));
		core_state_say(fd, seq, q, what);
	}
	return asked;
}

unsigned int virtio_core_state_pending(struct virtio_core *c, unsigned int seq, int fd,
				       bool say_who)
{
	unsigned int pending = 0;
	for (unsigned int i = 0; i < c->dev->nr_queues; i++) {
		struct vq_worker *w = c->q[i].worker;
		if (!w || !vq_worker_state_asked(w, seq) || vq_worker_state_answered(w, seq))
			continue;
		pending++;
		if (say_who)
			core_state_say(fd, seq, &c->q[i], "no answer");
	}
	return pending;
}
