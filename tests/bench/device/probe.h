/* probe.h: how fast this host is right now, measured just before a run. */
#ifndef BENCH_PROBE_H
#define BENCH_PROBE_H

#include <stdbool.h>

/*
 * Why: this project's host is itself a VM whose two vCPUs the hypervisor moves. Within one session a
 * bare ping-pong loop between CPU 0 and CPU 1 measured 53 ns (the vCPUs on one core's two
 * hyperthreads, presumably) and 131-142 ns (apart), and a system call 168 and 212 ns; every
 * back-end's rate moves with the first, since driver and back-end talk through shared rings. A run's
 * line carries both, so a round that ran in the other mode can be told from a slower back-end. The
 * figures compare with each other, not with other tools' (this probe read ~100 ns when that loop
 * read 55).
 */
struct probe {
	double xcpu_rtt_ns; /* one cache line bounced between this thread's CPU and peer_cpu; < 0: none */
	double syscall_ns;  /* getppid() on this thread's CPU */
};

/*
 * Measure for about 2 x 10 ms on the calling thread's CPU and on peer_cpu (< 0: no round trip
 * measured). The peer's CPU should be idle then (the back-end waits for the run to start).
 */
void probe_host(int peer_cpu, struct probe *p);

/*
 * Probe until the round trip is on the asked side of gate_ns (at most gate_ns: the host's fast mode;
 * above it when `slow`) or wait_s seconds went by, sleeping 50 ms between probes; *p holds the last
 * probe. Returns the seconds waited. Why: the mode flips by itself within seconds to minutes, and a
 * run measured in one mode compares only with runs in the same mode.
 */
double probe_wait_for_mode(int peer_cpu, double gate_ns, bool slow, double wait_s, struct probe *p);

#endif
