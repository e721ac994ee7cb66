/* conform_attr.c: chmod, chown, utimensat, mknod/mkfifo/sockets, extended attributes. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "tests/posix/conform.h"

static void cf_attr_chmod(void)
{
	long long before;
	int fd;

	cf_mkfile("f", 0644, "f");
	CFS("chmod", chmod("f", 0640), "f");
	CFS("chmod-all-bits", chmod("f", 07777), "f");
	CFS("chmod-sticky-file", chmod("f", 01644), "f");
	CFS("chmod-type-bits-ignored", chmod("f", S_IFDIR | 0600), "f");
	cf_setup("symlink", symlink("f", "sl"));
	CFS("chmod-through-symlink", chmod("sl", 0604), "f");
	CFS("fchmodat-nofollow-symlink", fchmodat(AT_FDCWD, "sl", 0600, AT_SYMLINK_NOFOLLOW), "sl");
	CF("chmod-missing", chmod("missing", 0644));
	fd = open("f", O_RDONLY);
	if (fd >= 0) {
		CFS("fchmod-rdonly-fd", fchmod(fd, 0644), "f");
		close(fd);
	}
	fd = open("f", O_PATH);
	if (fd >= 0) {
		CF("fchmod-o_path-fd", fchmod(fd, 0644));
		close(fd);
	}
	before = cf_ctime("f");
	cf_tick();
	cf_setup("chmod", chmod("f", 0600));
	cf_val("chmod-ctime", "changed: %s", cf_yn(cf_ctime("f") != before));
	cf_setup("mkdir", mkdir("d", 0755));
	CFS("chmod-dir-setgid", chmod("d", 02775), "d");
	CFS("chmod-dir-sticky", chmod("d", 01777), "d");
}

static void cf_attr_chown(void)
{
	long long before;
	uid_t me = geteuid();

	cf_mkfile("o", 0644, "o");
	CFS("chown-nothing", chown("o", (uid_t)-1, (gid_t)-1), "o");
	CFS("chown-to-self", chown("o", me, (gid_t)-1), "o");
	CFS("chown-other-uid", chown("o", CF_OTHER_UID, (gid_t)-1), "o");
	CFS("chgrp-supplementary", chown("o", (uid_t)-1, CF_SUPP_GID), "o");
	CFS("chgrp-other", chown("o", (uid_t)-1, CF_OTHER_GID), "o");
	CF("chown-missing", chown("missing", me, (gid_t)-1));
	cf_mkfile("su", 04755, "su");
	CFS("chown-clears-setuid", chown("su", (uid_t)-1, (gid_t)-1), "su");
	cf_mkfile("sgx", 02755, "sg");
	CFS("chown-clears-setgid-with-group-exec", chown("sgx", (uid_t)-1, (gid_t)-1), "sgx");
	cf_mkfile("sg", 02745, "sg");
	CFS("chown-keeps-setgid-without-group-exec", chown("sg", (uid_t)-1, (gid_t)-1), "sg");
	cf_mkfile("sug", 06755, "sug");
	CFS("chgrp-clears-setuid-setgid", chown("sug", (uid_t)-1, CF_SUPP_GID), "sug");
	cf_setup("mkdir", mkdir("sgd", 02755));
	cf_setup("chmod", chmod("sgd", 02755));
	CFS("chown-dir-keeps-setgid", chown("sgd", (uid_t)-1, (gid_t)-1), "sgd");
	cf_setup("symlink", symlink("o", "ls"));
	CFS("lchown-symlink", lchown("ls", (uid_t)-1, CF_SUPP_GID), "ls");
	cf_val("lchown-target-untouched", "%s", cf_desc("o"));
	before = cf_ctime("o");
	cf_tick();
	cf_setup("chown", chown("o", (uid_t)-1, (gid_t)-1));
	cf_val("chown-ctime", "changed: %s", cf_yn(cf_ctime("o") != before));
}

static void cf_times(const char *name, const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0) {
		cf_ret(name, -1, NULL);
		return;
	}
	cf_val(name, "atime=%lld.%09ld mtime=%lld.%09ld", (long long)st.st_atim.tv_sec, st.st_atim.tv_nsec,
	       (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

static void cf_attr_times(void)
{
	struct timespec ts[2] = { { 1000000000, 500000000 }, { 1100000000, 250000000 } };
	long long before;
	int fd;

	cf_mkfile("t", 0644, "t");
	CF("utimensat", utimensat(AT_FDCWD, "t", ts, 0));
	cf_times("utimensat-values", "t");
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1] = (struct timespec){ 1200000000, 0 };
	CF("utimensat-omit-atime", utimensat(AT_FDCWD, "t", ts, 0));
	cf_times("utimensat-omit-atime-values", "t");
	ts[0] = (struct timespec){ -1, 0 };
	ts[1] = (struct timespec){ 1LL << 33, 999999999 };
	CF("utimensat-before-1970-after-2038", utimensat(AT_FDCWD, "t", ts, 0));
	cf_times("utimensat-before-1970-after-2038-values", "t");
	ts[0].tv_nsec = 1000000000;
	CF("utimensat-bad-nsec", utimensat(AT_FDCWD, "t", ts, 0));
	cf_age("t");
	ts[0].tv_nsec = ts[1].tv_nsec = UTIME_NOW;
	CF("utimensat-now", utimensat(AT_FDCWD, "t", ts, 0));
	cf_val("utimensat-now-mtime", "changed: %s", cf_yn(cf_mtime("t") != 1000000000LL * 1000000000LL));
	cf_age("t");
	CF("utimensat-null", utimensat(AT_FDCWD, "t", NULL, 0));
	cf_val("utimensat-null-mtime", "changed: %s", cf_yn(cf_mtime("t") != 1000000000LL * 1000000000LL));
	ts[0] = ts[1] = (struct timespec){ 1300000000, 0 };
	cf_setup("symlink", symlink("t", "tl"));
	CF("utimensat-symlink-nofollow", utimensat(AT_FDCWD, "tl", ts, AT_SYMLINK_NOFOLLOW));
	cf_times("utimensat-symlink-nofollow-link", "tl");
	cf_val("utimensat-symlink-nofollow-target", "mtime changed: %s",
	       cf_yn(cf_mtime("t") == 1300000000LL * 1000000000LL));
	CF("utimensat-missing", utimensat(AT_FDCWD, "missing", ts, 0));
	fd = open("t", O_RDONLY);
	if (fd >= 0) {
		ts[1] = (struct timespec){ 1400000000, 0 };
		CF("futimens-rdonly-fd", futimens(fd, ts));
		cf_times("futimens-rdonly-fd-values", "t");
		close(fd);
	}
	before = cf_ctime("t");
	cf_tick();
	cf_setup("utimensat", utimensat(AT_FDCWD, "t", ts, 0));
	cf_val("utimensat-ctime", "changed: %s", cf_yn(cf_ctime("t") != before));
}

/* The d_type readdir gives each kind of node made above. */
static void cf_list_types(void)
{
	static const char *const names[] = { "fifo", "chr", "blk", "sock", "reg", "bound" };
	char seen[128] = "";
	struct dirent *e;
	DIR *d = opendir(".");
	size_t i, o = 0;

	if (!d) {
		cf_ret("readdir-types", -1, NULL);
		return;
	}
	/* In the order of names[], whatever order readdir takes. */
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		rewinddir(d);
		while ((e = readdir(d)) != NULL)
			if (!strcmp(e->d_name, names[i]))
				o += (size_t)snprintf(seen + o, sizeof(seen) - o, "%s%s:%d", o ? " " : "",
						      names[i], e->d_type);
	}
	closedir(d);
	cf_val("readdir-types", "%s", seen);
}

static void cf_attr_nodes(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s, c;

	CFS("mkfifo", mkfifo("fifo", 0666), "fifo");
	CF("mkfifo-existing", mkfifo("fifo", 0666));
	CFS("mknod-fifo", mknod("fifo2", S_IFIFO | 0600, 0), "fifo2");
	CFS("mknod-chr", mknod("chr", S_IFCHR | 0644, makedev(1, 3)), "chr");
	CFS("mknod-blk", mknod("blk", S_IFBLK | 0600, makedev(7, 200)), "blk");
	CFS("mknod-chr-big-numbers", mknod("chrbig", S_IFCHR | 0600, makedev(4095, 1048575)), "chrbig");
	CFS("mknod-sock", mknod("sock", S_IFSOCK | 0600, 0), "sock");
	CFS("mknod-reg", mknod("reg", S_IFREG | 0640, 0), "reg");
	CFS("mknod-type-0-is-reg", mknod("reg0", 0640, 0), "reg0");
	CF("mknod-dir", mknod("dir", S_IFDIR | 0755, 0));
	CF("mknod-bad-type", mknod("bad", S_IFMT | 0644, 0));
	CF("mknod-existing", mknod("reg", S_IFREG | 0640, 0));
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "bound");
	if (s >= 0 && c >= 0) {
		CFS("bind-unix-socket", bind(s, (struct sockaddr *)&sa, sizeof(sa)), "bound");
		CF("listen", listen(s, 1));
		CF("connect-through-the-name", connect(c, (struct sockaddr *)&sa, sizeof(sa)));
		CF("bind-existing-name", bind(c, (struct sockaddr *)&sa, sizeof(sa)));
	}
	if (s >= 0)
		close(s);
	if (c >= 0)
		close(c);
	cf_list_types();
}

/* listxattr(2): the sorted names. */
static void cf_xattr_list(const char *name, const char *path)
{
	char buf[1024], out[1024];
	const char *names[64];
	ssize_t n = llistxattr(path, buf, sizeof(buf));
	size_t o = 0, k = 0, i, j;

	if (n < 0) {
		cf_ret(name, -1, NULL);
		return;
	}
	for (i = 0; i < (size_t)n && k < 64; i += strlen(buf + i) + 1)
		names[k++] = buf + i;
	for (i = 1; i < k; i++) /* insertion sort: a handful of names */
		for (j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			const char *t = names[j];

			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	out[0] = '\0';
	for (i = 0; i < k; i++)
		o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%s", i ? " " : "", names[i]);
	cf_val(name, "[%s]", out);
}

/* getxattr(2): the value's length and bytes. */
static void cf_xattr_get(const char *name, const char *path, const char *attr, size_t size)
{
	char v[512];
	ssize_t n = lgetxattr(path, attr, size ? v : NULL, size);

	if (n < 0)
		cf_ret(name, -1, NULL);
	else
		cf_val(name, "len=%zd%s%.*s", n, size ? " value=" : "", size ? (int)n : 0, v);
}

static void cf_attr_xattr(void)
{
	static char big[65537];
	static const struct cf_acl_entry acl[] = { { 0x01, 6, CF_ACL_NOID }, { 0x02, 4, CF_OTHER_UID },
						   { 0x04, 4, CF_ACL_NOID }, { 0x10, 4, CF_ACL_NOID },
						   { 0x20, 0, CF_ACL_NOID } };
	char name[300];

	cf_mkfile("x", 0644, "x");
	cf_setup("symlink", symlink("x", "xl"));
	CF("set-trusted", lsetxattr("x", "trusted.a", "one", 3, 0));
	cf_xattr_get("get-trusted", "x", "trusted.a", sizeof(name));
	cf_xattr_get("get-trusted-size-probe", "x", "trusted.a", 0);
	cf_xattr_get("get-trusted-small-buffer", "x", "trusted.a", 1);
	CF("set-trusted-create-existing", lsetxattr("x", "trusted.a", "two", 3, XATTR_CREATE));
	CF("set-trusted-replace-missing", lsetxattr("x", "trusted.b", "two", 3, XATTR_REPLACE));
	CF("set-trusted-replace", lsetxattr("x", "trusted.a", "three", 5, XATTR_REPLACE));
	cf_xattr_get("get-trusted-replaced", "x", "trusted.a", sizeof(name));
	CF("set-trusted-empty-value", lsetxattr("x", "trusted.e", "", 0, 0));
	cf_xattr_get("get-trusted-empty-value", "x", "trusted.e", sizeof(name));
	cf_xattr_list("list", "x");
	CF("remove-trusted", lremovexattr("x", "trusted.a"));
	CF("remove-trusted-missing", lremovexattr("x", "trusted.a"));
	cf_xattr_get("get-missing", "x", "trusted.a", sizeof(name));
	CF("set-user", lsetxattr("x", "user.a", "u", 1, 0));
	cf_xattr_get("get-user", "x", "user.a", sizeof(name));
	CF("set-user-on-symlink", lsetxattr("xl", "user.a", "u", 1, 0));
	CF("set-trusted-on-symlink", lsetxattr("xl", "trusted.l", "l", 1, 0));
	cf_xattr_list("list-symlink", "xl");
	CF("set-no-namespace", lsetxattr("x", "plain", "p", 1, 0));
	CF("set-unknown-namespace", lsetxattr("x", "bogus.a", "p", 1, 0));
	CF("set-empty-name", lsetxattr("x", "", "p", 1, 0));
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	memcpy(name, "trusted.", 8);
	CF("set-name-too-long", lsetxattr("x", name, "p", 1, 0));
	CF("set-value-too-big", lsetxattr("x", "trusted.big", big, sizeof(big), 0));
	CF("set-missing-file", lsetxattr("missing", "trusted.a", "p", 1, 0));
	cf_xattr_get("get-acl-none", "x", "system.posix_acl_access", sizeof(name));
	CF("set-acl-named-user", cf_set_acl("x", "system.posix_acl_access", acl, 5));
	cf_xattr_get("get-acl-size", "x", "system.posix_acl_access", 0);
	cf_val("acl-mode", "%s", cf_desc("x"));
}

void cf_attr(void)
{
	cf_in_dir("chmod", cf_attr_chmod);
	cf_in_dir("chown", cf_attr_chown);
	cf_in_dir("times", cf_attr_times);
	cf_in_dir("nodes", cf_attr_nodes);
	cf_in_dir("xattr", cf_attr_xattr);
}
