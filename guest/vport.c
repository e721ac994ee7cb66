/* vport.c: open virtio-console ports by the names the VMM gave them (sysfs), waiting for them to appear. */
#define _GNU_SOURCE
#include "guest/vport.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define VPORT_TICK_MS 5

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

int vport_open_by_name(const char *sys_dir, const char *dev_dir, const char *const *names,
		       const int *flags, int *fds, unsigned int n, unsigned int timeout_ms)
{
	const struct timespec tick = { 0, VPORT_TICK_MS * 1000000L };
	int err = 0;

	for (unsigned int i = 0; i < n; i++)
		fds[i] = -1;
	for (unsigned int waited = 0;; waited += VPORT_TICK_MS) {
		if (vport_scan(sys_dir, dev_dir, names, flags, fds, n, &err) == (int)n)
			return 0;
		if (err || waited >= timeout_ms)
			break;
		nanosleep(&tick, NULL);
	}
	for (unsigned int i = 0; i < n; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
	return err ? err : -ETIMEDOUT;
}
