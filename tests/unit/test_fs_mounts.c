/* test_fs_mounts.c: pseudo file systems inside a share are never served; mount points are crossed
   with inode numbers kept apart per host file system. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/fs/fs_server.h"
#include "tests/support/fs_call.h"
#include "tests/support/tree.h"
#include "tests/unit/tap.h"

static char root[64];
static struct fs_server srv;
static struct fsc c;

static const char *hp(const char *rel)
{
	return fsc_path(root, rel);
}

static int touch(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* The share: proc at proc/, sysfs at sys/, /proc/kmsg bound onto kmsg, two fresh tmpfs at a/ and
   b/ each holding f (equal st_ino: each tmpfs numbers its inodes from the same start). */
static bool build_share(void)
{
	bool ok = mkdir(hp("proc"), 0755) == 0 && mkdir(hp("sys"), 0755) == 0 &&
		  mkdir(hp("a"), 0755) == 0 && mkdir(hp("b"), 0755) == 0 &&
		  mkdir(hp("plain"), 0755) == 0 && touch(hp("kmsg")) == 0;

	ok = ok && mount("proc", hp("proc"), "proc", 0, NULL) == 0;
	ok = ok && mount("sysfs", hp("sys"), "sysfs", 0, NULL) == 0;
	ok = ok && mount("/proc/kmsg", hp("kmsg"), NULL, MS_BIND, NULL) == 0;
	ok = ok && mount("tmpfs", hp("a"), "tmpfs", 0, "size=1m") == 0;
	ok = ok && mount("tmpfs", hp("b"), "tmpfs", 0, "size=1m") == 0;
	return ok && touch(hp("a/f")) == 0 && touch(hp("b/f")) == 0;
}

static int server(uint64_t init_flags)
{
	int err = fs_server_create(&srv, root, false, FS_CACHE_AUTO, 4096);

	if (err)
		return err;
	err = fsc_open(&c, &srv);
	return err ? err : fsc_init(&c, init_flags);
}

static void server_end(void)
{
	fsc_close(&c);
	fs_server_destroy(&srv);
}

/* LOOKUP name under parent; *attr gets the entry's attributes. */
static int64_t lookup_attr(uint64_t parent, const char *name, struct fuse_attr *attr)
{
	int64_t n = fsc_lookup(&c, parent, name);

	if (n > 0)
		memcpy(attr, &((struct fuse_entry_out *)fsc_body(&c))->attr, sizeof(*attr));
	return n;
}

/* The stubs where procfs and sysfs are mounted: stat-able (a guest mounts its own over them),
   nothing more. */
static void test_pseudo_stub(const char *name, const char *inside)
{
	struct fuse_setattr_in sa = { .valid = FATTR_MODE, .mode = 0777 };
	struct fuse_mkdir_in md = { .mode = 0755 };
	struct fuse_getxattr_in gx = { .size = 0 };
	struct fuse_attr a;
	char what[160];
	int64_t n = lookup_attr(1, name, &a);

	snprintf(what, sizeof(what), "LOOKUP of the %s mount point: a stub directory", name);
	TAP_CHECK(n > 0 && (a.mode & S_IFMT) == S_IFDIR, what);
	snprintf(what, sizeof(what), "%s stub: OPENDIR refused (no listing of the host's %s)", name, name);
	TAP_CHECK(n > 0 && fsc_opendir(&c, (uint64_t)n) == -EACCES, what);
	snprintf(what, sizeof(what), "%s stub: LOOKUP of %s inside refused", name, inside);
	TAP_CHECK(n > 0 && fsc_lookup(&c, (uint64_t)n, inside) == -EACCES, what);
	snprintf(what, sizeof(what), "%s stub: SETATTR, MKDIR, GETXATTR refused", name);
	TAP_CHECK(n > 0 &&
			  fsc_call(&c, FUSE_SETATTR, (uint64_t)n, &sa, sizeof(sa), NULL, NULL) == -EACCES &&
			  fsc_call(&c, FUSE_MKDIR, (uint64_t)n, &md, sizeof(md), "x", NULL) == -EACCES &&
			  fsc_call(&c, FUSE_LISTXATTR, (uint64_t)n, &gx, sizeof(gx), NULL, NULL) == -EACCES,
		  what);
}

static void test_pseudo(void)
{
	struct fuse_attr a;
	struct fs_server s2;

	test_pseudo_stub("proc", "self");
	test_pseudo_stub("sys", "kernel");
	TAP_CHECK(lookup_attr(1, "kmsg", &a) == -EACCES,
		  "LOOKUP of /proc/kmsg bound onto a file of the share: EACCES");
	TAP_CHECK(fs_server_create(&s2, hp("proc"), true, FS_CACHE_AUTO, 64) == -EACCES,
		  "a share whose directory is on procfs is refused");
	TAP_CHECK(fs_server_create(&s2, hp("sys/kernel"), true, FS_CACHE_AUTO, 64) == -EACCES,
		  "a share whose directory is on sysfs is refused");
	{
		struct fuse_read_in rd = { .size = 4096 };
		int64_t fh = fsc_opendir(&c, 1);
		unsigned char *p, *end;
		bool leaked = false;
		int n = 0;

		rd.fh = (uint64_t)fh;
		TAP_CHECK(fh >= 0 && fsc_call(&c, FUSE_READDIRPLUS, 1, &rd, sizeof(rd), NULL, NULL) == 0,
			  "READDIRPLUS of the share's root");
		p = fsc_body(&c);
		end = c.rep + c.rep_len;
		while (p + FUSE_NAME_OFFSET_DIRENTPLUS <= end) {
			struct fuse_direntplus dp;

			memcpy(&dp, p, sizeof(dp));
			if (dp.dirent.namelen == 4 && !memcmp(p + FUSE_NAME_OFFSET_DIRENTPLUS, "kmsg", 4)) {
				n++;
				leaked |= dp.entry_out.nodeid != 0;
			}
			p += FUSE_DIRENT_ALIGN(FUSE_NAME_OFFSET_DIRENTPLUS + dp.dirent.namelen);
		}
		TAP_CHECK(n == 1 && !leaked, "READDIRPLUS lists kmsg by name only, with no inode");
	}
}

/* d_ino of `name` in a READDIR of directory nodeid dir; 0 when not listed. */
static uint64_t readdir_ino(uint64_t dir, const char *name)
{
	struct fuse_read_in rd = { .size = 4096 };
	int64_t fh = fsc_opendir(&c, dir);
	unsigned char *p, *end;
	uint64_t ino = 0;

	rd.fh = (uint64_t)fh;
	if (fh < 0 || fsc_call(&c, FUSE_READDIR, dir, &rd, sizeof(rd), NULL, NULL) != 0)
		return 0;
	p = fsc_body(&c);
	end = c.rep + c.rep_len;
	while (p + FUSE_NAME_OFFSET <= end) {
		struct fuse_dirent de;

		memcpy(&de, p, sizeof(de));
		if (de.namelen == strlen(name) && !memcmp(p + FUSE_NAME_OFFSET, name, de.namelen))
			ino = de.ino;
		p += FUSE_DIRENT_ALIGN(FUSE_NAME_OFFSET + de.namelen);
	}
	return ino;
}

static void test_submounts(void)
{
	struct fuse_attr aa, ab, fa, fb, plain, ga;
	struct stat sa, sb, sp;
	int64_t na, nb, nfa, nfb;

	TAP_CHECK(stat(hp("a/f"), &sa) == 0 && stat(hp("b/f"), &sb) == 0 && sa.st_ino == sb.st_ino &&
			  sa.st_dev != sb.st_dev,
		  "host: a/f and b/f have equal st_ino on two file systems");
	na = lookup_attr(1, "a", &aa);
	nb = lookup_attr(1, "b", &ab);
	TAP_CHECK(na > 0 && nb > 0 && aa.ino != ab.ino, "mount points a and b are crossed, distinct inodes");
	nfa = lookup_attr((uint64_t)na, "f", &fa);
	nfb = lookup_attr((uint64_t)nb, "f", &fb);
	TAP_CHECK(nfa > 0 && nfb > 0 && nfa != nfb && fa.ino != fb.ino,
		  "a/f and b/f show different inode numbers through the server");
	TAP_CHECK(fsc_getattr(&c, (uint64_t)nfa, &ga) == 0 && ga.ino == fa.ino,
		  "GETATTR gives a/f the same number as its LOOKUP");
	TAP_CHECK(readdir_ino((uint64_t)na, "f") == fa.ino && readdir_ino((uint64_t)nb, "f") == fb.ino,
		  "READDIR of a and b lists f with those same numbers");
	TAP_CHECK(stat(hp("plain"), &sp) == 0 && lookup_attr(1, "plain", &plain) > 0 &&
			  plain.ino == sp.st_ino,
		  "inodes of the share's own file system keep their host numbers");
}

int main(void)
{
	if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		printf("ok 1 # SKIP needs root and a private mount namespace\n1..1\n");
		return 0;
	}
	strcpy(root, "/var/tmp/ringvm-fsmnt-XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	TAP_CHECK(build_share(), "a share holding proc, sysfs, /proc/kmsg and two tmpfs mounts");
	TAP_CHECK(server(0) == 0, "server up");
	test_pseudo();
	test_submounts();
	server_end();
	/* The namespace's mounts go with the process; the directory goes now. */
	umount2(hp("proc"), MNT_DETACH);
	umount2(hp("sys"), MNT_DETACH);
	umount2(hp("kmsg"), MNT_DETACH);
	umount2(hp("a"), MNT_DETACH);
	umount2(hp("b"), MNT_DETACH);
	(void)tree_discard(root);
	return tap_done();
}
