/* test_vport.c: finding virtio-console ports by name, on a fake sysfs and /dev tree. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest/vport.h"
#include "tests/support/tree.h"
#include "tests/unit/tap.h"

static char root[64], sys_dir[128], dev_dir[128];

/* A port as Linux shows it: /sys/class/virtio-ports/ENTRY/name and /dev/ENTRY (here a file). */
static void make_port(const char *entry, const char *name)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", sys_dir, entry);
	mkdir(path, 0755);
	if (name) {
		snprintf(path, sizeof(path), "%s/%s/name", sys_dir, entry);
		f = fopen(path, "w");
		fprintf(f, "%s\n", name);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/%s", dev_dir, entry);
	f = fopen(path, "w");
	fprintf(f, "%s", entry);
	fclose(f);
}

/* The dev entry fd refers to, read back. */
static bool is(int fd, const char *entry)
{
	char buf[32] = { 0 };

	return fd >= 0 && pread(fd, buf, sizeof(buf) - 1, 0) > 0 && strcmp(buf, entry) == 0;
}

int main(void)
{
	const char *const names[3] = { "ringvm.stdin", "ringvm.stdout", "ringvm.stderr" };
	const int flags[3] = { O_RDONLY, O_RDONLY, O_RDONLY };
	int fds[3];

	snprintf(root, sizeof(root), "/tmp/ringvm-vport.XXXXXX");
	TAP_CHECK(mkdtemp(root) != NULL, "a scratch tree");
	snprintf(sys_dir, sizeof(sys_dir), "%s/sys", root);
	snprintf(dev_dir, sizeof(dev_dir), "%s/dev", root);
	mkdir(dev_dir, 0755);

	TAP_CHECK(vport_open_by_name(sys_dir, dev_dir, names, flags, fds, 3, 20, -1) == -ETIMEDOUT &&
			  fds[0] == -1,
		  "no virtio-ports class yet: -ETIMEDOUT after the wait, nothing open");
	mkdir(sys_dir, 0755);
	make_port("vport0p0", "ringvm.stderr");
	make_port("vport0p1", NULL); /* its PORT_NAME has not arrived */
	make_port("vport0p2", "ringvm.stdin");
	make_port("vport1p0", "something.else");
	TAP_CHECK(vport_open_by_name(sys_dir, dev_dir, names, flags, fds, 3, 20, -1) == -ETIMEDOUT &&
			  fds[0] == -1 && fds[2] == -1,
		  "one name missing: -ETIMEDOUT, and the ports found meanwhile are closed again");
	make_port("vport0p1", "ringvm.stdout");
	TAP_CHECK(vport_open_by_name(sys_dir, dev_dir, names, flags, fds, 3, 20, -1) == 0,
		  "all three names present: found");
	TAP_CHECK(is(fds[0], "vport0p2") && is(fds[1], "vport0p1") && is(fds[2], "vport0p0"),
		  "each name opens its own device node, whatever the port numbers");
	for (int i = 0; i < 3; i++)
		close(fds[i]);

	/* With a wake fd: a name that appears later is found when the fd says so, not on a timer. */
	int sv[2];
	TAP_CHECK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) == 0, "a datagram socket pair");
	make_port("vport2p0", NULL);
	const char *const late[1] = { "late.port" };
	pid_t pid = fork();
	if (pid == 0) {
		usleep(200 * 1000);
		make_port("vport2p0", "late.port");
		_exit(send(sv[1], "change", 6, 0) == 6 ? 0 : 1);
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int r = vport_open_by_name(sys_dir, dev_dir, late, flags, fds, 1, 60000, sv[0]);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	waitpid(pid, NULL, 0);
	/* The rescan without an event comes after 1 s: finding it sooner means the event woke us. */
	TAP_CHECK(r == 0 && is(fds[0], "vport2p0") && ms < 900,
		  "a name that appears later is found as soon as the wake fd has an event");
	close(fds[0]);
	close(sv[0]);
	close(sv[1]);

	(void)tree_discard(root);
	return tap_done();
}
