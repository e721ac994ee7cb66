/* conform_symlink.c: symlink/readlink, target lengths, ELOOP chains, ENAMETOOLONG for names and paths. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/posix/conform.h"

/* readlink(2) of path: the length and the first bytes. */
static void cf_readlink(const char *name, const char *path, size_t bufsize)
{
	static char buf[PATH_MAX + 1];
	ssize_t n = readlink(path, buf, bufsize);

	if (n < 0) {
		cf_ret(name, -1, NULL);
		return;
	}
	cf_val(name, "len=%zd head=%.16s", n, n < 16 ? (buf[n] = '\0', buf) : buf);
}

static void cf_symlink_basic(void)
{
	static char target[PATH_MAX + 1];
	struct stat st;
	int fd;

	cf_mkfile("file", 0644, "content");
	cf_setup("mkdir", mkdir("dir", 0755));
	cf_mkfile("dir/inner", 0644, "in");
	CFS("symlink", symlink("file", "s"), "s");
	cf_readlink("readlink", "s", PATH_MAX);
	cf_readlink("readlink-short-buffer", "s", 3);
	CF("readlink-regular-file", readlink("file", target, sizeof(target)));
	CF("readlink-missing", readlink("missing", target, sizeof(target)));
	CF("readlink-dir", readlink("dir", target, sizeof(target)));
	CF("stat-through-symlink", stat("s", &st));
	cf_val("stat-through-symlink-type", "%s", S_ISREG(st.st_mode) ? "reg" : "other");
	cf_val("read-through-symlink", "%s", cf_content("s"));
	CF("symlink-empty-target", symlink("", "empty"));
	CF("symlink-existing-name", symlink("x", "file"));
	CF("symlink-in-missing-dir", symlink("x", "nodir/s"));
	CFS("symlink-absolute-target", symlink("/nonexistent/abs", "abs"), "abs");
	cf_readlink("readlink-absolute", "abs", PATH_MAX);
	CF("stat-dangling", stat("abs", &st));
	CFS("symlink-dotdot-target", symlink("../symlink/file", "up"), "up");
	cf_val("read-dotdot-target", "%s", cf_content("up"));
	cf_setup("symlink", symlink("dir", "sd"));
	cf_val("read-through-dir-symlink", "%s", cf_content("sd/inner"));
	CFS("lstat-trailing-slash-follows", lstat("sd/", &st), "sd/");
	CFS("create-through-dir-symlink", (fd = open("sd/new", O_CREAT | O_WRONLY, 0644)), "dir/new");
	if (fd >= 0)
		close(fd);
	fd = open("s", O_PATH | O_NOFOLLOW);
	if (fd >= 0) {
		ssize_t n = readlinkat(fd, "", target, sizeof(target));

		cf_val("readlinkat-empty-path", "%zd", n);
		close(fd);
	}
	memset(target, 't', PATH_MAX - 1);
	target[PATH_MAX - 1] = '\0';
	CFS("symlink-target-4095", symlink(target, "long"), "long");
	cf_readlink("readlink-target-4095", "long", PATH_MAX);
	target[PATH_MAX - 1] = 't';
	target[PATH_MAX] = '\0';
	CF("symlink-target-4096", symlink(target, "toolong"));
}

static void cf_symlink_loops(void)
{
	char a[16], b[16];
	struct stat st;
	int i;

	cf_mkfile("end", 0644, "end");
	cf_setup("symlink", symlink("end", "l0"));
	for (i = 1; i <= 40; i++) {
		snprintf(a, sizeof(a), "l%d", i - 1);
		snprintf(b, sizeof(b), "l%d", i);
		cf_setup("symlink chain", symlink(a, b));
	}
	CF("chain-of-40", stat("l39", &st));
	CF("chain-of-41", stat("l40", &st));
	CF("open-chain-of-41", open("l40", O_RDONLY));
	CFS("lstat-chain-of-41", lstat("l40", &st), "l40");
	cf_setup("symlink", symlink("self", "self"));
	CF("self-loop-stat", stat("self", &st));
	CF("self-loop-open-creat", open("self", O_CREAT | O_WRONLY, 0644));
	CFS("self-loop-lstat", lstat("self", &st), "self");
	cf_setup("symlink", symlink("pong", "ping"));
	cf_setup("symlink", symlink("ping", "pong"));
	CF("mutual-loop", stat("ping", &st));
	CF("loop-as-dir-component", stat("ping/x", &st));
	CF("unlink-loop", unlink("self"));
}

static void cf_symlink_lengths(void)
{
	static char path[PATH_MAX + 64];
	char name[300];
	struct stat st;
	size_t i;

	char name2[300];

	memset(name, 'x', 255);
	name[255] = '\0';
	memset(name2, 'y', 255);
	name2[255] = '\0';
	CF("symlink-name-255", symlink("t", name));
	CFS("mkdir-name-255", mkdir(name2, 0755), name2);
	name[255] = 'x';
	name[256] = '\0';
	cf_mkfile("lf", 0644, "");
	CF("symlink-name-256", symlink("t", name));
	CF("mkdir-name-256", mkdir(name, 0755));
	CF("stat-name-256", stat(name, &st));
	CF("rename-to-name-256", rename(name2, name));
	CF("link-to-name-256", link("lf", name));
	CF("unlink-name-256", unlink(name));
	/* A path of PATH_MAX bytes or more: "./" repeated is a valid path of any length. */
	for (i = 0; i + 2 < PATH_MAX + 8; i += 2)
		memcpy(path + i, "./", 2);
	path[i] = '\0';
	CF("path-longer-than-path_max", stat(path, &st));
	path[PATH_MAX - 2] = '\0'; /* 4094 bytes: resolves to "." */
	CF("path-4094-bytes", stat(path, &st));
}

static void cf_symlink_all(void)
{
	cf_symlink_basic();
	cf_symlink_loops();
	cf_symlink_lengths();
}

void cf_symlink(void)
{
	cf_in_dir("symlink", cf_symlink_all);
}
