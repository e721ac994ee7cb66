/* state_report.h: ringvm's state report on SIGUSR2: every queue worker and vCPU says what it holds. */
#ifndef RINGVM_STATE_REPORT_H
#define RINGVM_STATE_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/devices.h"
#include "vmm/machine.h"

/*
 * One report, driven by the main thread from its wait loop (ringvm.c reads SIGUSR2 from its
 * signalfd: no signal handler runs, so nothing here needs to be async-signal-safe). The main thread
 * writes the begin line and the interrupt controllers' lines, then asks every queue worker
 * (devices/virtio/virtq_state.h) and every vCPU (vmm/vcpu_state.h) to write their own lines, each
 * on its own thread; it never reads their state itself. Once all answered, or STATE_REPORT_WAIT_MS
 * passed, it writes the end line, naming whoever did not answer: a worker stuck inside a system
 * call, a vCPU that did not come out of KVM_RUN. Every line starts "ringvm-state: #SEQ " and is one
 * write(2) to the report's fd (README, "Tests", lists the fields).
 */
#define STATE_REPORT_WAIT_MS 2000

struct state_report {
	unsigned int seq; /* the current or last report; 0: none yet */
	bool open;	  /* asked, and the end line not written yet */
	int fd;		  /* where the lines go */
	uint64_t t0_ms;	  /* when it was asked (CLOCK_MONOTONIC) */
	unsigned int queues, vcpus; /* how many were asked */
};

/*
 * Start report s->seq + 1 on fd (closing one still open first, with its end line). Main thread.
 */
void state_report_begin(struct state_report *s, struct vm *vm, struct ringvm_devices *d, int fd);

/*
 * Main thread, from its wait loop: write the end line when everybody answered or time is up.
 * Returns how many milliseconds the loop may wait before calling again (-1: no report open).
 */
int state_report_poll(struct state_report *s, struct vm *vm, struct ringvm_devices *d);

/* Main thread, when the run ends: write the end line of a report still open (naming the silent). */
void state_report_finish(struct state_report *s, struct vm *vm, struct ringvm_devices *d);

#endif
