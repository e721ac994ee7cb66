/* drain.h: when PID 1 stops waiting for the console's output queue to empty before it reports the status. */
#ifndef RINGVM_GUEST_DRAIN_H
#define RINGVM_GUEST_DRAIN_H

#include <stdbool.h>

/*
 * The VMM stops the guest the moment the status byte reaches the exit port, so whatever the tty layer
 * still holds for the UART is lost. PID 1 therefore samples the queue (TIOCOUTQ) once per tick and
 * waits while bytes keep leaving, however slowly: a console on a loaded host or in a nested VM moves
 * a few KiB per second, and a fixed time limit cut the last lines off there. It gives up only on a
 * queue that has not gone below its lowest level for DRAIN_STALL_TICKS samples in a row: a UART that
 * takes nothing (stopped by XOFF, say), or an orphan of the command that keeps it full.
 *
 * Ticks are counted, not read from a clock: time during which the guest did not run at all (the host
 * descheduled it) cannot use up the patience.
 */
#define DRAIN_TICK_MS 1 /* a short output at exit costs at most a millisecond more */
#define DRAIN_STALL_TICKS 10000 /* 10 s of ticks without a byte leaving */
#define DRAIN_MAX_TICKS 600000 /* 10 min in all: a queue that only creeps down is not waited for forever */

struct drain {
	int low;	     /* fewest bytes queued seen so far; -1 before the first sample */
	unsigned int idle;   /* samples in a row without a new low */
	unsigned int ticks;  /* samples in all */
};

enum drain_step {
	DRAIN_DONE,  /* the queue is empty, or its size cannot be known: report the status now */
	DRAIN_WAIT,  /* bytes are queued: sleep one tick, then sample again */
	DRAIN_STUCK, /* nothing left the queue for DRAIN_STALL_TICKS samples, or DRAIN_MAX_TICKS
			passed: give up */
};

void drain_init(struct drain *d);

/* Take one sample: queued = bytes TIOCOUTQ reports, or negative when the ioctl failed. */
enum drain_step drain_sample(struct drain *d, int queued);

#endif
