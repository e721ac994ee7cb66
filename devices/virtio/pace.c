/* pace.c: a queue worker's timing decisions; see pace.h for why. */
#include "devices/virtio/pace.h"

unsigned int pace_slice(unsigned int held)
{
	unsigned int n = held / PACE_SLICE_DIV;

	return n ? n : 1;
}

bool pace_ring_batches(unsigned int held)
{
	return pace_slice(held) >= PACE_RING_SLICE;
}

bool pace_hold_interrupt(unsigned int unsignalled, unsigned int held)
{
	return held != 0 && unsignalled < pace_slice(held);
}

unsigned int pace_kick_batch(unsigned int unconsumed)
{
	unsigned int n = unconsumed / 2;

	return n < 1 ? 1 : n > PACE_KICK_BATCH_MAX ? PACE_KICK_BATCH_MAX : n;
}

void pace_poll_init(struct pace_poll *p, unsigned int max_us)
{
	p->max_us = max_us;
	p->cur_us = max_us;
	p->cpu_shared = false;
}

unsigned int pace_yield_after(const struct pace_poll *p)
{
	return p->cpu_shared ? 0 : PACE_POLL_YIELD_US;
}

void pace_yielded(struct pace_poll *p, uint64_t took_us)
{
	p->cpu_shared = took_us > PACE_POLL_SHARED_US;
}

unsigned int pace_pass_budget(const struct pace_poll *p)
{
	return p->cpu_shared ? PACE_PASS_BUDGET_SHARED : PACE_PASS_BUDGET;
}

void pace_poll_waited(struct pace_poll *p, uint64_t waited_us)
{
	if (!p->max_us)
		return;
	if (waited_us <= p->max_us) {
		/* Work came back within the ceiling: polling that long would have caught it. */
		unsigned int grown = p->cur_us ? p->cur_us * 2 : PACE_POLL_MIN_US;

		p->cur_us = grown < p->max_us ? grown : p->max_us;
		return;
	}
	p->cur_us /= 2;
	if (p->cur_us < PACE_POLL_MIN_US)
		p->cur_us = 0;
}
