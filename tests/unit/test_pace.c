/* test_pace.c: the worker's timing decisions (devices/virtio/pace.h): slices, held interrupts, polling. */
#include <stdbool.h>

#include "devices/virtio/pace.h"
#include "tests/unit/tap.h"

static void test_slice(void)
{
	TAP_CHECK(pace_slice(0) == 1, "nothing held: a slice is still one chain");
	TAP_CHECK(pace_slice(1) == 1, "depth 1: every chain is its own slice");
	TAP_CHECK(pace_slice(3) == 1, "below 4 held: one chain per slice");
	TAP_CHECK(pace_slice(16) == 4, "16 held: slices of 4 (a quarter)");
	TAP_CHECK(pace_slice(64) == 16, "64 held: slices of 16");
	TAP_CHECK(pace_slice(1024) == 256, "a full 1024-entry queue: slices of 256");
}

static void test_ring_batches(void)
{
	TAP_CHECK(!pace_ring_batches(0) && !pace_ring_batches(1),
		  "nothing or one held: a transfer the device can make at once is made at once");
	TAP_CHECK(!pace_ring_batches(7), "7 held (slices of 1): still one system call each");
	TAP_CHECK(pace_ring_batches(16), "16 held (slices of 4): one submit for the slice");
	TAP_CHECK(!pace_ring_batches(4 * PACE_RING_SLICE - 1), "just below slices of PACE_RING_SLICE");
	TAP_CHECK(pace_ring_batches(4 * PACE_RING_SLICE), "slices of PACE_RING_SLICE: through the ring");
	TAP_CHECK(pace_ring_batches(64), "64 held (slices of 16): through the ring");
}

static void test_hold_interrupt(void)
{
	TAP_CHECK(!pace_hold_interrupt(1, 0), "nothing more held: the interrupt goes now");
	TAP_CHECK(!pace_hold_interrupt(100, 0), "nothing held, many due: the interrupt goes now");
	TAP_CHECK(!pace_hold_interrupt(1, 1), "depth 1: one reply is a full batch, never held");
	TAP_CHECK(pace_hold_interrupt(3, 16), "3 of a 4-reply batch with 16 held: held back");
	TAP_CHECK(!pace_hold_interrupt(4, 16), "a full batch (4 with 16 held): sent");
	TAP_CHECK(pace_hold_interrupt(15, 64), "15 replies with 64 held: held back");
	TAP_CHECK(!pace_hold_interrupt(16, 64), "16 replies with 64 held: sent");
	TAP_CHECK(!pace_hold_interrupt(200, 64), "more than a batch due: sent");
}

static void test_poll(void)
{
	struct pace_poll p;

	pace_poll_init(&p, 0);
	pace_poll_waited(&p, 1);
	TAP_CHECK(p.cur_us == 0, "poll_us 0: the window never opens, even after short waits");

	pace_poll_init(&p, 50);
	TAP_CHECK(p.cur_us == 50, "the window starts at the ceiling");
	pace_poll_waited(&p, 30);
	TAP_CHECK(p.cur_us == 50, "a short wait keeps a full window");
	pace_poll_waited(&p, 51);
	TAP_CHECK(p.cur_us == 25, "a wait past the ceiling halves the window");
	pace_poll_waited(&p, 1000000);
	pace_poll_waited(&p, 1000000);
	TAP_CHECK(p.cur_us == 6, "long waits keep halving it (25 -> 12 -> 6)");
	pace_poll_waited(&p, 1000000);
	TAP_CHECK(p.cur_us == 0, "below the minimum the window closes (6 -> 3 -> 0)");
	pace_poll_waited(&p, 1000000);
	TAP_CHECK(p.cur_us == 0, "an idle queue stays closed");
	pace_poll_waited(&p, 20);
	TAP_CHECK(p.cur_us == PACE_POLL_MIN_US, "a short wait reopens it at the minimum");
	pace_poll_waited(&p, 20);
	pace_poll_waited(&p, 20);
	TAP_CHECK(p.cur_us == 4 * PACE_POLL_MIN_US, "and short waits double it");
	for (int i = 0; i < 10; i++)
		pace_poll_waited(&p, 50);
	TAP_CHECK(p.cur_us == 50, "never past the ceiling (a wait of exactly the ceiling is short)");

	/* The wait counts the poll: a driver that comes back 10 us after a full 50 us poll took 60,
	   past the ceiling, so the poll could not have caught it and the window shrinks instead of
	   costing the whole ceiling and a sleep on every request. */
	pace_poll_init(&p, 50);
	pace_poll_waited(&p, 50 + 10);
	TAP_CHECK(p.cur_us == 25, "a full-ceiling poll then a short sleep: past the ceiling, halved");
	for (int i = 0; i < 4; i++)
		pace_poll_waited(&p, 60);
	TAP_CHECK(p.cur_us == 0, "a driver always just slower than the ceiling: polling stops");
	pace_poll_waited(&p, 49);
	TAP_CHECK(p.cur_us == PACE_POLL_MIN_US, "and resumes once it comes back within the ceiling");

	pace_poll_init(&p, 3);
	pace_poll_waited(&p, 1);
	TAP_CHECK(p.cur_us == 3, "a ceiling below the minimum is still reached");
	pace_poll_waited(&p, 4);
	TAP_CHECK(p.cur_us == 0, "and closes on the first long wait");
}

/* When a poll yields (pace.h: PACE_POLL_YIELD_US, PACE_POLL_SHARED_US). */
static void test_yield(void)
{
	struct pace_poll p;

	pace_poll_init(&p, 50);
	TAP_CHECK(pace_yield_after(&p) == PACE_POLL_YIELD_US,
		  "a new worker spins a yield step before its first yield (no yield on depth 1's path)");
	pace_yielded(&p, 1);
	TAP_CHECK(pace_yield_after(&p) == PACE_POLL_YIELD_US, "a yield back at once: the CPU is free");
	pace_yielded(&p, PACE_POLL_SHARED_US);
	TAP_CHECK(pace_yield_after(&p) == PACE_POLL_YIELD_US, "a yield of exactly the limit: still free");
	pace_yielded(&p, PACE_POLL_SHARED_US + 1);
	TAP_CHECK(pace_yield_after(&p) == 0,
		  "a yield that ran another thread: yield at every look, from the next poll's start on");
	pace_poll_waited(&p, 10);
	TAP_CHECK(pace_yield_after(&p) == 0, "a sleep in between does not forget the shared CPU");
	pace_yielded(&p, 0);
	TAP_CHECK(pace_yield_after(&p) == PACE_POLL_YIELD_US, "the CPU free again: spin between yields");
	pace_yielded(&p, 1000);
	pace_poll_init(&p, 50);
	TAP_CHECK(pace_yield_after(&p) == PACE_POLL_YIELD_US, "a new start forgets the last run's shared CPU");
}

/* A pass's budget follows whether the CPU is shared (pace.h: PACE_PASS_BUDGET_SHARED). */
static void test_pass_budget(void)
{
	struct pace_poll p;

	pace_poll_init(&p, 50);
	TAP_CHECK(pace_pass_budget(&p) == PACE_PASS_BUDGET, "a new worker takes the full budget");
	pace_yielded(&p, PACE_POLL_SHARED_US + 1);
	TAP_CHECK(pace_pass_budget(&p) == PACE_PASS_BUDGET_SHARED,
		  "a yield that ran another thread: the next pass is the shared budget");
	pace_yielded(&p, PACE_POLL_SHARED_US);
	TAP_CHECK(pace_pass_budget(&p) == PACE_PASS_BUDGET, "a yield back within the limit: full again");
	pace_poll_init(&p, 0);
	pace_yielded(&p, 1000);
	TAP_CHECK(pace_pass_budget(&p) == PACE_PASS_BUDGET_SHARED,
		  "a worker that never polls still learns the CPU is shared from its passes' yields");
}

static void test_kick_batch(void)
{
	TAP_CHECK(pace_kick_batch(0) == 1, "the driver holds nothing filled: a kick per chain");
	TAP_CHECK(pace_kick_batch(1) == 1, "one filled buffer held: a kick per chain");
	TAP_CHECK(pace_kick_batch(3) == 1, "three held: half is one");
	TAP_CHECK(pace_kick_batch(10) == 5, "ten held: a kick per five re-posted (half)");
	TAP_CHECK(pace_kick_batch(64) == PACE_KICK_BATCH_MAX, "64 held: the cap");
	TAP_CHECK(pace_kick_batch(65535) == PACE_KICK_BATCH_MAX, "any number held: never past the cap");
	bool within = true;
	for (unsigned int n = 0; n < 300; n++)
		within &= pace_kick_batch(n) >= 1 && pace_kick_batch(n) <= (n ? n : 1);
	TAP_CHECK(within, "a batch is 1 or more, and never more than the filled buffers held (0..299)");
}

int main(void)
{
	test_slice();
	test_ring_batches();
	test_hold_interrupt();
	test_poll();
	test_yield();
	test_pass_budget();
	test_kick_batch();
	return tap_done();
}
