/* conform_util.c: the conformance transcript: line prefixes, results, file descriptions, setup. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "tests/posix/conform.h"

bool cf_root;
const char *cf_other;
static const char *cf_phase_name = "?";
static const char *cf_group_name = "?";

void cf_phase(const char *phase)
{
	cf_phase_name = phase;
}

void cf_group(const char *group)
{
	cf_group_name = group;
}

const char *cf_errname(int err)
{
	static char buf[16];
	const char *n = strerrorname_np(err);

	if (n)
		return n;
	snprintf(buf, sizeof(buf), "E%d", err);
	return buf;
}

static void cf_prefix(const char *name)
{
	printf("%s/%s/%s: ", cf_phase_name, cf_group_name, name);
}

long cf_ret(const char *name, long rc, const char *path)
{
	int err = errno;

	cf_prefix(name);
	fputs(rc < 0 ? cf_errname(err) : "ok", stdout);
	if (path)
		printf(" -> %s", cf_desc(path));
	putchar('\n');
	fflush(stdout);
	errno = err;
	return rc;
}

void cf_val(const char *name, const char *fmt, ...)
{
	va_list ap;

	cf_prefix(name);
	fputs("ok ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static const char *cf_type(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG:
		return "reg";
	case S_IFDIR:
		return "dir";
	case S_IFLNK:
		return "lnk";
	case S_IFIFO:
		return "fifo";
	case S_IFSOCK:
		return "sock";
	case S_IFCHR:
		return "chr";
	case S_IFBLK:
		return "blk";
	default:
		return "?";
	}
}

const char *cf_desc(const char *path)
{
	static char buf[128];
	struct stat st;
	int n;

	if (lstat(path, &st) < 0)
		return cf_errname(errno);
	n = snprintf(buf, sizeof(buf), "%s %04o n%lu %u:%u", cf_type(st.st_mode),
		     (unsigned int)(st.st_mode & 07777), (unsigned long)st.st_nlink,
		     (unsigned int)st.st_uid, (unsigned int)st.st_gid);
	/* A directory's size is the file system's own business (entries, blocks): not compared. */
	if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
		snprintf(buf + n, sizeof(buf) - (size_t)n, " s%lld", (long long)st.st_size);
	else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		snprintf(buf + n, sizeof(buf) - (size_t)n, " %u:%u", major(st.st_rdev),
			 minor(st.st_rdev));
	return buf;
}

const char *cf_content(const char *path)
{
	static char out[4 * 64 + 3];
	unsigned char b[64];
	size_t o = 0;
	ssize_t n, i;
	int fd = open(path, O_RDONLY | O_NONBLOCK);

	if (fd < 0)
		return cf_errname(errno);
	n = read(fd, b, sizeof(b));
	close(fd);
	if (n < 0)
		return cf_errname(errno);
	out[o++] = '"';
	for (i = 0; i < n; i++) {
		if (b[i] >= 0x20 && b[i] < 0x7f && b[i] != '"' && b[i] != '\\')
			out[o++] = (char)b[i];
		else
			o += (size_t)snprintf(out + o, sizeof(out) - o, "\\x%02x", b[i]);
	}
	out[o++] = '"';
	out[o] = '\0';
	return out;
}

long cf_setup(const char *what, long rc)
{
	int err = errno;

	if (rc < 0) {
		printf("%s/%s/setup %s: %s\n", cf_phase_name, cf_group_name, what, cf_errname(err));
		fflush(stdout);
	}
	errno = err;
	return rc;
}

int cf_mkfile(const char *path, mode_t mode, const char *data)
{
	size_t len = strlen(data);
	int fd = (int)cf_setup(path, open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600));

	if (fd < 0)
		return -1;
	if (cf_setup(path, write(fd, data, len)) != (long)len || cf_setup(path, fchmod(fd, mode)) < 0) {
		close(fd);
		return -1;
	}
	return (int)cf_setup(path, close(fd));
}

void cf_in_dir(const char *dir, void (*fn)(void))
{
	cf_group(dir);
	if (cf_setup("mkdir", mkdir(dir, 0755)) < 0 || cf_setup("chmod", chmod(dir, 0755)) < 0 ||
	    cf_setup("chdir", chdir(dir)) < 0)
		return;
	fn();
	cf_setup("chdir ..", chdir(".."));
}

void cf_tick(void)
{
	/* Coarse file system clocks tick every 1-10 ms: 30 ms is several ticks. Spun on the
	   monotonic clock, not slept: a guest whose timer interrupts stall (seen in the nested lab
	   under load) would never wake from a nanosleep, while its clock source still runs. */
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do
		clock_gettime(CLOCK_MONOTONIC, &now);
	while ((now.tv_sec - start.tv_sec) * 1000000000LL + (now.tv_nsec - start.tv_nsec) <
	       30 * 1000000LL);
}

long long cf_mtime(const char *path)
{
	struct stat st;

	return lstat(path, &st) < 0 ? 0 : (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}

long long cf_ctime(const char *path)
{
	struct stat st;

	return lstat(path, &st) < 0 ? 0 : (long long)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
}

void cf_age(const char *path)
{
	const struct timespec ts[2] = { { .tv_sec = 1000000000 }, { .tv_sec = 1000000000 } };

	cf_setup("age", utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW));
}

const char *cf_yn(bool b)
{
	return b ? "yes" : "no";
}

int cf_set_acl(const char *path, const char *name, const struct cf_acl_entry *e, unsigned int n)
{
	unsigned char buf[4 + 8 * 16];
	uint32_t version = 2;
	unsigned int i;

	if (n > 16) {
		errno = EINVAL;
		return -1;
	}
	memcpy(buf, &version, 4);
	for (i = 0; i < n; i++) {
		uint16_t tag = e[i].tag, perm = e[i].perm;
		uint32_t id = e[i].id;

		memcpy(buf + 4 + 8 * i, &tag, 2);
		memcpy(buf + 6 + 8 * i, &perm, 2);
		memcpy(buf + 8 + 8 * i, &id, 4);
	}
	return setxattr(path, name, buf, 4 + 8 * n, 0);
}
