/* vport.c: open virtio-console ports by the names the VMM gave them (sysfs), waiting for them to appear. */
#define _GNU_SOURCE
#include "guest/vport.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define VPORT_TICK_MS 5	     /* without a wake fd: look again this often */
#define VPORT_RESCAN_MS 1000 /* with one: in case an event was missed */

/* The port's name from sysfs, without its newline; false when it has none (yet). */
static bool vport_name(const char *sys_dir, const char *entry, char *buf, size_t size)
{
	char path[512];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s/name", sys_dir, entry) >= sizeof(path))
		return false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

/* One look at sys_dir: open every wanted port that has its name. Returns how many are open. */
static int vport_scan(const char *sys_dir, const char *dev_dir, const char *const *names,
		      const int *flags, int *fds, unsigned int n, int *err)
{
	DIR *dir = opendir(sys_dir);
	struct dirent *de;
	unsigned int open_count = 0;

	if (!dir)
		return 0; /* the driver has not registered its class yet */
	while ((de = readdir(dir)) != NULL) {
		char name[256], dev[512];

		if (strncmp(de->d_name, "vport", 5) != 0 || !vport_name(sys_dir, de->d_name, name, sizeof(name)))
			continue;
		for (unsigned int i = 0; i < n; i++) {
			if (fds[i] >= 0 || strcmp(name, names[i]) != 0)
				continue;
			if ((size_t)snprintf(dev, sizeof(dev), "%s/%s", dev_dir, de->d_name) >= sizeof(dev))
				continue;
			fds[i] = open(dev, flags[i] | O_CLOEXEC);
			if (fds[i] < 0 && errno != ENOENT)
				*err = -errno; /* ENOENT: devtmpfs has not made the node yet */
		}
	}
	closedir(dir);
	for (unsigned int i = 0; i < n; i++)
		open_count += fds[i] >= 0;
	return (int)open_count;
}

static uint64_t vport_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Sleep until wake_fd (a datagram socket) has news, drained, or ms passed. */
static void vport_wait(int wake_fd, unsigned int ms)
{
	struct pollfd p = { wake_fd, POLLIN, 0 };
	char buf[4096];

	if (poll(&p, wake_fd >= 0 ? 1 : 0, (int)ms) <= 0 || !(p.revents & POLLIN))
		return;
	while (recv(wake_fd, buf, sizeof(buf), MSG_DONTWAIT) > 0) {
	}
}

int vport_open_by_name(const char *sys_dir, const char *dev_dir, const char *const *names,
		       const int *flags, int *fds, unsigned int n, unsigned int timeout_ms,
		       int wake_fd)
{
	uint64_t start = vport_now_ms();
	int err = 0;

	for (unsigned int i = 0; i < n; i++)
		fds[i] = -1;
	for (;;) {
		if (vport_scan(sys_dir, dev_dir, names, flags, fds, n, &err) == (int)n)
			return 0;
		uint64_t waited = vport_now_ms() - start;
		if (err || waited >= timeout_ms)
			break;
		unsigned int left = (unsigned int)(timeout_ms - waited);
		unsigned int step = wake_fd >= 0 ? VPORT_RESCAN_MS : VPORT_TICK_MS;
		vport_wait(wake_fd, left < step ? left : step);
	}
	for (unsigned int i = 0; i < n; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
	return err ? err : -ETIMEDOUT;
}
