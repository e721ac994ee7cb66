/* vu_backend.c: the vhost-user back-end: connection state, one handler per request, ring start/stop. */
#define _GNU_SOURCE
#include "devices/vhost_user/vu_backend.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/vhost_user/vu_io.h"
#include "devices/vhost_user/vu_mem.h"
#include "devices/virtio/core.h"

/* The front-end sizes the rings: QEMU's VIRTQUEUE_MAX_SIZE, which its virtio-mmio offers guests as
   QueueNumMax for every vhost-user device, and virtiofsd's limit too. */
#define VU_RING_MAX 1024

#define VU_PROTOCOL_FEATURES                                                                       \
	((1ULL << VU_PROTOCOL_F_MQ) | (1ULL << VU_PROTOCOL_F_REPLY_ACK) |                          \
	 (1ULL << VU_PROTOCOL_F_CONFIG) | (1ULL << VU_PROTOCOL_F_RESET_DEVICE))

struct vu_queue {
	/* Connection thread only. */
	uint16_t num; /* SET_VRING_NUM; 0 until set */
	bool addr_set;
	uint64_t desc_uva, avail_uva, used_uva; /* front-end user addresses (SET_VRING_ADDR) */
	bool enabled;
	int kick_fd; /* read by the ring's worker while it runs */

	/*
	 * A fixed fd number, made with the back-end and closed with it: SET_VRING_CALL dup3()s the
	 * front-end's eventfd onto it, reset and NOFD put the back-end's sink there. The worker
	 * writes it through its io_uring, lock-free: a write queued before a swap and submitted
	 * after it reaches the new eventfd, never another file that reused a closed number.
	 */
	int call_slot;
	pthread_mutex_t lock; /* err_fd: written by the worker, swapped by messages */
	int err_fd;
};

struct vu_backend {
	struct virtio_core core; /* core.gm points at mem.gm */
	struct vu_mem mem;
	char name[128];
	int poison_fd; /* the SIGBUS guard says: the front-end shrank our memory */
	int sock;      /* the connection, -1 between connections */

	uint64_t features; /* SET_FEATURES as sent, VU_F_PROTOCOL_FEATURES included */
	bool features_set;
	uint64_t protocol; /* SET_PROTOCOL_FEATURES */
	int call_sink;	   /* an eventfd nobody reads: a ring's call_slot while it has no call fd */
	struct vu_queue q[VIRTIO_DEV_MAX_QUEUES];
	struct vu_msg msg; /* the message being handled (4 KiB: not on the stack) */
};

static unsigned int vu_nr_queues(const struct vu_backend *b)
{
	return b->core.dev->nr_queues;
}

/* ---- transport ops (queue worker threads) ---- */

/* NEEDS_RESET on the ring's error eventfd, if the front-end gave one. */
static void vu_signal_err(struct vu_queue *q)
{
	uint64_t one = 1;
	pthread_mutex_lock(&q->lock);
	int fd = q->err_fd;
	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
		/* counter saturated (the front-end is not reading): a signal is pending anyway */
	}
	pthread_mutex_unlock(&q->lock);
}

/* The worker writes the ring's call eventfd itself, through its io_uring (worker.h). */
static int vu_vring_interrupt(void *opaque, unsigned int queue)
{
	struct vu_backend *b = opaque;
	return b->q[queue].call_slot;
}

/* A config change would need the back-end request channel (BACKEND_REQ, CONFIG_CHANGE_MSG), which
   is not offered: ringvm's devices never change their config space while served here. */
static void vu_config_interrupt(void *opaque)
{
	(void)opaque;
}

/* NEEDS_RESET: the ring's error eventfd (SET_VRING_ERR), which QEMU turns into virtio_error(). */
static void vu_needs_reset(void *opaque, unsigned int queue)
{
	struct vu_backend *b = opaque;
	if (queue < vu_nr_queues(b))
		vu_signal_err(&b->q[queue]);
}

static const struct virtio_transport_ops vu_transport_ops = {
	.vring_interrupt = vu_vring_interrupt,
	.config_interrupt = vu_config_interrupt,
	.needs_reset = vu_needs_reset,
};

/* ---- rings ---- */

static bool vu_running(const struct vu_backend *b, unsigned int i)
{
	return virtio_core_queue_running(&b->core, i);
}

/* The guest-physical addresses in gm of a ring of n entries at these user addresses, through the
   one translation door; each area must lie inside one region. 0 or -EFAULT with *why set. */
static int vu_ring_gpas(const struct guest_mem *gm, uint16_t n, uint64_t desc, uint64_t avail,
			uint64_t used, struct vq_layout *l, const char **why)
{
	/* 2.7 "Virtqueue Part Sizes", event fields included. */
	if (gm_uva_to_gpa(gm, desc, 16ULL * n, &l->desc_gpa) ||
	    gm_uva_to_gpa(gm, avail, 6ULL + 2ULL * n, &l->avail_gpa) ||
	    gm_uva_to_gpa(gm, used, 6ULL + 8ULL * n, &l->used_gpa)) {
		*why = "a ring area lies outside the front-end's memory table";
		return -EFAULT;
	}
	l->size = n;
	return 0;
}

/* Ring i's layout in guest memory gm, from the addresses the front-end set (vu_ring_gpas). */
static int vu_ring_layout(const struct vu_backend *b, unsigned int i, const struct guest_mem *gm,
			  struct vq_layout *l, const char **why)
{
	const struct vu_queue *q = &b->q[i];
	return vu_ring_gpas(gm, q->num, q->desc_uva, q->avail_uva, q->used_uva, l, why);
}

/* Start ring i if it has everything it needs (and is not running); 0 when started or not ready. */
static int vu_ring_try_start(struct vu_backend *b, unsigned int i, const char **why)
{
	struct vu_queue *q = &b->q[i];
	if (vu_running(b, i) || !b->mem.nr || !q->num || !q->addr_set || q->kick_fd < 0 ||
	    !q->enabled || !b->features_set)
		return 0;
	struct virtio_core_queue *cq = &b->core.q[i];
	int err = vu_ring_layout(b, i, &b->mem.gm, &cq->layout, why);
	if (err)
		return err;
	cq->kick_fd = q->kick_fd;
	return virtio_core_queue_start(&b->core, i, why);
}

static int vu_start_all(struct vu_backend *b, const char **why)
{
	for (unsigned int i = 0; i < vu_nr_queues(b); i++) {
		int err = vu_ring_try_start(b, i, why);
		if (err)
			return err;
	}
	return 0;
}

/* Stop ring i (draining it); the index it stopped at. */
static uint16_t vu_ring_stop(struct vu_backend *b, unsigned int i)
{
	return virtio_core_queue_stop(&b->core, i);
}

/* The ring's call eventfd becomes fd (-1: none, the sink). The message keeps fd: its caller closes it. */
static int vu_set_call(struct vu_backend *b, struct vu_queue *q, int fd)
{
	return dup3(fd >= 0 ? fd : b->call_sink, q->call_slot, O_CLOEXEC) < 0 ? -errno : 0;
}

static void vu_swap_fd(struct vu_queue *q, int *slot, int fd)
{
	pthread_mutex_lock(&q->lock);
	int old = *slot;
	*slot = fd;
	pthread_mutex_unlock(&q->lock);
	if (old >= 0)
		close(old);
}

/* RESET_DEVICE, RESET_OWNER, disconnect: stop and reset the device, drop every ring's setup. */
static void vu_reset_device(struct vu_backend *b)
{
	virtio_core_reset(&b->core);
	for (unsigned int i = 0; i < vu_nr_queues(b); i++) {
		struct vu_queue *q = &b->q[i];
		if (q->kick_fd >= 0)
			close(q->kick_fd);
		q->kick_fd = -1;
		b->core.q[i].kick_fd = -1;
		/* Only dup3 of an open fd onto an open one, both ours: it cannot fail here. */
		(void)vu_set_call(b, q, -1);
		vu_swap_fd(q, &q->err_fd, -1);
		q->num = 0;
		q->addr_set = false;
		q->enabled = false;
	}
	b->features = 0;
	b->features_set = false;
}

/* ---- handlers: 0 or -errno with *why; replies of GET_* are sent here ---- */

/* Reply to the message being handled. 0, or -ECONNRESET: the front-end is gone or not reading. */
static int vu_reply(struct vu_backend *b, const void *payload, uint32_t size)
{
	return vu_send_reply(b->sock, b->msg.hdr.request, payload, size) ? -ECONNRESET : 0;
}

static int vu_reply_u64(struct vu_backend *b, uint64_t v)
{
	return vu_reply(b, &v, sizeof(v));
}

static int vu_set_features(struct vu_backend *b, uint64_t f, const char **why)
{
	uint64_t dev_f = f & ~(1ULL << VU_F_PROTOCOL_FEATURES);
	if (f & ~(virtio_core_offered(&b->core) | (1ULL << VU_F_PROTOCOL_FEATURES))) {
		*why = "features that were not offered";
		return -EINVAL;
	}
	if (!virtio_core_features_ok(&b->core, dev_f)) {
		*why = "VIRTIO_F_VERSION_1 not accepted (no legacy devices)";
		return -EINVAL;
	}
	for (unsigned int i = 0; i < vu_nr_queues(b); i++) {
		if (vu_running(b, i) && dev_f != b->core.driver_features) {
			*why = "features changed while rings run";
			return -EBUSY;
		}
	}
	b->features = f;
	b->features_set = true;
	virtio_core_accept_features(&b->core, dev_f);
	/* "If VHOST_USER_F_PROTOCOL_FEATURES has not been negotiated, the ring starts directly in
	   the enabled state." */
	if (!(f & (1ULL << VU_F_PROTOCOL_FEATURES)))
		for (unsigned int i = 0; i < vu_nr_queues(b); i++)
			b->q[i].enabled = true;
	return vu_start_all(b, why);
}

static int vu_set_mem_table(struct vu_backend *b, const char **why)
{
	struct vu_mem fresh;
	int err = vu_mem_map(&fresh, &b->msg.payload.memory, b->msg.fds, why);
	if (err)
		return err;
	/* A refused table changes nothing: the running rings must fit it before any of them stops. */
	for (unsigned int i = 0; i < vu_nr_queues(b); i++) {
		struct vq_layout l = { 0 };
		if (vu_running(b, i) &&
		    ((err = vu_ring_layout(b, i, &fresh.gm, &l, why)) ||
		     (err = virtio_core_queue_fits(&b->core, &fresh.gm, &l, why)))) {
			vu_mem_unmap(&fresh);
			return err;
		}
	}
	/* Rings using the old table stop (draining what they hold) before it is unmapped: no
	   worker ever sees a stale mapping. They restart on the new one. */
	bool was[VIRTIO_DEV_MAX_QUEUES] = { false };
	for (unsigned int i = 0; i < vu_nr_queues(b); i++) {
		was[i] = vu_running(b, i);
		if (was[i])
			(void)vu_ring_stop(b, i);
	}
	vu_mem_unmap(&b->mem);
	b->mem = fresh;
	for (unsigned int i = 0; i < vu_nr_queues(b); i++) {
		if (!was[i])
			continue;
		err = vu_ring_try_start(b, i, why);
		if (err)
			return err;
	}
	return 0;
}

static int vu_set_vring_addr(struct vu_backend *b, const char **why)
{
	const struct vu_vring_addr *a = &b->msg.payload.addr;
	struct vu_queue *q = &b->q[a->index];
	if (vu_running(b, a->index)) {
		*why = "the ring is running (GET_VRING_BASE stops it)";
		return -EBUSY;
	}
	struct vq_layout l;
	/* Checked now when possible, so the front-end hears which message was wrong; again when
	   the ring starts (the table may change in between). */
	if (b->mem.nr && q->num &&
	    vu_ring_gpas(&b->mem.gm, q->num, a->desc_user_addr, a->avail_user_addr,
			 a->used_user_addr, &l, why))
		return -EFAULT;
	q->desc_uva = a->desc_user_addr;
	q->avail_uva = a->avail_user_addr;
	q->used_uva = a->used_user_addr;
	q->addr_set = true;
	return 0;
}

static int vu_vring_state(struct vu_backend *b, const char **why)
{
	const struct vu_vring_state *s = &b->msg.payload.state;
	struct vu_queue *q = &b->q[s->index];
	switch (b->msg.hdr.request) {
	case VU_SET_VRING_NUM:
	case VU_SET_VRING_BASE:
		if (vu_running(b, s->index)) {
			*why = "the ring is running (GET_VRING_BASE stops it)";
			return -EBUSY;
		}
		if (b->msg.hdr.request == VU_SET_VRING_NUM)
			q->num = (uint16_t)s->num;
		else
			b->core.q[s->index].layout.start_idx = (uint16_t)s->num;
		return 0;
	case VU_GET_VRING_BASE: {
		struct vu_vring_state r = { .index = s->index, .num = vu_ring_stop(b, s->index) };
		/* Stopped until the front-end sends a kick fd again (vhost-user.rst "Ring states"). */
		if (q->kick_fd >= 0)
			close(q->kick_fd);
		q->kick_fd = -1;
		b->core.q[s->index].kick_fd = -1;
		return vu_reply(b, &r, sizeof(r));
	}
	case VU_SET_VRING_ENABLE:
		q->enabled = s->num;
		if (!q->enabled) {
			if (vu_running(b, s->index))
				(void)vu_ring_stop(b, s->index);
			return 0;
		}
		return vu_ring_try_start(b, s->index, why);
	default:
		*why = "not a ring state request";
		return -EINVAL;
	}
}

/*
 * An eventfd is an anonymous inode: no file type in st_mode. A regular file, a socket or a device in
 * its place would be read by the worker as kicks (a file returns data at once, forever: a spinning
 * worker; the vhost-user socket itself would lose its bytes to the worker), so anything with a file
 * type is refused. (Other anonymous inodes pass; reading them as kicks ends in an error that
 * disarms the kick read, never a loop.)
 */
static int vu_check_eventfd(int fd, const char **why)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || (st.st_mode & S_IFMT) != 0) {
		*why = "the fd is not an eventfd (a file, socket, pipe or device)";
		return -EBADF;
	}
	return 0;
}

/* SET_VRING_KICK/CALL/ERR: payload u64 = index | NOFD; the fd (if any) is taken from the message. */
static int vu_vring_fd(struct vu_backend *b, const char **why)
{
	unsigned int i = (unsigned int)(b->msg.payload.u64 & VU_VRING_INDEX_MASK);
	bool nofd = b->msg.payload.u64 & VU_VRING_NOFD_MASK;
	struct vu_queue *q = &b->q[i];
	int fd = nofd ? -1 : b->msg.fds[0];
	if (!nofd && vu_check_eventfd(fd, why))
		return -EBADF;
	switch (b->msg.hdr.request) {
	case VU_SET_VRING_KICK:
		if (nofd) {
			*why = "polling mode (no kick fd) is not supported";
			return -EOPNOTSUPP;
		}
		if (vu_running(b, i))
			(void)vu_ring_stop(b, i); /* the worker reads the kick fd: swap it stopped */
		if (q->kick_fd >= 0)
			close(q->kick_fd);
		q->kick_fd = fd;
		b->msg.fds[0] = -1;
		return vu_ring_try_start(b, i, why);
	case VU_SET_VRING_CALL:
		if (vu_set_call(b, q, fd)) {
			*why = "the call fd could not be installed";
			return -EBADF;
		}
		return 0; /* the message's fd closes with the message */
	default:
		vu_swap_fd(q, &q->err_fd, fd);
		break;
	}
	if (!nofd)
		b->msg.fds[0] = -1;
	return 0;
}

/* Config space in the device's access sizes (1, 2, 4 or 8 bytes, naturally aligned). */
static void vu_config_access(struct virtio_dev *dev, uint32_t off, uint8_t *buf, uint32_t len,
			     bool write)
{
	while (len) {
		uint32_t n = 8;
		while (n > len || off % n)
			n /= 2;
		if (write)
			dev->ops->config_write(dev, off, buf, n);
		else
			dev->ops->config_read(dev, off, buf, n);
		off += n;
		buf += n;
		len -= n;
	}
}

static int vu_config(struct vu_backend *b, const char **why)
{
	struct vu_config *c = &b->msg.payload.config;
	struct virtio_dev *dev = b->core.dev;
	if (b->msg.hdr.request == VU_GET_CONFIG) {
		memset(c->region, 0, c->size);
		vu_config_access(dev, c->offset, c->region, c->size, false);
		return vu_reply(b, c, VU_CONFIG_HDR_SIZE + c->size);
	}
	/* "back-ends MUST NOT accept SET_CONFIG for read-only configuration space fields" */
	if (!dev->ops->config_write) {
		*why = "the device's config space is read-only";
		return -EPERM;
	}
	vu_config_access(dev, c->offset, c->region, c->size, true);
	return 0;
}

static int vu_handle(struct vu_backend *b, const char **why)
{
	struct vu_msg *m = &b->msg;
	switch (m->hdr.request) {
	case VU_GET_FEATURES:
		return vu_reply_u64(b, virtio_core_offered(&b->core) |
					       (1ULL << VU_F_PROTOCOL_FEATURES));
	case VU_SET_FEATURES:
		return vu_set_features(b, m->payload.u64, why);
	case VU_GET_PROTOCOL_FEATURES:
		return vu_reply_u64(b, VU_PROTOCOL_FEATURES);
	case VU_SET_PROTOCOL_FEATURES:
		if (m->payload.u64 & ~VU_PROTOCOL_FEATURES) {
			*why = "protocol features that were not offered";
			return -EINVAL;
		}
		b->protocol = m->payload.u64;
		return 0;
	case VU_GET_QUEUE_NUM:
		return vu_reply_u64(b, vu_nr_queues(b));
	case VU_SET_OWNER:
		return 0; /* one front-end per connection: the connection is the session */
	case VU_RESET_OWNER: /* deprecated; "use it to disable all rings" */
	case VU_RESET_DEVICE:
		vu_reset_device(b);
		return 0;
	case VU_SET_MEM_TABLE:
		return vu_set_mem_table(b, why);
	case VU_SET_VRING_ADDR:
		return vu_set_vring_addr(b, why);
	case VU_SET_VRING_NUM:
	case VU_SET_VRING_BASE:
	case VU_GET_VRING_BASE:
	case VU_SET_VRING_ENABLE:
		return vu_vring_state(b, why);
	case VU_SET_VRING_KICK:
	case VU_SET_VRING_CALL:
	case VU_SET_VRING_ERR:
		return vu_vring_fd(b, why);
	case VU_GET_CONFIG:
	case VU_SET_CONFIG:
		return vu_config(b, why);
	default:
		*why = "request not supported";
		return -EOPNOTSUPP;
	}
}

/*
 * One received message: validate, handle, acknowledge. 0 to go on, -EPROTO to drop the connection.
 * Every fd the handler did not keep is closed here, whatever happened.
 */
static int vu_dispatch(struct vu_backend *b)
{
	struct vu_msg *m = &b->msg;
	const struct vu_limits lim = {
		.nr_queues = vu_nr_queues(b),
		.config_size = b->core.dev->config_size,
		.queue_max_size = b->core.ring_max,
	};
	const char *why = "unknown";
	int err = vu_decode(m, &lim, &why);
	if (!err)
		err = vu_handle(b, &why);
	vu_close_fds(m);
	bool ack = (b->protocol & (1ULL << VU_PROTOCOL_F_REPLY_ACK)) &&
		   (m->hdr.flags & VU_FLAG_NEED_REPLY) && !vu_has_reply(m->hdr.request);
	if (err == -ECONNRESET) {
		fprintf(stderr, "ringvm: vhost-user %s: %s: the front-end stopped reading replies\n",
			b->name, vu_request_name(m->hdr.request));
		return -EPROTO;
	}
	if (err) {
		fprintf(stderr, "ringvm: vhost-user %s: %s (request %u) refused: %s\n", b->name,
			vu_request_name(m->hdr.request), m->hdr.request, why);
		/* GET_CONFIG's own way to fail: a reply with no payload. */
		if (m->hdr.request == VU_GET_CONFIG)
			return vu_reply(b, NULL, 0) ? -EPROTO : 0;
		if (!ack)
			return -EPROTO; /* no way to say "no" but closing (vhost-user.rst) */
	}
	if (ack && vu_reply_u64(b, err ? 1 : 0))
		return -EPROTO;
	return 0;
}

/* End of a connection: everything it set up goes (see vu_backend.h). */
static void vu_disconnect(struct vu_backend *b)
{
	vu_reset_device(b);
	vu_mem_unmap(&b->mem);
	b->protocol = 0;
	close(b->sock);
	b->sock = -1;
	uint64_t v;
	while (read(b->poison_fd, &v, sizeof(v)) > 0) {
		/* drain: a poison for the old connection says nothing about the next */
	}
}

int vu_backend_serve(struct vu_backend *b, int sock, int stop_fd)
{
	b->sock = sock;
	int ret;
	for (;;) {
		struct pollfd p[3] = { { sock, POLLIN, 0 },
				       { b->poison_fd, POLLIN, 0 },
				       { stop_fd, POLLIN, 0 } };
		int n = poll(p, stop_fd >= 0 ? 3 : 2, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -EPROTO;
			break;
		}
		if (stop_fd >= 0 && (p[2].revents & POLLIN)) {
			ret = -EINTR;
			break;
		}
		if (p[1].revents & POLLIN) {
			fprintf(stderr, "ringvm: vhost-user %s: the front-end shrank guest memory under "
				"a mapping (SIGBUS caught): connection dropped\n", b->name);
			ret = -EPROTO;
			break;
		}
		const char *why = "unknown";
		int r = vu_recv(sock, stop_fd, &b->msg, &why);
		if (r == 0) {
			ret = 0;
			break;
		}
		if (r < 0) {
			if (r != -EINTR)
				fprintf(stderr, "ringvm: vhost-user %s: connection dropped: %s\n",
					b->name, why);
			ret = r == -EINTR ? -EINTR : -EPROTO;
			break;
		}
		if (vu_dispatch(b) < 0) {
			ret = -EPROTO;
			break;
		}
	}
	vu_disconnect(b);
	return ret;
}

int vu_backend_create(struct virtio_dev *dev, const char *name, struct vu_backend **out)
{
	if (!virtio_core_dev_ok(dev))
		return -EINVAL;
	struct vu_backend *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->sock = -1;
	b->mem.gm.memfd = -1;
	snprintf(b->name, sizeof(b->name), "%s", name);
	int err;
	b->poison_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (b->poison_fd < 0) {
		err = -errno;
		goto err_free;
	}
	err = vu_mem_guard_install(b->poison_fd);
	if (err)
		goto err_poison;
	char where[160];
	snprintf(where, sizeof(where), "vhost-user %s", name);
	err = virtio_core_init(&b->core, dev, &b->mem.gm, &vu_transport_ops, b, where);
	if (err)
		goto err_poison;
	virtio_core_set_ring_max(&b->core, VU_RING_MAX);
	b->call_sink = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (b->call_sink < 0) {
		err = -errno;
		goto err_poison;
	}
	unsigned int made = 0;
	for (; made < VIRTIO_DEV_MAX_QUEUES; made++) {
		struct vu_queue *q = &b->q[made];
		q->kick_fd = q->err_fd = -1;
		q->call_slot = fcntl(b->call_sink, F_DUPFD_CLOEXEC, 0);
		if (q->call_slot < 0) {
			err = -errno;
			goto err_slots;
		}
		pthread_mutex_init(&q->lock, NULL);
	}
	*out = b;
	return 0;

err_slots:
	while (made-- > 0) {
		close(b->q[made].call_slot);
		pthread_mutex_destroy(&b->q[made].lock);
	}
	close(b->call_sink);
err_poison:
	close(b->poison_fd);
err_free:
	free(b);
	return err;
}

int vu_backend_prepare(struct vu_backend *b, int (*confine)(void *), void *opaque)
{
	return virtio_core_prepare(&b->core, confine, opaque);
}

void vu_backend_destroy(struct vu_backend *b)
{
	if (!b)
		return;
	virtio_core_fini(&b->core);
	for (unsigned int i = 0; i < VIRTIO_DEV_MAX_QUEUES; i++) {
		if (b->q[i].err_fd >= 0)
			close(b->q[i].err_fd);
		close(b->q[i].call_slot);
		pthread_mutex_destroy(&b->q[i].lock);
	}
	close(b->call_sink);
	vu_mem_unmap(&b->mem);
	close(b->poison_fd);
	free(b);
}
