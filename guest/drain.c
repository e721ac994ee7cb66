/* drain.c: PID 1's patience with the console's output queue (see drain.h). */
#include "guest/drain.h"

void drain_init(struct drain *d)
{
	d->low = -1;
	d->idle = 0;
	d->ticks = 0;
}

enum drain_step drain_sample(struct drain *d, int queued)
{
	if (queued <= 0)
		return DRAIN_DONE;
	if (++d->ticks >= DRAIN_MAX_TICKS)
		return DRAIN_STUCK;
	if (d->low < 0 || queued < d->low) {
		/* A byte left since the lowest level so far: that is progress, start counting again. */
		d->low = queued;
		d->idle = 0;
		return DRAIN_WAIT;
	}
	if (++d->idle >= DRAIN_STALL_TICKS)
		return DRAIN_STUCK;
	return DRAIN_WAIT;
}
