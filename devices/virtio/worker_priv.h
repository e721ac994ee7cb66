/* worker_priv.h: a queue worker's state, shared by its loop (worker.c) and its life (worker_life.c). */
#ifndef RINGVM_WORKER_PRIV_H
#define RINGVM_WORKER_PRIV_H

#include <pthread.h>

#include "devices/virtio/pace.h"
#include "devices/virtio/worker.h"

/*
 * Interrupt writes through the ring (vq_worker_config.interrupt) whose CQE is not yet reaped, at
 * most; past that, or when no SQE is free, the worker writes the fd itself. Each normally completes
 * inside the submit that carries it and is reaped in the same pass.
 */
#define WK_CALLS_MAX 4u
/*
 * Closes through the ring (vq_worker_close_fd) whose CQE is not yet reaped, at most; past that, or
 * when no SQE is free, the worker closes the fd itself. Like the interrupt writes, each completes
 * inside the submit that carries it.
 */
#define WK_CLOSES_MAX 16u

/* The thread's state, under lock. */
enum wk_state {
	WK_STARTING, /* running thread_init and confine */
	WK_IDLE,     /* waiting for a start */
	WK_RUNNING,  /* serving a queue */
	WK_EXIT,     /* asked to end */
	WK_GONE,     /* the thread returned (setup failed, or after WK_EXIT) */
};

struct vq_worker {
	struct vq_worker_config cfg; /* fixed at create */
	struct io_uring ring;	     /* sealed (uring.h), kept across runs */
	int stop_fd;
	pthread_t thread;
	unsigned int cq_room; /* in-flight SQEs the CQ holds besides the worker's own */

	pthread_mutex_t lock; /* state, setup_err; the cond signals their changes */
	pthread_cond_t cond;
	enum wk_state state;
	int setup_err;
	bool serving; /* transport's thread only: between vq_worker_start and vq_worker_stop */

	/* One run (vq_worker_start .. loop end): set by start, then the worker thread's. */
	struct virtq *vq;
	int kick_fd;
	uint16_t epoch;
	struct vq_req *slots;
	uint32_t nr_slots;
	uint32_t *free_slots; /* stack of free slot indices */
	uint32_t nr_free;
	struct iovec *chain_iov; /* nr_slots * max_segs, for vq_chain.iov */
	struct iovec *io_iov;	 /* nr_slots * max_segs, for the device */
	uint8_t *priv;		 /* nr_slots * priv_stride */
	size_t priv_stride;

	uint64_t kick_buf; /* eventfd counters read by the ring; only the ring writes them */
	uint64_t stop_buf;
	uint64_t event_buf; /* the device's event fd (cfg.event_fd), read by the ring too */
	uint64_t call_one;  /* 1: what an interrupt write through the ring writes (never changes) */
	unsigned int calls_inflight; /* interrupt writes submitted or queued, CQE not yet reaped */
	bool call_queued;   /* one of them is still in the SQ: a later interrupt rides on it */
	int call_owed;      /* an interrupt decided and not yet queued or written: the fd, or -1; it
			       leaves with the worker's next submission, or by write(2) when there is
			       none to make before the worker polls (wk_submit_due) */
	bool ring_closes;   /* cfg.rules allow IORING_OP_CLOSE (vq_worker_close_fd may use the ring) */
	unsigned int closes_inflight; /* closes submitted or queued, CQE not yet reaped */
	unsigned int sq_closes; /* of them, still in the SQ: alone there, they wait for a submission
				   the worker makes anyway (wk_submit_due) */
	unsigned int inflight_sqes; /* request SQEs handed out and not completed */
	unsigned int max_inflight;
	bool kick_armed;
	bool event_armed; /* the device's event fd is being read */
	bool stopping;
	bool backpressure; /* a chain was given back; retry once something completes */
	bool failed;	   /* NEEDS_RESET was requested; the queue pops nothing more */
	bool ring_broken;  /* io_uring_enter failed for good: no further run */
	unsigned int busy_reqs;
	uint64_t stop_deadline_us; /* stopping with requests in flight: cancelled at, + the wait */
	uint64_t drain_us;	   /* set before the stop (vq_worker_stop_drain): the graceful wait */
	uint64_t drain_deadline_us; /* stopping: requests may complete normally until then */
	struct pace_poll poll; /* the adaptive busy-poll window (pace.h), reset at each start */
	bool abandoning; /* stop gave up on in-flight requests: no SQE is handed out any more */
	bool batch_off;	 /* a batched-kick sleep timed out: the next sleep asks for every chain */
	uint64_t batch_timeouts; /* batched-kick sleeps that ended by their timeout, in this run */

	/*
	 * The state report (virtq_state.h). state_fd is an eventfd the ring always reads while
	 * serving (made with the ring, kept across runs); the asker stores state_out, then
	 * state_asked (release), then writes state_fd; the worker compares state_asked (acquire)
	 * with state_done, the last report it answered, which the asker reads back. Atomics only.
	 */
	int state_fd;
	uint64_t state_buf;
	bool state_armed;
	unsigned int state_asked;
	int state_out;
	unsigned int state_done;
	/* What the report says of the run: the worker thread's own, reset at each start. */
	uint16_t irq_used;	 /* the used idx published at the last interrupt sent */
	uint64_t kicks, irqs;	 /* kick eventfd reads, interrupts sent */
	uint64_t sleep_from_us;	 /* when the worker last went to sleep in io_uring_enter */
	uint64_t poll_from_us;	 /* when its last busy-poll began (wk_poll) */
};

/* The worker's thread (virtq_state.c): answer a report asked since the last answer, if any.
   asleep: it just came out of its wait in io_uring_enter. Cheap when nothing was asked. */
void wk_state_answer(struct vq_worker *w, bool asleep);

/*
 * One run on the worker's thread: serve w->vq from vq_worker_start until the stop (or until the ring
 * fails: w->ring_broken), leaving nothing of the run queued or armed on the ring but requests it
 * abandoned (whose CQEs carry the run's epoch). worker.c.
 */
void wk_serve(struct vq_worker *w);

#endif
