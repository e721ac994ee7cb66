/* pace.h: a queue worker's timing decisions (slices, held-back interrupts, adaptive polling), pure. */
#ifndef RINGVM_PACE_H
#define RINGVM_PACE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Why a worker paces itself. The driver and the worker run on different CPUs and each sleeps when
 * it has nothing to do; waking the other side (a kick, an interrupt) costs a cross-CPU wake-up,
 * tens of microseconds of latency and several of CPU on a virtualized host. A worker that handles
 * every chain of a pass before it submits any I/O, and publishes and interrupts once at the end,
 * makes the two sides take turns: the driver sleeps through the whole pass, the worker through the
 * driver's turn (measured natively at depth 16: exactly one driver wait and one kick per 16
 * requests, half the IOPS of a server that answers each request as it goes). So a pass works in
 * slices, and interrupts and polling follow what the driver is doing:
 *
 * - Budget: a pass ends after PACE_PASS_BUDGET chains (fewer while the CPU is shared); the worker
 *   then yields the CPU to the other queues' workers that may share it, and goes on without
 *   sleeping.
 * - Slice: after a quarter of the work it holds (pace_slice), the worker submits the I/O queued so
 *   far (page-cache reads complete inside that submit), reaps and publishes. The driver gets
 *   replies while the worker goes on with the rest, and adds new chains without a kick while the
 *   worker is still popping (avail_event is only moved forward when the worker is about to sleep).
 * - Held-back interrupt: when the driver waits for a reply (used_event reached), the interrupt for
 *   a slice is held back while fewer than a slice's worth of replies are waiting and the worker
 *   still holds work (pace_hold_interrupt); the driver then wakes to a batch it can work on while
 *   the worker finishes the rest, instead of waking for every reply. Nothing is held when the
 *   worker holds nothing, and the end of every pass sends what is due, so a held interrupt is only
 *   late by part of a pass, never lost (virtio 1.2 2.7.10 asks that it be sent, not when).
 * - Adaptive poll: before sleeping with no request's I/O in flight, the worker may busy-poll the
 *   avail ring and its completion queue for up to cur_us (with I/O in flight it sleeps: a device's
 *   completion wakes it as directly as it wakes a blocked read, and polling through an O_DIRECT
 *   read only slowed it). The window follows how long the worker waited for work once it went
 *   idle, poll and sleep together (the driver's turnaround): a wait no longer than max_us (a poll
 *   of the full ceiling would have caught it and saved the wake-up) doubles it up to max_us; a
 *   longer wait (an idle queue, or a driver slower than the ceiling) halves it, to 0 below
 *   PACE_POLL_MIN_US, so a queue stops spinning after a few such waits. Counting the poll matters:
 *   a driver that comes back just after a full-ceiling poll must not keep the worker polling the
 *   whole ceiling and then sleeping anyway, paying both, on every request.
 *
 * "held" is what the worker has in hand: requests popped and not yet completed plus chains waiting
 * in the avail ring.
 */

/* Work held per slice: a slice is held / PACE_SLICE_DIV chains (at least 1). */
#define PACE_SLICE_DIV 4u
/*
 * Chains one pass handles before the worker yields the CPU (and goes on without sleeping): a
 * driver that keeps the ring full would otherwise keep the worker popping forever, and the workers
 * of other queues pinned to the same CPU would wait milliseconds for it (seen natively: 4 queues on
 * one CPU, p99 1-3 ms). Measured again on this project's PVM host, 4 KiB cached reads at depth 64,
 * alternating: with four queues on one CPU, 256 took p99 from ~0.55 to ~2.9 ms at the same IOPS;
 * 16 moved IOPS within the pairs' spread there (+5 %) and with one queue (-6 %).
 */
#define PACE_PASS_BUDGET 64u
/*
 * The budget while the CPU is shared (the worker's last yield ran another thread, pace_yielded).
 * With four queues on one CPU and the full budget, each pass held the CPU ~200 us, so a chain that
 * came just after its worker's pass waited out three others (perf sched: each worker waited 0.58 ms
 * on average to run, 2.8 ms at most). Measured natively, 4 KiB cached reads, four queues on one
 * CPU, alternating pairs: p99 0.79-1.06 -> 0.27-0.65 ms at depth 16, 1.59-1.62 -> 0.78-1.02 ms at
 * depth 64, IOPS within the pairs' spread. A worker alone keeps the full budget: one queue at depth
 * 64 unchanged (446-512k against 388-487k IOPS).
 */
#define PACE_PASS_BUDGET_SHARED 16u
/* Below this the poll window is 0 (not worth a clock read per loop); growth from 0 starts here. */
#define PACE_POLL_MIN_US 4u
/*
 * A busy-poll yields the CPU (to another queue's worker that may share it) every this many
 * microseconds while its yields find nobody else waiting, and spins on the rings in between: a
 * sched_yield per look cost ~1.1 us on this project's PVM host, which a chain arriving meanwhile
 * waited for, half of it on average (measured natively, 4 KiB cached reads: +16 % IOPS at depth 1).
 * The first yield of a poll, too, comes after this long, unless the worker's last yield found the
 * CPU shared: at depth 1 a poll is about as long as the driver's turn, so a yield at its start was
 * a system call on almost every request's path (measured natively, slow mode, alternating pairs:
 * depth 1 from ~182k to ~209k IOPS on virtio-fs, ~170k to ~200k on virtio-blk and 4 KiB writes;
 * four queues on one CPU, which yield at once, unchanged).
 */
#define PACE_POLL_YIELD_US 2u
/*
 * A yield that took longer than this ran another thread: the CPU is shared, yield at every look.
 * 2 and 8 made no difference beyond the spread (four queues on one CPU at depth 1, alternating:
 * medians 147-151k IOPS).
 */
#define PACE_POLL_SHARED_US 4u

/* Chains to hand the device before submitting, reaping and publishing: max(1, held / 4). */
unsigned int pace_slice(unsigned int held);

/*
 * From this slice size on, a transfer the device could make at once with one system call on the
 * worker's thread (a cached read: xfer_try_nowait) goes through io_uring with the rest of the
 * slice instead: one io_uring_enter for the whole slice then costs less per request than a system
 * call each. Measured natively, 4 KiB reads from the page cache, the bench's driver, old rule
 * (slices of 8) against this one alternating: at depth 16 (slices of 2 to 4) one submit per slice
 * took virtio-fs from 4.75 to 3.34 us of CPU per request and virtio-blk from 4.56 to 3.24 in the
 * slow mode of this project's PVM host (bench README: "The host's modes"), where a system call's
 * entry and exit were a quarter of the worker's time, and virtio-fs from 2.7 to 1.7-2.3 us in
 * the fast mode; depth 1 and 64 unchanged. A slice of 1 gains nothing from the ring: depth 1 stays
 * one preadv2 per request.
 */
#define PACE_RING_SLICE 2u

/* The worker holds enough that its slices reach PACE_RING_SLICE. */
bool pace_ring_batches(unsigned int held);

/*
 * The driver wants an interrupt for `unsignalled` published replies: true when it should wait,
 * i.e. the worker still holds work and fewer than pace_slice(held) replies are waiting.
 */
bool pace_hold_interrupt(unsigned int unsignalled, unsigned int held);

/*
 * Batched kicks on a receive queue (worker.h: batch_kicks). Linux's virtio_console hands its reader
 * one page per read() and re-posts that page, kicking, at once: a kick (an exit of the guest's vCPU,
 * a wake-up of the worker) per page. While the driver still holds `unconsumed` filled buffers, the
 * worker can ask for a kick only after the driver re-posted a batch of them: half of what it holds
 * (it keeps the other half to work on while the worker refills the batch), at most
 * PACE_KICK_BATCH_MAX, at least 1. Never more than `unconsumed`: a driver that keeps consuming
 * re-posts all of them, so it always reaches the kick.
 */
#define PACE_KICK_BATCH_MAX 32u
unsigned int pace_kick_batch(unsigned int unconsumed);

/* One worker's poll window. Owned by the worker thread. */
struct pace_poll {
	unsigned int max_us; /* the configured ceiling; 0 = never poll */
	unsigned int cur_us; /* the window the next poll uses, 0..max_us */
	bool cpu_shared;     /* the last yield ran another thread (pace_yielded) */
};

/* Start at the ceiling (a busy queue keeps it; an idle one soon halves it away), the CPU taken
   for the worker's own until a yield says otherwise. */
void pace_poll_init(struct pace_poll *p, unsigned int max_us);

/* Microseconds of spinning before a poll's next yield, at its start and after each yield: 0 (yield
   at every look) while the CPU is shared, else PACE_POLL_YIELD_US. */
unsigned int pace_yield_after(const struct pace_poll *p);

/* A yield took took_us: longer than PACE_POLL_SHARED_US means it ran another thread. */
void pace_yielded(struct pace_poll *p, uint64_t took_us);

/* Chains the next pass may handle: PACE_PASS_BUDGET_SHARED while the CPU is shared, else
   PACE_PASS_BUDGET. */
unsigned int pace_pass_budget(const struct pace_poll *p);

/*
 * The worker went idle, polled cur_us without finding work (or did not poll), then slept until
 * something woke it; waited_us is the whole wait, from going idle (the start of the poll, or of
 * the sleep when it did not poll) to the wake-up: adapt the window as described above. No-op when
 * max_us is 0. Caller: the worker, after each sleep.
 */
void pace_poll_waited(struct pace_poll *p, uint64_t waited_us);

#endif
