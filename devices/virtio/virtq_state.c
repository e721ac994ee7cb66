/* virtq_state.c: a virtqueue's state report: taken from the ring, formatted, answered by its worker. */
#define _GNU_SOURCE
#include "devices/virtio/virtq_state.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "devices/virtio/worker_priv.h"

void vq_state_take(const struct virtq *vq, uint16_t signalled, struct vq_state *s)
{
	memset(s, 0, sizeof(*s));
	s->size = vq->size;
	s->event_idx = vq->event_idx;
	s->broken = vq->broken;
	s->last_avail = vq->last_avail;
	s->published = vq->published;
	s->signalled = signalled;
	vq_ring_words(vq, &s->words);
	if (s->event_idx)
		s->owed = vq_need_event(s->words.used_event, s->published, signalled);
	else
		s->owed = s->published != signalled &&
			  !(s->words.avail_flags & VRING_AVAIL_F_NO_INTERRUPT);
}

size_t vq_state_line(const struct vq_state *s, unsigned int seq, const char *name, char *buf,
		     size_t len)
{
	const struct vq_ring_words *w = &s->words;
	int n = snprintf(buf, len,
			 "ringvm-state: #%u vq %s size=%u last_avail=%u avail_idx=%u used_idx=%u "
			 "published=%u signalled=%u used_event=%u avail_event=%u event_idx=%d "
			 "avail_flags=0x%x used_flags=0x%x requests=%u sqes=%u asleep=%d slept_ms=%llu "
			 "kicks=%llu irqs=%llu owed=%d broken=%d failed=%d backpressure=%d\n",
			 seq, name, s->size, s->last_avail, w->avail_idx, w->used_idx, s->published,
			 s->signalled, w->used_event, w->avail_event, s->event_idx, w->avail_flags,
			 w->used_flags, s->requests, s->sqes, s->asleep,
			 (unsigned long long)s->slept_ms, (unsigned long long)s->kicks,
			 (unsigned long long)s->irqs, s->owed, s->broken, s->failed, s->backpressure);
	if (len == 0 || n < 0)
		return 0;
	if ((size_t)n < len)
		return (size_t)n;
	buf[len - 2] = '\n'; /* truncated: still one line */
	return len - 1;
}

int vq_worker_state_request(struct vq_worker *w, unsigned int seq, int fd)
{
	pthread_mutex_lock(&w->lock);
	bool running = w->state == WK_RUNNING;
	pthread_mutex_unlock(&w->lock);
	if (!running)
		return -ESRCH;
	__atomic_store_n(&w->state_out, fd, __ATOMIC_RELAXED);
	/* Release: the worker that sees seq sees the fd written before it. */
	__atomic_store_n(&w->state_asked, seq, __ATOMIC_RELEASE);
	uint64_t one = 1;
	while (write(w->state_fd, &one, sizeof(one)) < 0 && errno == EINTR) {
	}
	return 0;
}

bool vq_worker_state_asked(struct vq_worker *w, unsigned int seq)
{
	return __atomic_load_n(&w->state_asked, __ATOMIC_ACQUIRE) == seq;
}

bool vq_worker_state_answered(struct vq_worker *w, unsigned int seq)
{
	return __atomic_load_n(&w->state_done, __ATOMIC_ACQUIRE) == seq;
}

static uint64_t state_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void wk_state_answer(struct vq_worker *w, bool asleep)
{
	unsigned int seq = __atomic_load_n(&w->state_asked, __ATOMIC_ACQUIRE);
	if (seq == __atomic_load_n(&w->state_done, __ATOMIC_RELAXED))
		return;
	int fd = __atomic_load_n(&w->state_out, __ATOMIC_RELAXED);
	struct vq_state s;
	vq_state_take(w->vq, w->irq_used, &s);
	s.requests = w->busy_reqs;
	s.sqes = w->inflight_sqes;
	s.asleep = asleep;
	s.slept_ms = asleep ? (state_now_us() - w->sleep_from_us) / 1000u : 0;
	s.kicks = w->kicks;
	s.irqs = w->irqs;
	s.failed = w->failed;
	s.backpressure = w->backpressure;
	char name[160], line[640];
	if (w->cfg.name)
		snprintf(name, sizeof(name), "%s", w->cfg.name);
	else
		snprintf(name, sizeof(name), "\"virtqueue %u\"", w->cfg.queue_index);
	size_t n = vq_state_line(&s, seq, name, line, sizeof(line));
	/* One write per line: lines of different threads never interleave. A short write or an
	   error loses this line only; the asker says who did not answer. */
	if (write(fd, line, n) < 0) {
	}
	__atomic_store_n(&w->state_done, seq, __ATOMIC_RELEASE);
}
