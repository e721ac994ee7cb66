/* stats.c: log-linear latency histogram; CPU time of a process tree and of the machine from /proc. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "tests/bench/device/stats.h"

static unsigned int bucket_of(uint64_t v)
{
	unsigned int e;

	if (v < 64)
		return (unsigned int)v;
	e = 63u - (unsigned int)__builtin_clzll(v); /* 6..63 */
	return 64 + (e - 6) * 32 + (unsigned int)((v >> (e - 5)) & 31);
}

/* Midpoint of a bucket's range. */
static uint64_t bucket_value(unsigned int b)
{
	unsigned int e, sub;
	uint64_t lo;

	if (b < 64)
		return b;
	e = (b - 64) / 32 + 6;
	sub = (b - 64) % 32;
	lo = (uint64_t)(32 + sub) << (e - 5);
	return lo + ((1ull << (e - 5)) >> 1);
}

void hist_add(struct hist *h, uint64_t ns)
{
	h->count++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
	h->bucket[bucket_of(ns)]++;
}

void hist_merge(struct hist *into, const struct hist *from)
{
	into->count += from->count;
	into->sum_ns += from->sum_ns;
	if (from->max_ns > into->max_ns)
		into->max_ns = from->max_ns;
	for (unsigned int i = 0; i < HIST_BUCKETS; i++)
		into->bucket[i] += from->bucket[i];
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	uint64_t rank, seen = 0;

	if (!h->count)
		return 0;
	rank = (uint64_t)(q * (double)(h->count - 1)) + 1;
	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank)
			return bucket_value(i);
	}
	return h->max_ns;
}

uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* utime + stime of one process (fields 14 and 15 of /proc/PID/stat, after the ")" of comm). */
static int64_t proc_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* After ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -EPROTO;
	return (int64_t)(ut + st);
}

/* Add the ticks of pid's children (every thread's children list) recursively. */
static int64_t children_ticks(pid_t pid, int depth)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	int64_t sum = 0;

	if (depth > 16)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char cpath[300];
		FILE *f;
		int child;

		if (e->d_name[0] == '.')
			continue;
		snprintf(cpath, sizeof(cpath), "/proc/%d/task/%s/children", (int)pid, e->d_name);
		f = fopen(cpath, "re");
		if (!f)
			continue;
		while (fscanf(f, "%d", &child) == 1) {
			int64_t t = proc_ticks(child);

			if (t > 0)
				sum += t;
			sum += children_ticks(child, depth + 1);
		}
		fclose(f);
	}
	closedir(d);
	return sum;
}

int64_t proc_tree_ticks(pid_t pid)
{
	int64_t t = proc_ticks(pid);

	if (t < 0)
		return t;
	return t + children_ticks(pid, 0);
}

int64_t self_ticks(void)
{
	int64_t t = proc_ticks(getpid());

	return t < 0 ? 0 : t;
}

int machine_ticks(uint64_t *total, uint64_t *idle, uint64_t *steal)
{
	unsigned long long v[10] = { 0 };
	FILE *f = fopen("/proc/stat", "re");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
	fclose(f);
	if (n < 5)
		return -EPROTO;
	/* user nice system idle iowait irq softirq steal (guest and guest_nice are inside user). */
	*total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
	*idle = v[3] + v[4];
	*steal = v[7];
	return 0;
}
