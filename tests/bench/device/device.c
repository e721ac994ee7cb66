/* device.c: the device benchmark driver: a guest's virtio-fs/virtio-blk driver as a vhost-user
   front-end (or the host's own io_uring), one run per invocation, one JSON line of results. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/bench/device/bench.h"
#include "tests/bench/device/files.h"
#include "tests/bench/device/probe.h"
#include "tests/bench/device/setup.h"
#include "tests/bench/device/target.h"

static const char usage[] =
	"usage: device prepare --dir DIR [--file-mb N] [--tree-files N] [--jobs N]\n"
	"       device probe --probe-cpu N [--time S]\n"
	"       device run --peer NAME --target fs|blk|host [--socket PATH] --file PATH\n"
	"              --workload randread|randwrite|seqread|meta|untar [--bs N] [--depth N]\n"
	"              [--jobs N] [--time S] [--warmup S] [--direct] [--indirect] [--queue-size N]\n"
	"              [--tree-files N] [--cpu-pid PID] [--cache warm|evict|pages] [--halt-poll-us N]\n"
	"              [--probe-cpu N [--mode-rtt-ns N [--mode-slow]] [--mode-wait-s S]]\n"
	"              [--writer-uid N]\n";

static const char *const workloads[] = { "randread", "randwrite", "seqread", "meta", "untar" };
static const char *const targets[] = { "fs", "blk", "host" };

struct opts {
	struct bench b;
	const char *cache;
	unsigned long file_mb;
	pid_t cpu_pid;
	int probe_cpu;	   /* the back-end's CPU, for the cross-CPU probe (probe.h); -1: none */
	unsigned long mode_rtt_ns; /* wait for a round trip at most this long first (0: no wait) */
	bool mode_slow;		   /* ... for one above mode_rtt_ns instead (the slow mode) */
	double mode_wait_s;	   /* for this long at most */
	double mode_waited_s;	   /* how long it waited */
	struct probe probe, probe_after; /* measured before the run and after its last request */
};

static int bad(const char *what, const char *val)
{
	fprintf(stderr, "device bench: bad %s: %s\n%s", what, val ? val : "(missing)", usage);
	return 2;
}

static int pick(const char *const *names, int n, const char *val)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], val))
			return i;
	return -1;
}

static int num(const char *val, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(val, &end, 10);
	if (errno || end == val || *end || v < lo || v > hi || val[0] == '-')
		return -1;
	*out = v;
	return 0;
}

static int seconds(const char *val, double *out)
{
	char *end;
	double v = strtod(val, &end);

	if (end == val || *end || !(v >= 0 && v <= 3600))
		return -1;
	*out = v;
	return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "peer", 1, 0, 'p' },	     { "target", 1, 0, 't' },	 { "socket", 1, 0, 's' },
		{ "file", 1, 0, 'f' },	     { "dir", 1, 0, 'D' },	 { "workload", 1, 0, 'w' },
		{ "bs", 1, 0, 'b' },	     { "depth", 1, 0, 'd' },	 { "jobs", 1, 0, 'j' },
		{ "time", 1, 0, 'T' },	     { "warmup", 1, 0, 'W' },	 { "direct", 0, 0, 'o' },
		{ "indirect", 0, 0, 'i' },   { "queue-size", 1, 0, 'q' }, { "tree-files", 1, 0, 'n' },
		{ "cpu-pid", 1, 0, 'c' },    { "cache", 1, 0, 'C' },	 { "file-mb", 1, 0, 'm' },
		{ "halt-poll-us", 1, 0, 'H' }, { "probe-cpu", 1, 0, 'P' },
		{ "mode-rtt-ns", 1, 0, 'M' }, { "mode-wait-s", 1, 0, 'A' }, { "mode-slow", 0, 0, 'S' },
		{ "writer-uid", 1, 0, 'U' },
		{ 0, 0, 0, 0 },
	};
	struct bench *b = &o->b;
	unsigned long v;
	int c, k;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'p': b->peer = optarg; break;
		case 't':
			if ((k = pick(targets, 3, optarg)) < 0)
				return bad("--target", optarg);
			b->target = (enum target_kind)k;
			break;
		case 's': b->socket = optarg; break;
		case 'f': b->file = optarg; break;
		case 'D': b->dir = optarg; break;
		case 'w':
			if ((k = pick(workloads, 5, optarg)) < 0)
				return bad("--workload", optarg);
			b->workload = (enum workload_kind)k;
			break;
		case 'b':
			if (num(optarg, 512, 1 << 20, &v) || v % 512)
				return bad("--bs (512..1M, a multiple of 512)", optarg);
			b->bs = (unsigned int)v;
			break;
		case 'd':
			if (num(optarg, 1, 256, &v))
				return bad("--depth (1..256)", optarg);
			b->depth = (unsigned int)v;
			break;
		case 'j':
			if (num(optarg, 1, 64, &v))
				return bad("--jobs (1..64)", optarg);
			b->jobs = (unsigned int)v;
			break;
		case 'T':
			if (seconds(optarg, &b->seconds) || b->seconds <= 0)
				return bad("--time", optarg);
			break;
		case 'W':
			if (seconds(optarg, &b->warmup))
				return bad("--warmup", optarg);
			break;
		case 'o': b->direct = true; break;
		case 'i': b->indirect = true; break;
		case 'q':
			if (num(optarg, 2, 32768, &v) || (v & (v - 1)))
				return bad("--queue-size (a power of two)", optarg);
			b->queue_size = (unsigned int)v;
			break;
		case 'n':
			if (num(optarg, 1, 1000000, &v))
				return bad("--tree-files", optarg);
			b->tree_files = (unsigned int)v;
			break;
		case 'c':
			if (num(optarg, 1, 1u << 30, &v))
				return bad("--cpu-pid", optarg);
			o->cpu_pid = (pid_t)v;
			break;
		case 'C':
			if (strcmp(optarg, "warm") && strcmp(optarg, "evict") && strcmp(optarg, "pages"))
				return bad("--cache", optarg);
			o->cache = optarg;
			break;
		case 'H':
			if (num(optarg, 0, 1000000, &v))
				return bad("--halt-poll-us (0..1000000)", optarg);
			b->halt_poll_us = (unsigned int)v;
			break;
		case 'P':
			if (num(optarg, 0, 1023, &v))
				return bad("--probe-cpu (0..1023)", optarg);
			o->probe_cpu = (int)v;
			break;
		case 'M':
			if (num(optarg, 1, 1000000000, &v))
				return bad("--mode-rtt-ns (1..1000000000)", optarg);
			o->mode_rtt_ns = v;
			break;
		case 'S':
			o->mode_slow = true;
			break;
		case 'A':
			if (seconds(optarg, &o->mode_wait_s))
				return bad("--mode-wait-s", optarg);
			break;
		case 'U':
			if (num(optarg, 1, 65534, &v))
				return bad("--writer-uid (1..65534)", optarg);
			b->writer_uid = (uint32_t)v;
			b->has_writer_uid = true;
			break;
		case 'm':
			if (num(optarg, 1, 1 << 20, &v))
				return bad("--file-mb", optarg);
			o->file_mb = v;
			break;
		default:
			return bad("option", argv[optind - 1]);
		}
	}
	if (optind != argc)
		return bad("argument", argv[optind]);
	if (o->mode_rtt_ns && o->probe_cpu < 0)
		return bad("--mode-rtt-ns (needs --probe-cpu)", NULL);
	if (o->mode_slow && !o->mode_rtt_ns)
		return bad("--mode-slow (needs --mode-rtt-ns)", NULL);
	return 0;
}

/* Hold /dev/cpu_dma_latency at 0 while this process lives (the idle vCPU wake-up costs ~30 us). */
static const char *hold_dma_latency(void)
{
	int32_t zero = 0;
	int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return "unavailable";
	if (write(fd, &zero, sizeof(zero)) != sizeof(zero)) {
		close(fd);
		return "unavailable";
	}
	return "held at 0"; /* the fd stays open until exit: that is the hold */
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void *job_thread(void *arg)
{
	(void)target_job_run(arg);
	return NULL;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static uint64_t mem_needed(const struct bench *b)
{
	uint64_t data = ((uint64_t)(b->bs < TREE_FILE_BYTES ? TREE_FILE_BYTES : b->bs) + 4095) & ~4095ull;
	uint64_t per_job = b->depth * (data + SLOT_HDR_BYTES + SLOT_RESP_BYTES) +
			   (uint64_t)b->queue_size * (16 + 2 + 8) + 64 * 1024 +
			   16ull * DVQ_SLOT_DESCS * b->depth;

	return b->jobs * per_job + (1 << 20);
}

struct sample {
	int64_t peer, self;
	uint64_t total, idle, steal;
};

static void take(struct sample *s, pid_t pid)
{
	s->peer = pid ? proc_tree_ticks(pid) : 0;
	s->self = self_ticks();
	if (machine_ticks(&s->total, &s->idle, &s->steal))
		s->total = s->idle = s->steal = 0;
}

static void report(const struct opts *o, const struct sample *a, const struct sample *z,
		   const char *dma, double resident)
{
	const struct bench *b = &o->b;
	struct hist h = { 0 };
	uint64_t reqs = 0, bytes = 0, kicks = 0, waits = 0, halt_polls = 0;
	double win = (double)(b->t_end - b->t_start) / 1e9, tick = (double)sysconf(_SC_CLK_TCK);
	double busy = (double)((z->total - z->idle) - (a->total - a->idle)), all = (double)(z->total - a->total);
	double steal = (double)(z->steal - a->steal); /* the hypervisor's, not this machine's work */
	double peer = o->cpu_pid && a->peer >= 0 && z->peer >= 0 ? (double)(z->peer - a->peer) : -1;
	double others = busy - steal - (double)(z->self - a->self) - (peer > 0 ? peer : 0);
	double load[3] = { 0 };

	for (unsigned int i = 0; i < b->jobs; i++) {
		hist_merge(&h, &b->jobv[i].hist);
		reqs += b->jobv[i].requests;
		bytes += b->jobv[i].bytes;
		kicks += b->jobv[i].vr.kicks;
		waits += b->jobv[i].vr.waits;
		halt_polls += b->jobv[i].vr.halt_polls;
	}
	if (getloadavg(load, 3) < 0)
		load[0] = -1;
	printf("{\"peer\":\"%s\",\"target\":\"%s\",\"workload\":\"%s\",\"bs\":%u,\"depth\":%u,"
	       "\"jobs\":%u,\"direct\":%s,\"indirect\":%s,\"seconds\":%.3f,\"requests\":%llu,"
	       "\"iops\":%.1f,\"mbps\":%.2f,\"lat_mean_us\":%.2f,\"lat_p50_us\":%.2f,"
	       "\"lat_p99_us\":%.2f,\"lat_max_us\":%.1f,",
	       b->peer ? b->peer : "?", targets[b->target], workloads[b->workload], b->bs, b->depth,
	       b->jobs, b->direct ? "true" : "false", b->indirect ? "true" : "false", win,
	       (unsigned long long)reqs, (double)reqs / win, (double)bytes / win / 1e6,
	       h.count ? (double)h.sum_ns / (double)h.count / 1e3 : 0,
	       (double)hist_quantile(&h, 0.5) / 1e3, (double)hist_quantile(&h, 0.99) / 1e3,
	       (double)h.max_ns / 1e3);
	if (peer >= 0)
		printf("\"peer_cpu_s\":%.3f,\"peer_cpu_us_per_req\":%.3f,", peer / tick,
		       reqs ? peer / tick * 1e6 / (double)reqs : 0);
	else
		printf("\"peer_cpu_s\":null,\"peer_cpu_us_per_req\":null,");
	printf("\"driver_cpu_s\":%.3f,\"others_cpu_pct\":%.1f,\"machine_busy_pct\":%.1f,"
	       "\"loadavg1\":%.2f,\"cpu_dma_latency\":\"%s\",\"kicks\":%llu,\"waits\":%llu,",
	       (double)(z->self - a->self) / tick, all > 0 ? 100 * others / all : 0,
	       all > 0 ? 100 * busy / all : 0, load[0], dma,
	       (unsigned long long)kicks, (unsigned long long)waits);
	printf("\"steal_pct\":%.1f,", all > 0 ? 100 * steal / all : 0);
	printf("\"halt_poll_us\":%u,\"halt_polls\":%llu,", b->halt_poll_us,
	       (unsigned long long)halt_polls);
	if (o->probe.xcpu_rtt_ns >= 0)
		printf("\"xcpu_rtt_ns\":%.1f,", o->probe.xcpu_rtt_ns);
	else
		printf("\"xcpu_rtt_ns\":null,");
	if (o->probe_after.xcpu_rtt_ns >= 0)
		printf("\"xcpu_rtt_after_ns\":%.1f,", o->probe_after.xcpu_rtt_ns);
	else
		printf("\"xcpu_rtt_after_ns\":null,");
	printf("\"syscall_ns\":%.1f,", o->probe.syscall_ns);
	if (o->mode_rtt_ns)
		printf("\"mode_rtt_ns\":%lu,\"mode_waited_for\":\"%s\",\"mode_waited_s\":%.2f,",
		       o->mode_rtt_ns, o->mode_slow ? "slow" : "fast", o->mode_waited_s);
	if (b->has_writer_uid)
		printf("\"writer_uid\":%u,\"killpriv_v2\":%s,", b->writer_uid,
		       b->killpriv_v2 ? "true" : "false");
	printf("\"request_queues\":%u,\"fuse_minor\":%u,\"tag\":\"%s\",\"cache\":\"%s\","
	       "\"resident_after\":%.3f}\n",
	       b->request_queues, b->fuse_minor, b->tag, o->cache ? o->cache : "as found", resident);
}

static int run(struct opts *o)
{
	struct bench *b = &o->b;
	struct sample a, z;
	struct stat st;
	pthread_t *th = NULL;
	unsigned int started = 0;
	int rc = 1;
	const char *dma;
	int err = 0;

	if (!b->file || stat(b->file, &st) || !S_ISREG(st.st_mode))
		return bad("--file (an existing regular file)", b->file);
	if (b->target != TARGET_HOST && !b->socket)
		return bad("--socket", NULL);
	if (b->target != TARGET_FS && b->workload >= WL_META)
		return bad("--workload (meta and untar are virtio-fs workloads)", workloads[b->workload]);
	if (b->has_writer_uid && b->target != TARGET_FS)
		return bad("--writer-uid (the uid of a FUSE request)", "only with --target fs");
	if (!b->indirect && (uint64_t)b->depth * DVQ_SLOT_DESCS > b->queue_size)
		return bad("--depth (depth x 4 descriptors must fit --queue-size)", NULL);
	b->file_size = (uint64_t)st.st_size;
	if (b->file_size < b->bs * 2ull * b->jobs)
		return bad("--file (too small for the request size)", b->file);
	if (o->cache && (!strcmp(o->cache, "warm")    ? files_warm(b->file)
			 : !strcmp(o->cache, "pages") ? files_rewrite_pages(b->file)
						      : files_evict(b->file)))
		return 1;
	dma = hold_dma_latency();
	/* Before the back-end is connected: its CPU is idle, and the run does not feel the probe. */
	if (o->mode_rtt_ns)
		o->mode_waited_s = probe_wait_for_mode(o->probe_cpu, (double)o->mode_rtt_ns,
						       o->mode_slow, o->mode_wait_s, &o->probe);
	else
		probe_host(o->probe_cpu, &o->probe);
	if (dmem_create(&b->mem, mem_needed(b)))
		return 1;
	err = setup_peer(b);
	if (err) {
		rc = err == -EOPNOTSUPP ? SETUP_UNSUPPORTED : 1;
		goto out;
	}
	for (unsigned int i = 0; i < b->jobs; i++) {
		struct job *j = &b->jobv[i];
		uint64_t span = (b->file_size / b->jobs) / b->bs * b->bs;

		j->seq_lo = j->seq_next = span * i;
		j->seq_hi = span * (i + 1);
	}
	th = calloc(b->jobs, sizeof(*th));
	if (!th)
		goto out;
	uint64_t t0 = now_ns();

	b->t_start = t0 + (uint64_t)(b->warmup * 1e9);
	b->t_end = b->t_start + (uint64_t)(b->seconds * 1e9);
	for (started = 0; started < b->jobs; started++)
		if (pthread_create(&th[started], NULL, job_thread, &b->jobv[started])) {
			b->stop = 1;
			err = 1;
			break;
		}
	if (!err) {
		sleep_until(b->t_start);
		take(&a, o->cpu_pid);
		sleep_until(b->t_end);
		take(&z, o->cpu_pid);
		b->stop = 1;
	}
	for (unsigned int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	/* Again once the requests stopped: a run whose host changed mode meanwhile shows it. */
	probe_host(o->probe_cpu, &o->probe_after);
	for (unsigned int i = 0; i < b->jobs; i++)
		if (b->jobv[i].err) {
			fprintf(stderr, "device bench: %s job %u: %s\n", b->peer ? b->peer : "",
				i, b->jobv[i].errmsg);
			err = 1;
		}
	if (err || teardown_peer(b))
		goto out;
	if (b->workload == WL_RANDWRITE && files_verify(b->file))
		goto out;
	report(o, &a, &z, dma, files_resident(b->file));
	rc = 0;
out:
	free(th);
	setup_free(b);
	dmem_destroy(&b->mem);
	return rc;
}

/*
 * device probe: the host's cross-CPU round trip, probed every 50 ms for --time seconds, as one JSON
 * line (fewest, median, most): device.sh takes its mode gate from the fewest.
 */
static int probe_only(const struct opts *o)
{
	enum { MAX_PROBES = 4096 };
	static double rtt[MAX_PROBES];
	const struct timespec nap = { 0, 50000000 };
	uint64_t t0 = now_ns();
	unsigned int n = 0;
	struct probe p;

	if (o->probe_cpu < 0)
		return bad("--probe-cpu", NULL);
	do {
		probe_host(o->probe_cpu, &p);
		if (p.xcpu_rtt_ns < 0) {
			fprintf(stderr, "device bench: no round trip to CPU %d (offline, or this CPU)\n",
				o->probe_cpu);
			return 1;
		}
		rtt[n++] = p.xcpu_rtt_ns;
		nanosleep(&nap, NULL);
	} while (n < MAX_PROBES && (double)(now_ns() - t0) < o->b.seconds * 1e9);
	qsort(rtt, n, sizeof(rtt[0]), cmp_double);
	printf("{\"probes\":%u,\"xcpu_rtt_ns_min\":%.1f,\"xcpu_rtt_ns_median\":%.1f,"
	       "\"xcpu_rtt_ns_max\":%.1f}\n", n, rtt[0], rtt[n / 2], rtt[n - 1]);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .b = { .jobs = 1, .depth = 1, .bs = 4096, .queue_size = 256,
				 .tree_files = 2000, .seconds = 5, .warmup = 1, .host_fd = -1,
				 .vu = { .sock = -1 } },
			  .file_mb = 256, .probe_cpu = -1, .mode_wait_s = 20 };
	int rc;

	if (argc < 2)
		return bad("command", NULL);
	optind = 2;
	rc = parse(argc, argv, &o);
	if (rc)
		return rc;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "prepare")) {
		if (!o.b.dir)
			return bad("--dir", NULL);
		return files_prepare(o.b.dir, o.file_mb, o.b.tree_files, o.b.jobs) ? 1 : 0;
	}
	if (!strcmp(argv[1], "run"))
		return run(&o);
	if (!strcmp(argv[1], "probe"))
		return probe_only(&o);
	return bad("command", argv[1]);
}
