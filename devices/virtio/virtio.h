/* virtio.h: the transport-independent virtio device model; a device never knows it is on MMIO. */
#ifndef RINGVM_VIRTIO_H
#define RINGVM_VIRTIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/virtio_config.h>

#include "devices/virtio/worker.h"

/*
 * A device embeds a struct virtio_dev (and recovers itself with container_of), fills the fields below
 * and exposes it; it never attaches itself to a bus. Whoever builds the machine (vmm/devices.c, a
 * unit test, `ringvm serve`) picks a transport and hands it the virtio_dev (mmio.h:
 * virtio_mmio_create(); devices/vhost_user/vu_backend.h); the device leaves the transport-owned
 * fields alone. Every transport drives the device through the shared core (core.h: status state
 * machine, virtio 1.x 2.1 and 3.1, feature negotiation, queue workers), which calls the hooks:
 *
 *   config_read/config_write  the transport's thread (a vCPU, the vhost-user connection),
 *                             serialised by the transport
 *   activate                  that thread, before the first queue worker starts (DRIVER_OK, or the
 *                             first vhost-user ring that starts)
 *   handler ops (worker.h)    each queue's worker thread
 *   reset                     that thread (status 0, vhost-user reset or disconnect, teardown), after
 *                             every worker stopped and drained: the device forgets negotiated
 *                             state, keeps its backend
 *
 * A device in outline (devices/blk/blk.c is the full example):
 *
 *   struct mydev { struct virtio_dev vdev; ...backend... };
 *   static int my_handle(struct virtio_dev *d, struct vq_worker *w, struct vq_req *req)
 *   {
 *           struct vq_reader r;              parse the request through the chain's Reader/Writer
 *           vq_reader_init(&r, &req->chain);
 *           ...bad request: write an error reply, vq_worker_done(w, req, bytes_written)
 *           struct io_uring_sqe *sqe = vq_worker_get_sqe(w, req);
 *           if (!sqe)
 *                   return VQ_REQ_BUSY;      nothing queued yet: retried after completions
 *           io_uring_prep_readv(sqe, fd, req->io_iov, nr, off);
 *           return VQ_REQ_PENDING;           my_complete() gets the CQE, calls vq_worker_done()
 *   }
 *   mydev_create(cfg, &dev): open the backend, fill vdev (device_id, features, config_size,
 *           nr_queues, queue_max_size, max_segs, req_priv_size, ops, queue_ops). No VM, no bus.
 *   mydev_virtio_dev(dev): return &dev->vdev, for the transport.
 *   mydev_destroy(dev): the backend only. The machine builder destroys the transport first
 *           (virtio_mmio_destroy() stops and drains the workers), then calls this.
 *
 *   The machine builder:   mydev_create(cfg, &dev);
 *                          virtio_mmio_create(vm, mydev_virtio_dev(dev), &mmio);
 *                          ...the guest runs...
 *                          virtio_mmio_destroy(mmio); mydev_destroy(dev);
 */
struct virtio_dev;
struct virtio_core;

struct virtio_dev_ops {
	/* Device-specific config space (2.4 / device chapter), offset relative to its start. Reads
	 * beyond config_size never reach the device (they read 0); len is 1, 2, 4 or 8. */
	void (*config_read)(struct virtio_dev *dev, uint32_t offset, void *data, uint32_t len);
	/* Optional; NULL means the config space is read-only (writes ignored). */
	void (*config_write)(struct virtio_dev *dev, uint32_t offset, const void *data, uint32_t len);
	/* The driver accepted `features` (a subset of dev->features, VERSION_1 included) and set
	 * DRIVER_OK. Return 0, or -errno to refuse: the transport then sets DEVICE_NEEDS_RESET. */
	int (*activate)(struct virtio_dev *dev, uint64_t features);
	/* Optional. Workers are stopped; forget everything negotiated. */
	void (*reset)(struct virtio_dev *dev);
	/* Optional. An eventfd the device owns (open until it is destroyed) and writes to wake queue
	 * `queue`'s worker (worker.h: vq_handler_ops.event), or -1. Asked once, when the worker is made
	 * (virtio_core_prepare, before the process is confined). */
	int (*queue_event_fd)(struct virtio_dev *dev, unsigned int queue);
};

struct virtio_dev {
	/* Filled by the device. */
	uint32_t device_id;       /* VIRTIO_ID_* from <linux/virtio_ids.h> */
	uint64_t features;        /* offered device features; the transport adds VIRTIO_F_VERSION_1,
				     VIRTIO_RING_F_EVENT_IDX and VIRTIO_RING_F_INDIRECT_DESC */
	uint32_t config_size;     /* bytes of device config space */
	unsigned int nr_queues;   /* queues the device has (VIRTIO_DEV_MAX_QUEUES at most) */
	uint16_t queue_max_size;  /* QueueNumMax of every queue: a power of two <= 32768 */
	unsigned int max_segs;    /* descriptors allowed in one chain (hop budget); <= queue size */
	size_t req_priv_size;     /* per-request device state (vq_req.priv) */
	unsigned int poll_us;     /* worker busy-poll ceiling before sleeping (adaptive, pace.h);
				     0 = off */
	unsigned int max_inflight; /* io_uring SQEs in flight per queue; 0 = default (worker.h) */
	const struct uring_rules *ring_rules; /* what its queues' io_urings may do (uring.h), static
						 const in the device's folder; NULL = unrestricted
						 (test devices only) */
	const struct virtio_dev_ops *ops;
	const struct vq_handler_ops *queue_ops; /* same handler for every queue; a device that needs
						   to tell queues apart asks vq_worker_queue_index() */

	/* Owned by the transport (set by it, read-only for the device). */
	struct virtio_core *transport; /* the core the transport drives it with (core.h) */
	uint64_t driver_features; /* valid from activate() until reset() */
};

#define VIRTIO_DEV_MAX_QUEUES 64

/*
 * The device's config space changed (e.g. capacity): bump the config generation and send a
 * configuration change interrupt (2.4.2). Any thread; a no-op before a transport is attached.
 */
void virtio_config_changed(struct virtio_dev *dev);

#endif
