/* stats.h: latency histogram (log-linear buckets) and CPU accounting from /proc. */
#ifndef BENCH_STATS_H
#define BENCH_STATS_H

#include <stdint.h>
#include <sys/types.h>

/*
 * Latencies in nanoseconds, bucketed HDR-style: exact below 64 ns, then 32 buckets per power of two
 * (a value is reported as its bucket's midpoint: within 1.6 %). Fixed size, no allocation, so each job
 * thread keeps its own and the main thread merges them after the threads end.
 */
#define HIST_BUCKETS (64 + 58 * 32)

struct hist {
	uint64_t count;
	uint64_t sum_ns;
	uint64_t max_ns;
	uint32_t bucket[HIST_BUCKETS];
};

void hist_add(struct hist *h, uint64_t ns);
void hist_merge(struct hist *into, const struct hist *from);
/* The value at quantile q (0..1) in ns, 0 for an empty histogram. */
uint64_t hist_quantile(const struct hist *h, double q);

/* CLOCK_MONOTONIC in ns. */
uint64_t now_ns(void);

/*
 * CPU time (user + system, in clock ticks) of process pid and all its descendants; each process's
 * /proc/PID/stat already sums all its threads, including ones that have exited. -errno when pid is
 * gone. A back-end that forks into a sandbox (virtiofsd's namespace mode) is counted whole.
 */
__attribute__((warn_unused_result)) int64_t proc_tree_ticks(pid_t pid);

/* This process's own CPU time in clock ticks (all threads). */
int64_t self_ticks(void);

/*
 * Machine-wide CPU ticks from /proc/stat: total, idle (idle + iowait) and steal (time the hypervisor
 * ran something else while this machine's vCPUs wanted to run). 0 or -errno.
 */
__attribute__((warn_unused_result)) int machine_ticks(uint64_t *total, uint64_t *idle,
						      uint64_t *steal);

#endif
