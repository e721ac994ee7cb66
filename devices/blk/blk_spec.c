/* blk_spec.c: a disk's public description checked and copied, and the pre-boot checks of its file. */
#define _GNU_SOURCE
#include "devices/blk/blk.h"

#include "include/ringvm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The public limits are the device's own. */
_Static_assert(RINGVM_MAX_QUEUES == BLK_MAX_QUEUES, "disk queue limit");
_Static_assert(RINGVM_MAX_POLL_US == BLK_MAX_POLL_US, "disk poll limit");
_Static_assert(RINGVM_DISK_ID_MAX == BLK_ID_MAX, "disk id length");

int blk_config_from(const struct ringvm_disk *d, struct blk_config *out, const char **why)
{
	memset(out, 0, sizeof(*out));
	if (!d->path || !d->path[0]) {
		*why = "no path";
		return -EINVAL;
	}
	if (strlen(d->path) >= sizeof(out->path)) {
		*why = "path too long";
		return -EINVAL;
	}
	if (d->queues > BLK_MAX_QUEUES) {
		*why = "queues must be 1..16 (0: one per vCPU)";
		return -EINVAL;
	}
	if (d->poll_us > BLK_MAX_POLL_US) {
		*why = "poll_us must be 0..1000";
		return -EINVAL;
	}
	if (d->id) {
		size_t n = strlen(d->id);
		if (n == 0 || n > BLK_ID_MAX) {
			*why = "id must be 1 to 20 characters";
			return -EINVAL;
		}
		for (size_t i = 0; i < n; i++) {
			if (d->id[i] < 0x21 || d->id[i] > 0x7e) {
				*why = "id must be printable ASCII without spaces";
				return -EINVAL;
			}
		}
		memcpy(out->id, d->id, n + 1);
	}
	memcpy(out->path, d->path, strlen(d->path) + 1);
	out->readonly = d->readonly;
	out->direct = d->direct;
	out->queues = d->queues;
	out->poll_us = blk_disk_poll_us(d, 0); /* ringvm_run: no polling unless asked */
	return 0;
}

unsigned int blk_disk_poll_us(const struct ringvm_disk *d, unsigned int fallback)
{
	return d->poll_us_set || d->poll_us ? d->poll_us : fallback;
}

int blk_open(const struct blk_config *cfg)
{
	struct stat st;
	if (stat(cfg->path, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return -EINVAL;
	int flags = (cfg->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC | (cfg->direct ? O_DIRECT : 0);
	int fd = open(cfg->path, flags);
	if (fd >= 0)
		return fd;
	int err = -errno;
	if (!cfg->readonly && (err == -EACCES || err == -EPERM || err == -EROFS) &&
	    access(cfg->path, R_OK) == 0)
		return -EROFS; /* readable but not writable: the user wants ,readonly */
	if (err == -EINVAL && cfg->direct)
		return -EOPNOTSUPP; /* O_DIRECT refused by the file system */
	return err;
}

const char *blk_strerror(int err)
{
	switch (err) {
	case -ENOENT:
		return "no such file";
	case -EISDIR:
		return "is a directory";
	case -EINVAL:
		return "not a regular file or a block device";
	case -EROFS:
		return "not writable (add ,readonly to use it read-only)";
	case -EACCES:
	case -EPERM:
		return "permission denied";
	case -EOPNOTSUPP:
		return "direct=on: the file system does not support O_DIRECT (use direct=off)";
	case -ENOSPC:
		return "too many virtio devices";
	default:
		return strerror(-err);
	}
}
