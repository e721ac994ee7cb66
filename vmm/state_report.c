/* state_report.c: one SIGUSR2 report: begin, ask every worker and vCPU, end with who answered. */
#define _GNU_SOURCE
#include "vmm/state_report.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "devices/virtio/core.h"
#include "vmm/vcpu_state.h"

/* How often the wait loop looks for the answers while a report is open. */
#define STATE_REPORT_POLL_MS 20

static uint64_t report_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void report_line(int fd, const char *line, int n)
{
	if (n > 0 && write(fd, line, (size_t)n) < 0) {
		/* nowhere to say it */
	}
}

/* The end line; with give_up, a "no answer" line for each one still silent first. */
static void report_end(struct state_report *s, struct vm *vm, struct ringvm_devices *d,
		       bool give_up)
{
	unsigned int queues = 0, vcpus = vcpus_state_pending(vm, s->seq, s->fd, give_up);
	struct virtio_core *c;
	for (unsigned int i = 0; (c = ringvm_devices_core(d, i)) != NULL; i++)
		queues += virtio_core_state_pending(c, s->seq, s->fd, give_up);
	char line[160];
	int n = snprintf(line, sizeof(line),
			 "ringvm-state: #%u end queues=%u/%u vcpus=%u/%u ms=%llu\n", s->seq,
			 s->queues - queues, s->queues, s->vcpus - vcpus, s->vcpus,
			 (unsigned long long)(report_now_ms() - s->t0_ms));
	report_line(s->fd, line, n);
	s->open = false;
}

/* Everybody asked has answered. */
static bool report_complete(struct state_report *s, struct vm *vm, struct ringvm_devices *d)
{
	if (vcpus_state_pending(vm, s->seq, s->fd, false))
		return false;
	struct virtio_core *c;
	for (unsigned int i = 0; (c = ringvm_devices_core(d, i)) != NULL; i++)
		if (virtio_core_state_pending(c, s->seq, s->fd, false))
			return false;
	return true;
}

void state_report_begin(struct state_report *s, struct vm *vm, struct ringvm_devices *d, int fd)
{
	if (s->open)
		report_end(s, vm, d, true);
	s->seq++;
	s->fd = fd;
	s->open = true;
	s->t0_ms = report_now_ms();
	uint64_t first = __atomic_load_n(&vm->t_first_run, __ATOMIC_RELAXED); /* vCPU 0 wrote it once */
	char line[200];
	int n = snprintf(line, sizeof(line),
			 "ringvm-state: #%u begin pid=%d vcpus=%u running_ms=%llu stopping=%d\n",
			 s->seq, (int)getpid(), vm->nr_cpus,
			 first ? (unsigned long long)((vm_now_ns() - first) / 1000000) : 0ULL,
			 (int)atomic_load(&vm->stopping));
	report_line(fd, line, n);
	vm_state_irqchip(vm, s->seq, fd);
	s->queues = 0;
	struct virtio_core *c;
	for (unsigned int i = 0; (c = ringvm_devices_core(d, i)) != NULL; i++)
		s->queues += virtio_core_state_request(c, s->seq, fd);
	s->vcpus = vcpus_state_request(vm, s->seq, fd);
}

int state_report_poll(struct state_report *s, struct vm *vm, struct ringvm_devices *d)
{
	if (!s->open)
		return -1;
	if (report_complete(s, vm, d)) {
		report_end(s, vm, d, false);
		return -1;
	}
	if (report_now_ms() - s->t0_ms >= STATE_REPORT_WAIT_MS) {
		report_end(s, vm, d, true);
		return -1;
	}
	return STATE_REPORT_POLL_MS;
}

void state_report_finish(struct state_report *s, struct vm *vm, struct ringvm_devices *d)
{
	if (s->open)
		report_end(s, vm, d, true);
}
