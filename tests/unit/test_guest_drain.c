/* test_drain.c: unit tests for PID 1's patience with the console's output queue (guest/drain.h). */
#include "guest/drain.h"
#include "tests/unit/tap.h"

#include <stdbool.h>

/* A console queue as a function of the tick: what TIOCOUTQ would say at sample t. */
typedef int (*t_queue_fn)(unsigned int t);

struct t_result {
	enum drain_step step;
	unsigned int waits; /* ticks slept before the verdict */
};

/* Drive drain_sample() as init.c does, with the queue model in place of the ioctl and the sleep. */
static struct t_result t_drain(t_queue_fn queue)
{
	struct drain d;
	struct t_result r = { DRAIN_WAIT, 0 };

	drain_init(&d);
	for (unsigned int t = 0;; t++) {
		r.step = drain_sample(&d, queue(t));
		if (r.step != DRAIN_WAIT || t > 10 * DRAIN_MAX_TICKS)
			return r;
		r.waits++;
	}
}

static int q_empty(unsigned int t)
{
	(void)t;
	return 0;
}

static int q_ioctl_fails(unsigned int t)
{
	(void)t;
	return -1;
}

/* Far slower than the lab under load (~1 KB/s): 4 KiB queued, one byte leaves every 50 ticks. */
#define Q_SLOW_TICKS_PER_BYTE 50
static int q_slow(unsigned int t)
{
	int left = 4096 - (int)(t / Q_SLOW_TICKS_PER_BYTE);
	return left > 0 ? left : 0;
}

/* Moves in bursts with pauses just under the stall limit. */
static int q_bursty(unsigned int t)
{
	unsigned int period = DRAIN_STALL_TICKS - 10;
	int left = 4096 - 512 * (int)(t / period);
	return left > 0 ? left : 0;
}

/* A UART that takes nothing (XOFF): the queue never moves. */
static int q_stuck(unsigned int t)
{
	(void)t;
	return 100;
}

/* An orphan of the command keeps writing: the writer refills whenever the queue falls to 256. */
static int q_refilled(unsigned int t)
{
	return 4096 - (int)((t * 16) % (4096 - 256));
}

/* Creeps down one byte per tick short of the stall limit: only the overall limit ends it. */
static int q_creeping(unsigned int t)
{
	return 4096 - (int)(t / (DRAIN_STALL_TICKS - 1));
}

int main(void)
{
	struct t_result r;

	r = t_drain(q_empty);
	TAP_CHECK(r.step == DRAIN_DONE && r.waits == 0, "an empty queue: the status goes at once");
	r = t_drain(q_ioctl_fails);
	TAP_CHECK(r.step == DRAIN_DONE && r.waits == 0, "TIOCOUTQ fails: no waiting on what cannot be seen");

	/* What lost a last line: the old fixed limit (3 s) gave up on this queue after a few seconds. */
	r = t_drain(q_slow);
	TAP_CHECK(r.step == DRAIN_DONE, "a slow console is waited for until it is empty");
	TAP_CHECK(r.waits == Q_SLOW_TICKS_PER_BYTE * 4096, "and not one tick longer");
	r = t_drain(q_bursty);
	TAP_CHECK(r.step == DRAIN_DONE, "pauses shorter than the stall limit do not end the wait");

	r = t_drain(q_stuck);
	TAP_CHECK(r.step == DRAIN_STUCK, "a queue that never moves is given up on");
	TAP_CHECK(r.waits == DRAIN_STALL_TICKS, "after exactly the stall limit");
	r = t_drain(q_refilled);
	TAP_CHECK(r.step == DRAIN_STUCK && r.waits < 2 * DRAIN_STALL_TICKS,
		  "an orphan that keeps the queue full does not hold the status back");
	r = t_drain(q_creeping);
	TAP_CHECK(r.step == DRAIN_STUCK && r.waits == DRAIN_MAX_TICKS - 1,
		  "a queue that only creeps down ends at the overall limit");
	return tap_done();
}
