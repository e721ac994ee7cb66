/* blk_spec.c: the --disk option parser and the pre-boot checks of the backing file. */
#define _GNU_SOURCE
#include "devices/blk/blk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int blk_spec_error(struct blk_config *out, const char *msg)
{
	out->error = msg;
	return -EINVAL;
}

/* Decimal digits only, at most max: 0 or -EINVAL. */
static int blk_parse_uint(const char *s, size_t len, unsigned int max, unsigned int *out)
{
	unsigned int n = 0;
	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || n > max)
			return -EINVAL;
		n = n * 10 + (unsigned int)(s[i] - '0');
	}
	if (n > max)
		return -EINVAL;
	*out = n;
	return 0;
}

/* One comma-separated option of length len at opt. */
static int blk_parse_option(const char *opt, size_t len, struct blk_config *out)
{
	if (len == 8 && !memcmp(opt, "readonly", 8)) {
		out->readonly = true;
		return 0;
	}
	if (len >= 7 && !memcmp(opt, "queues=", 7)) {
		if (blk_parse_uint(opt + 7, len - 7, BLK_MAX_QUEUES, &out->queues) ||
		    out->queues == 0)
			return blk_spec_error(out, "queues= must be a number from 1 to 16");
		return 0;
	}
	if (len >= 8 && !memcmp(opt, "poll_us=", 8)) {
		if (blk_parse_uint(opt + 8, len - 8, BLK_MAX_POLL_US, &out->poll_us))
			return blk_spec_error(out, "poll_us= must be a number from 0 to 1000");
		out->poll_us_given = true;
		return 0;
	}
	if (len > 7 && !memcmp(opt, "direct=", 7)) {
		if (len == 9 && !memcmp(opt + 7, "on", 2))
			out->direct = true;
		else if (len == 10 && !memcmp(opt + 7, "off", 3))
			out->direct = false;
		else
			return blk_spec_error(out, "direct= must be on or off");
		return 0;
	}
	if (len >= 3 && !memcmp(opt, "id=", 3)) {
		size_t n = len - 3;
		if (n == 0 || n > BLK_ID_MAX)
			return blk_spec_error(out, "id= must be 1 to 20 characters");
		for (size_t i = 3; i < len; i++)
			if (opt[i] < 0x21 || opt[i] > 0x7e)
				return blk_spec_error(out,
						      "id= must be printable ASCII without spaces");
		memcpy(out->id, opt + 3, n);
		out->id[n] = '\0';
		return 0;
	}
	return blk_spec_error(out, "unknown option (expected readonly, queues=N, direct=on|off, "
				   "id=STRING, poll_us=N)");
}

int blk_parse_spec(const char *spec, struct blk_config *out)
{
	memset(out, 0, sizeof(*out));
	const char *comma = strchr(spec, ',');
	size_t path_len = comma ? (size_t)(comma - spec) : strlen(spec);
	if (path_len == 0)
		return blk_spec_error(out, "missing file name (PATH[,readonly][,queues=N]"
					   "[,direct=on|off][,id=STRING][,poll_us=N])");
	if (path_len >= sizeof(out->path))
		return blk_spec_error(out, "file name too long");
	memcpy(out->path, spec, path_len);
	out->path[path_len] = '\0';
	while (comma) {
		const char *opt = comma + 1;
		comma = strchr(opt, ',');
		size_t len = comma ? (size_t)(comma - opt) : strlen(opt);
		if (len == 0)
			return blk_spec_error(out, "empty option (two commas in a row?)");
		int err = blk_parse_option(opt, len, out);
		if (err)
			return err;
	}
	return 0;
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
