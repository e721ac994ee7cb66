/* worker.c: the per-virtqueue thread: kicks, chains, io_uring completions and interrupts in one loop. */
#define _GNU_SOURCE
#include "devices/virtio/worker_priv.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "devices/virtio/pace.h"
#include "vmm/guest_mem.h"

/*
 * CQE tags (user_data), never a guest value: bits 0-15 the request's slot (a queue has at most 32768
 * entries) or WK_SLOT_OWN for the worker's own SQEs, bits 16-31 the epoch (the run they belong to:
 * the ring outlives runs, and a CQE of an abandoned request of an earlier run must not be taken for
 * a current one), bits 32-63 the slot's generation, or which of the worker's own SQEs it is.
 */
#define WK_SLOT_OWN 0xffffu
enum wk_own { WK_OWN_KICK = 1, WK_OWN_STOP, WK_OWN_CANCEL, WK_OWN_EVENT, WK_OWN_STATE, WK_OWN_CALL, WK_OWN_CLOSE };

/* At stop, how long in-flight requests get to complete once cancelled before they are abandoned. */
#define WK_STOP_WAIT_MS 1000

static uint64_t wk_own_tag(const struct vq_worker *w, enum wk_own which)
{
	return ((uint64_t)which << 32) | ((uint64_t)w->epoch << 16) | WK_SLOT_OWN;
}

static uint64_t wk_tag(const struct vq_worker *w, const struct vq_req *req)
{
	return ((uint64_t)req->gen << 32) | ((uint64_t)w->epoch << 16) | req->slot;
}

/* After a submission: an interrupt write left in the SQ is still queued (a later one rides on it). */
static void wk_submitted(struct vq_worker *w)
{
	unsigned int left = io_uring_sq_ready(&w->ring);
	if (w->call_queued && !left)
		w->call_queued = false;
	if (w->sq_closes > left)
		w->sq_closes = left;
}

static void wk_call_queue(struct vq_worker *w);
static void wk_call_write(struct vq_worker *w, int fd);

/* Submit what is queued (an owed interrupt with it); errors other than "try later" are logged:
   the loop cannot fix them. */
static void wk_submit(struct vq_worker *w)
{
	wk_call_queue(w);
	int r = io_uring_submit(&w->ring);
	wk_submitted(w);
	if (r < 0 && r != -EAGAIN && r != -EBUSY && r != -EINTR)
		fprintf(stderr, "ringvm: virtqueue %u: io_uring_submit: %s\n", w->cfg.queue_index,
			strerror(-r));
}

/*
 * Submit what is queued, unless it is only closes (vq_worker_close_fd): those ride on the next
 * submission the worker makes for something else, at the latest the one it sleeps in, instead of
 * costing a system call of their own (a FORGET's close otherwise did, before the worker polled).
 */
static void wk_submit_due(struct vq_worker *w)
{
	if (io_uring_sq_ready(&w->ring) > w->sq_closes) {
		wk_submit(w);
	} else if (w->call_owed >= 0) {
		/* Only an interrupt to send: write(2) costs a third of an io_uring_enter carrying
		   the write and its CQE (measured natively: 0.3 against 0.8 us). Measured again on a
		   host where any system call costs ~0.9 us, 4 KiB cached reads, alternating pairs:
		   depth 1 alike, four queues on one CPU 153-160k IOPS against 144-145k through the
		   ring. */
		int fd = w->call_owed;

		w->call_owed = -1;
		wk_call_write(w, fd);
	}
}

/* An SQE with no owner yet; submits the queue once when full. */
static struct io_uring_sqe *wk_sqe(struct vq_worker *w)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
	if (!sqe) {
		wk_submit(w);
		sqe = io_uring_get_sqe(&w->ring);
	}
	return sqe;
}

static int wk_arm_read(struct vq_worker *w, int fd, uint64_t *buf, uint64_t tag)
{
	struct io_uring_sqe *sqe = wk_sqe(w);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_read(sqe, fd, buf, sizeof(*buf), 0);
	io_uring_sqe_set_data64(sqe, tag);
	return 0;
}

struct io_uring_sqe *vq_worker_get_sqe(struct vq_worker *w, struct vq_req *req)
{
	/* Bounding what is in flight keeps every completion inside the CQ ring. */
	if (w->inflight_sqes >= w->max_inflight || w->abandoning)
		return NULL;
	struct io_uring_sqe *sqe = wk_sqe(w);
	if (!sqe)
		return NULL;
	io_uring_sqe_set_data64(sqe, wk_tag(w, req));
	req->inflight++;
	w->inflight_sqes++;
	return sqe;
}

bool vq_worker_alone(struct vq_worker *w)
{
	return w->busy_reqs == 1 && vq_avail_count(w->vq) == 0;
}

unsigned int vq_worker_queue_index(const struct vq_worker *w)
{
	return w->cfg.queue_index;
}

void vq_worker_fail_why(struct vq_worker *w, const char *why)
{
	w->vq->broken = true;
	if (!w->failed) {
		w->failed = true;
		w->cfg.needs_reset(w->cfg.opaque, why ? why : "unknown");
	}
}

void vq_worker_done(struct vq_worker *w, struct vq_req *req, uint32_t written)
{
	if (!req->busy)
		return; /* our own bug: a double completion must not corrupt the free list */
	vq_push(w->vq, req->chain.head, written);
	req->busy = false;
	req->gen++;
	w->free_slots[w->nr_free++] = req->slot;
	w->busy_reqs--;
}

static unsigned int wk_reap(struct vq_worker *w);

/* What the worker has in hand (pace.h): requests not yet completed + chains waiting in the ring. */
static unsigned int wk_held(struct vq_worker *w)
{
	int avail = vq_avail_count(w->vq);

	if (avail < 0) {
		/* The driver broke the ring (avail idx ran ahead): reported now, whichever call saw it. */
		vq_worker_fail_why(w, w->vq->why);
		avail = 0;
	}
	return w->busy_reqs + (unsigned int)avail;
}

bool vq_worker_batching(struct vq_worker *w)
{
	return pace_ring_batches(wk_held(w));
}

/* Signal the interrupt eventfd fd with a system call of the worker's own. */
static void wk_call_write(struct vq_worker *w, int fd)
{
	if (write(fd, &w->call_one, sizeof(w->call_one)) < 0) {
		/* counter saturated: an interrupt is pending anyway */
	}
}

/*
 * Signal the interrupt eventfd the transport named (worker.h: interrupt). It is owed until the
 * worker's next system call: a submission it makes anyway carries it as a write on the ring
 * (wk_call_queue); with nothing to submit before it polls it is written directly
 * (wk_submit_due); a sleep's io_uring_enter carries it. One owed, or still in the SQ, already
 * covers this interrupt: it goes after everything published so far. A write that has been
 * submitted does not (the driver may have read the used ring before this publish).
 */
static void wk_call(struct vq_worker *w, int fd)
{
	if (w->call_queued || w->call_owed >= 0)
		return;
	w->call_owed = fd;
}

/* The owed interrupt joins the SQ, to leave with the submission about to be made; WK_CALLS_MAX
   writes at most in flight: past that, or without an SQE, the worker writes the fd itself. */
static void wk_call_queue(struct vq_worker *w)
{
	int fd = w->call_owed;

	if (fd < 0)
		return;
	w->call_owed = -1;
	struct io_uring_sqe *sqe = w->calls_inflight < WK_CALLS_MAX ? io_uring_get_sqe(&w->ring) : NULL;
	if (!sqe) {
		wk_call_write(w, fd);
		return;
	}
	io_uring_prep_write(sqe, fd, &w->call_one, sizeof(w->call_one), 0);
	io_uring_sqe_set_data64(sqe, wk_own_tag(w, WK_OWN_CALL));
	w->calls_inflight++;
	w->call_queued = true;
}

void vq_worker_close_fd(struct vq_worker *w, int fd)
{
	struct io_uring_sqe *sqe = w->ring_closes && !w->ring_broken &&
						   w->closes_inflight < WK_CLOSES_MAX
					   ? io_uring_get_sqe(&w->ring)
					   : NULL;
	if (!sqe) {
		close(fd);
		return;
	}
	io_uring_prep_close(sqe, fd);
	io_uring_sqe_set_data64(sqe, wk_own_tag(w, WK_OWN_CLOSE));
	w->closes_inflight++;
	w->sq_closes++;
}

/* Publish the used entries pushed so far; interrupt the driver if it waits for them, unless
   `pace` and the interrupt can wait for a fuller batch (pace_hold_interrupt). */
static void wk_publish_paced(struct vq_worker *w, bool pace)
{
	vq_publish(w->vq);
	unsigned int due = vq_notify_pending(w->vq);
	if (due && pace && pace_hold_interrupt(due, wk_held(w)))
		return; /* the window stays open: the next publish or the end of the pass sends it */
	vq_notify_decided(w->vq);
	if (due) {
		w->irq_used = w->vq->published;
		w->irqs++;
		int fd = w->cfg.interrupt(w->cfg.opaque);
		if (fd >= 0)
			wk_call(w, fd);
	}
}

/* End of a slice: start the I/O queued so far, finish what completed, hand the replies over. */
static void wk_slice_end(struct vq_worker *w)
{
	wk_submit_due(w);
	wk_reap(w);
	wk_publish_paced(w, true);
}

/* Pop one chain into a free slot and hand it to the device: 1 handled, 0 the ring is empty, -1
   stop popping (backpressure: the chain was given back; or the ring is broken: NEEDS_RESET). */
static int wk_pop_one(struct vq_worker *w)
{
	struct vq_req *req = &w->slots[w->free_slots[w->nr_free - 1]];
	int r = vq_pop(w->vq, &req->chain);
	if (r == 0)
		return 0;
	if (r == -EPROTO) {
		vq_worker_fail_why(w, w->vq->why);
		return -1;
	}
	if (r < 0) {
		/* A malformed chain: give its buffers back untouched, then NEEDS_RESET. */
		vq_push(w->vq, req->chain.head, 0);
		vq_worker_fail_why(w, w->vq->why);
		return -1;
	}
	w->nr_free--;
	w->busy_reqs++;
	req->busy = true;
	req->inflight = 0;
	if (w->cfg.priv_size)
		memset(req->priv, 0, w->cfg.priv_size);
	int res = w->cfg.ops->handle(w->cfg.dev, w, req);
	if (res == VQ_REQ_BUSY && req->busy && req->inflight == 0) {
		req->busy = false;
		w->busy_reqs--;
		w->nr_free++;
		vq_unpop(w->vq);
		w->backpressure = true;
		return -1;
	}
	return 1;
}

/*
 * Pop and hand chains to the device while slots and SQEs last, in slices (pace.h): after every
 * pace_slice(held) chains, and whenever the ring runs empty, the queued I/O is submitted and the
 * replies published, so the driver works on replies while the worker goes on. Returns when the
 * ring stays empty, no slot or SQE is free, the queue failed, a reaped stop CQE asks the worker
 * to stop, or pace_pass_budget() chains were handled (then true: the caller lets other threads on
 * this CPU run before it goes on); no chain it handled is left unsubmitted.
 */
static bool wk_pop_all(struct vq_worker *w)
{
	unsigned int in_slice = 0, budget = pace_pass_budget(&w->poll);

	while (w->nr_free && !w->backpressure && !w->failed && !w->stopping) {
		if (!budget--) {
			if (in_slice)
				wk_slice_end(w);
			return true;
		}
		int r = wk_pop_one(w);
		if (r > 0 && ++in_slice < pace_slice(wk_held(w)))
			continue;
		if (in_slice) {
			wk_slice_end(w);
			in_slice = 0;
			if (r >= 0)
				continue; /* the driver may have added chains meanwhile */
		}
		if (r <= 0)
			return false;
	}
	if (in_slice)
		wk_slice_end(w);
	return false;
}

static void wk_on_cqe(struct vq_worker *w, uint64_t tag, int res)
{
	if ((uint16_t)(tag >> 16) != w->epoch)
		return; /* an abandoned request of an earlier run, ended at last */
	uint32_t slot = (uint16_t)tag;
	uint32_t hi = (uint32_t)(tag >> 32);
	if (slot == WK_SLOT_OWN) {
		/* Re-arm unless stopping; an error other than a retry would spin: it disarms. */
		bool rearm = !w->stopping && (res > 0 || res == -EINTR || res == -EAGAIN);

		if (hi == WK_OWN_KICK) {
			w->kicks += res > 0;
			w->kick_armed = rearm && wk_arm_read(w, w->kick_fd, &w->kick_buf,
							     wk_own_tag(w, WK_OWN_KICK)) == 0;
		} else if (hi == WK_OWN_STATE) {
			/* The report itself is answered by the loop, before its next pass. */
			w->state_armed = rearm && wk_arm_read(w, w->state_fd, &w->state_buf,
							      wk_own_tag(w, WK_OWN_STATE)) == 0;
		} else if (hi == WK_OWN_EVENT) {
			w->event_armed = rearm && wk_arm_read(w, w->cfg.event_fd, &w->event_buf,
							      wk_own_tag(w, WK_OWN_EVENT)) == 0;
			if (res > 0 && !w->stopping) {
				/* What the device waited for may have happened: retry what it gave back. */
				w->backpressure = false;
				if (w->cfg.ops->event)
					w->cfg.ops->event(w->cfg.dev, w);
			}
		} else if (hi == WK_OWN_STOP) {
			w->stopping = true;
		} else if (hi == WK_OWN_CALL) {
			/* An error (a saturated counter) leaves an interrupt pending anyway. */
			if (w->calls_inflight)
				w->calls_inflight--;
		} else if (hi == WK_OWN_CLOSE) {
			/* The fd is closed whatever the result (close(2)): nothing to retry. */
			if (w->closes_inflight)
				w->closes_inflight--;
		}
		return; /* WK_OWN_CANCEL: nothing to do */
	}
	if (slot >= w->nr_slots)
		return;
	/* Every request tag is an SQE we counted, even one whose request finished early. */
	if (w->inflight_sqes)
		w->inflight_sqes--;
	w->backpressure = false;
	struct vq_req *req = &w->slots[slot];
	if (!req->busy || req->gen != hi || req->inflight == 0)
		return;
	req->inflight--;
	w->cfg.ops->complete(w->cfg.dev, w, req, res);
}

static unsigned int wk_reap(struct vq_worker *w)
{
	unsigned int n = 0;
	struct io_uring_cqe *cqe;
	while (io_uring_peek_cqe(&w->ring, &cqe) == 0) {
		uint64_t tag = io_uring_cqe_get_data64(cqe);
		int res = cqe->res;
		io_uring_cqe_seen(&w->ring, cqe);
		wk_on_cqe(w, tag, res);
		n++;
	}
	return n;
}

static void wk_publish(struct vq_worker *w)
{
	wk_publish_paced(w, false);
}

static uint64_t wk_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Give the CPU way to whichever thread waits for it (another queue's worker may share it), timed
   from now: pace learns from how long that took whether the CPU is shared (pace_yielded: the next
   poll's yield steps, the next pass's budget). Returns the time it came back. */
static uint64_t wk_yield(struct vq_worker *w, uint64_t now)
{
	sched_yield();
	uint64_t back = wk_now_us();
	pace_yielded(&w->poll, back - now);
	return back;
}

/* A spin loop's breath: lets the sibling hyperthread (or the hypervisor) run. */
static inline void wk_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#endif
}

/*
 * Bounded busy-poll: true when there is work (a chain or a CQE) before poll_us ran out. Called with
 * kicks still off (with EVENT_IDX: avail_event left behind), so a driver adding chains meanwhile does
 * not exit to notify: the saved exits are what polling is for.
 */
static bool wk_poll(struct vq_worker *w)
{
	(void)vq_enable_kicks(w->vq, false);
	wk_submit_due(w);
	w->poll_from_us = wk_now_us();
	uint64_t now = w->poll_from_us, deadline = now + w->poll.cur_us;
	uint64_t yield_at = now + pace_yield_after(&w->poll);
	do {
		if (io_uring_cq_ready(&w->ring) || uring_cq_owed(&w->ring))
			return true;
		/* A broken ring (negative count) is work too: the loop reports it. */
		if (!w->backpressure && w->nr_free && !w->failed && vq_avail_count(w->vq) != 0)
			return true;
		now = wk_now_us();
		if (now >= yield_at) {
			/* Another queue's worker may share this CPU and need it now: give it way. A
			   yield that came back at once found nobody waiting, so spin a while before
			   the next; one that ran somebody else, yield at every look. */
			yield_at = wk_yield(w, now) + pace_yield_after(&w->poll);
		} else {
			wk_cpu_relax();
		}
	} while (now < deadline);
	return false;
}

/*
 * How many chains the next kick may wait for (worker.h: batch_kicks, pace.h: pace_kick_batch): 1
 * unless the device says the driver re-posts what it consumes; 1 once after a batched sleep timed
 * out (the driver waited with fewer chains than asked: ask for each one again).
 */
static uint16_t wk_kick_batch(struct vq_worker *w)
{
	if (w->batch_off) {
		w->batch_off = false;
		return 1;
	}
	if (!w->cfg.ops->batch_kicks || !w->cfg.ops->batch_kicks(w->cfg.dev, w))
		return 1;
	return (uint16_t)pace_kick_batch(vq_driver_unconsumed(w->vq));
}

/* Cancel the pending kick and event reads: the ring must hold no reference to their buffers when
   they are freed, and a read left from this run would swallow a wakeup of the next one. */
static void wk_cancel_reads(struct vq_worker *w)
{
	const bool armed[3] = { w->kick_armed, w->event_armed, w->state_armed };
	const enum wk_own reads[3] = { WK_OWN_KICK, WK_OWN_EVENT, WK_OWN_STATE };
	for (unsigned int i = 0; i < 3; i++) {
		if (!armed[i])
			continue;
		struct io_uring_sqe *sqe = wk_sqe(w);
		if (!sqe)
			return;
		io_uring_prep_cancel64(sqe, wk_own_tag(w, reads[i]), 0);
		io_uring_sqe_set_data64(sqe, wk_own_tag(w, WK_OWN_CANCEL));
	}
	while (w->kick_armed || w->event_armed || w->state_armed) {
		struct io_uring_cqe *cqe;
		wk_submit(w);
		if (io_uring_wait_cqe(&w->ring, &cqe) < 0)
			return;
		uint64_t tag = io_uring_cqe_get_data64(cqe);
		int res = cqe->res;
		io_uring_cqe_seen(&w->ring, cqe);
		wk_on_cqe(w, tag, res);
	}
}

/*
 * Stopping with requests still in flight (a READ of a FIFO or of a file system whose server never
 * answers): the first call asks io_uring to cancel every request of the ring (ASYNC_CANCEL_ANY;
 * they complete with -ECANCELED and the device finishes them as errors). Requests that cannot be
 * cancelled (already in a file system's wait that only a fatal signal ends) are abandoned once
 * WK_STOP_WAIT_MS passed: the worker exits anyway, so a device reset and ringvm's exit end in
 * bounded time (wk_abandon). The kernel keeps an abandoned request's file and buffers (guest
 * memory, still mapped) until it ends. Returns the microseconds left to wait, 0 when time is up.
 */
static uint64_t wk_stop_wait(struct vq_worker *w)
{
	uint64_t now = wk_now_us();

	/* A pause (vq_worker_stop_drain) first lets requests complete as they would have. */
	if (w->drain_us && !w->drain_deadline_us)
		w->drain_deadline_us = now + w->drain_us;
	if (!w->stop_deadline_us && now < w->drain_deadline_us)
		return w->drain_deadline_us - now;
	if (!w->stop_deadline_us) {
		struct io_uring_sqe *sqe = wk_sqe(w);

		w->stop_deadline_us = now + WK_STOP_WAIT_MS * 1000u;
		if (sqe) {
			io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
			io_uring_sqe_set_data64(sqe, wk_own_tag(w, WK_OWN_CANCEL));
		}
	}
	return now < w->stop_deadline_us ? w->stop_deadline_us - now : 0;
}

/*
 * The stop wait is over: finish every request still open as if its SQEs completed with -ECANCELED,
 * so the device drops what it holds for them (handles, fds: the kernel keeps its own reference to
 * the file until the request really ends) and the used ring says they are done. Their CQEs, if they
 * ever come, land in a ring nobody reads.
 */
static void wk_abandon(struct vq_worker *w)
{
	fprintf(stderr,
		"ringvm: virtqueue %u: %u request(s) did not complete within %d ms of the stop and were "
		"abandoned\n",
		w->cfg.queue_index, w->busy_reqs, WK_STOP_WAIT_MS);
	w->abandoning = true;
	/* The kernel may still copy into or out of guest memory for them, whenever their file
	   system answers: the memory's mappings must never be handed back for reuse. */
	if (w->inflight_sqes)
		gm_io_abandoned();
	for (uint32_t i = 0; i < w->nr_slots; i++) {
		struct vq_req *req = &w->slots[i];
		while (req->busy && req->inflight) {
			req->inflight--;
			w->cfg.ops->complete(w->cfg.dev, w, req, -ECANCELED);
		}
		if (req->busy)
			vq_worker_done(w, req, 0); /* the device left it open: our side ends it */
	}
	w->inflight_sqes = 0;
	wk_publish(w);
}

void wk_serve(struct vq_worker *w)
{
	w->kick_armed =
		wk_arm_read(w, w->kick_fd, &w->kick_buf, wk_own_tag(w, WK_OWN_KICK)) == 0;
	/* Only a device with an event handler has an event fd: a config that left the field at 0
	   must not have the worker read the process's stdin. */
	if (w->cfg.event_fd >= 0 && w->cfg.ops->event)
		w->event_armed = wk_arm_read(w, w->cfg.event_fd, &w->event_buf,
					     wk_own_tag(w, WK_OWN_EVENT)) == 0;
	if (wk_arm_read(w, w->stop_fd, &w->stop_buf, wk_own_tag(w, WK_OWN_STOP)) < 0)
		w->stopping = true;
	w->state_armed =
		wk_arm_read(w, w->state_fd, &w->state_buf, wk_own_tag(w, WK_OWN_STATE)) == 0;

	for (;;) {
		/* A state report asked while the worker was busy: the state between two passes. */
		wk_state_answer(w, false);
		bool more = !w->stopping && wk_pop_all(w);
		wk_reap(w);
		wk_publish_paced(w, more); /* a pass cut short goes on: its interrupt may wait */
		if (more) {
			/* A driver that keeps the ring full must not keep other queues' workers sharing
			   this CPU waiting: let them run, then go on without sleeping. */
			(void)wk_yield(w, wk_now_us());
			continue;
		}
		/* Drained: no request open and no SQE left that could still touch guest memory. */
		if (w->stopping && w->busy_reqs == 0 && w->inflight_sqes == 0)
			break;
		uint64_t left_us = w->stopping ? wk_stop_wait(w) : 0;
		if (w->stopping && left_us == 0) {
			wk_abandon(w);
			break;
		}
		/* With I/O in flight the wait is the device's, not the driver's: no poll, and the
		   poll window does not learn from it. */
		bool io_wait = w->inflight_sqes != 0;
		bool polled = w->poll.cur_us && !w->stopping && !io_wait;
		if (polled && wk_poll(w))
			continue;
		uint16_t batch = 1;
		if (!w->stopping && !w->backpressure && !w->failed && w->nr_free) {
			batch = wk_kick_batch(w);
			if (vq_enable_kicks_after(w->vq, batch))
				continue; /* chains arrived while we were busy: no kick will come for them */
		}
		/* The avail ring was just found empty (kicks on) and nothing is open. */
		if (!w->stopping && !w->backpressure && !w->failed && w->busy_reqs == 0 &&
		    w->cfg.ops->idle)
			w->cfg.ops->idle(w->cfg.dev, w);
		int r;
		wk_call_queue(w); /* the sleep's io_uring_enter carries it */
		w->sleep_from_us = wk_now_us();
		if (w->stopping) {
			struct __kernel_timespec ts = { .tv_sec = (long long)(left_us / 1000000u),
							.tv_nsec = (long long)(left_us % 1000000u) * 1000 };
			struct io_uring_cqe *cqe;
			r = io_uring_submit_and_wait_timeout(&w->ring, &cqe, 1, &ts, NULL);
			wk_submitted(w);
			if (r == -ETIME)
				r = 0; /* the next pass sees the time is up */
		} else if (batch > 1) {
			/* A driver that waits with fewer than `batch` chains re-posted gets no kick out:
			   look at the ring after a while anyway; the next sleep asks for every chain. */
			struct __kernel_timespec ts = { .tv_sec = 0,
							.tv_nsec = VQ_BATCH_SLEEP_MS * 1000000LL };
			struct io_uring_cqe *cqe;
			r = io_uring_submit_and_wait_timeout(&w->ring, &cqe, 1, &ts, NULL);
			wk_submitted(w);
			if (r == -ETIME) {
				r = 0;
				w->batch_off = true;
				w->batch_timeouts++;
			}
		} else {
			r = io_uring_submit_and_wait(&w->ring, 1);
			wk_submitted(w);
			/* The whole wait, the failed poll included: what a poll would have had to cover. */
			if (w->poll.max_us && !io_wait)
				pace_poll_waited(&w->poll, wk_now_us() - (polled ? w->poll_from_us
										  : w->sleep_from_us));
		}
		/* Woken by a state report: the state the worker slept on, before anything changes it. */
		wk_state_answer(w, true);
		if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
			fprintf(stderr, "ringvm: virtqueue %u: io_uring_enter: %s\n",
				w->cfg.queue_index, strerror(-r));
			/* Without its ring the queue cannot progress, now or in a later run: report it;
			   the stop that follows finds the loop already over. */
			vq_worker_fail_why(w, "the queue's io_uring failed (not the driver's fault)");
			w->ring_broken = true;
			return;
		}
	}
	wk_cancel_reads(w);
	/* Nothing of this run may stay queued: an old ASYNC_CANCEL_ANY would cancel the next run's. */
	wk_submit(w);
}
