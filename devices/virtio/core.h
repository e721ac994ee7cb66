/* core.h: the transport-independent half of a virtio device: status, features, activation, queues, reset. */
#ifndef RINGVM_VIRTIO_CORE_H
#define RINGVM_VIRTIO_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "devices/virtio/virtio.h"
#include "devices/virtio/virtq.h"
#include "devices/virtio/worker.h"
#include "vmm/guest_mem.h"

/*
 * Every transport carries the same device model (virtio 1.x sections 2 and 3); only the way the
 * driver's requests arrive differs:
 *
 *          virtio-mmio (mmio.c)                    vhost-user (devices/vhost_user/)
 *   register writes on a vCPU thread        messages on the front-end's Unix socket
 *              \                                      /
 *               +-- struct virtio_core (this file) --+
 *                   status state machine (2.1, 3.1.1), feature negotiation, activation,
 *                   one vq_worker per running queue, reset, NEEDS_RESET with a reason,
 *                   config generation and change notification
 *                              |
 *               the device (devices/blk, devices/fs): struct virtio_dev, never knows which
 *
 * A transport embeds a struct virtio_core, fills each queue's configuration (layout, kick_fd)
 * while the queue is stopped, and implements struct virtio_transport_ops: how an interrupt, a
 * configuration change and NEEDS_RESET reach the driver.
 *
 * Threading: the virtio_core_* calls are serialised by the transport (virtio-mmio: its register
 * lock; vhost-user: its one connection thread). Queue workers call back into the core from their
 * own threads and touch only the atomic fields (status, generation) and the transport ops.
 */

struct virtio_core;

/* Returned as `queue` when NEEDS_RESET concerns the device rather than one queue. */
#define VIRTIO_CORE_NO_QUEUE (~0u)

struct virtio_transport_ops {
	/*
	 * Queue `queue` published used buffers the driver wants to hear about. Worker thread. Set
	 * the interrupt status the driver reads, if any, then signal the interrupt and return -1, or
	 * return the eventfd that signals it, open from virtio_core_prepare to virtio_core_fini: the
	 * worker writes it through its io_uring (worker.h, vq_worker_config.interrupt).
	 */
	int (*vring_interrupt)(void *opaque, unsigned int queue);
	/* The device's config space changed (2.4.2); only called while the device is active.
	 * Any thread. */
	void (*config_interrupt)(void *opaque);
	/* DEVICE_NEEDS_RESET was just set (2.1.2) because of `queue` (or VIRTIO_CORE_NO_QUEUE);
	 * the core already logged why. Any thread; at most once per failing worker. */
	void (*needs_reset)(void *opaque, unsigned int queue);
};

/* One queue. The transport writes layout and kick_fd while the queue has no worker. */
struct virtio_core_queue {
	struct vq_layout layout; /* size, guest-physical ring addresses, start index */
	bool ready;		 /* the driver enabled it (virtio-mmio QueueReady) */
	int kick_fd;		 /* the driver's kicks; owned by the transport, -1 for none */

	/* Owned by the core. */
	struct virtq vq;	  /* validated by vq_init; owned by the worker while it runs */
	struct vq_worker *worker; /* made once (virtio_core_prepare or the first start), kept across
				     resets until virtio_core_fini; vq_worker_running() tells */
	struct virtio_core *core; /* back pointer for the worker's callbacks */
	unsigned int index;
	char name[144]; /* the state report's: "\"<core name>\" q<index> <queue's name>" */
};

struct virtio_core {
	struct virtio_dev *dev;
	const struct guest_mem *gm; /* what ring addresses mean; the transport may swap it while
				       every queue is stopped */
	const struct virtio_transport_ops *ops;
	void *opaque;		    /* for ops */
	char name[96];		    /* "virtio-blk on virtio-mmio@0xd0000000", for messages */
	uint16_t ring_max;	    /* largest ring accepted: dev->queue_max_size unless the transport
				       raised it (virtio_core_set_ring_max) */
	int (*confine)(void *);	    /* each worker thread's confinement (virtio_core_prepare) */
	void *confine_opaque;

	uint32_t status;	  /* atomic: workers add NEEDS_RESET */
	uint32_t generation;	  /* atomic: config generation (4.2.2 ConfigGeneration) */
	uint64_t driver_features; /* what the driver accepted so far */
	bool activated;		  /* atomic reads: dev->ops->activate() accepted, reset() owed */
	struct virtio_core_queue q[VIRTIO_DEV_MAX_QUEUES];
};

/* Ring features every device gets from the core, on top of its own. */
#define VIRTIO_CORE_TRANSPORT_FEATURES                                                            \
	((1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_RING_F_EVENT_IDX) |                        \
	 (1ULL << VIRTIO_RING_F_INDIRECT_DESC))

/* dev is well formed: 1..VIRTIO_DEV_MAX_QUEUES queues, QueueNumMax a power of two <= 32768, the
   mandatory ops (config_read, activate, queue_ops). A transport checks before it takes resources. */
bool virtio_core_dev_ok(const struct virtio_dev *dev);

/*
 * Check dev (queue count, QueueNumMax a power of two <= 32768, the mandatory ops), zero c and bind
 * it: dev->transport = c. `where` names the transport in messages ("virtio-mmio@0xd0000000").
 * Every kick_fd starts at -1. Returns 0 or -EINVAL. Setup time, before the driver can act.
 */
__attribute__((warn_unused_result)) int virtio_core_init(struct virtio_core *c,
							 struct virtio_dev *dev,
							 const struct guest_mem *gm,
							 const struct virtio_transport_ops *ops,
							 void *opaque, const char *where);

/*
 * Accept rings up to n entries (a power of two <= 32768, at least dev->queue_max_size). For transports
 * where the driver's side sizes the rings whatever the device says: QEMU's virtio-mmio offers
 * QueueNumMax 1024 for every vhost-user device, so a vhost-user back-end must take 1024-entry rings.
 * The workers size themselves to the ring; max_segs still bounds a chain. Setup time only.
 */
void virtio_core_set_ring_max(struct virtio_core *c, uint16_t n);

/*
 * Make every queue's worker now (its thread and io_uring sealed to dev->ring_rules; worker.h), each
 * thread confined by confine(confine_opaque) before it serves anything (NULL: not confined). For the
 * machine builder, at setup, before the process is confined: afterwards io_uring_setup and clone
 * are denied. A queue nobody prepared gets its worker at its first start (unit tests). After
 * virtio_core_set_ring_max. 0 or -errno (workers made so far stay, freed by virtio_core_fini).
 */
__attribute__((warn_unused_result)) int virtio_core_prepare(struct virtio_core *c,
							    int (*confine)(void *),
							    void *confine_opaque);

/* Reset (stopping every worker), end the workers' threads and unbind: dev->transport = NULL. */
void virtio_core_fini(struct virtio_core *c);

/* The device's features plus the ring features the core implements. */
uint64_t virtio_core_offered(const struct virtio_core *c);

/* A feature set a driver may accept: a subset of what is offered, VERSION_1 included (6.1: no
   legacy drivers). */
bool virtio_core_features_ok(const struct virtio_core *c, uint64_t features);

/*
 * Status register semantics (2.1, 3.1.1), for transports that expose one. 0 resets the device
 * (virtio_core_reset). Otherwise bits only accumulate; each needs its predecessor (ACKNOWLEDGE ->
 * DRIVER -> FEATURES_OK -> DRIVER_OK); FEATURES_OK is refused for features virtio_core_features_ok
 * rejects; DRIVER_OK brings the device live (virtio_core_go_live), NEEDS_RESET on failure.
 * An out-of-order or clearing write is ignored.
 */
void virtio_core_write_status(struct virtio_core *c, uint32_t val);
uint32_t virtio_core_status(const struct virtio_core *c);
uint32_t virtio_core_generation(const struct virtio_core *c);

/* While DRIVER is set and FEATURES_OK is not (3.1.1 step 4), store features; else ignore them. */
void virtio_core_set_features(struct virtio_core *c, uint64_t features);

/* Queue configuration may change: between FEATURES_OK and DRIVER_OK, device not active. */
bool virtio_core_queues_configurable(const struct virtio_core *c);

/*
 * DRIVER_OK: validate every ready queue (vq_init over its full length), activate the device with
 * the negotiated features, start one worker per ready queue. Returns 0 or -errno after logging the
 * reason; the caller (virtio_core_write_status) then sets NEEDS_RESET.
 */
__attribute__((warn_unused_result)) int virtio_core_go_live(struct virtio_core *c);

/*
 * One queue, for transports that start queues one at a time (vhost-user): validate the queue's
 * layout, activate the device first if it is not yet (with the features set by
 * virtio_core_accept_features), then start its worker. The queue must be stopped. Returns 0, or
 * -errno with *why set to a static one-line reason (-EPROTO: features never accepted; vq_init's
 * errors; the device's activate refusal; a worker that could not start).
 */
__attribute__((warn_unused_result)) int virtio_core_queue_start(struct virtio_core *c,
								unsigned int i,
								const char **why);

/*
 * Would a queue's rings at layout l be accepted in guest memory gm (vq_init's rules, with the
 * negotiated features)? For a transport about to replace guest memory under a running queue, which
 * must refuse the new memory before anything changes. 0, or vq_init's error with *why set.
 */
__attribute__((warn_unused_result)) int virtio_core_queue_fits(const struct virtio_core *c,
							       const struct guest_mem *gm,
							       const struct vq_layout *l,
							       const char **why);

/* How long a paused queue's requests in flight may take to complete before they are cancelled. */
#define VIRTIO_CORE_PAUSE_DRAIN_MS 5000

/*
 * Stop queue i's worker and return the next avail index the queue would pop: every chain before it
 * has been completed and published. A pause, not a reset: requests in flight complete normally
 * (cancelled only if they take longer than VIRTIO_CORE_PAUSE_DRAIN_MS; vq_worker_stop_drain). For a
 * queue that never ran: its layout's start_idx. The device stays active.
 */
uint16_t virtio_core_queue_stop(struct virtio_core *c, unsigned int i);

/* True when queue i has a running worker. */
bool virtio_core_queue_running(const struct virtio_core *c, unsigned int i);

/* For transports without a status register: take features the driver accepted (checked by the
   caller with virtio_core_features_ok), before any queue starts. */
void virtio_core_accept_features(struct virtio_core *c, uint64_t features);

/*
 * Stop every worker (draining), reset the device if it was active (its reset hook: forget the
 * session), clear features, status and every queue's layout and readiness. kick_fd stays (the
 * transport's). The device is then as after virtio_core_init().
 */
void virtio_core_reset(struct virtio_core *c);

/*
 * The state report (virtq_state.h), from any thread (ringvm's main thread on SIGUSR2): ask every
 * queue whose worker serves it to write its line for report seq to fd; for each other queue write
 * a line saying it is stopped. Returns the number of queues asked. Reads only the workers' own
 * locked state and the atomic status.
 */
unsigned int virtio_core_state_request(struct virtio_core *c, unsigned int seq, int fd);

/*
 * The queues asked for report seq that have not answered: their number, and for each of them a
 * line "no answer" on fd when say_who (the asker gave up waiting).
 */
unsigned int virtio_core_state_pending(struct virtio_core *c, unsigned int seq, int fd,
				       bool say_who);

/*
 * The driver broke a rule (queue i, or VIRTIO_CORE_NO_QUEUE): one line on stderr naming the device,
 * the queue and `why`, then DEVICE_NEEDS_RESET and the transport's needs_reset op. Any thread.
 */
void virtio_core_needs_reset(struct virtio_core *c, unsigned int i, const char *why);

#endif
