/* test_privilege.c: which capabilities ringvm keeps, and that every thread, io_uring's workers
   included, holds exactly those after priv_drop(). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <liburing.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/tap.h"
#include "vmm/privilege.h"

#define BIT(c) (UINT64_C(1) << (c))

static void test_masks(void)
{
	struct priv_need none = { 0 }, ro = { .share = true },
			 rw = { .share = true, .share_writable = true },
			 dev = { .share = true, .share_writable = true, .share_dev = true };
	uint64_t base = BIT(CAP_DAC_OVERRIDE) | BIT(CAP_SETUID) | BIT(CAP_SETGID);
	uint64_t wr = base | BIT(CAP_CHOWN) | BIT(CAP_FOWNER) | BIT(CAP_FSETID) | BIT(CAP_SETFCAP);
	uint64_t never = BIT(CAP_SYS_ADMIN) | BIT(CAP_SYS_PTRACE) | BIT(CAP_SYS_RAWIO) |
			 BIT(CAP_SYS_RESOURCE) | BIT(CAP_SYSLOG) | BIT(CAP_DAC_READ_SEARCH) |
			 BIT(CAP_NET_ADMIN) | BIT(CAP_SYS_MODULE) | BIT(CAP_SETPCAP) | BIT(CAP_BPF);

	TAP_CHECK(priv_keep_mask(&none) == 0, "no share: no capability at all");
	TAP_CHECK(priv_keep_mask(&ro) == base, "read-only share: DAC_OVERRIDE, SETUID, SETGID");
	TAP_CHECK(priv_keep_mask(&rw) == wr, "writable share: + CHOWN, FOWNER, FSETID, SETFCAP");
	TAP_CHECK(priv_keep_mask(&dev) == (wr | BIT(CAP_MKNOD)), ",dev share: + MKNOD");
	TAP_CHECK((priv_keep_mask(&dev) & never) == 0,
		  "never SYS_ADMIN, SYS_PTRACE, SYS_RAWIO, SYS_RESOURCE, SYSLOG, DAC_READ_SEARCH...");
}

/* "Field:\t<hex>" of a status file. */
static bool status_field(const char *path, const char *field, uint64_t *val)
{
	char line[256];
	size_t n = strlen(field);
	bool found = false;
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':') {
			*val = strtoull(line + n + 1, NULL, strcmp(field, "NoNewPrivs") ? 16 : 10);
			found = true;
		}
	fclose(f);
	return found;
}

static int pipefd[2];

static void *idle_thread(void *arg)
{
	char c;

	(void)arg;
	if (read(pipefd[0], &c, 1) < 0) /* blocks until the process ends */
		return NULL;
	return NULL;
}

/*
 * In a child: drop to keep, start a thread and an io_uring whose read of an empty pipe is forced
 * onto an io-wq worker (IOSQE_ASYNC), then check every task of the process. Exit code: 0 all
 * good, 1 a task holds something else, 2 setup failed, 3 too few tasks seen.
 */
static int drop_child(uint64_t keep, bool unpriv)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	pthread_t t;
	char buf[8];
	DIR *d;
	struct dirent *de;
	int tasks = 0, bad = 0;

	if (unpriv && (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534)))
		return 2;
	if (priv_drop(keep) || pipe(pipefd) || pthread_create(&t, NULL, idle_thread, NULL) ||
	    io_uring_queue_init(8, &ring, 0))
		return 2;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, pipefd[0], buf, sizeof(buf), 0);
	sqe->flags |= IOSQE_ASYNC;
	if (io_uring_submit(&ring) != 1)
		return 2;
	/* The io-wq worker shows up as a task of ours (iou-wrk-N) once it took the read. */
	for (int i = 0; i < 200000; i++) {
		tasks = 0;
		d = opendir("/proc/self/task");
		while (d && (de = readdir(d)))
			tasks += de->d_name[0] != '.';
		if (d)
			closedir(d);
		if (tasks >= 3)
			break;
		sched_yield();
	}
	d = opendir("/proc/self/task");
	tasks = 0;
	while (d && (de = readdir(d))) {
		char path[300];
		uint64_t eff, prm, inh, bnd, amb, nnp;

		if (de->d_name[0] == '.')
			continue;
		tasks++;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", de->d_name);
		if (!status_field(path, "CapEff", &eff) || !status_field(path, "CapPrm", &prm) ||
		    !status_field(path, "CapInh", &inh) || !status_field(path, "CapBnd", &bnd) ||
		    !status_field(path, "CapAmb", &amb) || !status_field(path, "NoNewPrivs", &nnp)) {
			bad = 1;
			continue;
		}
		if (eff != keep || prm != keep || inh || amb || nnp != 1 || (!unpriv && bnd != keep))
			bad = 1;
	}
	if (d)
		closedir(d);
	return bad ? 1 : tasks < 3 ? 3 : 0;
}

static int run_child(uint64_t keep, bool unpriv)
{
	int status = -1;
	pid_t pid = fork();

	if (pid == 0)
		_exit(drop_child(keep, unpriv));
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

int main(void)
{
	struct priv_need rw = { .share = true, .share_writable = true };

	test_masks();
	if (geteuid() != 0) {
		printf("ok %d # SKIP dropping from root needs root\n", ++tap_count);
	} else {
		TAP_CHECK(run_child(priv_keep_mask(&rw), false) == 0,
			  "writable share: main, a thread and an io-wq worker hold exactly the kept set "
			  "(effective, permitted, bounding), nothing inheritable or ambient, no_new_privs");
		TAP_CHECK(run_child(0, false) == 0, "no share: every task holds no capability at all");
		TAP_CHECK(run_child(0, true) == 0,
			  "unprivileged: priv_drop succeeds, no capability, no_new_privs");
	}
	return tap_done();
}
