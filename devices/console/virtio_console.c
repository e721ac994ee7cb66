/* virtio_console.c: virtio-console ports as byte streams between the guest and host fds, via io_uring. */
#define _GNU_SOURCE
#include "devices/console/virtio_console.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <linux/virtio_ids.h>

#include "devices/virtio/virtio.h"
#include "devices/virtio/xfer.h"

/* Linux fills a port's receive queue with one page per entry: 128 pages of stdin in flight. */
#define VCON_QUEUE_SIZE 128
/*
 * host -> guest: one read of the host fd fills this buffer, which then fills as many receive
 * buffers (pages) as it holds, all in the same pass: one read, one used-ring publication and one
 * interrupt per 16 pages rather than per page. One memory copy costs far less than a round trip: in
 * the lab, `sha256sum` of its stdin went from 0.41x of the same from virtio-fs to 0.45x on a quiet
 * host, from 0.17-0.29x to 0.59-0.70x on a busy one (tests/bench/README.md).
 */
#define VCON_IN_BUF (64 * 1024)
#define VCON_NR_QUEUES(ports) (2 * ((ports) + 1))
#define VCON_CTRL_RX 2 /* 5.3.2: the control receiveq (device -> driver) */
#define VCON_CTRL_TX 3

struct vcon_port {
	bool to_guest;
	/* The host side (our duplicate), -1 once closed. After activation only the worker of the
	   port's data queue (receiveq for to_guest, transmitq otherwise) touches it and the fields
	   up to drain_seen. */
	int fd;
	bool busy;	  /* a transfer is in flight: the next buffer waits, bytes stay in order */
	bool eof;	  /* to_guest: the host side ended and the guest got its empty buffer */
	bool sticky_eof;  /* to_guest: every buffer after EOF comes back empty (vcon_port_config) */
	bool broken;	  /* guest -> host: the host side failed; what the guest writes is dropped */
	bool close_armed; /* the guest closed the port: close fd once its buffers are written */
	bool warned;	  /* one line per port about host I/O errors */
	char *in_buf;	  /* to_guest: VCON_IN_BUF bytes read from fd, in_buf[in_off .. in_len) not yet
			     given to the guest; read into only when empty, so at most one read is
			     in flight and bytes keep their order */
	size_t in_off, in_len;
	struct iovec in_iov; /* the read's target, for READV */
	uint64_t drain_seen; /* the drain generation current when the worker last got an event */
	/* Atomics, read by vcon_drain on another thread. */
	uint64_t drained; /* the latest drain generation this port was found idle for */
	uint64_t moved;	  /* bytes transferred */
	bool writing;	  /* == busy */
};

struct vcon_dev {
	struct virtio_dev vdev;
	struct virtio_console_config config; /* little-endian, immutable after create */
	unsigned int nr_ports;
	struct vcon_port port[VCON_MAX_PORTS];
	int efd[VCON_NR_QUEUES(VCON_MAX_PORTS)]; /* per queue: wakes its worker (vcon_poke) */
	int drain_efd;	      /* written by a worker that found its port drained */
	pthread_mutex_t lock; /* protects ctrl */
	struct vcon_ctrl ctrl;
	bool activated;	     /* atomic */
	uint64_t drain_gen;  /* atomic: bumped by each vcon_drain */
	bool warned_ctrl;    /* atomic: one line per device about bad control messages */
};

/* Per-request state (vq_req.priv), on the queue's worker thread. */
struct vcon_io {
	struct xfer x;	     /* guest -> host: the write, continued after short completions */
	unsigned int retries; /* EINTR answers in a row */
	bool polling;	     /* a POLL_ADD is in flight: the fd said EAGAIN */
};

static struct vcon_dev *vcon_of(struct virtio_dev *vdev)
{
	return (struct vcon_dev *)((char *)vdev - offsetof(struct vcon_dev, vdev));
}

/* 5.3.2: the port queue q belongs to, with *rx for a receiveq; -1 for the control queues. */
static int vcon_queue_port(unsigned int q, bool *rx)
{
	*rx = q % 2 == 0;
	if (q == VCON_CTRL_RX || q == VCON_CTRL_TX)
		return -1;
	return q < 2 ? 0 : (int)(q / 2 - 1);
}

static unsigned int vcon_port_queue(unsigned int port, bool rx)
{
	return (port == 0 ? 0 : 2 * port + 2) + (rx ? 0 : 1);
}

/* Wake queue q's worker (its ops->event runs, chains given back are retried). Any thread. */
static void vcon_poke(struct vcon_dev *d, unsigned int q)
{
	uint64_t one = 1;

	/* Fails only when the counter is full: the worker has a wakeup pending anyway. */
	if (write(d->efd[q], &one, sizeof(one)) < 0) {
	}
}

static void vcon_warn_port(struct vcon_dev *d, unsigned int i, const char *what, int err)
{
	struct vcon_port *p = &d->port[i];

	if (p->warned)
		return;
	p->warned = true;
	fprintf(stderr, "ringvm: virtio-console port %s: %s: %s\n", d->ctrl.port[i].name, what,
		strerror(-err));
}

/* The host side of port i is gone: the guest hears PORT_OPEN(0) (its poll() sees POLLHUP). */
static void vcon_host_gone(struct vcon_dev *d, unsigned int i)
{
	pthread_mutex_lock(&d->lock);
	bool send = vcon_ctrl_host_close(&d->ctrl, i);
	pthread_mutex_unlock(&d->lock);
	if (send)
		vcon_poke(d, VCON_CTRL_RX);
}

static void vcon_config_read(struct virtio_dev *vdev, uint32_t offset, void *data, uint32_t len)
{
	/* The transport checked offset + len <= config_size. */
	memcpy(data, (const uint8_t *)&vcon_of(vdev)->config + offset, len);
}

static int vcon_activate(struct virtio_dev *vdev, uint64_t features)
{
	/* Without MULTIPORT port 0 would be a console (hvc) and the others would not exist. */
	if (!(features & (1ULL << VIRTIO_CONSOLE_F_MULTIPORT)))
		return -ENOTSUP;
	__atomic_store_n(&vcon_of(vdev)->activated, true, __ATOMIC_SEQ_CST);
	return 0;
}

static void vcon_reset(struct virtio_dev *vdev)
{
	struct vcon_dev *d = vcon_of(vdev);

	/* Every worker stopped and drained: nothing is in flight. The host sides keep their state. */
	__atomic_store_n(&d->activated, false, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&d->lock);
	vcon_ctrl_reset(&d->ctrl);
	pthread_mutex_unlock(&d->lock);
	for (unsigned int i = 0; i < d->nr_ports; i++) {
		d->port[i].busy = false;
		d->port[i].close_armed = false;
		__atomic_store_n(&d->port[i].writing, false, __ATOMIC_SEQ_CST);
	}
}

static int vcon_queue_event_fd(struct virtio_dev *vdev, unsigned int q)
{
	struct vcon_dev *d = vcon_of(vdev);

	return q < VCON_NR_QUEUES(d->nr_ports) ? d->efd[q] : -1;
}

/* The guest's control transmitq: one message, handled at once (the guest spins until it is back). */
static int vcon_ctrl_tx(struct vcon_dev *d, struct vq_worker *w, struct vq_req *req)
{
	uint8_t msg[VCON_CTRL_MSG_SIZE];
	struct vcon_ctrl_effect e;
	struct vq_reader r;

	vq_reader_init(&r, &req->chain);
	size_t len = vq_reader_remaining(&r) < sizeof(msg) ? vq_reader_remaining(&r) : sizeof(msg);
	if (vq_reader_read(&r, msg, len) != 0)
		len = 0;
	pthread_mutex_lock(&d->lock);
	vcon_ctrl_from_guest(&d->ctrl, msg, len, &e);
	pthread_mutex_unlock(&d->lock);
	vq_worker_done(w, req, 0);

	if (e.bad && !__atomic_exchange_n(&d->warned_ctrl, true, __ATOMIC_SEQ_CST))
		fprintf(stderr, "ringvm: virtio-console: ignored %s (further ones are not reported)\n",
			e.bad);
	if (e.send)
		vcon_poke(d, VCON_CTRL_RX);
	if (e.port >= 0) {
		bool to_guest = d->port[e.port].to_guest;

		/* Input may flow now; or the output written before the close can be closed after. */
		if (e.opened && to_guest)
			vcon_poke(d, vcon_port_queue((unsigned int)e.port, true));
		if (e.closed && !to_guest)
			vcon_poke(d, vcon_port_queue((unsigned int)e.port, false));
	}
	return VQ_REQ_PENDING;
}

/* The control receiveq: the next pending message, or the buffer waits (BUSY) for one. */
static int vcon_ctrl_rx(struct vcon_dev *d, struct vq_worker *w, struct vq_req *req)
{
	uint8_t msg[VCON_CTRL_MSG_SIZE + VCON_NAME_MAX];
	struct vq_writer wr;

	vq_writer_init(&wr, &req->chain);
	size_t cap = vq_writer_remaining(&wr);
	if (cap < VCON_CTRL_MSG_SIZE) {
		vq_worker_fail_why(w, "a control receive buffer is smaller than a control message");
		vq_worker_done(w, req, 0);
		return VQ_REQ_PENDING;
	}
	pthread_mutex_lock(&d->lock);
	size_t n = vcon_ctrl_next(&d->ctrl, msg, cap < sizeof(msg) ? cap : sizeof(msg));
	pthread_mutex_unlock(&d->lock);
	if (n == 0)
		return VQ_REQ_BUSY; /* vcon_poke(CTRL_RX) when something becomes pending */
	if (vq_writer_write(&wr, msg, n) != 0)
		n = 0; /* cannot happen: n <= cap */
	vq_worker_done(w, req, (uint32_t)n);
	return VQ_REQ_PENDING;
}

/* Queue the port's next read/write (offset -1: the fd's own position, for a regular file), or a
   poll for readiness. False when no SQE is free. */
static bool vcon_submit(struct vcon_port *p, struct vq_worker *w, struct vq_req *req, bool poll)
{
	struct vcon_io *io = req->priv;
	struct io_uring_sqe *sqe = vq_worker_get_sqe(w, req);

	if (!sqe)
		return false;
	if (poll)
		io_uring_prep_poll_add(sqe, p->fd, p->to_guest ? POLLIN : POLLOUT);
	else if (p->to_guest)
		io_uring_prep_readv(sqe, p->fd, &p->in_iov, 1, (uint64_t)-1);
	else
		io_uring_prep_writev(sqe, p->fd, io->x.iov, io->x.nr, (uint64_t)-1);
	io->polling = poll;
	return true;
}

static void vcon_set_busy(struct vcon_port *p, bool busy)
{
	p->busy = busy;
	__atomic_store_n(&p->writing, busy && !p->to_guest, __ATOMIC_SEQ_CST);
}

/* host -> guest: give the guest what in_buf holds, as much as the receive buffer takes. */
static void vcon_in_fill(struct vcon_port *p, struct vq_worker *w, struct vq_req *req)
{
	struct vq_writer wr;

	vq_writer_init(&wr, &req->chain);
	size_t n = p->in_len - p->in_off;
	if (n > vq_writer_remaining(&wr))
		n = vq_writer_remaining(&wr);
	if (vq_writer_write(&wr, p->in_buf + p->in_off, n) != 0)
		n = 0; /* cannot happen: n <= remaining (vcon_in_start checked it is not 0) */
	p->in_off += n;
	if (p->in_off == p->in_len)
		p->in_off = p->in_len = 0;
	__atomic_add_fetch(&p->moved, (uint64_t)n, __ATOMIC_SEQ_CST);
	vq_worker_done(w, req, (uint32_t)n);
}

/* host -> guest: a receive buffer gets what was read already, or waits for the next read. */
static int vcon_in_start(struct vcon_dev *d, unsigned int i, struct vq_worker *w, struct vq_req *req)
{
	struct vcon_port *p = &d->port[i];
	struct vq_writer wr;

	if (p->busy)
		return VQ_REQ_BUSY; /* taken again after the read in flight */
	pthread_mutex_lock(&d->lock);
	bool open = d->ctrl.port[i].guest_open;
	pthread_mutex_unlock(&d->lock);
	if (!open)
		return VQ_REQ_BUSY; /* Linux drops data for a closed port: wait for PORT_OPEN(1) */
	vq_writer_init(&wr, &req->chain);
	if (vq_writer_remaining(&wr) == 0) {
		vq_worker_fail_why(w, "a port receive buffer has no writable bytes");
		vq_worker_done(w, req, 0);
		return VQ_REQ_PENDING;
	}
	if (p->in_len > p->in_off) {
		vcon_in_fill(p, w, req);
		return VQ_REQ_PENDING;
	}
	if (p->eof && p->sticky_eof) {
		/* EOF again: in order behind everything the host sent, on this queue itself. */
		vq_worker_done(w, req, 0);
		return VQ_REQ_PENDING;
	}
	if (p->eof || p->fd < 0)
		return VQ_REQ_BUSY; /* never again */
	p->in_iov = (struct iovec){ .iov_base = p->in_buf, .iov_len = VCON_IN_BUF };
	if (!vcon_submit(p, w, req, false))
		return VQ_REQ_BUSY;
	vcon_set_busy(p, true);
	return VQ_REQ_PENDING;
}

static void vcon_in_complete(struct vcon_dev *d, unsigned int i, struct vq_worker *w,
			     struct vq_req *req, int res)
{
	struct vcon_port *p = &d->port[i];
	struct vcon_io *io = req->priv;

	/* Not ready (a non-blocking fd): poll, then read again; EINTR: read again, a bounded time. */
	bool again = (io->polling && res > 0) || (res == -EINTR && io->retries++ < XFER_MAX_RETRIES);
	if (again || (res == -EAGAIN && !io->polling)) {
		if (vcon_submit(p, w, req, res == -EAGAIN))
			return;
		res = -EBUSY;
	}
	vcon_set_busy(p, false);
	if (res > 0) {
		/* The receive buffers popped after this one were given back: they follow in order. */
		p->in_off = 0;
		p->in_len = (size_t)res;
		vcon_in_fill(p, w, req);
		return;
	}
	if (res == -ECANCELED) {
		vq_worker_done(w, req, 0); /* a reset or the end: the driver is gone, nothing ended */
		return;
	}
	if (res < 0)
		vcon_warn_port(d, i, "reading the host side", res);
	/* EOF (or an error, which ends the stream too): an empty buffer, and nothing more. */
	p->eof = true;
	vq_worker_done(w, req, 0);
}

/* guest -> host: write one transmit buffer whole. */
static int vcon_out_start(struct vcon_dev *d, unsigned int i, struct vq_worker *w,
			  struct vq_req *req)
{
	struct vcon_port *p = &d->port[i];
	struct vcon_io *io = req->priv;
	struct vq_reader r;
	unsigned int nr;

	if (p->busy)
		return VQ_REQ_BUSY;
	vq_reader_init(&r, &req->chain);
	size_t len = vq_reader_remaining(&r);
	if (p->fd < 0 || p->broken || len == 0) {
		vq_worker_done(w, req, 0); /* nowhere to go: dropped, as on a closed pipe */
		return VQ_REQ_PENDING;
	}
	if (vq_reader_iov(&r, len, req->io_iov, req->io_iov_cap, &nr)) {
		vq_worker_fail_why(w, "a port transmit buffer could not be mapped");
		vq_worker_done(w, req, 0);
		return VQ_REQ_PENDING;
	}
	xfer_init(&io->x, true, req->io_iov, nr, 0, len);
	if (!vcon_submit(p, w, req, false))
		return VQ_REQ_BUSY;
	vcon_set_busy(p, true);
	return VQ_REQ_PENDING;
}

static void vcon_out_complete(struct vcon_dev *d, unsigned int i, struct vq_worker *w,
			      struct vq_req *req, int res)
{
	struct vcon_port *p = &d->port[i];
	struct vcon_io *io = req->priv;

	if (io->polling && res > 0) {
		if (vcon_submit(p, w, req, false))
			return;
		res = -EBUSY;
	}
	if (res == -EAGAIN && !io->polling) {
		if (vcon_submit(p, w, req, true))
			return;
		res = -EBUSY;
	}
	/* A poll that failed ends the write with its error. */
	if (io->polling && res <= 0)
		io->x.error = res < 0 ? res : -EIO;
	if (!io->x.error && xfer_complete(&io->x, res) == XFER_MORE) {
		if (vcon_submit(p, w, req, false))
			return;
		io->x.error = -EBUSY;
	}
	vcon_set_busy(p, false);
	__atomic_add_fetch(&p->moved, io->x.done, __ATOMIC_SEQ_CST);
	int err = io->x.error;
	if (err && err != -ECANCELED) {
		/* EPIPE is the reader going away, as `| head` does: not worth a line. */
		if (err != -EPIPE)
			vcon_warn_port(d, i, "writing the host side", err);
		p->broken = true;
		vcon_host_gone(d, i);
	}
	vq_worker_done(w, req, 0);
}

static int vcon_handle(struct virtio_dev *vdev, struct vq_worker *w, struct vq_req *req)
{
	struct vcon_dev *d = vcon_of(vdev);
	bool rx;
	int i = vcon_queue_port(vq_worker_queue_index(w), &rx);

	if (i < 0)
		return rx ? vcon_ctrl_rx(d, w, req) : vcon_ctrl_tx(d, w, req);
	if (rx)
		return d->port[i].to_guest ? vcon_in_start(d, (unsigned int)i, w, req)
					   : VQ_REQ_BUSY; /* nothing ever comes from that side */
	if (!d->port[i].to_guest)
		return vcon_out_start(d, (unsigned int)i, w, req);
	vq_worker_done(w, req, 0); /* the guest wrote to an input port: it goes nowhere */
	return VQ_REQ_PENDING;
}

static void vcon_complete(struct virtio_dev *vdev, struct vq_worker *w, struct vq_req *req, int res)
{
	struct vcon_dev *d = vcon_of(vdev);
	bool rx;
	int i = vcon_queue_port(vq_worker_queue_index(w), &rx);

	/* Only port data queues submit anything. */
	if (i >= 0 && rx)
		vcon_in_complete(d, (unsigned int)i, w, req, res);
	else if (i >= 0)
		vcon_out_complete(d, (unsigned int)i, w, req, res);
	else
		vq_worker_done(w, req, 0);
}

/* The guest -> host port whose transmitq worker w is, or NULL. */
static struct vcon_port *vcon_out_port(struct vcon_dev *d, struct vq_worker *w, unsigned int *i)
{
	bool rx;
	int port = vcon_queue_port(vq_worker_queue_index(w), &rx);

	if (port < 0 || rx || d->port[port].to_guest)
		return NULL;
	*i = (unsigned int)port;
	return &d->port[port];
}

static void vcon_event(struct virtio_dev *vdev, struct vq_worker *w)
{
	struct vcon_dev *d = vcon_of(vdev);
	unsigned int i;
	struct vcon_port *p = vcon_out_port(d, w, &i);

	if (!p)
		return;
	/* Everything the guest queued before this event is seen by the pass that follows. */
	p->drain_seen = __atomic_load_n(&d->drain_gen, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&d->lock);
	if (d->ctrl.port[i].guest_closed)
		p->close_armed = true;
	pthread_mutex_unlock(&d->lock);
}

static void vcon_idle(struct virtio_dev *vdev, struct vq_worker *w)
{
	struct vcon_dev *d = vcon_of(vdev);
	unsigned int i;
	struct vcon_port *p = vcon_out_port(d, w, &i);

	if (!p)
		return;
	/* The guest closed the port and all it wrote before is out: the host reader sees EOF. */
	if (p->close_armed && p->fd >= 0) {
		close(p->fd);
		p->fd = -1;
		vcon_host_gone(d, i);
	}
	p->close_armed = false;
	if (__atomic_load_n(&p->drained, __ATOMIC_SEQ_CST) != p->drain_seen) {
		uint64_t one = 1;

		__atomic_store_n(&p->drained, p->drain_seen, __ATOMIC_SEQ_CST);
		if (write(d->drain_efd, &one, sizeof(one)) < 0) {
			/* full: vcon_drain has a wakeup pending anyway */
		}
	}
}

static uint64_t vcon_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

bool vcon_port_guest_open(struct vcon_dev *d, unsigned int i)
{
	pthread_mutex_lock(&d->lock);
	bool open = i < d->nr_ports && d->ctrl.port[i].guest_open;
	pthread_mutex_unlock(&d->lock);
	return open;
}

void vcon_output_progress(struct vcon_dev *d, uint64_t *moved, bool *writing)
{
	*moved = 0;
	*writing = false;
	for (unsigned int i = 0; i < d->nr_ports; i++) {
		struct vcon_port *p = &d->port[i];

		if (p->to_guest)
			continue;
		*writing |= __atomic_load_n(&p->writing, __ATOMIC_SEQ_CST);
		*moved += __atomic_load_n(&p->moved, __ATOMIC_SEQ_CST);
	}
}

int vcon_drain(struct vcon_dev *d, int abort_fd, unsigned int stall_ms, bool patient)
{
	if (!__atomic_load_n(&d->activated, __ATOMIC_SEQ_CST))
		return 0;
	uint64_t gen = __atomic_add_fetch(&d->drain_gen, 1, __ATOMIC_SEQ_CST);
	for (unsigned int i = 0; i < d->nr_ports; i++)
		if (!d->port[i].to_guest)
			vcon_poke(d, vcon_port_queue(i, false));
	uint64_t last_moved = UINT64_MAX, since = vcon_now_ms();
	for (;;) {
		bool done = true, writing;
		uint64_t moved;

		for (unsigned int i = 0; i < d->nr_ports; i++)
			if (!d->port[i].to_guest)
				done &= __atomic_load_n(&d->port[i].drained, __ATOMIC_SEQ_CST) >= gen;
		if (done)
			return 0;
		vcon_output_progress(d, &moved, &writing);
		uint64_t now = vcon_now_ms();
		if ((patient && writing) || moved != last_moved) {
			last_moved = moved;
			since = now;
		} else if (now - since >= stall_ms) {
			return -ETIMEDOUT;
		}
		struct pollfd pf[2] = { { d->drain_efd, POLLIN, 0 }, { abort_fd, POLLIN, 0 } };
		if (poll(pf, abort_fd >= 0 ? 2 : 1, 100) < 0 && errno != EINTR)
			return -errno;
		if (abort_fd >= 0 && (pf[1].revents & (POLLIN | POLLHUP | POLLERR)))
			return -EINTR;
		uint64_t v;
		if ((pf[0].revents & POLLIN) && read(d->drain_efd, &v, sizeof(v)) < 0) {
			/* EAGAIN: another reader was faster; the loop looks again */
		}
	}
}

/*
 * host -> guest: Linux's virtio_console re-posts each receive buffer as its reader empties it, and
 * kicks for each (one page per read()): ask for a kick per batch of them while data can still come
 * (worker.h: batch_kicks). At EOF or with the host side gone the buffers wait for nothing.
 */
static bool vcon_batch_kicks(struct virtio_dev *vdev, struct vq_worker *w)
{
	struct vcon_dev *d = vcon_of(vdev);
	bool rx;
	int i = vcon_queue_port(vq_worker_queue_index(w), &rx);

	return i >= 0 && rx && d->port[i].to_guest && !d->port[i].eof && d->port[i].fd >= 0;
}

static const struct virtio_dev_ops vcon_dev_ops = {
	.config_read = vcon_config_read,
	.activate = vcon_activate,
	.reset = vcon_reset,
	.queue_event_fd = vcon_queue_event_fd,
};

static const struct vq_handler_ops vcon_queue_ops = {
	.handle = vcon_handle,
	.complete = vcon_complete,
	.event = vcon_event,
	.idle = vcon_idle,
	.batch_kicks = vcon_batch_kicks,
};

/*
 * Everything a console queue's io_uring may do (devices/virtio/uring.h; the worker adds its eventfd
 * READs, the kick, the stop and the device's event fd, and ASYNC_CANCEL): READV of the host side of
 * a host -> guest port into the guest's receive buffer, WRITEV of a transmit buffer to the host side
 * of a guest -> host port, POLL_ADD on a non-blocking host fd that answered EAGAIN (vcon_submit).
 * No SQE flags. The control queues submit nothing.
 */
static const uint8_t vcon_ring_ops[] = {
	IORING_OP_READV,
	IORING_OP_WRITEV,
	IORING_OP_POLL_ADD,
};

const struct uring_rules vcon_ring_rules = {
	.ops = vcon_ring_ops,
	.nr_ops = sizeof(vcon_ring_ops) / sizeof(vcon_ring_ops[0]),
	.sqe_flags = 0,
};

int vcon_create(const struct vcon_port_config *ports, unsigned int nr, struct vcon_dev **out)
{
	const char *names[VCON_MAX_PORTS];
	int err = 0;

	if (nr < 1 || nr > VCON_MAX_PORTS)
		return -EINVAL;
	struct vcon_dev *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->nr_ports = nr;
	d->drain_efd = -1;
	for (unsigned int q = 0; q < VCON_NR_QUEUES(VCON_MAX_PORTS); q++)
		d->efd[q] = -1;
	for (unsigned int i = 0; i < VCON_MAX_PORTS; i++)
		d->port[i].fd = -1;
	pthread_mutex_init(&d->lock, NULL);
	for (unsigned int i = 0; i < nr && !err; i++) {
		names[i] = ports[i].name;
		d->port[i].to_guest = ports[i].to_guest;
		d->port[i].sticky_eof = ports[i].to_guest && ports[i].sticky_eof;
		if (ports[i].fd < 0 || !ports[i].name)
			err = -EINVAL;
		else if ((d->port[i].fd = fcntl(ports[i].fd, F_DUPFD_CLOEXEC, 3)) < 0)
			err = -errno;
		else if (ports[i].to_guest && !(d->port[i].in_buf = malloc(VCON_IN_BUF)))
			err = -ENOMEM;
	}
	/* Blocking eventfds: the workers read them through io_uring, which waits on them. */
	for (unsigned int q = 0; q < VCON_NR_QUEUES(nr) && !err; q++)
		if ((d->efd[q] = eventfd(0, EFD_CLOEXEC)) < 0)
			err = -errno;
	if (!err && (d->drain_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		err = -errno;
	if (err) {
		vcon_destroy(d);
		return err;
	}
	vcon_ctrl_init(&d->ctrl, names, nr);
	d->config.max_nr_ports = htole32(nr);

	struct virtio_dev *v = &d->vdev;
	v->device_id = VIRTIO_ID_CONSOLE;
	v->features = 1ULL << VIRTIO_CONSOLE_F_MULTIPORT;
	v->config_size = sizeof(d->config);
	v->nr_queues = VCON_NR_QUEUES(nr);
	v->queue_max_size = VCON_QUEUE_SIZE;
	v->max_segs = VCON_QUEUE_SIZE;
	v->req_priv_size = sizeof(struct vcon_io);
	v->ring_rules = &vcon_ring_rules;
	v->ops = &vcon_dev_ops;
	v->queue_ops = &vcon_queue_ops;
	*out = d;
	return 0;
}

struct virtio_dev *vcon_virtio_dev(struct vcon_dev *d)
{
	return &d->vdev;
}

void vcon_destroy(struct vcon_dev *d)
{
	if (!d)
		return;
	for (unsigned int i = 0; i < VCON_MAX_PORTS; i++) {
		if (d->port[i].fd >= 0)
			close(d->port[i].fd);
		free(d->port[i].in_buf);
	}
	for (unsigned int q = 0; q < VCON_NR_QUEUES(VCON_MAX_PORTS); q++)
		if (d->efd[q] >= 0)
			close(d->efd[q]);
	if (d->drain_efd >= 0)
		close(d->drain_efd);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
