/* worker_life.c: a queue worker's thread and ring: made once, started and stopped per run, destroyed. */
#define _GNU_SOURCE
#include "devices/virtio/worker_priv.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/*
 * The thread: block signals (set by the creator), name itself, run the device's per-thread setup and
 * the confinement, then serve one run per start until told to exit.
 */
static void *wk_thread(void *arg)
{
	struct vq_worker *w = arg;
	char name[16];
	snprintf(name, sizeof(name), "vq%u", w->cfg.queue_index);
	(void)pthread_setname_np(pthread_self(), name);
	int err = 0;
	if (w->cfg.ops->thread_init)
		err = w->cfg.ops->thread_init(w->cfg.dev, w);
	if (!err && w->cfg.confine)
		err = w->cfg.confine(w->cfg.confine_opaque);

	pthread_mutex_lock(&w->lock);
	w->setup_err = err;
	w->state = err ? WK_GONE : WK_IDLE;
	pthread_cond_broadcast(&w->cond);
	while (!err) {
		while (w->state == WK_IDLE)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->state != WK_RUNNING)
			break;
		pthread_mutex_unlock(&w->lock);
		wk_serve(w);
		pthread_mutex_lock(&w->lock);
		w->state = WK_IDLE;
		pthread_cond_broadcast(&w->cond);
	}
	w->state = WK_GONE;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static void wk_free_slots(struct vq_worker *w)
{
	free(w->slots);
	free(w->free_slots);
	free(w->chain_iov);
	free(w->io_iov);
	free(w->priv);
	w->slots = NULL;
	w->free_slots = NULL;
	w->chain_iov = w->io_iov = NULL;
	w->priv = NULL;
}

int vq_worker_create(const struct vq_worker_config *cfg, struct vq_worker **out)
{
	if (!cfg->ring_max || cfg->ring_max > 32768 || !cfg->ops)
		return -EINVAL;
	struct vq_worker *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->cfg = *cfg;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->state = WK_STARTING;

	int err;
	w->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (w->stop_fd < 0) {
		err = -errno;
		goto err_free;
	}
	w->state_fd = eventfd(0, EFD_CLOEXEC);
	if (w->state_fd < 0) {
		err = -errno;
		goto err_stop_fd;
	}
	/*
	 * SQ: one entry per request slot plus the four eventfd reads (kick, stop, the device's event,
	 * the state report), the interrupt writes and the closes. CQ: every SQE that may be in flight
	 * (max_inflight, for the largest queue) plus the worker's own (the four reads, up to four
	 * cancels, WK_CALLS_MAX interrupt writes and WK_CLOSES_MAX closes), so completions never
	 * overflow it.
	 */
	w->cq_room = cfg->max_inflight ? cfg->max_inflight : 4u * cfg->ring_max;
	if (w->cq_room < 4)
		w->cq_room = 4;
	unsigned int cq = w->cq_room > cfg->ring_max ? w->cq_room : cfg->ring_max;
	err = uring_create(&w->ring, cfg->ring_max + 4u + WK_CALLS_MAX + WK_CLOSES_MAX,
			   cq + 8u + WK_CALLS_MAX + WK_CLOSES_MAX, cfg->rules); /* CQ >= SQ */
	if (err < 0)
		goto err_state_fd;
	w->ring_closes = uring_rules_allow(cfg->rules, IORING_OP_CLOSE);
	/*
	 * Workers take no signals: a signal meant for the VMM (or a vCPU kick) must not land here and
	 * interrupt a ring wait. The mask is inherited by the new thread and restored for the caller.
	 * The synchronous ones stay open: a fault in this thread must reach the process's handler
	 * (the vhost-user SIGBUS guard, ASan's reports) rather than kill the process unseen.
	 */
	sigset_t all, old;
	sigfillset(&all);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&w->thread, NULL, wk_thread, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto err_ring;
	pthread_mutex_lock(&w->lock);
	while (w->state == WK_STARTING)
		pthread_cond_wait(&w->cond, &w->lock);
	err = w->setup_err;
	pthread_mutex_unlock(&w->lock);
	if (err) {
		pthread_join(w->thread, NULL); /* it returned right after saying so */
		goto err_ring;
	}
	*out = w;
	return 0;

err_ring:
	io_uring_queue_exit(&w->ring);
err_state_fd:
	close(w->state_fd);
err_stop_fd:
	close(w->stop_fd);
err_free:
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
	return err;
}

/* The slots of one run, for a queue of vq->size entries. */
static int wk_alloc_slots(struct vq_worker *w)
{
	unsigned int segs = w->vq->max_segs;
	w->nr_slots = w->vq->size;
	w->priv_stride = (w->cfg.priv_size + 15) & ~(size_t)15;
	w->slots = calloc(w->nr_slots, sizeof(*w->slots));
	w->free_slots = calloc(w->nr_slots, sizeof(*w->free_slots));
	w->chain_iov = calloc((size_t)w->nr_slots * segs, sizeof(struct iovec));
	w->io_iov = calloc((size_t)w->nr_slots * segs, sizeof(struct iovec));
	w->priv = w->priv_stride ? calloc(w->nr_slots, w->priv_stride) : NULL;
	if (!w->slots || !w->free_slots || !w->chain_iov || !w->io_iov ||
	    (w->priv_stride && !w->priv)) {
		wk_free_slots(w);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < w->nr_slots; i++) {
		struct vq_req *req = &w->slots[i];
		req->slot = i;
		req->chain.iov = w->chain_iov + (size_t)i * segs;
		req->io_iov = w->io_iov + (size_t)i * segs;
		req->io_iov_cap = segs;
		req->priv = w->priv ? w->priv + (size_t)i * w->priv_stride : NULL;
		/* Stack order: slot 0 is popped first, which keeps tags readable in traces. */
		w->free_slots[w->nr_slots - 1 - i] = i;
	}
	w->nr_free = w->nr_slots;
	return 0;
}

int vq_worker_start(struct vq_worker *w, struct virtq *vq, int kick_fd)
{
	if (w->serving)
		return -EBUSY;
	if (!vq->size || vq->size > w->cfg.ring_max)
		return -EINVAL;
	if (w->ring_broken)
		return -EIO;
	w->vq = vq;
	w->kick_fd = kick_fd;
	int err = wk_alloc_slots(w);
	if (err)
		return err;
	w->epoch++;
	w->max_inflight = w->cfg.max_inflight ? w->cfg.max_inflight : 4 * w->nr_slots;
	if (w->max_inflight < 4)
		w->max_inflight = 4;
	if (w->max_inflight > w->cq_room)
		w->max_inflight = w->cq_room;
	w->inflight_sqes = 0;
	w->busy_reqs = 0;
	w->kick_armed = w->event_armed = w->stopping = w->backpressure = w->failed = w->abandoning =
		false;
	w->stop_deadline_us = w->drain_us = w->drain_deadline_us = 0;
	w->state_armed = false;
	w->call_one = 1;
	w->calls_inflight = 0;
	w->call_queued = false;
	w->call_owed = -1;
	w->irq_used = vq->published; /* nothing signalled yet in this run */
	w->kicks = w->irqs = w->batch_timeouts = 0;
	w->batch_off = false;
	pace_poll_init(&w->poll, w->cfg.poll_us);

	pthread_mutex_lock(&w->lock);
	bool idle = w->state == WK_IDLE;
	if (idle) {
		/* The mutex orders everything written above before the thread reads it. */
		w->state = WK_RUNNING;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	if (!idle) {
		wk_free_slots(w);
		return -ECHILD;
	}
	w->serving = true;
	return 0;
}

bool vq_worker_running(const struct vq_worker *w)
{
	return w && w->serving;
}

void vq_worker_stop_drain(struct vq_worker *w, unsigned int drain_ms)
{
	if (!w || !w->serving)
		return;
	/* Written before the stop eventfd: the worker reads it after that write's CQE. */
	w->drain_us = (uint64_t)drain_ms * 1000u;
	vq_worker_stop(w);
}

void vq_worker_stop(struct vq_worker *w)
{
	if (!w || !w->serving)
		return;
	uint64_t one = 1;
	while (write(w->stop_fd, &one, sizeof(one)) < 0 && errno == EINTR) {
	}
	/*
	 * Bounded by the run's own stop wait (WK_STOP_WAIT_MS, then requests are abandoned), unless a
	 * request served inline on the worker thread is still inside a system call.
	 */
	pthread_mutex_lock(&w->lock);
	while (w->state == WK_RUNNING)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
	wk_free_slots(w);
	w->serving = false;
}

/* Join the thread, which was told to exit; false when its exit did not finish within a second. */
static bool wk_join_bounded(struct vq_worker *w)
{
	for (int i = 0; i < 20; i++) {
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_nsec += 50 * 1000000L;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
		if (pthread_timedjoin_np(w->thread, NULL, &dl) == 0)
			return true;
	}
	return false;
}

void vq_worker_destroy(struct vq_worker *w)
{
	if (!w)
		return;
	vq_worker_stop(w);
	pthread_mutex_lock(&w->lock);
	if (w->state != WK_GONE)
		w->state = WK_EXIT;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	/*
	 * A thread whose ring still has an abandoned request in an io-wq worker cannot finish exiting:
	 * the kernel's thread exit waits for its io-wq, which waits for the file system (until a fatal
	 * signal, e.g. ringvm's own exit). Its function has returned and touches nothing of ours: leave
	 * the rest of its exit to the kernel (detached) instead of waiting for it.
	 */
	if (!wk_join_bounded(w))
		pthread_detach(w->thread);
	io_uring_queue_exit(&w->ring);
	close(w->stop_fd);
	close(w->state_fd);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
