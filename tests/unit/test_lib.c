/*
 * test_lib.c: libringvm's life cycle through its public API only, with real VMs: the firmware
 * payloads of firmware/ run natively on this host's /dev/kvm (even PVM). ringvm_stop() and
 * ringvm_signal() from another thread, ringvm_destroy() after every kind of failure, several VMs one after another in one
 * process (with devices whose queue workers run), and afterwards no leaked fd, thread or mapping.
 * Skipped (counted) when /dev/kvm or the payloads (make all) are missing.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "include/ringvm.h"
#include "tests/support/tree.h"
#include "tests/unit/tap.h"

#define FW "build/firmware/"
#define ATTACK_PASS 80 /* firmware/attack: a case that passed */
#define IMG_BYTES (2048 * 512)

static char dir[] = "/tmp/ringvm-testlib-XXXXXX";
static char rw_img[128], ro_img[128], share[128];

/* Entries of a /proc/self directory, less the one fd reading it. */
static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return !strcmp(path, "/proc/self/fd") ? n - 1 : n;
}

struct usage {
	int fds, threads;
	int maps;    /* all mappings */
	int vm_maps; /* guest RAM, KVM and io_uring mappings */
	int named;   /* mappings of a file or a named object: everything but anonymous memory */
};

/* AddressSanitizer grows its own anonymous regions for good as allocation sizes come and go (and
   LeakSanitizer checks the heap at exit): under it only named mappings are compared. */
#if defined(__SANITIZE_ADDRESS__)
#define COMPARE_ANON false
#else
#define COMPARE_ANON true
#endif

static struct usage usage_now(void)
{
	struct usage u = { count_dir("/proc/self/fd"), count_dir("/proc/self/task"), 0, 0, 0 };
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	while (f && fgets(line, sizeof(line), f)) {
		u.maps++;
		/* "start-end perms offset dev inode [name]": a name after the sixth field */
		char name[256] = "";
		if (sscanf(line, "%*s %*s %*s %*s %*s %255s", name) == 1 && name[0])
			u.named++;
		if (strstr(line, "memfd:") || strstr(line, "anon_inode:") || strstr(line, "/dev/kvm") ||
		    strstr(line, "io_uring"))
			u.vm_maps++;
	}
	if (f)
		fclose(f);
	return u;
}

static void base_config(struct ringvm_config *c, const char *payload)
{
	ringvm_config_init(c);
	c->kernel = payload;
	c->memory = 64ULL << 20;
	c->console.stdio[0] = -1;
	c->console.stdio[1] = -1;
	c->console.stdio[2] = -1;
	/* Several VMs in this process: nothing may be confined or dropped for good. */
	c->seccomp = false;
	c->drop_privileges = false;
}

/* create + run + destroy; the result's end and status, or -errno from create/run. */
static int boot(const struct ringvm_config *c, struct ringvm_result *res)
{
	char err[RINGVM_ERR_MAX];
	struct ringvm *vm;
	int ret = ringvm_create(c, &vm, err, sizeof(err));
	if (ret) {
		printf("# create: %s\n", err);
		return ret;
	}
	ret = ringvm_run(vm, res, err, sizeof(err));
	if (ret)
		printf("# run: %s\n", err);
	ringvm_destroy(vm);
	return ret;
}

/* The attack payload's legitimate cases, with the devices attack.sh gives it. */
static int boot_attack(const char *name, struct ringvm_result *res)
{
	struct ringvm_disk disks[2] = { { .path = rw_img, .queues = 4 }, { .path = ro_img, .readonly = true } };
	struct ringvm_share sh = { .host_dir = share, .guest_dir = "/share", .queues = 2 };
	char cmdline[64];
	struct ringvm_config c;
	base_config(&c, FW "attack.elf");
	snprintf(cmdline, sizeof(cmdline), "attack=%s", name);
	c.cmdline = cmdline;
	c.disks = disks;
	c.nr_disks = 2;
	c.shares = &sh;
	c.nr_shares = 1;
	return boot(&c, res);
}

static int write_image(const char *path)
{
	static unsigned char b[IMG_BYTES];
	/* attack.sh's pattern: blk_legitimate reads it back. */
	for (unsigned int o = 0; o < IMG_BYTES; o++)
		b[o] = (unsigned char)((o * 7 + (o >> 9) * 13 + 1) & 255);
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, b, sizeof(b));
	close(fd);
	return n == (ssize_t)sizeof(b) ? 0 : -EIO;
}

static int setup(void)
{
	if (!mkdtemp(dir))
		return -errno;
	snprintf(rw_img, sizeof(rw_img), "%s/rw.img", dir);
	snprintf(ro_img, sizeof(ro_img), "%s/ro.img", dir);
	snprintf(share, sizeof(share), "%s/share", dir);
	char p[192];
	if (mkdir(share, 0755) < 0)
		return -errno;
	snprintf(p, sizeof(p), "%s/dir", share);
	if (mkdir(p, 0755) < 0)
		return -errno;
	snprintf(p, sizeof(p), "%s/scratch", share);
	if (mkdir(p, 0755) < 0)
		return -errno;
	snprintf(p, sizeof(p), "%s/hello.txt", share);
	FILE *f = fopen(p, "w");
	if (!f)
		return -errno;
	fputs("hello from the share\n", f);
	fclose(f);
	int ret = write_image(rw_img);
	return ret ? ret : write_image(ro_img);
}

/* Reads the console pipe until the payload has printed, then runs on_hello on this thread. */
struct stopper {
	struct ringvm *vm;
	int fd;
	bool saw_hello;
	void (*on_hello)(struct stopper *s);
};

static void stop_vm(struct stopper *s)
{
	ringvm_stop(s->vm);
}

static void *stopper_thread(void *arg)
{
	struct stopper *s = arg;
	char buf[256], seen[512] = "";
	size_t len = 0;
	ssize_t n;
	while ((n = read(s->fd, buf, sizeof(buf))) > 0) {
		size_t k = (size_t)n < sizeof(seen) - 1 - len ? (size_t)n : sizeof(seen) - 1 - len;
		memcpy(seen + len, buf, k);
		len += k;
		seen[len] = '\0';
		if (!s->saw_hello && strstr(seen, "hello from firmware")) {
			s->saw_hello = true;
			s->on_hello(s);
		}
	}
	return NULL;
}

static void test_stop_from_thread(void)
{
	int p[2];
	TAP_CHECK(pipe2(p, O_CLOEXEC) == 0, "stop: a pipe for the console");
	struct ringvm_config c;
	base_config(&c, FW "halt.elf"); /* prints, then halts for ever: only a stop ends it */
	c.console.stdio[1] = p[1];
	char err[RINGVM_ERR_MAX];
	struct ringvm *vm;
	int ret = ringvm_create(&c, &vm, err, sizeof(err));
	TAP_CHECK(ret == 0, "stop: the halting payload's VM is created");
	if (ret) {
		printf("# %s\n", err);
		close(p[0]);
		close(p[1]);
		return;
	}
	struct stopper s = { .vm = vm, .fd = p[0], .on_hello = stop_vm };
	pthread_t t;
	TAP_CHECK(pthread_create(&t, NULL, stopper_thread, &s) == 0, "stop: the stopping thread starts");
	struct ringvm_result res;
	ret = ringvm_run(vm, &res, err, sizeof(err));
	ringvm_destroy(vm);
	close(p[1]); /* EOF for the stopper */
	pthread_join(t, NULL);
	close(p[0]);
	TAP_CHECK(ret == 0 && s.saw_hello && res.end == RINGVM_END_STOPPED && res.status == 0 &&
			  ringvm_exit_code(&res) == 0,
		  "stop: ringvm_stop() from another thread ends a running guest (RINGVM_END_STOPPED)");

	/* A stop that comes before the run ends the run as soon as it starts. */
	base_config(&c, FW "halt.elf");
	ret = ringvm_create(&c, &vm, err, sizeof(err));
	if (ret == 0) {
		ringvm_stop(vm);
		ret = ringvm_run(vm, &res, err, sizeof(err));
		ringvm_destroy(vm);
	}
	TAP_CHECK(ret == 0 && res.end == RINGVM_END_STOPPED, "stop: a stop before ringvm_run() is kept");
}

/* ringvm_signal() from a signal handler (SIGUSR2, raised on the stopper's thread): an embedder's
   forwarding. */
static struct ringvm *signal_vm;
static volatile sig_atomic_t signal_ret = 1;

static void on_usr2(int sig)
{
	(void)sig;
	signal_ret = ringvm_signal(signal_vm, SIGINT);
}

static void raise_usr2(struct stopper *s)
{
	(void)s;
	pthread_kill(pthread_self(), SIGUSR2);
}

/*
 * ringvm_signal(): with no PID 1 listening (the payload is no Linux, and there is no command), a
 * signal stops the guest at once with 128+N, as a handled signal does in the CLI.
 */
static void test_signal(void)
{
	int p[2];
	char err[RINGVM_ERR_MAX];
	struct ringvm *vm;
	struct ringvm_result res;
	struct ringvm_config c;

	TAP_CHECK(ringvm_signal(NULL, SIGTERM) == -EINVAL, "signal: a NULL vm is -EINVAL");
	TAP_CHECK(pipe2(p, O_CLOEXEC) == 0, "signal: a pipe for the console");
	base_config(&c, FW "halt.elf");
	c.console.stdio[1] = p[1];
	int ret = ringvm_create(&c, &vm, err, sizeof(err));
	TAP_CHECK(ret == 0, "signal: the halting payload's VM is created");
	if (ret) {
		printf("# %s\n", err);
		close(p[0]);
		close(p[1]);
		return;
	}
	TAP_CHECK(ringvm_signal(vm, SIGKILL) == -EINVAL && ringvm_signal(vm, 0) == -EINVAL &&
			  ringvm_signal(vm, SIGUSR1) == -EINVAL && ringvm_signal(vm, 300) == -EINVAL,
		  "signal: SIGKILL, 0, SIGUSR1, 300 are -EINVAL (only INT, TERM, HUP are forwarded)");
	struct sigaction sa = { .sa_handler = on_usr2 }, old;
	sigaction(SIGUSR2, &sa, &old);
	signal_vm = vm;
	struct stopper s = { .vm = vm, .fd = p[0], .on_hello = raise_usr2 };
	pthread_t t;
	TAP_CHECK(pthread_create(&t, NULL, stopper_thread, &s) == 0, "signal: the signalling thread starts");
	ret = ringvm_run(vm, &res, err, sizeof(err));
	TAP_CHECK(ringvm_signal(vm, SIGTERM) == -ESRCH, "signal: after the run, -ESRCH");
	ringvm_destroy(vm);
	close(p[1]);
	pthread_join(t, NULL);
	close(p[0]);
	sigaction(SIGUSR2, &old, NULL);
	TAP_CHECK(ret == 0 && s.saw_hello && signal_ret == 0 && res.end == RINGVM_END_STOPPED &&
			  res.status == 128 + SIGINT && ringvm_exit_code(&res) == 128 + SIGINT,
		  "signal: ringvm_signal(SIGINT) from a signal handler on another thread stops the "
		  "guest, status 130");
	if (ret || res.status != 128 + SIGINT)
		printf("# ret %d, handler %d, end %d, status %d: %s\n", ret, (int)signal_ret, res.end,
		       res.status, res.message);

	/* A signal sent before the run is kept: acted on as the run starts. */
	base_config(&c, FW "halt.elf");
	ret = ringvm_create(&c, &vm, err, sizeof(err));
	if (ret == 0) {
		TAP_CHECK(ringvm_signal(vm, SIGHUP) == 0, "signal: before the run, accepted");
		ret = ringvm_run(vm, &res, err, sizeof(err));
		ringvm_destroy(vm);
	}
	TAP_CHECK(ret == 0 && res.end == RINGVM_END_STOPPED && res.status == 128 + SIGHUP,
		  "signal: a SIGHUP before ringvm_run() ends the run with 129 as it starts");
}

/* ringvm_create() fails cleanly (nothing returned, a one-line reason) at each of its steps. */
static void test_create_failures(void)
{
	struct {
		const char *what, *kernel, *initrd, *want;
		unsigned int cpus;
		struct ringvm_disk disk;
		struct ringvm_share share;
		int ret;
	} cases[] = {
		{ "no kernel", NULL, NULL, "no kernel", 1, { 0 }, { 0 }, -EINVAL },
		{ "0 vCPUs", FW "exit.elf", NULL, "cpus", 0, { 0 }, { 0 }, -EINVAL },
		{ "a missing kernel", "/nonexistent/vmlinuz", NULL, "cannot read kernel", 1, { 0 }, { 0 }, -ENOENT },
		{ "a kernel that is no kernel", "/etc/hostname", NULL, "neither a bzImage", 1, { 0 }, { 0 }, -ENOEXEC },
		{ "a missing initrd", FW "exit.elf", "/nonexistent.cpio", "cannot read initrd", 1, { 0 }, { 0 }, -ENOENT },
		{ "a missing disk", FW "exit.elf", NULL, "no such file", 1, { .path = "/nonexistent.img" }, { 0 },
		  -ENOENT },
		{ "a bad disk field", FW "exit.elf", NULL, "queues", 1, { .path = "x", .queues = 99 }, { 0 }, -EINVAL },
		{ "a share on /proc", FW "exit.elf", NULL, "share /proc:/m", 1, { 0 },
		  { .host_dir = "/proc", .guest_dir = "/m" }, 0 },
		{ "a missing share directory", FW "exit.elf", NULL, "/nonexistent", 1, { 0 },
		  { .host_dir = "/nonexistent", .guest_dir = "/m" }, -ENOENT },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ringvm_config c;
		base_config(&c, cases[i].kernel);
		c.cpus = cases[i].cpus;
		c.initrd = cases[i].initrd;
		if (cases[i].disk.path) {
			c.disks = &cases[i].disk;
			c.nr_disks = 1;
		}
		if (cases[i].share.host_dir) {
			c.shares = &cases[i].share;
			c.nr_shares = 1;
		}
		char err[RINGVM_ERR_MAX] = "";
		struct ringvm *vm = (struct ringvm *)&c; /* a sentinel: must not be written */
		int ret = ringvm_create(&c, &vm, err, sizeof(err));
		char what[160];
		snprintf(what, sizeof(what), "create fails on %s: -errno, *out untouched, one line", cases[i].what);
		TAP_CHECK(ret < 0 && (!cases[i].ret || ret == cases[i].ret) && vm == (struct ringvm *)&c &&
				  strstr(err, cases[i].want) && !strchr(err, '\n'),
			  what);
		if (ret >= 0 || !strstr(err, cases[i].want))
			printf("# got %d: %s\n", ret, err);
	}

	/* ringvm_run() twice: the second is refused, destroy still cleans up. */
	struct ringvm_config c;
	base_config(&c, FW "exit.elf");
	char err[RINGVM_ERR_MAX];
	struct ringvm *vm;
	struct ringvm_result res;
	int ret = ringvm_create(&c, &vm, err, sizeof(err));
	if (ret == 0) {
		ret = ringvm_run(vm, &res, err, sizeof(err));
		int again = ringvm_run(vm, &res, err, sizeof(err));
		TAP_CHECK(ret == 0 && again == -EALREADY && res.end == RINGVM_END_ERROR && strstr(err, "already"),
			  "a second ringvm_run() is -EALREADY with a reason");
		ringvm_destroy(vm);
	} else {
		TAP_CHECK(false, "a second ringvm_run() is -EALREADY with a reason");
	}
	/* Created and destroyed without running. */
	ret = ringvm_create(&c, &vm, err, sizeof(err));
	if (ret == 0)
		ringvm_destroy(vm);
	ringvm_destroy(NULL);
	TAP_CHECK(ret == 0, "create then destroy without a run; destroy(NULL)");
}

static bool same_usage(struct usage a, struct usage b, const char *when)
{
	bool same = a.fds == b.fds && a.threads == b.threads && a.named == b.named && a.vm_maps == b.vm_maps &&
		    (!COMPARE_ANON || a.maps == b.maps);
	if (!same) {
		printf("# %s: fds %d -> %d, threads %d -> %d, maps %d -> %d (named %d -> %d), VM maps %d -> %d\n",
		       when, a.fds, b.fds, a.threads, b.threads, a.maps, b.maps, a.named, b.named, a.vm_maps,
		       b.vm_maps);
		if (getenv("TEST_LIB_MAPS") && system("cat /proc/$PPID/maps") != 0)
			printf("# no maps\n");
	}
	return same;
}

int main(void)
{
	if (access("/dev/kvm", R_OK | W_OK) != 0 || access(FW "exit.elf", R_OK) != 0 ||
	    access(FW "halt.elf", R_OK) != 0 || access(FW "attack.elf", R_OK) != 0) {
		printf("ok 1 # SKIP no /dev/kvm or no firmware payloads (make all)\n1..1\n");
		return 0;
	}
	/* The payloads are a few instructions, which PVM runs too. */
	setenv("RINGVM_ALLOW_PVM", "1", 1);
	alarm(300); /* a hang is a failure, not a stuck suite */
	if (setup() != 0) {
		TAP_CHECK(false, "temporary disks and share");
		return tap_done();
	}
	sigset_t before, after;
	pthread_sigmask(SIG_BLOCK, NULL, &before);

	/* Warm-up, one VM of each kind below: glibc keeps per-thread malloc arenas and the stacks of
	   joined threads (up to 40 MiB) for reuse, once per process, not per VM. */
	struct ringvm_result res;
	int ret = boot_attack("blk_legitimate", &res);
	TAP_CHECK(ret == 0 && res.end == RINGVM_END_EXIT_STATUS && res.status == ATTACK_PASS,
		  "warm-up: a VM with 2 disks and a share runs a device case to PASS");
	ret = boot_attack("fuse_lying_len", &res);
	TAP_CHECK(ret == 0 && res.end == RINGVM_END_EXIT_STATUS && res.status == ATTACK_PASS,
		  "warm-up: a VM runs a FUSE case to PASS");
	struct ringvm_config c;
	base_config(&c, FW "exit.elf");
	c.cpus = 2;
	ret = boot(&c, &res);
	TAP_CHECK(ret == 0 && res.end == RINGVM_END_EXIT_STATUS && res.status == 42,
		  "warm-up: a 2-vCPU VM ends with the payload's status 42");
	struct usage base = usage_now();

	/* Several VMs one after another, with devices whose queue workers start. */
	bool all_ok = true;
	for (int i = 0; i < 6; i++) {
		int want = i % 3 == 0 ? 42 : ATTACK_PASS;
		if (i % 3 == 0) {
			base_config(&c, FW "exit.elf");
			c.cpus = 2;
			ret = boot(&c, &res);
		} else {
			ret = boot_attack(i % 3 == 1 ? "blk_legitimate" : "fuse_lying_len", &res);
		}
		if (ret || res.end != RINGVM_END_EXIT_STATUS || res.status != want) {
			printf("# VM %d: ret %d, end %d, status %d (want %d): %s\n", i, ret, res.end, res.status,
			       want, res.message);
			all_ok = false;
		}
	}
	TAP_CHECK(all_ok, "6 VMs one after another in one process, each with its status");
	TAP_CHECK(same_usage(base, usage_now(), "after 6 VMs"),
		  "after 6 VMs: the same fds, threads and mappings as before");

	/* RINGVM_MAX_DEVICES at once: each gets its window and interrupt line, the tables take them. */
	struct ringvm_disk many_disks[RINGVM_MAX_DEVICES];
	struct ringvm_share many_shares[4];
	static const char *const dirs[] = { "/m0", "/m1", "/m2", "/m3" };
	for (unsigned int i = 0; i < RINGVM_MAX_DEVICES; i++)
		many_disks[i] = (struct ringvm_disk){ .path = ro_img, .readonly = true };
	for (unsigned int i = 0; i < 4; i++)
		many_shares[i] = (struct ringvm_share){ .host_dir = share, .guest_dir = dirs[i], .readonly = true };
	base_config(&c, FW "exit.elf");
	c.disks = many_disks;
	c.nr_disks = RINGVM_MAX_DEVICES - 4;
	c.shares = many_shares;
	c.nr_shares = 4;
	ret = boot(&c, &res);
	TAP_CHECK(ret == 0 && res.end == RINGVM_END_EXIT_STATUS && res.status == 42,
		  "a VM with RINGVM_MAX_DEVICES (16) devices: 12 disks and 4 shares");
	c.nr_shares = 0;
	c.nr_disks = RINGVM_MAX_DEVICES;
	c.root.host_dir = share;
	char err[RINGVM_ERR_MAX];
	struct ringvm *vm;
	ret = ringvm_create(&c, &vm, err, sizeof(err));
	TAP_CHECK(ret == -E2BIG && strstr(err, "at most 16 devices"), "a 17th device is refused before anything is made");
	TAP_CHECK(same_usage(base, usage_now(), "after 16 devices"), "after 16 devices: nothing leaked");

	test_stop_from_thread();
	test_signal();
	TAP_CHECK(same_usage(base, usage_now(), "after the stops"), "after the stops and signals: nothing leaked");
	test_create_failures();
	TAP_CHECK(same_usage(base, usage_now(), "after the failures"), "after every failure: nothing leaked");

	pthread_sigmask(SIG_BLOCK, NULL, &after);
	TAP_CHECK(sigismember(&before, SIGUSR1) == sigismember(&after, SIGUSR1) &&
			  sigismember(&before, SIGINT) == sigismember(&after, SIGINT),
		  "the caller's signal mask is given back");

	(void)tree_discard(dir);
	return tap_done();
}
