/* test_fs_policy.c: what a hostile guest may not do to the host through a share: open FIFOs and
   devices by CREATE, make device nodes or setuid files, touch trusted.* and security.* xattrs; and
   that killpriv works for an unprivileged ringvm. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "devices/fs/fs_server.h"
#include "devices/fs/virtio_fs.h"
#include "tests/support/fs_call.h"
#include "tests/support/spec.h"
#include "tests/support/tree.h"
#include "tests/unit/tap.h"

static char root[64];
static struct fs_server srv;
static struct fsc c;

static const char *hp(const char *rel)
{
	return fsc_path(root, rel);
}

/* A fresh server on root with the given policy, INIT done, requests as uid 0. */
static int server(bool dev, bool suid, enum fs_xattr_policy xattr)
{
	int err = fs_server_create(&srv, root, false, FS_CACHE_AUTO, 4096);

	if (err)
		return err;
	srv.allow_dev = dev;
	srv.allow_suid = suid;
	srv.xattr = xattr;
	err = fsc_open(&c, &srv);
	if (err)
		return err;
	c.uid = c.gid = 0;
	return fsc_init(&c, 0);
}

static void server_end(void)
{
	fsc_close(&c);
	fs_server_destroy(&srv);
}

/* --- CREATE over an existing FIFO --- */

static pthread_t writer;
static volatile int writer_opened;
static pid_t writer_tid;

static void *fifo_writer(void *arg)
{
	int fd;

	writer_tid = (pid_t)syscall(SYS_gettid);
	fd = open(arg, O_WRONLY | O_CLOEXEC); /* blocks until a reader appears */
	writer_opened = 1;
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* True while thread tid sits in a system call number nr (/proc/self/task/TID/syscall). */
static bool in_syscall(pid_t tid, long nr)
{
	char path[64], buf[64];
	long cur = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	if (sscanf(buf, "%ld", &cur) != 1)
		return false;
	return cur == nr;
}

static void test_create_fifo(void)
{
	char ev[4096];
	ssize_t n;
	bool opened = false;
	int in, rd, spins = 0;

	TAP_CHECK(mkfifo(hp("fifo"), 0666) == 0, "host makes a FIFO in the share");
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	TAP_CHECK(in >= 0 && inotify_add_watch(in, hp("fifo"), IN_OPEN) >= 0,
		  "watch the FIFO for opens");
	TAP_CHECK(pthread_create(&writer, NULL, fifo_writer, (void *)(uintptr_t)hp("fifo")) == 0,
		  "a host thread opens the FIFO for writing");
	/* Wait (not a verdict: only until it is there) for the writer to block in openat. */
	while ((!writer_tid || !in_syscall(writer_tid, SYS_openat)) && spins++ < 2000000)
		sched_yield();
	TAP_CHECK(writer_tid && in_syscall(writer_tid, SYS_openat) && !writer_opened,
		  "the writer is blocked in open, waiting for a reader");
	TAP_CHECK(fsc_create(&c, 1, "fifo", O_RDWR, 0644) == -EACCES,
		  "guest CREATE of the FIFO's name: refused");
	TAP_CHECK(fsc_create(&c, 1, "fifo", O_RDONLY | O_TRUNC, 0644) == -EACCES,
		  "guest CREATE|O_TRUNC of the FIFO's name: refused");
	/* Any open of the FIFO (O_PATH aside) queues IN_OPEN before open() returns. */
	while ((n = read(in, ev, sizeof(ev))) > 0)
		opened = true;
	TAP_CHECK(!opened, "ringvm never opened the FIFO (no IN_OPEN event)");
	TAP_CHECK(!writer_opened && in_syscall(writer_tid, SYS_openat),
		  "the host writer is still blocked: no reader ever appeared");
	/* Let it go: a reader of our own. */
	rd = open(hp("fifo"), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	pthread_join(writer, NULL);
	TAP_CHECK(rd >= 0 && writer_opened, "the writer ends once we open it for reading");
	if (rd >= 0)
		close(rd);
	close(in);
}

static void test_create_existing(void)
{
	struct stat st;
	int64_t fh;
	int fd = open(hp("reg"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);

	TAP_CHECK(fd >= 0 && write(fd, "data", 4) == 4, "host file with 4 bytes");
	if (fd >= 0)
		close(fd);
	fh = fsc_create(&c, 1, "reg", O_RDWR, 0600);
	TAP_CHECK(fh >= 0 && stat(hp("reg"), &st) == 0 && st.st_size == 4 &&
			  (st.st_mode & 07777) == 0644,
		  "CREATE of an existing file opens it, mode and data untouched");
	fh = fsc_create(&c, 1, "reg", O_RDWR | O_TRUNC, 0600);
	TAP_CHECK(fh >= 0 && stat(hp("reg"), &st) == 0 && st.st_size == 0,
		  "CREATE|O_TRUNC of an existing file truncates it");
	TAP_CHECK(fsc_create(&c, 1, "reg", O_RDWR | O_EXCL, 0600) == -EEXIST,
		  "CREATE|O_EXCL of an existing file: EEXIST");
	TAP_CHECK(mknod(hp("null"), S_IFCHR | 0666, makedev(1, 3)) == 0 &&
			  fsc_create(&c, 1, "null", O_WRONLY, 0600) == -EACCES,
		  "CREATE of an existing device node's name: refused, never opened");
}

/* --- device nodes and setuid/setgid bits --- */

static void test_dev_suid(void)
{
	struct fuse_setattr_in sa = { .valid = FATTR_MODE, .mode = 06755 };
	struct stat st;
	int64_t ino;

	TAP_CHECK(fsc_mknod(&c, 1, "mem", S_IFCHR | 0600, (1 << 8) | 1) == -EPERM &&
			  lstat(hp("mem"), &st) != 0,
		  "MKNOD of char 1:1 (/dev/mem): EPERM, nothing on the host");
	TAP_CHECK(fsc_mknod(&c, 1, "blk", S_IFBLK | 0600, 254 << 8) == -EPERM &&
			  lstat(hp("blk"), &st) != 0,
		  "MKNOD of block 254:0: EPERM, nothing on the host");
	TAP_CHECK(fsc_mknod(&c, 1, "pipe", S_IFIFO | 0600, 0) > 0, "MKNOD of a FIFO still works");
	TAP_CHECK(fsc_create(&c, 1, "suid", O_RDWR, 04755) >= 0 && stat(hp("suid"), &st) == 0 &&
			  (st.st_mode & 07777) == 0755,
		  "CREATE mode 4755: setuid stripped on the host");
	TAP_CHECK(fsc_mknod(&c, 1, "sgid", S_IFREG | 02755, 0) > 0 &&
			  stat(hp("sgid"), &st) == 0 && (st.st_mode & 07777) == 0755,
		  "MKNOD S_IFREG mode 2755: setgid stripped");
	ino = fsc_lookup(&c, 1, "suid");
	TAP_CHECK(ino > 0 && fsc_call(&c, FUSE_SETATTR, (uint64_t)ino, &sa, sizeof(sa), NULL, NULL) == 0 &&
			  stat(hp("suid"), &st) == 0 && (st.st_mode & 07777) == 0755,
		  "SETATTR mode 6755: setuid and setgid stripped");
	{
		struct fuse_mkdir_in md = { .mode = 0775 };
		struct fuse_setattr_in ds = { .valid = FATTR_MODE, .mode = 02775 };
		int64_t d = fsc_call(&c, FUSE_MKDIR, 1, &md, sizeof(md), "gdir", NULL) ? -1 : fsc_lookup(&c, 1, "gdir");
		TAP_CHECK(d > 0 && fsc_call(&c, FUSE_SETATTR, (uint64_t)d, &ds, sizeof(ds), NULL, NULL) == 0 &&
				  stat(hp("gdir"), &st) == 0 && (st.st_mode & 07777) == 02775,
			  "SETATTR 2775 of a directory keeps setgid (group inheritance only)");
	}
}

static void test_dev_suid_allowed(void)
{
	struct stat st;

	TAP_CHECK(fsc_mknod(&c, 1, "null2", S_IFCHR | 0600, (1 << 8) | 3) > 0 &&
			  lstat(hp("null2"), &st) == 0 && S_ISCHR(st.st_mode) &&
			  st.st_rdev == makedev(1, 3),
		  "with dev: MKNOD of char 1:3 makes it");
	TAP_CHECK(fsc_create(&c, 1, "suid2", O_RDWR, 04755) >= 0 && stat(hp("suid2"), &st) == 0 &&
			  (st.st_mode & 07777) == 04755,
		  "with suid: CREATE mode 4755 keeps setuid");
}

/* --- extended attributes --- */

static bool host_has_xattr(const char *path, const char *name)
{
	return getxattr(path, name, NULL, 0) >= 0;
}

/* security.capability value for cap_setuid+ep (VFS_CAP_REVISION_2). */
static const char fcap[] = { 0x01, 0x00, 0x00, 0x02, (char)0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };

static int set_fcap(uint64_t nodeid)
{
	unsigned char b[256];
	struct fuse_setxattr_in in = { .size = sizeof(fcap) };
	const char *name = "security.capability";

	memcpy(b, &in, sizeof(in));
	memcpy(b + sizeof(in), name, strlen(name) + 1);
	memcpy(b + sizeof(in) + strlen(name) + 1, fcap, sizeof(fcap));
	return fsc_call(&c, FUSE_SETXATTR, nodeid, b, sizeof(in) + strlen(name) + 1 + sizeof(fcap),
			NULL, NULL);
}

static void test_xattr_default(void)
{
	int fd = open(hp("rootfile"), O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
	char list[1024];
	int64_t ino;
	uint32_t len;

	if (fd >= 0)
		close(fd);
	/* trusted.* is supported by the host file system (root sets it directly). */
	TAP_CHECK(setxattr(hp("rootfile"), "trusted.host", "h", 1, 0) == 0,
		  "host root sets trusted.host on a root-owned file");
	ino = fsc_lookup(&c, 1, "rootfile");
	TAP_CHECK(ino > 0, "LOOKUP rootfile");
	c.uid = c.gid = 1000;
	TAP_CHECK(fsc_setxattr(&c, (uint64_t)ino, "trusted.evil", "x") != 0 &&
			  !host_has_xattr(hp("rootfile"), "trusted.evil"),
		  "uid 1000: SETXATTR trusted.evil refused, host unchanged");
	TAP_CHECK(set_fcap((uint64_t)ino) != 0 &&
			  !host_has_xattr(hp("rootfile"), "security.capability"),
		  "uid 1000: SETXATTR security.capability refused, host unchanged");
	TAP_CHECK(fsc_removexattr(&c, (uint64_t)ino, "trusted.host") != 0 &&
			  host_has_xattr(hp("rootfile"), "trusted.host"),
		  "uid 1000: REMOVEXATTR trusted.host refused, host unchanged");
	c.uid = c.gid = 0;
	TAP_CHECK(fsc_setxattr(&c, (uint64_t)ino, "trusted.evil", "x") == -EOPNOTSUPP &&
			  !host_has_xattr(hp("rootfile"), "trusted.evil"),
		  "default policy: even guest root cannot set trusted.*");
	TAP_CHECK(set_fcap((uint64_t)ino) == -EOPNOTSUPP &&
			  !host_has_xattr(hp("rootfile"), "security.capability"),
		  "default policy: even guest root cannot set security.capability");
	TAP_CHECK(fsc_setxattr(&c, (uint64_t)ino, "user.ok", "v") == 0 &&
			  host_has_xattr(hp("rootfile"), "user.ok"),
		  "default policy: user.* passes");
	{
		struct fuse_getxattr_in gi = { .size = 64 };

		TAP_CHECK(fsc_call(&c, FUSE_GETXATTR, (uint64_t)ino, &gi, sizeof(gi), "trusted.host",
				   NULL) == -ENODATA,
			  "default policy: GETXATTR trusted.host is ENODATA");
		gi.size = sizeof(list);
		TAP_CHECK(fsc_call(&c, FUSE_LISTXATTR, (uint64_t)ino, &gi, sizeof(gi), NULL, NULL) == 0,
			  "LISTXATTR answers");
		len = (uint32_t)(c.rep_len - sizeof(struct fuse_out_header));
		memcpy(list, fsc_body(&c), len < sizeof(list) ? len : sizeof(list));
		TAP_CHECK(len == sizeof("user.ok") && !memcmp(list, "user.ok", sizeof("user.ok")),
			  "LISTXATTR shows user.ok only, trusted.host hidden");
		gi.size = 0;
		TAP_CHECK(fsc_call(&c, FUSE_LISTXATTR, (uint64_t)ino, &gi, sizeof(gi), NULL, NULL) == 0 &&
				  ((struct fuse_getxattr_out *)fsc_body(&c))->size == sizeof("user.ok"),
			  "LISTXATTR size query counts the filtered list");
	}
}

static void test_xattr_all(void)
{
	int64_t ino = fsc_lookup(&c, 1, "rootfile");

	c.uid = c.gid = 1000;
	TAP_CHECK(ino > 0 && set_fcap((uint64_t)ino) == -EPERM &&
			  !host_has_xattr(hp("rootfile"), "security.capability"),
		  "xattr=all: uid 1000 still cannot set security.capability");
	TAP_CHECK(fsc_setxattr(&c, (uint64_t)ino, "trusted.evil", "x") == -EPERM,
		  "xattr=all: uid 1000 cannot set trusted.*");
	c.uid = c.gid = 0;
	TAP_CHECK(fsc_setxattr(&c, (uint64_t)ino, "security.ringvm", "x") == 0 &&
			  host_has_xattr(hp("rootfile"), "security.ringvm"),
		  "xattr=all: guest root sets security.*");
}

static void test_xattr_none(void)
{
	int64_t ino = fsc_lookup(&c, 1, "rootfile");

	TAP_CHECK(ino > 0 && fsc_setxattr(&c, (uint64_t)ino, "user.x", "x") == -EOPNOTSUPP,
		  "xattr=none: even user.* is refused");
}

/* --- killpriv with ringvm unprivileged --- */

/* In a child as uid/gid 65534 (no capabilities): a server, a file of its own, then a write, an
   O_TRUNC open, a truncate and an append, each asking to kill suid/sgid. Exit code: bit per
   failure. */
static int killpriv_child(void)
{
	struct fuse_setattr_in sa = { .valid = FATTR_SIZE | FATTR_KILL_SUIDGID, .size = 2 };
	struct fuse_open_in oi = { .flags = O_WRONLY | O_TRUNC,
				   .open_flags = FUSE_OPEN_KILL_SUIDGID };
	int64_t fh, ino;
	int fail = 0;

	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return 0x80;
	if (server(false, false, FS_XATTR_USER) || srv.as_root)
		return 0x40;
	c.uid = c.gid = 65534;
	fh = fsc_create(&c, 1, "mine", O_RDWR, 0644);
	ino = fsc_lookup(&c, 1, "mine");
	if (fh < 0 || ino <= 0)
		return 0x20;
	if (fsc_write(&c, (uint64_t)ino, (uint64_t)fh, 0, "hello", FUSE_WRITE_KILL_SUIDGID) != 5)
		fail |= 1;
	if (fsc_call(&c, FUSE_OPEN, (uint64_t)ino, &oi, sizeof(oi), NULL, NULL) != 0)
		fail |= 2;
	if (fsc_call(&c, FUSE_SETATTR, (uint64_t)ino, &sa, sizeof(sa), NULL, NULL) != 0)
		fail |= 4;
	if (fsc_write(&c, (uint64_t)ino, (uint64_t)fh, 2, "++", FUSE_WRITE_KILL_SUIDGID) != 2)
		fail |= 8;
	server_end();
	return fail;
}

static void test_killpriv_unprivileged(void)
{
	char dir[128];
	struct stat st;
	char buf[16] = { 0 };
	pid_t pid;
	int status = -1, fd;

	snprintf(dir, sizeof(dir), "%s/nobody", root);
	TAP_CHECK(mkdir(dir, 0755) == 0 && chown(dir, 65534, 65534) == 0,
		  "a directory owned by uid 65534");
	snprintf(root + strlen(root), sizeof(root) - strlen(root), "/nobody");
	pid = fork();
	if (pid == 0)
		_exit(killpriv_child());
	waitpid(pid, &status, 0);
	root[strlen(root) - strlen("/nobody")] = '\0';
	TAP_CHECK(WIFEXITED(status) && (WEXITSTATUS(status) & 0xe0) == 0,
		  "unprivileged server set up as uid 65534");
	TAP_CHECK(WIFEXITED(status) && !(WEXITSTATUS(status) & 1),
		  "unprivileged: WRITE with KILL_SUIDGID of one's own file succeeds");
	TAP_CHECK(WIFEXITED(status) && !(WEXITSTATUS(status) & 2),
		  "unprivileged: OPEN O_TRUNC with KILL_SUIDGID succeeds");
	TAP_CHECK(WIFEXITED(status) && !(WEXITSTATUS(status) & 4),
		  "unprivileged: SETATTR size with KILL_SUIDGID succeeds");
	TAP_CHECK(WIFEXITED(status) && !(WEXITSTATUS(status) & 8),
		  "unprivileged: appending WRITE with KILL_SUIDGID succeeds");
	fd = open(hp("nobody/mine"), O_RDONLY | O_CLOEXEC);
	TAP_CHECK(fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == 65534 &&
			  read(fd, buf, sizeof(buf)) == 4 && !memcmp(buf, "\0\0++", 4),
		  "the file holds what the writes left (truncated to 2, then '++' at 2)");
	if (fd >= 0)
		close(fd);
}

static void test_parse(void)
{
	struct fs_config fc;
	const char *err = NULL;

	TAP_CHECK(spec_fs_config("/a:/b", &fc, &err) == 0 && !fc.dev && !fc.suid &&
			  fc.xattr == FS_XATTR_USER,
		  "--share defaults: no dev, no suid, xattr=user");
	TAP_CHECK(spec_fs_config("/a:/b,dev,suid,xattr=all", &fc, &err) == 0 && fc.dev && fc.suid &&
			  fc.xattr == FS_XATTR_ALL,
		  "--share ,dev,suid,xattr=all");
	TAP_CHECK(spec_fs_config("/a:/b,xattr=none", &fc, &err) == 0 && fc.xattr == FS_XATTR_NONE &&
			  spec_fs_config("/a:/b,xattr=security", &fc, &err) == 0 &&
			  fc.xattr == FS_XATTR_SECURITY,
		  "xattr=none, xattr=security");
	err = NULL;
	TAP_CHECK(spec_fs_config("/a:/b,xattr=trusted", &fc, &err) == -EINVAL && err &&
			  strstr(err, "xattr="),
		  "xattr=trusted refused with a one-line reason");
	TAP_CHECK(spec_fs_config("/a:/b,xattr=", &fc, &err) == -EINVAL &&
			  spec_fs_config("/a:/b,devs", &fc, &err) == -EINVAL,
		  "empty xattr= and unknown devs refused");
}

int main(void)
{
	test_parse();
	if (geteuid() != 0) {
		printf("ok 1 # SKIP needs root (device nodes, trusted.* xattrs, a second uid)\n1..1\n");
		return 0;
	}
	strcpy(root, "/var/tmp/ringvm-fspol-XXXXXX");
	if (!mkdtemp(root) || chmod(root, 0755)) {
		perror("mkdtemp");
		return 1;
	}
	TAP_CHECK(server(false, false, FS_XATTR_USER) == 0, "server with the default policy");
	test_create_fifo();
	test_create_existing();
	test_dev_suid();
	test_xattr_default();
	server_end();
	TAP_CHECK(server(true, true, FS_XATTR_ALL) == 0, "server with dev, suid, xattr=all");
	test_dev_suid_allowed();
	test_xattr_all();
	server_end();
	TAP_CHECK(server(false, false, FS_XATTR_NONE) == 0, "server with xattr=none");
	test_xattr_none();
	server_end();
	test_killpriv_unprivileged();
	(void)tree_discard(root);
	return tap_done();
}
