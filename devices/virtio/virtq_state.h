/* virtq_state.h: one virtqueue's state for the operator (ringvm's SIGUSR2 report), as its worker holds it. */
#ifndef RINGVM_VIRTQ_STATE_H
#define RINGVM_VIRTQ_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/virtio/virtq.h"
#include "devices/virtio/worker.h"

/*
 * What a guest standing still needs explained: did the driver add work we never took (avail_idx
 * ahead of last_avail with the worker asleep), did we publish replies without the interrupt the
 * driver asked for (owed), or is everything balanced and the wait elsewhere (a timer interrupt the
 * guest never got)? The ring words are read from guest memory at the moment of the report; the
 * rest is the worker's own bookkeeping, taken on the worker's thread.
 */
struct vq_state {
	uint16_t size;
	bool event_idx; /* VIRTIO_RING_F_EVENT_IDX negotiated: used_event/avail_event are live */
	bool broken;	/* the driver broke the ring; the queue pops nothing until reset */
	uint16_t last_avail; /* the next avail entry the worker takes (all before it were taken) */
	uint16_t published;  /* the used idx we last wrote */
	uint16_t signalled;  /* the used idx at the last interrupt sent (the start index if none) */
	struct vq_ring_words words; /* guest memory now: avail idx/flags, used_event, used idx/flags,
				       avail_event */
	bool owed; /* an interrupt the driver asked for and did not get: with EVENT_IDX
		      vring_need_event(used_event, published, signalled), without it entries
		      published since the last interrupt and VRING_AVAIL_F_NO_INTERRUPT clear */

	/* The worker's side (zero when the state was taken off a worker, as in unit tests). */
	unsigned int requests;	/* chains popped and not yet completed */
	unsigned int sqes;	/* their SQEs in flight in io_uring */
	bool asleep;		/* it was asleep in io_uring_enter when asked (and woke to answer) */
	uint64_t slept_ms;	/* for how long, if asleep */
	uint64_t kicks;		/* kicks read from the kick eventfd in this run */
	uint64_t irqs;		/* interrupts sent in this run */
	bool failed;		/* NEEDS_RESET was asked for in this run */
	bool backpressure;	/* a chain was given back, waiting for room */
};

/*
 * Take the ring's part of s (every field above `requests`; the rest zeroed) from vq, whose owner
 * last signalled the driver at used idx `signalled`, and decide `owed`. Reads guest memory only
 * through vq_ring_words(). On the queue's owner thread, or racily from any thread while the VM
 * lives (the worker's own fields may then be a moment old).
 */
void vq_state_take(const struct virtq *vq, uint16_t signalled, struct vq_state *s);

/*
 * Format s as one line, newline included: "ringvm-state: #SEQ vq NAME size=... owed=0 ...".
 * The fields are README's ("Testing": the state report). Returns the length (truncated to len-1,
 * still newline-terminated) for one write(2).
 */
size_t vq_state_line(const struct vq_state *s, unsigned int seq, const char *name, char *buf,
		     size_t len);

/*
 * Any thread (ringvm's main thread, on SIGUSR2): ask w, if it serves a queue, to write its state
 * line for report `seq` to fd. The worker answers on its own thread at its next pass, or at once if
 * it sleeps (an eventfd its ring always reads wakes it): its state is never read from another
 * thread. 0 when asked, -ESRCH when w serves no queue now (nothing asked). seq must not be 0.
 */
__attribute__((warn_unused_result)) int vq_worker_state_request(struct vq_worker *w,
								 unsigned int seq, int fd);

/* Any thread: w was asked for report seq (the last one asked), or has written its line for it. */
bool vq_worker_state_asked(struct vq_worker *w, unsigned int seq);
bool vq_worker_state_answered(struct vq_worker *w, unsigned int seq);

#endif
