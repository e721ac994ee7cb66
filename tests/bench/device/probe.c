/* probe.c: a cache line's cross-CPU round trip and a system call's cost, just before a run. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tests/bench/device/probe.h"
#include "tests/bench/device/stats.h"

#define PROBE_NS 10000000ull /* each measurement's length */

struct bounce {
	_Alignas(64) _Atomic uint64_t ball; /* odd: at the far thread; even: back here */
	int cpu;
	_Atomic int ready;
};

/* The far side: return every odd value as the next even one until the ball is UINT64_MAX. */
static void *bounce_back(void *arg)
{
	struct bounce *bn = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(bn->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
		atomic_store(&bn->ready, -1);
		return NULL;
	}
	atomic_store(&bn->ready, 1);
	for (;;) {
		uint64_t v = atomic_load_explicit(&bn->ball, memory_order_acquire);

		if (v == UINT64_MAX)
			return NULL;
		if (v & 1)
			atomic_store_explicit(&bn->ball, v + 1, memory_order_release);
	}
}

static double xcpu_rtt_ns(int peer_cpu)
{
	struct bounce bn = { .ball = 0, .cpu = peer_cpu, .ready = 0 };
	pthread_t th;
	uint64_t rounds = 0, t0, t;
	cpu_set_t mine;

	/* On a CPU of our own the two threads would take turns a scheduler tick at a time. */
	if (peer_cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof(mine), &mine) != 0 ||
	    CPU_ISSET(peer_cpu, &mine))
		return -1;
	if (pthread_create(&th, NULL, bounce_back, &bn) != 0)
		return -1;
	while (atomic_load(&bn.ready) == 0)
		sched_yield();
	if (atomic_load(&bn.ready) < 0) {
		pthread_join(th, NULL);
		return -1;
	}
	t0 = now_ns();
	do {
		for (int i = 0; i < 1000; i++) {
			uint64_t v = atomic_load_explicit(&bn.ball, memory_order_relaxed);

			atomic_store_explicit(&bn.ball, v + 1, memory_order_release);
			while (atomic_load_explicit(&bn.ball, memory_order_acquire) == v + 1)
				;
		}
		rounds += 1000;
		t = now_ns();
	} while (t - t0 < PROBE_NS);
	atomic_store(&bn.ball, UINT64_MAX);
	pthread_join(th, NULL);
	return (double)(t - t0) / (double)rounds;
}

static double syscall_ns(void)
{
	uint64_t calls = 0, t0 = now_ns(), t;

	do {
		for (int i = 0; i < 1000; i++)
			(void)syscall(SYS_getppid);
		calls += 1000;
		t = now_ns();
	} while (t - t0 < PROBE_NS);
	return (double)(t - t0) / (double)calls;
}

void probe_host(int peer_cpu, struct probe *p)
{
	p->xcpu_rtt_ns = peer_cpu >= 0 ? xcpu_rtt_ns(peer_cpu) : -1;
	p->syscall_ns = syscall_ns();
}

double probe_wait_for_mode(int peer_cpu, double gate_ns, bool slow, double wait_s, struct probe *p)
{
	const struct timespec nap = { 0, 50000000 };
	uint64_t t0 = now_ns(), t;

	for (;;) {
		probe_host(peer_cpu, p);
		t = now_ns();
		if ((p->xcpu_rtt_ns <= gate_ns) != slow || (double)(t - t0) >= wait_s * 1e9)
			return (double)(t - t0) / 1e9;
		nanosleep(&nap, NULL);
	}
}
