/* test_fs_server.c: the passthrough server driven with FUSE request buffers over a temp directory. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <linux/magic.h>

#include "devices/fs/fs_budget.h"
#include "devices/fs/fs_ops.h"
#include "devices/fs/fs_server.h"
#include "devices/virtio/xfer.h"
#include "tests/support/open_fds.h"
#include "tests/support/tree.h"
#include "tests/unit/tap.h"

static struct fs_server srv;
static char root[64], outside[128];
static unsigned char req[256 * 1024], rep[256 * 1024];
static size_t rep_len;
static size_t rep_cap = sizeof(rep); /* the guest's reply buffer; tests shrink it */
static uint32_t cur_uid, cur_gid;

/* Send one request (header + body) and return the reply's error (0, -errno) or 1 for no reply. */
static int call(uint32_t op, uint64_t nodeid, const void *body, size_t blen)
{
	struct fuse_in_header h = { .len = (uint32_t)(sizeof(h) + blen), .opcode = op,
				    .unique = 7, .nodeid = nodeid, .uid = cur_uid, .gid = cur_gid };
	struct fuse_decode_ctx ctx;
	struct fuse_out_header oh;
	struct fuse_req r;
	int err;

	memcpy(req, &h, sizeof(h));
	if (blen)
		memcpy(req + sizeof(h), body, blen);
	fs_server_decode_ctx(&srv, &ctx);
	err = fuse_decode(req, h.len, h.len, &ctx, &r);
	if (err)
		return err;
	rep_len = fs_dispatch(&srv, &r, req, h.len, rep, rep_cap);
	if (rep_len == 0)
		return 1;
	memcpy(&oh, rep, sizeof(oh));
	if (oh.len != rep_len || oh.unique != 7)
		return -1000; /* a broken reply */
	return oh.error;
}

static void *body(void)
{
	return rep + sizeof(struct fuse_out_header);
}

/* name op: fixed struct + NUL-terminated name(s). */
static int call_named(uint32_t op, uint64_t nodeid, const void *fixed, size_t flen, const char *n1,
		      const char *n2)
{
	unsigned char b[8192];
	size_t len = flen;

	if (flen)
		memcpy(b, fixed, flen);
	memcpy(b + len, n1, strlen(n1) + 1);
	len += strlen(n1) + 1;
	if (n2) {
		memcpy(b + len, n2, strlen(n2) + 1);
		len += strlen(n2) + 1;
	}
	return call(op, nodeid, b, len);
}

static int64_t lookup(uint64_t parent, const char *name)
{
	int err = call_named(FUSE_LOOKUP, parent, NULL, 0, name, NULL);

	return err ? err : (int64_t)((struct fuse_entry_out *)body())->nodeid;
}

static int64_t mkdir_(uint64_t parent, const char *name, uint32_t mode)
{
	struct fuse_mkdir_in in = { .mode = mode };
	int err = call_named(FUSE_MKDIR, parent, &in, sizeof(in), name, NULL);

	return err ? err : (int64_t)((struct fuse_entry_out *)body())->nodeid;
}

/* CREATE: returns the fh, *nodeid gets the inode. */
static int64_t create(uint64_t parent, const char *name, uint32_t flags, uint32_t mode,
		      uint64_t *nodeid)
{
	struct fuse_create_in in = { .flags = flags, .mode = mode };
	int err = call_named(FUSE_CREATE, parent, &in, sizeof(in), name, NULL);

	if (err)
		return err;
	if (nodeid)
		*nodeid = ((struct fuse_entry_out *)body())->nodeid;
	return (int64_t)((struct fuse_open_out *)((char *)body() + sizeof(struct fuse_entry_out)))->fh;
}

static int64_t open_(uint64_t nodeid, uint32_t flags)
{
	struct fuse_open_in in = { .flags = flags };
	int err = call(FUSE_OPEN, nodeid, &in, sizeof(in));

	return err ? err : (int64_t)((struct fuse_open_out *)body())->fh;
}

static int write_(uint64_t nodeid, uint64_t fh, uint64_t off, const char *data, uint32_t flags)
{
	unsigned char b[4096];
	struct fuse_write_in in = { .fh = fh, .offset = off, .size = (uint32_t)strlen(data),
				    .write_flags = flags };
	int err;

	memcpy(b, &in, sizeof(in));
	memcpy(b + sizeof(in), data, in.size);
	err = call(FUSE_WRITE, nodeid, b, sizeof(in) + in.size);
	return err ? err : (int)((struct fuse_write_out *)body())->size;
}

static int read_(uint64_t nodeid, uint64_t fh, uint64_t off, uint32_t size, char *out)
{
	struct fuse_read_in in = { .fh = fh, .offset = off, .size = size };
	int err = call(FUSE_READ, nodeid, &in, sizeof(in));
	size_t n = rep_len - sizeof(struct fuse_out_header);

	if (err)
		return err;
	memcpy(out, body(), n);
	out[n] = '\0';
	return (int)n;
}

static int getattr(uint64_t nodeid, struct fuse_attr *a)
{
	struct fuse_getattr_in in = { 0 };
	int err = call(FUSE_GETATTR, nodeid, &in, sizeof(in));

	if (!err)
		*a = ((struct fuse_attr_out *)body())->attr;
	return err;
}

static int release(uint64_t nodeid, uint64_t fh, bool dir)
{
	struct fuse_release_in in = { .fh = fh };

	return call(dir ? FUSE_RELEASEDIR : FUSE_RELEASE, nodeid, &in, sizeof(in));
}

static void forget(uint64_t nodeid, uint64_t n)
{
	struct fuse_forget_in in = { .nlookup = n };

	(void)call(FUSE_FORGET, nodeid, &in, sizeof(in));
}

static char *hp(const char *rel)
{
	static char p[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", root, rel);
	return p[i];
}

static int server(bool ro, size_t max_fds)
{
	struct fuse_init_in in = { .major = 7, .minor = 38, .max_readahead = 65536,
				   .flags = FUSE_HANDLE_KILLPRIV_V2 | FUSE_MAX_PAGES |
					    FUSE_DO_READDIRPLUS | FUSE_POSIX_LOCKS | FUSE_INIT_EXT };
	int err = fs_server_create(&srv, root, ro, FS_CACHE_AUTO, max_fds);

	if (err)
		return err;
	return call(FUSE_INIT, 0, &in, sizeof(in));
}

static void test_init(void)
{
	struct fuse_init_in in = { .major = 7, .minor = 38,
				   .flags = FUSE_HANDLE_KILLPRIV_V2 | FUSE_POSIX_LOCKS |
					    FUSE_MAX_PAGES | FUSE_INIT_EXT };
	struct fuse_init_out *out;
	struct fuse_attr a;

	TAP_CHECK(fs_server_create(&srv, root, false, FS_CACHE_AUTO, 4096) == 0, "server created");
	TAP_CHECK(getattr(FUSE_ROOT_ID, &a) == -EIO, "requests before INIT answer EIO");
	TAP_CHECK(call(FUSE_INIT, 0, &in, sizeof(in)) == 0, "INIT answered");
	out = body();
	TAP_CHECK(out->major == 7 && out->minor == 38 && out->max_write == FS_MAX_IO &&
			  out->max_pages == FS_MAX_IO / 4096,
		  "INIT: 7.38, max_write 1 MiB, max_pages 256");
	TAP_CHECK((out->flags & FUSE_HANDLE_KILLPRIV_V2) && !(out->flags & FUSE_POSIX_LOCKS),
		  "INIT: killpriv v2 agreed, POSIX locks left to the guest");
	in.minor = 31;
	TAP_CHECK(call(FUSE_INIT, 0, &in, sizeof(in)) == 0 && ((struct fuse_init_out *)body())->minor == 31,
		  "INIT from a 7.31 kernel answers 7.31");
	in.minor = 38;
	TAP_CHECK(call(FUSE_INIT, 0, &in, sizeof(in)) == 0, "re-INIT at 7.38");
	in.major = 6;
	TAP_CHECK(call(FUSE_INIT, 0, &in, sizeof(in)) == -EPROTO, "INIT major 6 refused");
	TAP_CHECK(getattr(FUSE_ROOT_ID, &a) == 0 && S_ISDIR(a.mode), "GETATTR of the root");
	TAP_CHECK(getattr(999999, &a) == -ESTALE, "unknown nodeid -> ESTALE");
	TAP_CHECK(call(FUSE_GETLK, 1, (struct fuse_lk_in[1]){ { 0 } }, sizeof(struct fuse_lk_in)) ==
			  -ENOSYS,
		  "GETLK -> documented ENOSYS");
	TAP_CHECK(call(FUSE_STATFS, 1, NULL, 0) == 0 &&
			  ((struct fuse_statfs_out *)body())->st.bsize > 0,
		  "STATFS");
	TAP_CHECK(call(FUSE_SYNCFS, 1, (uint64_t[1]){ 0 }, 8) == 0, "SYNCFS");
}

static void test_files(void)
{
	char buf[256];
	struct fuse_attr a;
	struct stat st;
	int64_t d, fh;
	uint64_t f;
	int fd;

	d = mkdir_(1, "d", 0750);
	TAP_CHECK(d > 1 && stat(hp("d"), &st) == 0 && (st.st_mode & 07777) == 0750,
		  "MKDIR: host dir with the guest's mode");
	fh = create((uint64_t)d, "f", O_RDWR, 0640, &f);
	TAP_CHECK(fh >= 0 && stat(hp("d/f"), &st) == 0 && (st.st_mode & 07777) == 0640,
		  "CREATE: host file with mode 0640");
	TAP_CHECK(write_(f, (uint64_t)fh, 0, "hello world", 0) == 11, "WRITE 11 bytes");
	TAP_CHECK(read_(f, (uint64_t)fh, 6, 100, buf) == 5 && !strcmp(buf, "world"), "READ back");
	fd = open(hp("d/f"), O_RDONLY);
	TAP_CHECK(fd >= 0 && pread(fd, buf, 11, 0) == 11 && !memcmp(buf, "hello world", 11),
		  "host sees the written bytes");
	close(fd);
	{
		struct fuse_setattr_in in = { .valid = FATTR_SIZE, .size = 5 };

		TAP_CHECK(call(FUSE_SETATTR, f, &in, sizeof(in)) == 0 &&
				  ((struct fuse_attr_out *)body())->attr.size == 5 &&
				  stat(hp("d/f"), &st) == 0 && st.st_size == 5,
			  "SETATTR size truncates on the host");
		in.valid = FATTR_MODE;
		in.mode = 0604;
		TAP_CHECK(call(FUSE_SETATTR, f, &in, sizeof(in)) == 0 && stat(hp("d/f"), &st) == 0 &&
				  (st.st_mode & 07777) == 0604,
			  "SETATTR mode");
		in.valid = FATTR_ATIME | FATTR_MTIME;
		in.atime = 1000;
		in.mtime = 2000;
		TAP_CHECK(call(FUSE_SETATTR, f, &in, sizeof(in)) == 0 && stat(hp("d/f"), &st) == 0 &&
				  st.st_mtime == 2000 && st.st_atime == 1000,
			  "SETATTR times");
		in.valid = FATTR_FH | FATTR_SIZE;
		in.fh = 0xdead;
		TAP_CHECK(call(FUSE_SETATTR, f, &in, sizeof(in)) == -EBADF, "SETATTR with a bad fh");
	}
	/* Append through O_APPEND and the kernel's offsets. */
	TAP_CHECK(write_(f, (uint64_t)fh, 5, "!", 0) == 1 && getattr(f, &a) == 0 && a.size == 6,
		  "WRITE at EOF extends, GETATTR sees it");
	{
		struct fuse_fsync_in in = { .fh = (uint64_t)fh };

		TAP_CHECK(call(FUSE_FSYNC, f, &in, sizeof(in)) == 0, "FSYNC");
		in.fsync_flags = FUSE_FSYNC_FDATASYNC;
		TAP_CHECK(call(FUSE_FSYNC, f, &in, sizeof(in)) == 0, "FSYNC datasync");
	}
	{
		struct fuse_flush_in in = { .fh = (uint64_t)fh };

		TAP_CHECK(call(FUSE_FLUSH, f, &in, sizeof(in)) == 0, "FLUSH");
	}
	TAP_CHECK(release(f, (uint64_t)fh, false) == 0, "RELEASE");
	TAP_CHECK(release(f, (uint64_t)fh, false) == -EBADF, "second RELEASE of the fh -> EBADF");
	TAP_CHECK(read_(f, (uint64_t)fh, 0, 10, buf) == -EBADF, "READ on a released fh -> EBADF");
	fh = open_(f, O_RDONLY);
	TAP_CHECK(fh >= 0 && read_(f, (uint64_t)fh, 0, 100, buf) == 6 && !strcmp(buf, "hello!"),
		  "OPEN read-only and READ");
	TAP_CHECK(write_(f, (uint64_t)fh, 0, "x", 0) == -EBADF, "WRITE on a read-only fh fails");
	TAP_CHECK(release(f, (uint64_t)fh, false) == 0, "RELEASE again");
	TAP_CHECK(open_((uint64_t)d, O_RDONLY) == -EISDIR, "OPEN of a directory -> EISDIR");
	TAP_CHECK(create((uint64_t)d, "f", O_RDWR | O_EXCL, 0600, NULL) == -EEXIST,
		  "CREATE O_EXCL on an existing file -> EEXIST");
	fh = create((uint64_t)d, "f", O_RDWR | O_TRUNC, 0600, NULL);
	TAP_CHECK(fh >= 0 && stat(hp("d/f"), &st) == 0 && st.st_size == 0,
		  "CREATE without O_EXCL opens and truncates the existing file");
	TAP_CHECK(release(f, (uint64_t)fh, false) == 0, "RELEASE the second open");
	forget(f, 3);
	forget((uint64_t)d, 1);
}

static void test_links_rename(void)
{
	struct fuse_attr a;
	struct stat st;
	int64_t f, g, fh;
	uint64_t fid;
	char buf[PATH_MAX];

	fh = create(1, "a", O_RDWR, 0600, &fid);
	f = (int64_t)fid;
	TAP_CHECK(fh >= 0 && release(fid, (uint64_t)fh, false) == 0, "CREATE a");
	{
		struct fuse_link_in in = { .oldnodeid = fid };

		TAP_CHECK(call_named(FUSE_LINK, 1, &in, sizeof(in), "b", NULL) == 0 &&
				  ((struct fuse_entry_out *)body())->nodeid == fid &&
				  ((struct fuse_entry_out *)body())->attr.nlink == 2,
			  "LINK: same inode, nlink 2");
		TAP_CHECK(stat(hp("b"), &st) == 0 && st.st_nlink == 2, "host sees the hard link");
	}
	{
		struct fuse_rename_in in = { .newdir = 1 };

		TAP_CHECK(call_named(FUSE_RENAME, 1, &in, sizeof(in), "b", "c") == 0 &&
				  access(hp("c"), F_OK) == 0 && access(hp("b"), F_OK) != 0,
			  "RENAME b -> c");
	}
	{
		struct fuse_rename2_in in = { .newdir = 1, .flags = RENAME_NOREPLACE };
		int fd = open(hp("e"), O_CREAT | O_WRONLY, 0600);

		TAP_CHECK(fd >= 0 && write(fd, "E", 1) == 1, "host file e");
		close(fd);
		TAP_CHECK(call_named(FUSE_RENAME2, 1, &in, sizeof(in), "c", "e") == -EEXIST,
			  "RENAME2 NOREPLACE onto an existing name -> EEXIST");
		in.flags = RENAME_EXCHANGE;
		TAP_CHECK(call_named(FUSE_RENAME2, 1, &in, sizeof(in), "c", "e") == 0 &&
				  stat(hp("c"), &st) == 0 && st.st_size == 1,
			  "RENAME2 EXCHANGE swaps");
		in.flags = RENAME_WHITEOUT;
		TAP_CHECK(call_named(FUSE_RENAME2, 1, &in, sizeof(in), "c", "w") == 0 &&
				  stat(hp("w"), &st) == 0 && st.st_size == 1 && lstat(hp("c"), &st) == 0 &&
				  S_ISCHR(st.st_mode) && st.st_rdev == 0,
			  "RENAME2 WHITEOUT: moved, a 0:0 character device left behind");
		TAP_CHECK(unlink(hp("c")) == 0 && rename(hp("w"), hp("c")) == 0, "host: undo the move");
		in.flags = 8;
		TAP_CHECK(call_named(FUSE_RENAME2, 1, &in, sizeof(in), "c", "e") == -EINVAL,
			  "RENAME2 with an unknown flag refused");
		in.flags = 0;
		TAP_CHECK(call_named(FUSE_RENAME2, 1, &in, sizeof(in), "c", "..") == -EINVAL,
			  "RENAME2 to '..' refused");
	}
	{
		TAP_CHECK(call_named(FUSE_SYMLINK, 1, NULL, 0, "ln", "/etc/passwd") == 0 &&
				  S_ISLNK(((struct fuse_entry_out *)body())->attr.mode),
			  "SYMLINK created in the guest");
		g = (int64_t)((struct fuse_entry_out *)body())->nodeid;
		TAP_CHECK(call(FUSE_READLINK, (uint64_t)g, NULL, 0) == 0 &&
				  rep_len - sizeof(struct fuse_out_header) == 11 &&
				  !memcmp(body(), "/etc/passwd", 11),
			  "READLINK returns the target");
		/* Linux's fuse_readlink_page() offers one page less a byte: less than PATH_MAX. */
		rep_cap = sizeof(struct fuse_out_header) + 4095;
		TAP_CHECK(call(FUSE_READLINK, (uint64_t)g, NULL, 0) == 0 &&
				  rep_len - sizeof(struct fuse_out_header) == 11,
			  "READLINK fits the page-sized buffer the Linux driver offers");
		rep_cap = sizeof(struct fuse_out_header) + 5;
		TAP_CHECK(call(FUSE_READLINK, (uint64_t)g, NULL, 0) == -ENAMETOOLONG,
			  "READLINK into a buffer shorter than the target: ENAMETOOLONG, never a cut path");
		{
			static char longest[PATH_MAX];
			int64_t lg;

			memset(longest, 't', PATH_MAX - 1);
			rep_cap = sizeof(rep);
			lg = call_named(FUSE_SYMLINK, 1, NULL, 0, "longest", longest) ? -1 :
				(int64_t)((struct fuse_entry_out *)body())->nodeid;
			rep_cap = sizeof(struct fuse_out_header) + 4095;
			TAP_CHECK(lg > 0 && call(FUSE_READLINK, (uint64_t)lg, NULL, 0) == 0 &&
					  rep_len == sizeof(struct fuse_out_header) + 4095 &&
					  !memcmp(body(), longest, 4095),
				  "READLINK of a 4095-byte target into the driver's 4095-byte buffer");
			rep_cap = sizeof(struct fuse_out_header) + 4094;
			TAP_CHECK(call(FUSE_READLINK, (uint64_t)lg, NULL, 0) == -ENAMETOOLONG,
				  "... and into one byte less: ENAMETOOLONG");
			if (lg > 0)
				forget((uint64_t)lg, 1);
		}
		rep_cap = sizeof(rep);
		TAP_CHECK(readlink(hp("ln"), buf, sizeof(buf)) == 11, "host sees the symlink");
		TAP_CHECK(open_((uint64_t)g, O_RDONLY) == -EACCES,
			  "OPEN of a guest-made symlink is refused (never followed)");
		TAP_CHECK(lookup((uint64_t)g, "passwd") == -ENOTDIR, "LOOKUP under a symlink -> ENOTDIR");
		forget((uint64_t)g, 1);
	}
	TAP_CHECK(call_named(FUSE_UNLINK, 1, NULL, 0, "e", NULL) == 0 && getattr(fid, &a) == 0 &&
			  a.nlink == 1,
		  "UNLINK one name: nlink back to 1");
	TAP_CHECK(call_named(FUSE_UNLINK, 1, NULL, 0, "nonexistent", NULL) == -ENOENT,
		  "UNLINK missing -> ENOENT");
	TAP_CHECK(mkdir_(1, "rmme", 0700) > 0 &&
			  call_named(FUSE_RMDIR, 1, NULL, 0, "rmme", NULL) == 0 &&
			  access(hp("rmme"), F_OK) != 0,
		  "RMDIR");
	TAP_CHECK(call_named(FUSE_RMDIR, 1, NULL, 0, "a", NULL) == -ENOTDIR, "RMDIR of a file");
	forget((uint64_t)f, 2);
	{
		struct fuse_mknod_in in = { .mode = S_IFIFO | 0600 };
		int64_t fifo;

		TAP_CHECK(call_named(FUSE_MKNOD, 1, &in, sizeof(in), "fifo", NULL) == 0 &&
				  stat(hp("fifo"), &st) == 0 && S_ISFIFO(st.st_mode),
			  "MKNOD fifo");
		fifo = (int64_t)((struct fuse_entry_out *)body())->nodeid;
		TAP_CHECK(open_((uint64_t)fifo, O_RDONLY) == -EACCES,
			  "OPEN of a FIFO refused without blocking");
		TAP_CHECK(create(1, "fifo", O_RDWR, 0600, NULL) == -EACCES,
			  "CREATE over a FIFO refused without blocking");
		in.mode = S_IFDIR | 0700;
		TAP_CHECK(call_named(FUSE_MKNOD, 1, &in, sizeof(in), "dirnode", NULL) == -EINVAL,
			  "MKNOD of a directory type refused");
		forget((uint64_t)fifo, 2);
	}
}

/* TMPFILE: an unnamed file in the directory, a nodeid and an open handle; LINK names it. */
static void test_tmpfile(void)
{
	struct fuse_create_in in = { .flags = O_RDWR, .mode = 0640 };
	struct fuse_entry_out eo;
	struct fuse_link_in li;
	struct stat st;
	uint64_t fh;
	char buf[8];
	int64_t d;

	d = mkdir_(1, "tmpd", 0755);
	TAP_CHECK(call_named(FUSE_TMPFILE, (uint64_t)d, &in, sizeof(in), "/", NULL) == 0 &&
			  rep_len == sizeof(struct fuse_out_header) + sizeof(eo) +
					     sizeof(struct fuse_open_out),
		  "TMPFILE: an entry and an open handle");
	memcpy(&eo, body(), sizeof(eo));
	fh = ((struct fuse_open_out *)((char *)body() + sizeof(eo)))->fh;
	TAP_CHECK(S_ISREG(eo.attr.mode) && (eo.attr.mode & 07777) == 0640 && eo.attr.nlink == 0,
		  "TMPFILE: a regular file, mode 0640, no link");
	TAP_CHECK(write_(eo.nodeid, fh, 0, "tmp", 0) == 3 && read_(eo.nodeid, fh, 0, 8, buf) == 3,
		  "TMPFILE: written and read through its handle");
	li.oldnodeid = eo.nodeid;
	TAP_CHECK(call_named(FUSE_LINK, (uint64_t)d, &li, sizeof(li), "named", NULL) == 0 &&
			  stat(hp("tmpd/named"), &st) == 0 && st.st_size == 3 && st.st_nlink == 1,
		  "LINK gives the unnamed file a name, with its bytes");
	TAP_CHECK(release(eo.nodeid, fh, false) == 0, "release");
	forget(eo.nodeid, 2);
	in.flags = O_RDWR | O_EXCL;
	TAP_CHECK(call_named(FUSE_TMPFILE, (uint64_t)d, &in, sizeof(in), "/", NULL) == 0, "TMPFILE O_EXCL");
	memcpy(&eo, body(), sizeof(eo));
	fh = ((struct fuse_open_out *)((char *)body() + sizeof(eo)))->fh;
	li.oldnodeid = eo.nodeid;
	TAP_CHECK(call_named(FUSE_LINK, (uint64_t)d, &li, sizeof(li), "never", NULL) == -ENOENT,
		  "an O_EXCL one can never be linked");
	TAP_CHECK(release(eo.nodeid, fh, false) == 0, "release");
	forget(eo.nodeid, 1);
	TAP_CHECK(call_named(FUSE_TMPFILE, eo.nodeid, &in, sizeof(in), "/", NULL) == -ESTALE,
		  "TMPFILE under a forgotten nodeid -> ESTALE");
	{
		int64_t ffh = create((uint64_t)d, "f", O_RDWR, 0600, &li.oldnodeid);

		TAP_CHECK(ffh >= 0 && call_named(FUSE_TMPFILE, li.oldnodeid, &in, sizeof(in), "/",
						 NULL) == -ENOTDIR,
			  "TMPFILE under a file -> ENOTDIR");
		if (ffh >= 0)
			TAP_CHECK(release(li.oldnodeid, (uint64_t)ffh, false) == 0, "release");
		forget(li.oldnodeid, 1);
	}
	forget((uint64_t)d, 1);
}

static void test_escapes(void)
{
	int64_t n, fh;
	struct stat st;

	TAP_CHECK(lookup(1, "..") == -EINVAL, "LOOKUP '..' at the root refused");
	TAP_CHECK(lookup(1, ".") == -EINVAL, "LOOKUP '.' refused");
	TAP_CHECK(call_named(FUSE_LOOKUP, 1, NULL, 0, "../etc", NULL) == -EINVAL,
		  "LOOKUP with '/' refused by the decoder");
	n = mkdir_(1, "sub", 0755);
	TAP_CHECK(lookup((uint64_t)n, "..") == -EINVAL, "LOOKUP '..' below the root refused too");
	forget((uint64_t)n, 1);
	TAP_CHECK(symlink("/", hp("out")) == 0, "host plants a symlink to /");
	n = lookup(1, "out");
	TAP_CHECK(n > 0 && lookup((uint64_t)n, "etc") == -ENOTDIR,
		  "planted symlink: lookup through it fails");
	TAP_CHECK(open_((uint64_t)n, O_RDONLY) == -EACCES, "planted symlink: OPEN refused");
	forget((uint64_t)n, 1);
	TAP_CHECK(symlink(outside, hp("evil")) == 0, "host plants a symlink to a file outside");
	TAP_CHECK(create(1, "evil", O_RDWR, 0600, NULL) == -ELOOP && stat(outside, &st) != 0,
		  "CREATE through the planted symlink refused, nothing created outside");
	{
		/* Hard-linking a planted symlink links the symlink, never its outside target. */
		struct fuse_link_in in = { .oldnodeid = (uint64_t)lookup(1, "evil") };
		struct stat ls;
		int fd = open(outside, O_CREAT | O_WRONLY, 0600);

		close(fd);
		TAP_CHECK(call_named(FUSE_LINK, 1, &in, sizeof(in), "evil2", NULL) == 0 &&
				  lstat(hp("evil2"), &ls) == 0 && S_ISLNK(ls.st_mode) &&
				  stat(outside, &st) == 0 && st.st_nlink == 1,
			  "LINK of a planted symlink links the symlink, not the outside file");
		unlink(outside);
		forget(in.oldnodeid, 2);
	}
	TAP_CHECK(symlink("/proc/self/root", hp("magic")) == 0, "host plants a /proc magic link");
	n = lookup(1, "magic");
	TAP_CHECK(n > 0 && lookup((uint64_t)n, "etc") == -ENOTDIR, "magic link not followed");
	forget((uint64_t)n, 1);
	{
		struct fuse_setattr_in in = { .valid = FATTR_MODE, .mode = 0777 };

		n = lookup(1, "out");
		TAP_CHECK(call(FUSE_SETATTR, (uint64_t)n, &in, sizeof(in)) == -EOPNOTSUPP &&
				  stat("/", &st) == 0 && (st.st_mode & 07777) != 0777,
			  "chmod of a planted symlink does not reach its target");
		forget((uint64_t)n, 1);
	}
	/* A directory swapped for a symlink after the guest looked it up: the guest's nodeid still
	   means the original directory (an O_PATH fd), not the new path. */
	n = mkdir_(1, "race", 0755);
	TAP_CHECK(rename(hp("race"), hp("race.moved")) == 0 && symlink("/", hp("race")) == 0,
		  "host swaps the directory for a symlink to /");
	fh = create((uint64_t)n, "x", O_RDWR, 0600, NULL);
	TAP_CHECK(fh >= 0 && access(hp("race.moved/x"), F_OK) == 0 && access("/x", F_OK) != 0,
		  "CREATE under the old nodeid lands in the moved directory, not in /");
	TAP_CHECK(release(1, (uint64_t)fh, false) == 0, "release");
	TAP_CHECK(lookup(1, "race") > 0 && lookup((uint64_t)lookup(1, "race"), "etc") == -ENOTDIR,
		  "new 'race' is a symlink and is not followed");
}

static void test_dirs(void)
{
	char name[32];
	int64_t d, fh;
	int i, seen = 0, plus_nodes = 0;
	uint64_t off = 0;

	d = mkdir_(1, "many", 0755);
	for (i = 0; i < 300; i++) {
		int fd;

		snprintf(name, sizeof(name), "many/file%03d", i);
		fd = open(hp(name), O_CREAT | O_WRONLY, 0600);
		close(fd);
	}
	{
		struct fuse_open_in in = { 0 };

		TAP_CHECK(call(FUSE_OPENDIR, (uint64_t)d, &in, sizeof(in)) == 0, "OPENDIR");
		fh = (int64_t)((struct fuse_open_out *)body())->fh;
	}
	for (;;) {
		struct fuse_read_in in = { .fh = (uint64_t)fh, .offset = off, .size = 1024 };
		size_t pos = sizeof(struct fuse_out_header);

		if (call(FUSE_READDIR, (uint64_t)d, &in, sizeof(in)) != 0 ||
		    rep_len == sizeof(struct fuse_out_header))
			break;
		while (pos < rep_len) {
			struct fuse_dirent de;

			memcpy(&de, rep + pos, sizeof(de));
			if (de.namelen > 2 || rep[pos + FUSE_NAME_OFFSET] != '.')
				seen++;
			off = de.off;
			pos += FUSE_DIRENT_ALIGN(FUSE_NAME_OFFSET + de.namelen);
		}
	}
	TAP_CHECK(seen == 300, "READDIR in 1 KiB replies sees all 300 entries once");
	off = 0;
	seen = 0;
	for (;;) {
		struct fuse_read_in in = { .fh = (uint64_t)fh, .offset = off, .size = 4096 };
		size_t pos = sizeof(struct fuse_out_header);

		if (call(FUSE_READDIRPLUS, (uint64_t)d, &in, sizeof(in)) != 0 ||
		    rep_len == sizeof(struct fuse_out_header))
			break;
		while (pos < rep_len) {
			struct fuse_direntplus dp;

			memcpy(&dp, rep + pos, sizeof(dp));
			if (dp.entry_out.nodeid) {
				plus_nodes++;
				forget(dp.entry_out.nodeid, 1);
			}
			seen++;
			off = dp.dirent.off;
			pos += FUSE_DIRENTPLUS_SIZE(&dp);
		}
	}
	TAP_CHECK(seen == 302 && plus_nodes == 300, "READDIRPLUS: 302 entries, 300 with lookups");
	{
		struct fuse_read_in in = { .fh = (uint64_t)fh, .offset = 0, .size = 10 };

		TAP_CHECK(call(FUSE_READDIR, (uint64_t)d, &in, sizeof(in)) == -EINVAL,
			  "READDIR buffer too small for one entry -> EINVAL");
	}
	{
		struct fuse_fsync_in in = { .fh = (uint64_t)fh };

		TAP_CHECK(call(FUSE_FSYNCDIR, (uint64_t)d, &in, sizeof(in)) == 0, "FSYNCDIR");
	}
	TAP_CHECK(release((uint64_t)d, (uint64_t)fh, false) == -EBADF,
		  "RELEASE (file) of a dir handle refused");
	TAP_CHECK(release((uint64_t)d, (uint64_t)fh, true) == 0, "RELEASEDIR");
	forget((uint64_t)d, 1);
}

/* Extended attributes of a symlink itself (trusted.* needs root and xattr=all), never of its target. */
static void test_xattr_symlink(void)
{
	struct fuse_getxattr_in gin = { .size = 64 };
	unsigned char b[64];
	struct fuse_setxattr_in in = { .size = 1 };
	char v[8];
	int64_t l;

	if (geteuid() != 0) {
		printf("# not root: trusted.* on symlinks skipped\n");
		return;
	}
	TAP_CHECK(symlink("x", hp("xl")) == 0, "host: symlink xl -> x");
	srv.xattr = FS_XATTR_ALL;
	l = lookup(1, "xl");
	memcpy(b, &in, FUSE_COMPAT_SETXATTR_IN_SIZE);
	memcpy(b + FUSE_COMPAT_SETXATTR_IN_SIZE, "trusted.l\0L", 11);
	TAP_CHECK(l > 0 && call(FUSE_SETXATTR, (uint64_t)l, b, FUSE_COMPAT_SETXATTR_IN_SIZE + 11) == 0 &&
			  lgetxattr(hp("xl"), "trusted.l", v, sizeof(v)) == 1 &&
			  lgetxattr(hp("x"), "trusted.l", v, sizeof(v)) < 0,
		  "SETXATTR trusted.l on a symlink: on the link, not on its target");
	TAP_CHECK(call_named(FUSE_GETXATTR, (uint64_t)l, &gin, sizeof(gin), "trusted.l", NULL) == 0 &&
			  rep_len == sizeof(struct fuse_out_header) + 1 && *(char *)body() == 'L',
		  "GETXATTR on the symlink");
	TAP_CHECK(call(FUSE_LISTXATTR, (uint64_t)l, &gin, sizeof(gin)) == 0 &&
			  memmem(body(), rep_len - sizeof(struct fuse_out_header), "trusted.l", 9),
		  "LISTXATTR on the symlink");
	memcpy(b + FUSE_COMPAT_SETXATTR_IN_SIZE, "user.l\0L", 8);
	TAP_CHECK(call(FUSE_SETXATTR, (uint64_t)l, b, FUSE_COMPAT_SETXATTR_IN_SIZE + 8) == -EPERM,
		  "SETXATTR user.* on a symlink: EPERM, as on the host");
	TAP_CHECK(call_named(FUSE_REMOVEXATTR, (uint64_t)l, NULL, 0, "trusted.l", NULL) == 0 &&
			  lgetxattr(hp("xl"), "trusted.l", v, sizeof(v)) < 0,
		  "REMOVEXATTR on the symlink");
	srv.xattr = FS_XATTR_USER;
	forget((uint64_t)l, 1);
}

static void test_xattr_misc(void)
{
	int64_t fh;
	uint64_t f;

	fh = create(1, "x", O_RDWR, 0644, &f);
	{
		unsigned char b[64];
		struct fuse_setxattr_in in = { .size = 3 };

		/* Without FUSE_SETXATTR_EXT the body is the 8-byte compat struct. */
		memcpy(b, &in, FUSE_COMPAT_SETXATTR_IN_SIZE);
		memcpy(b + FUSE_COMPAT_SETXATTR_IN_SIZE, "user.k\0abc", 10);
		TAP_CHECK(call(FUSE_SETXATTR, f, b, FUSE_COMPAT_SETXATTR_IN_SIZE + 10) == 0,
			  "SETXATTR user.k");
	}
	{
		char v[8] = { 0 };

		TAP_CHECK(getxattr(hp("x"), "user.k", v, sizeof(v)) == 3 && !memcmp(v, "abc", 3),
			  "host sees the xattr");
	}
	{
		struct fuse_getxattr_in in = { .size = 0 };

		TAP_CHECK(call_named(FUSE_GETXATTR, f, &in, sizeof(in), "user.k", NULL) == 0 &&
				  ((struct fuse_getxattr_out *)body())->size == 3,
			  "GETXATTR size probe");
		in.size = 64;
		TAP_CHECK(call_named(FUSE_GETXATTR, f, &in, sizeof(in), "user.k", NULL) == 0 &&
				  rep_len == sizeof(struct fuse_out_header) + 3,
			  "GETXATTR value");
		in.size = 2;
		TAP_CHECK(call_named(FUSE_GETXATTR, f, &in, sizeof(in), "user.k", NULL) == -ERANGE,
			  "GETXATTR small buffer -> ERANGE");
		in.size = 64;
		TAP_CHECK(call(FUSE_LISTXATTR, f, &in, sizeof(in)) == 0 &&
				  memmem(body(), rep_len - sizeof(struct fuse_out_header), "user.k", 6),
			  "LISTXATTR");
		TAP_CHECK(call_named(FUSE_REMOVEXATTR, f, NULL, 0, "user.k", NULL) == 0 &&
				  call_named(FUSE_GETXATTR, f, &in, sizeof(in), "user.k", NULL) == -ENODATA,
			  "REMOVEXATTR");
	}
	{
		struct fuse_fallocate_in in = { .fh = (uint64_t)fh, .offset = 1 << 20, .length = 4096 };
		struct fuse_lseek_in ls = { .fh = (uint64_t)fh, .offset = 0, .whence = SEEK_DATA };
		struct stat st;

		TAP_CHECK(call(FUSE_FALLOCATE, f, &in, sizeof(in)) == 0 && stat(hp("x"), &st) == 0 &&
				  st.st_size == (1 << 20) + 4096,
			  "FALLOCATE extends");
		TAP_CHECK(write_(f, (uint64_t)fh, 3 << 20, "z", 0) == 1, "sparse write at 3 MiB");
		TAP_CHECK(call(FUSE_LSEEK, f, &ls, sizeof(ls)) == 0 &&
				  ((struct fuse_lseek_out *)body())->offset >= (1 << 20),
			  "LSEEK SEEK_DATA skips the hole");
		ls.whence = SEEK_HOLE;
		TAP_CHECK(call(FUSE_LSEEK, f, &ls, sizeof(ls)) == 0 &&
				  ((struct fuse_lseek_out *)body())->offset == 0,
			  "LSEEK SEEK_HOLE at 0");
		ls.whence = SEEK_END;
		TAP_CHECK(call(FUSE_LSEEK, f, &ls, sizeof(ls)) == -EINVAL, "LSEEK SEEK_END refused");
	}
	{
		uint64_t g;
		int64_t gh = create(1, "y", O_RDWR, 0644, &g);
		struct fuse_copy_file_range_in in = { .fh_in = (uint64_t)fh, .off_in = 3 << 20,
						      .nodeid_out = g, .fh_out = (uint64_t)gh,
						      .off_out = 0, .len = 1 };
		char buf[8];

		TAP_CHECK(call(FUSE_COPY_FILE_RANGE, f, &in, sizeof(in)) == 0 &&
				  ((struct fuse_write_out *)body())->size == 1 &&
				  read_(g, (uint64_t)gh, 0, 4, buf) == 1 && buf[0] == 'z',
			  "COPY_FILE_RANGE");
		TAP_CHECK(release(g, (uint64_t)gh, false) == 0, "release y");
		forget(g, 1);
	}
	{
		struct fuse_access_in in = { .mask = R_OK | W_OK };

		TAP_CHECK(call(FUSE_ACCESS, f, &in, sizeof(in)) == 0, "ACCESS rw on own file");
	}
	/* Kill setuid on a write that asks for it (killpriv v2). */
	{
		struct stat st;

		TAP_CHECK(chmod(hp("x"), 04755) == 0 &&
				  write_(f, (uint64_t)fh, 0, "q", FUSE_WRITE_KILL_SUIDGID) == 1 &&
				  stat(hp("x"), &st) == 0 && (st.st_mode & 07777) == 0755,
			  "WRITE with KILL_SUIDGID clears setuid");
		TAP_CHECK(chmod(hp("x"), 02775) == 0, "setgid + group exec");
		{
			struct fuse_setattr_in in = { .valid = FATTR_SIZE | FATTR_KILL_SUIDGID, .size = 1 };

			TAP_CHECK(call(FUSE_SETATTR, f, &in, sizeof(in)) == 0 &&
					  stat(hp("x"), &st) == 0 && (st.st_mode & 07777) == 0775,
				  "truncate with KILL_SUIDGID clears setgid");
		}
	}
	{
		/* chown(-1, -1) in the guest: a SETATTR naming no attribute (the setuid kill is ours). */
		struct fuse_setattr_in in = { 0 };
		struct stat st;
		struct timespec before;

		TAP_CHECK(chmod(hp("x"), 06755) == 0 && stat(hp("x"), &st) == 0, "host: mode 6755");
		before = st.st_ctim;
		usleep(20000);
		TAP_CHECK(call(FUSE_SETATTR, f, &in, sizeof(in)) == 0 && stat(hp("x"), &st) == 0 &&
				  (st.st_mode & 07777) == 0755 &&
				  ((struct fuse_attr_out *)body())->attr.mode == (S_IFREG | 0755),
			  "SETATTR of nothing (chown -1 -1): setuid and setgid killed, the reply says so");
		TAP_CHECK(st.st_ctim.tv_sec != before.tv_sec || st.st_ctim.tv_nsec != before.tv_nsec,
			  "SETATTR of nothing: ctime changed, as chown's");
		TAP_CHECK(chmod(hp("x"), 02745) == 0 && call(FUSE_SETATTR, f, &in, sizeof(in)) == 0 &&
				  stat(hp("x"), &st) == 0 && (st.st_mode & 07777) == 02745,
			  "SETATTR of nothing keeps setgid without group execute");
		TAP_CHECK(chmod(hp("x"), 0644) == 0, "host: mode 644");
	}
	TAP_CHECK(release(f, (uint64_t)fh, false) == 0, "release x");
	forget(f, 1);
	test_xattr_symlink();
}

/* Requests from now on come from uid:gid. The server runs on this very thread: one request (a
   GETATTR of the root) puts the thread's filesystem identity there for the test's own host calls. */
static void as_user(uint32_t uid, uint32_t gid)
{
	struct fuse_attr a;

	cur_uid = uid;
	cur_gid = gid;
	if (getattr(FUSE_ROOT_ID, &a) != 0)
		printf("# GETATTR as %u:%u failed\n", uid, gid);
}

static void test_creds(void)
{
	struct stat st;
	int64_t fh, d, g, su;
	uint64_t f, sg;

	if (geteuid() != 0) {
		printf("# not root: credential tests skipped\n");
		return;
	}
	d = mkdir_(1, "pub", 0777);
	cur_uid = 1234;
	cur_gid = 5678;
	fh = create((uint64_t)d, "mine", O_RDWR, 0600, &f);
	if (fh < 0)
		printf("# create as 1234: %s\n", strerror((int)-fh));
	TAP_CHECK(fh >= 0 && stat(hp("pub/mine"), &st) == 0 && st.st_uid == 1234 && st.st_gid == 5678,
		  "file created by guest uid 1234 is owned by 1234:5678 on the host");
	TAP_CHECK(release(f, (uint64_t)fh, false) == 0, "release");
	/* The guest kernel judged these requests with the caller's supplementary groups, which FUSE
	   does not carry: the host must not judge again as 1234 with no groups. */
	as_user(0, 0);
	TAP_CHECK(mkdir(hp("grp"), 0700) == 0 && chown(hp("grp"), 0, 4321) == 0 &&
			  chmod(hp("grp"), 02770) == 0,
		  "host: setgid directory root:4321, mode 2770");
	g = lookup(1, "grp");
	cur_uid = cur_gid = 1234;
	srv.allow_suid = true; /* setgid files are the point here: a share with ,suid */
	TAP_CHECK(g > 0 && mkdir_((uint64_t)g, "sub", 0755) > 0 && stat(hp("grp/sub"), &st) == 0 &&
			  st.st_uid == 1234 && st.st_gid == 4321,
		  "1234 (in group 4321 in the guest): MKDIR in the group's 0770 dir, owned 1234:4321");
	fh = create((uint64_t)g, "sg", O_WRONLY, 02755, &sg);
	TAP_CHECK(fh >= 0 && stat(hp("grp/sg"), &st) == 0 && (st.st_mode & 07777) == 02755,
		  "CREATE with setgid in the group's setgid dir keeps setgid (the guest kept it)");
	if (fh >= 0)
		TAP_CHECK(release(sg, (uint64_t)fh, false) == 0, "release");
	{
		struct fuse_setattr_in in = { .valid = FATTR_GID, .gid = 4321 };

		TAP_CHECK(call(FUSE_SETATTR, f, &in, sizeof(in)) == 0 && stat(hp("pub/mine"), &st) == 0 &&
				  st.st_gid == 4321,
			  "chgrp of its own file to its supplementary group 4321");
	}
	as_user(0, 0);
	TAP_CHECK(close(open(hp("suid"), O_CREAT | O_WRONLY, 0600)) == 0 && chmod(hp("suid"), 04777) == 0,
		  "host: root's setuid file, mode 4777");
	su = lookup(1, "suid");
	cur_uid = cur_gid = 1234;
	{
		struct fuse_setattr_in in = { .valid = FATTR_SIZE | FATTR_KILL_SUIDGID, .size = 1 };

		TAP_CHECK(su > 0 && call(FUSE_SETATTR, (uint64_t)su, &in, sizeof(in)) == 0 &&
				  stat(hp("suid"), &st) == 0 && (st.st_mode & 07777) == 0777 && st.st_size == 1,
			  "1234 truncates root's 4777 file it may write: setuid killed, no EPERM");
	}
	{
		/* Setgid without group execute: killed by a stranger's write or truncate, kept by a
		   member of the file's group (the only membership we can see: the primary group). */
		struct fuse_setattr_in none = { 0 };
		struct fuse_setattr_in tr = { .valid = FATTR_SIZE | FATTR_KILL_SUIDGID, .size = 0 };

		as_user(0, 0);
		TAP_CHECK(chmod(hp("suid"), 02767) == 0, "host: root's file, mode 2767");
		cur_uid = 1234;
		cur_gid = 0;
		TAP_CHECK(call(FUSE_SETATTR, (uint64_t)su, &none, sizeof(none)) == 0 &&
				  stat(hp("suid"), &st) == 0 && (st.st_mode & 07777) == 02767,
			  "SETATTR of nothing by 1234 in the file's group 0: setgid kept");
		cur_gid = 1234;
		TAP_CHECK(call(FUSE_SETATTR, (uint64_t)su, &none, sizeof(none)) == 0 &&
				  stat(hp("suid"), &st) == 0 && (st.st_mode & 07777) == 0767,
			  "SETATTR of nothing by 1234 outside the group: setgid without group exec killed");
		as_user(0, 0);
		TAP_CHECK(chmod(hp("suid"), 02767) == 0, "host: mode 2767 again");
		cur_uid = cur_gid = 1234;
		TAP_CHECK(call(FUSE_SETATTR, (uint64_t)su, &tr, sizeof(tr)) == 0 &&
				  stat(hp("suid"), &st) == 0 && (st.st_mode & 07777) == 0767,
			  "truncate with KILL_SUIDGID by a stranger: setgid without group exec killed");
		/* WRITE and OPEN/CREATE with O_TRUNC of root's file by 1234, who owns nothing here:
		   the kill is done with the thread's capabilities, with no switch to root. */
		{
			int64_t wfh;

			as_user(0, 0);
			TAP_CHECK(chmod(hp("suid"), 02767) == 0, "host: mode 2767 again");
			cur_uid = cur_gid = 1234;
			wfh = open_((uint64_t)su, O_WRONLY);
			TAP_CHECK(wfh >= 0 && write_((uint64_t)su, (uint64_t)wfh, 0, "s", FUSE_WRITE_KILL_SUIDGID) == 1 &&
					  stat(hp("suid"), &st) == 0 && (st.st_mode & 07777) == 0767,
				  "WRITE with KILL_SUIDGID by a stranger: setgid without group exec killed");
			as_user(0, 0);
			TAP_CHECK(chmod(hp("suid"), 06767) == 0, "host: mode 6767");
			cur_uid = 1234;
			cur_gid = 0;
			TAP_CHECK(wfh >= 0 && write_((uint64_t)su, (uint64_t)wfh, 0, "m", FUSE_WRITE_KILL_SUIDGID) == 1 &&
					  stat(hp("suid"), &st) == 0 && (st.st_mode & 07777) == 02767,
				  "WRITE with KILL_SUIDGID by a member, not the owner: setuid killed, "
				  "setgid without group exec kept");
			TAP_CHECK(wfh >= 0 && write_((uint64_t)su, (uint64_t)wfh, 0, "n", 0) == 1 &&
					  stat(hp("suid"), &st) == 0 && (st.st_mode & 07777) == 02767,
				  "WRITE without KILL_SUIDGID (a writer with CAP_FSETID): setgid kept");
			/* A KILL write leaves the thread without CAP_FSETID (fs_creds.c); what comes
			   next must have it back. */
			as_user(0, 0);
			TAP_CHECK(chmod(hp("suid"), 04767) == 0, "host: mode 4767");
			cur_uid = cur_gid = 1234;
			TAP_CHECK(wfh >= 0 && write_((uint64_t)su, (uint64_t)wfh, 0, "k", FUSE_WRITE_KILL_SUIDGID) == 1 &&
					  stat(hp("suid"), &st) == 0 && (st.st_mode & 07777) == 0767,
				  "WRITE with KILL_SUIDGID: setuid killed");
			TAP_CHECK(chmod(hp("suid"), 04767) == 0, "host: mode 4767 again");
			TAP_CHECK(wfh >= 0 && write_((uint64_t)su, (uint64_t)wfh, 0, "p", 0) == 1 &&
					  stat(hp("suid"), &st) == 0 && (st.st_mode & 07777) == 04767,
				  "WRITE without KILL_SUIDGID right after one with it: setuid kept");
			TAP_CHECK(wfh >= 0 && write_((uint64_t)su, (uint64_t)wfh, 0, "k", FUSE_WRITE_KILL_SUIDGID) == 1 &&
					  stat(hp("suid"), &st) == 0 && (st.st_mode & 07777) == 0767,
				  "and the next WRITE with it kills it again");
			{
				struct fuse_setattr_in in = { .valid = FATTR_MODE, .mode = 02750 };

				TAP_CHECK(call(FUSE_SETATTR, f, &in, sizeof(in)) == 0 &&
						  stat(hp("pub/mine"), &st) == 0 && st.st_gid == 4321 &&
						  (st.st_mode & 07777) == 02750,
					  "chmod g+s by 1234 (outside group 4321 on the host) right after a KILL "
					  "WRITE: setgid kept (CAP_FSETID back)");
			}
			if (wfh >= 0)
				TAP_CHECK(release((uint64_t)su, (uint64_t)wfh, false) == 0, "release");
		}
		{
			/* A root caller without CAP_FSETID is a stranger like any other (Linux's
			   in_group_or_capable()): the flag says it lacks the capability. */
			struct fuse_setattr_in tr0 = { .valid = FATTR_SIZE | FATTR_KILL_SUIDGID, .size = 0 };
			int64_t rfh;

			as_user(0, 0);
			TAP_CHECK(chown(hp("suid"), 0, 4321) == 0 && chmod(hp("suid"), 02767) == 0,
				  "host: root:4321, mode 2767");
			TAP_CHECK(call(FUSE_SETATTR, (uint64_t)su, &tr0, sizeof(tr0)) == 0 &&
					  stat(hp("suid"), &st) == 0 && (st.st_mode & 07777) == 0767,
				  "truncate with KILL_SUIDGID by root outside the file's group: setgid without "
				  "group exec killed");
			TAP_CHECK(chmod(hp("suid"), 02767) == 0, "host: mode 2767 again");
			rfh = open_((uint64_t)su, O_WRONLY);
			TAP_CHECK(rfh >= 0 && write_((uint64_t)su, (uint64_t)rfh, 0, "r", FUSE_WRITE_KILL_SUIDGID) == 1 &&
					  stat(hp("suid"), &st) == 0 && (st.st_mode & 07777) == 0767,
				  "WRITE with KILL_SUIDGID by root outside the file's group: the same");
			if (rfh >= 0)
				TAP_CHECK(release((uint64_t)su, (uint64_t)rfh, false) == 0, "release");
			as_user(0, 0);
			TAP_CHECK(chown(hp("suid"), 0, 0) == 0, "host: root:0 again");
		}
		{
			struct fuse_open_in op = { .flags = O_WRONLY | O_TRUNC,
						   .open_flags = FUSE_OPEN_KILL_SUIDGID };
			struct fuse_create_in cr = { .flags = O_WRONLY | O_TRUNC, .mode = 0644,
						     .open_flags = FUSE_OPEN_KILL_SUIDGID };
			int err;

			as_user(0, 0);
			TAP_CHECK(chmod(hp("suid"), 02767) == 0, "host: mode 2767 again");
			cur_uid = cur_gid = 1234;
			err = call(FUSE_OPEN, (uint64_t)su, &op, sizeof(op));
			TAP_CHECK(err == 0 && stat(hp("suid"), &st) == 0 && (st.st_mode & 07777) == 0767 &&
					  st.st_size == 0,
				  "OPEN O_TRUNC with KILL_SUIDGID by a stranger: setgid without group exec killed");
			if (err == 0)
				TAP_CHECK(release((uint64_t)su, ((struct fuse_open_out *)body())->fh, false) == 0,
					  "release");
			as_user(0, 0);
			TAP_CHECK(chmod(hp("suid"), 02767) == 0, "host: mode 2767 again");
			cur_uid = cur_gid = 1234;
			err = call_named(FUSE_CREATE, 1, &cr, sizeof(cr), "suid", NULL);
			TAP_CHECK(err == 0 && stat(hp("suid"), &st) == 0 && (st.st_mode & 07777) == 0767,
				  "CREATE O_TRUNC of the existing name with KILL_SUIDGID by a stranger: setgid "
				  "without group exec killed");
			if (err == 0) {
				const struct fuse_entry_out *eo = body();
				uint64_t cfh = ((struct fuse_open_out *)((char *)body() + sizeof(*eo)))->fh;
				uint64_t node = eo->nodeid;

				TAP_CHECK(release(node, cfh, false) == 0, "release");
				forget(node, 1);
			}
		}
		as_user(0, 0);
		TAP_CHECK(chmod(hp("suid"), 02767) == 0 &&
				  call(FUSE_SETATTR, (uint64_t)su, &none, sizeof(none)) == 0 &&
				  stat(hp("suid"), &st) == 0 && (st.st_mode & 07777) == 02767,
			  "SETATTR of nothing by root: setgid kept");
		cur_uid = cur_gid = 1234;
	}
	TAP_CHECK(mkdir_(1, "notmine", 0755) > 0 && stat(hp("notmine"), &st) == 0 && st.st_uid == 1234,
		  "MKDIR in root's 0755 dir, which the guest allowed: done as 1234, not refused again");
	{
		struct fuse_setattr_in in = { .valid = FATTR_UID, .uid = 0 };

		TAP_CHECK(call(FUSE_SETATTR, f, &in, sizeof(in)) == 0 && stat(hp("pub/mine"), &st) == 0 &&
				  st.st_uid == 0,
			  "chown to root that the guest allowed (its root sends uid 0 anyway) is done");
	}
	cur_uid = cur_gid = 0;
	TAP_CHECK(mkdir_(1, "rootdir", 0755) > 0 && stat(hp("rootdir"), &st) == 0 && st.st_uid == 0,
		  "back to root");
	forget(f, 1);
	forget((uint64_t)d, 1);
	forget((uint64_t)g, 1);
	forget((uint64_t)su, 1);
	forget(sg, 1);
	srv.allow_suid = false;
}

/* A POSIX ACL xattr (version 2) of n entries {tag, perm, id}. Returns its size. */
static size_t acl_blob(unsigned char *b, const uint32_t (*e)[3], unsigned int n)
{
	uint32_t version = 2;
	unsigned int i;

	memcpy(b, &version, 4);
	for (i = 0; i < n; i++) {
		uint16_t tag = (uint16_t)e[i][0], perm = (uint16_t)e[i][1];

		memcpy(b + 4 + 8 * i, &tag, 2);
		memcpy(b + 6 + 8 * i, &perm, 2);
		memcpy(b + 8 + 8 * i, &e[i][2], 4);
	}
	return 4 + 8 * n;
}

/* FUSE_POSIX_ACL and FUSE_DONT_MASK: agreed where the host keeps ACLs; the caller's umask applied
   by the host, or replaced by the parent's default ACL. */
static void test_acl(void)
{
	static const uint32_t dflt[][3] = { { 0x01, 7, ~0u }, { 0x02, 7, 1234 }, { 0x04, 5, ~0u },
					    { 0x10, 7, ~0u }, { 0x20, 5, ~0u } };
	struct fuse_init_in init = { .major = 7, .minor = 38, .max_readahead = 65536,
				     .flags = FUSE_HANDLE_KILLPRIV_V2 | FUSE_MAX_PAGES | FUSE_INIT_EXT |
					      FUSE_POSIX_ACL | FUSE_DONT_MASK };
	unsigned char blob[64];
	struct stat st;
	int64_t d, fh;
	uint64_t f;

	if (getxattr(root, "system.posix_acl_access", NULL, 0) < 0 && errno != ENODATA) {
		printf("ok %d # SKIP %s keeps no POSIX ACLs\n", ++tap_count, root);
		return;
	}
	TAP_CHECK(call(FUSE_INIT, 0, &init, sizeof(init)) == 0 &&
			  (((struct fuse_init_out *)body())->flags & (FUSE_POSIX_ACL | FUSE_DONT_MASK)) ==
				  (FUSE_POSIX_ACL | FUSE_DONT_MASK),
		  "INIT: POSIX ACLs and DONT_MASK agreed on a file system that keeps ACLs");
	{
		struct fuse_mkdir_in in = { .mode = 0777, .umask = 022 };

		TAP_CHECK(call_named(FUSE_MKDIR, 1, &in, sizeof(in), "masked", NULL) == 0 &&
				  stat(hp("masked"), &st) == 0 && (st.st_mode & 07777) == 0755,
			  "MKDIR 0777 with the caller's umask 022: 0755");
		forget(((struct fuse_entry_out *)body())->nodeid, 1);
	}
	d = mkdir_(1, "dflt", 0755);
	TAP_CHECK(d > 0 && setxattr(hp("dflt"), "system.posix_acl_default", blob, acl_blob(blob, dflt, 5),
				    0) == 0,
		  "host: a default ACL on dflt/");
	{
		struct fuse_create_in in = { .flags = O_WRONLY, .mode = 0666, .umask = 022 };

		fh = call_named(FUSE_CREATE, (uint64_t)d, &in, sizeof(in), "f", NULL);
		f = fh ? 0 : ((struct fuse_entry_out *)body())->nodeid;
		TAP_CHECK(fh == 0 && stat(hp("dflt/f"), &st) == 0 && (st.st_mode & 07777) == 0664 &&
				  getxattr(hp("dflt/f"), "system.posix_acl_access", NULL, 0) > 0,
			  "CREATE 0666, umask 022, under a default ACL: the ACL decides (0664), not the umask");
		if (!fh)
			TAP_CHECK(release(f, ((struct fuse_open_out *)((char *)body() +
								  sizeof(struct fuse_entry_out)))->fh,
					  false) == 0,
				  "release");
		forget(f, 1);
	}
	{
		struct fuse_getxattr_in in = { .size = 0 };

		TAP_CHECK(call_named(FUSE_GETXATTR, (uint64_t)d, &in, sizeof(in), "system.posix_acl_default",
				     NULL) == 0 &&
				  ((struct fuse_getxattr_out *)body())->size == 44,
			  "GETXATTR of the default ACL");
	}
	forget((uint64_t)d, 1);
	init.flags &= ~(uint32_t)(FUSE_POSIX_ACL | FUSE_DONT_MASK);
	TAP_CHECK(call(FUSE_INIT, 0, &init, sizeof(init)) == 0, "re-INIT without ACLs");
	{
		struct fuse_mkdir_in in = { .mode = 0777, .umask = 022 };

		TAP_CHECK(call_named(FUSE_MKDIR, 1, &in, sizeof(in), "unmasked", NULL) == 0 &&
				  stat(hp("unmasked"), &st) == 0 && (st.st_mode & 07777) == 0777,
			  "without DONT_MASK the mode is taken as the guest masked it");
		forget(((struct fuse_entry_out *)body())->nodeid, 1);
	}
}


static void test_forget_bound(void)
{
	size_t base = fsi_count(&srv.inodes);
	char name[32];
	int i, ok = 1;

	for (i = 0; i < 200; i++) {
		int64_t n = lookup(1, "a");

		if (n <= 0)
			ok = 0;
		else
			forget((uint64_t)n, 1);
	}
	TAP_CHECK(ok && fsi_count(&srv.inodes) == base, "200 LOOKUP+FORGET leave no inode behind");
	{
		/* Millions of lookups, as a guest walking a big tree makes them: 1000 names looked up
		   (the table grows), then all forgotten (it shrinks), over and over. Nothing may stay:
		   no inode, no fd. Fewer rounds under the sanitizers, which are ~10x slower. */
#if defined(__SANITIZE_ADDRESS__)
		const int rounds = 100;
#else
		const int rounds = 1000;
#endif
		static int64_t held[1000];
		int fds_before = open_fds(), r, k;

		mkdir(hp("many"), 0755);
		for (k = 0; k < 1000; k++) {
			snprintf(name, sizeof(name), "many/%d", k);
			close(open(hp(name), O_CREAT | O_WRONLY, 0600));
		}
		int64_t dir = lookup(1, "many");
		for (r = 0; r < rounds && ok; r++) {
			for (k = 0; k < 1000; k++) {
				snprintf(name, sizeof(name), "%d", k);
				held[k] = lookup((uint64_t)dir, name);
				ok &= held[k] > 0;
			}
			ok &= fsi_count(&srv.inodes) == base + 1001;
			for (k = 0; k < 1000; k++)
				if (held[k] > 0)
					forget((uint64_t)held[k], 1);
		}
		forget((uint64_t)dir, 1);
		char what[96];
		snprintf(what, sizeof(what),
			 "%d000 LOOKUP+FORGET over 1000 files leave no inode and no fd behind", rounds);
		TAP_CHECK(ok && fsi_count(&srv.inodes) == base && open_fds() == fds_before, what);
	}
	{
		unsigned char b[8 + 16 * 3];
		struct fuse_batch_forget_in in = { .count = 3 };
		struct fuse_forget_one one = { .nlookup = 1 };
		int64_t n1 = lookup(1, "a"), n2 = lookup(1, "y"), n3 = lookup(1, "x");

		memcpy(b, &in, sizeof(in));
		one.nodeid = (uint64_t)n1;
		memcpy(b + 8, &one, 16);
		one.nodeid = (uint64_t)n2;
		memcpy(b + 24, &one, 16);
		one.nodeid = (uint64_t)n3;
		memcpy(b + 40, &one, 16);
		TAP_CHECK(fsi_count(&srv.inodes) == base + 3 &&
				  call(FUSE_BATCH_FORGET, 0, b, sizeof(b)) == 1 &&
				  fsi_count(&srv.inodes) == base,
			  "BATCH_FORGET drops three inodes, no reply");
	}
	forget(1, 100);
	TAP_CHECK(getattr(1, &(struct fuse_attr){ 0 }) == 0, "FORGET never drops the root");
	{
		/* Unknown nodeids, one of them equal to a live one in its low 32 bits: nothing dies. */
		int64_t n = lookup(1, "a");
		size_t live = fsi_count(&srv.inodes);

		forget(12345678, 5);
		forget((uint64_t)n + (1ULL << 32), 5);
		TAP_CHECK(n > 0 && fsi_count(&srv.inodes) == live &&
				  getattr((uint64_t)n, &(struct fuse_attr){ 0 }) == 0,
			  "FORGET of an unknown nodeid is ignored");
		forget((uint64_t)n, 1);
	}
	{
		struct fuse_init_in in = { .major = 7, .minor = 38 };
		int64_t n = lookup(1, "a"), fh = open_((uint64_t)n, O_RDONLY);
		char buf[8];

		TAP_CHECK(n > 0 && fh >= 0 && call(FUSE_DESTROY, 1, NULL, 0) == 0 &&
				  fsi_count(&srv.inodes) == 1,
			  "DESTROY forgets every inode but the root");
		TAP_CHECK(getattr(1, &(struct fuse_attr){ 0 }) == -EIO, "after DESTROY: EIO until INIT");
		TAP_CHECK(call(FUSE_INIT, 0, &in, sizeof(in)) == 0 &&
				  read_((uint64_t)n, (uint64_t)fh, 0, 4, buf) == -EBADF &&
				  getattr((uint64_t)n, &(struct fuse_attr){ 0 }) == -ESTALE,
			  "after re-INIT the old handles and nodeids are gone");
	}
	fs_server_destroy(&srv);

	/* A server bounded to 32 inodes refuses more with ENFILE. */
	mkdir(hp("bound"), 0755);
	for (i = 0; i < 40; i++) {
		int fd;

		snprintf(name, sizeof(name), "bound/%d", i);
		fd = open(hp(name), O_CREAT | O_WRONLY, 0600);
		close(fd);
	}
	TAP_CHECK(server(false, 64) == 0, "server bounded to 64 fds");
	{
		int64_t d = lookup(1, "bound"), last = 0;

		for (i = 0; i < 40 && last >= 0; i++) {
			snprintf(name, sizeof(name), "%d", i);
			last = lookup((uint64_t)d, name);
		}
		TAP_CHECK(last == -ENFILE && i == 31, "lookups beyond 32 inodes -> ENFILE");
		snprintf(name, sizeof(name), "%d", 0);
		forget((uint64_t)lookup((uint64_t)d, name), 2);
		TAP_CHECK(lookup((uint64_t)d, "39") > 0, "after a FORGET there is room again");
	}
	fs_server_destroy(&srv);
}

/* A share's O_DIRECT policy reaches the host fd; a second INIT forgets the first session. */
static void test_direct_io_and_reinit(void)
{
	struct fuse_init_in init = { .major = 7, .minor = 38,
				     .flags = FUSE_MAX_PAGES | FUSE_INIT_EXT };
	struct fsh_handle *h;
	struct fuse_attr a;
	int64_t fh, fh2, f;
	uint64_t fid;
	int fl = -1, fl2 = -1;

	fh = create(1, "direct", O_RDWR | O_DIRECT, 0644, &fid);
	h = fh >= 0 ? fsh_get(&srv.handles, (uint64_t)fh, false) : NULL;
	if (h) {
		fl = fcntl(h->fd, F_GETFL);
		fsh_put(&srv.handles, h);
	}
	TAP_CHECK(fl >= 0 && !(fl & O_DIRECT), "by default a guest O_DIRECT is dropped on the host");
	srv.allow_direct_io = true;
	f = lookup(1, "direct");
	fh2 = f > 0 ? open_((uint64_t)f, O_RDONLY | O_DIRECT) : -1;
	h = fh2 >= 0 ? fsh_get(&srv.handles, (uint64_t)fh2, false) : NULL;
	if (h) {
		fl2 = fcntl(h->fd, F_GETFL);
		fsh_put(&srv.handles, h);
	}
	/* (a host file system without O_DIRECT refuses the open: that is the guest's answer then) */
	TAP_CHECK((fl2 >= 0 && (fl2 & O_DIRECT)) || fh2 == -EINVAL,
		  "allow_direct_io: the host fd is O_DIRECT too");
	srv.allow_direct_io = false;
	TAP_CHECK(call(FUSE_INIT, 0, &init, sizeof(init)) == 0, "a second INIT is answered");
	TAP_CHECK(getattr(fid, &a) == -ESTALE && read_(fid, (uint64_t)fh, 0, 1, (char[2]){ 0 }) ==
							 -EBADF,
		  "... and forgets the first session's nodeids and open files");
	TAP_CHECK(lookup(1, "direct") > 0, "the new session looks names up afresh");
}

/*
 * A LOOKUP of an inode the table holds is answered from a stat of the name (fsi_relearn): the same
 * nodeid, one more nlookup; a name that now leads elsewhere gets that inode; a symlink is itself.
 */
static void test_relookup(void)
{
	size_t base = fsi_count(&srv.inodes);
	int64_t a1, a2, b, a3, l1, l2;
	struct fuse_attr at;
	char path[400];
	int fd;

	snprintf(path, sizeof(path), "%s/rl_a", root);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s/rl_b", root);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	if (fd >= 0)
		close(fd);
	a1 = lookup(1, "rl_a");
	int fds = open_fds();
	/* After a new inode the next LOOKUP opens first (fs_lookup_expect_new): it finds the inode
	   known and closes the duplicate; the one after it looks with a stat only. */
	a2 = lookup(1, "rl_a");
	TAP_CHECK(a1 > 0 && a2 == a1 && fsi_count(&srv.inodes) == base + 1 && open_fds() == fds,
		  "a second LOOKUP of a known name: the same nodeid, no new inode, no fd more");
	a2 = lookup(1, "rl_a");
	TAP_CHECK(a2 == a1 && fsi_count(&srv.inodes) == base + 1 && open_fds() == fds,
		  "... and a third");
	forget((uint64_t)a1, 1);
	forget((uint64_t)a1, 1);
	TAP_CHECK(getattr((uint64_t)a1, &at) == 0, "... and it counted: one FORGET leaves it known");
	forget((uint64_t)a1, 1);
	TAP_CHECK(getattr((uint64_t)a1, &at) == -ESTALE && fsi_count(&srv.inodes) == base,
		  "the second FORGET drops it");
	a1 = lookup(1, "rl_a");
	b = lookup(1, "rl_b");
	char from[400], to[400];
	snprintf(from, sizeof(from), "%s/rl_b", root);
	snprintf(to, sizeof(to), "%s/rl_a", root);
	TAP_CHECK(rename(from, to) == 0, "(host) rl_b renamed over rl_a");
	a3 = lookup(1, "rl_a");
	TAP_CHECK(a1 > 0 && b > 0 && a3 == b && getattr((uint64_t)a3, &at) == 0 &&
			  (at.mode & 07777) == 0600,
		  "LOOKUP of a name that now leads to another known inode: that inode");
	snprintf(path, sizeof(path), "%s/rl_l", root);
	TAP_CHECK(symlink("rl_a", path) == 0, "(host) a symlink rl_l -> rl_a");
	l1 = lookup(1, "rl_l");
	l2 = lookup(1, "rl_l");
	TAP_CHECK(l1 > 0 && l2 == l1 && l1 != a3 && getattr((uint64_t)l1, &at) == 0 &&
			  S_ISLNK(at.mode),
		  "a known symlink is looked up as itself, never followed");
}

/* fh's enum fsh_kind, and its fd in *fd when not NULL (-1 both: no such handle). */
static int kind_of_fd(int64_t fh, int *fd)
{
	struct fsh_handle *h = fh >= 0 ? fsh_get(&srv.handles, (uint64_t)fh, false) : NULL;
	int v = h ? h->kind : -1;

	if (fd)
		*fd = h ? h->fd : -1;
	if (h)
		fsh_put(&srv.handles, h);
	return v;
}

static int kind_of(int64_t fh)
{
	return kind_of_fd(fh, NULL);
}

/*
 * On local storage some READs and WRITEs are made on the worker thread, the rest through io_uring
 * (fs_server.root_local, fs_file_kind). The share's own file system decides; then, whatever it is,
 * the decision per open file.
 */
static void test_file_kinds(void)
{
	bool root_local = srv.root_local;
	struct statfs sf;
	int64_t f, fh;

	TAP_CHECK(statfs(root, &sf) == 0 && xfer_local_magic(sf.f_type) == root_local,
		  "the share's file system decides whether it counts as local storage");
	srv.root_local = true; /* as on ext4, XFS, btrfs, F2FS or tmpfs */
	fh = create(1, "inl", O_RDWR, 0644, NULL);
	TAP_CHECK(kind_of(fh) == FSH_FILE_LOCAL, "CREATE O_RDWR: buffered on local storage (WRITEs inline)");
	f = lookup(1, "inl");
	TAP_CHECK(kind_of(f > 0 ? open_((uint64_t)f, O_WRONLY) : -1) == FSH_FILE_LOCAL,
		  "OPEN O_WRONLY: buffered on local storage");
	TAP_CHECK(kind_of(f > 0 ? open_((uint64_t)f, O_WRONLY | O_SYNC) : -1) == FSH_FILE_LOCAL_DIRECT,
		  "OPEN O_SYNC: waits for the disk (inline only when the queue holds nothing else)");
	TAP_CHECK(kind_of(f > 0 ? open_((uint64_t)f, O_WRONLY | O_DSYNC) : -1) == FSH_FILE_LOCAL_DIRECT,
		  "OPEN O_DSYNC: likewise");
	srv.allow_direct_io = true;
	fh = f > 0 ? open_((uint64_t)f, O_RDONLY | O_DIRECT) : -1;
	TAP_CHECK(fh == -EINVAL || kind_of(fh) == FSH_FILE_LOCAL_DIRECT,
		  "OPEN O_DIRECT (allowed): inline only when the queue holds nothing else");
	srv.allow_direct_io = false;
	TAP_CHECK(kind_of(f > 0 ? open_((uint64_t)f, O_RDONLY | O_DIRECT) : -1) == FSH_FILE_LOCAL,
		  "OPEN O_DIRECT dropped by the share: a buffered fd");
	srv.root_local = false; /* as on NFS, FUSE or 9p */
	TAP_CHECK(kind_of(create(1, "inl2", O_RDWR, 0644, NULL)) == FSH_FILE &&
			  kind_of(f > 0 ? open_((uint64_t)f, O_WRONLY | O_SYNC) : -1) == FSH_FILE,
		  "a share elsewhere: every READ and WRITE through io_uring");
	srv.root_local = root_local;
	TAP_CHECK(xfer_local_magic(EXT4_SUPER_MAGIC) && xfer_local_magic(TMPFS_MAGIC) &&
			  xfer_local_magic(XFS_SUPER_MAGIC) && !xfer_local_magic(NFS_SUPER_MAGIC) &&
			  !xfer_local_magic(FUSE_SUPER_MAGIC) && !xfer_local_magic(V9FS_MAGIC) &&
			  !xfer_local_magic(OVERLAYFS_SUPER_MAGIC),
		  "ext4, tmpfs and XFS are local storage; NFS, FUSE, 9p and overlayfs are not");
}

static void test_readonly(void)
{
	struct fuse_setattr_in sa = { .valid = FATTR_MODE, .mode = 0777 };
	int64_t n, fh;
	char buf[16];

	TAP_CHECK(server(true, 256) == 0, "read-only server");
	n = lookup(1, "x");
	TAP_CHECK(mkdir_(1, "nope", 0755) == -EROFS, "read-only: MKDIR -> EROFS");
	TAP_CHECK(create(1, "nope", O_RDWR, 0600, NULL) == -EROFS, "read-only: CREATE -> EROFS");
	{
		struct fuse_create_in in = { .flags = O_RDWR, .mode = 0600 };

		TAP_CHECK(call_named(FUSE_TMPFILE, 1, &in, sizeof(in), "/", NULL) == -EROFS,
			  "read-only: TMPFILE -> EROFS");
	}
	TAP_CHECK(open_((uint64_t)n, O_WRONLY) == -EROFS, "read-only: OPEN for write -> EROFS");
	TAP_CHECK(open_((uint64_t)n, O_RDONLY | O_TRUNC) == -EROFS, "read-only: O_TRUNC -> EROFS");
	TAP_CHECK(call(FUSE_SETATTR, (uint64_t)n, &sa, sizeof(sa)) == -EROFS,
		  "read-only: SETATTR -> EROFS");
	TAP_CHECK(call_named(FUSE_UNLINK, 1, NULL, 0, "x", NULL) == -EROFS,
		  "read-only: UNLINK -> EROFS");
	TAP_CHECK(call_named(FUSE_REMOVEXATTR, (uint64_t)n, NULL, 0, "user.k", NULL) == -EROFS,
		  "read-only: REMOVEXATTR -> EROFS");
	fh = open_((uint64_t)n, O_RDONLY);
	TAP_CHECK(fh >= 0 && read_((uint64_t)n, (uint64_t)fh, 0, 1, buf) == 1, "read-only: READ works");
	TAP_CHECK(write_((uint64_t)n, (uint64_t)fh, 0, "w", 0) == -EROFS, "read-only: WRITE -> EROFS");
	fs_server_destroy(&srv);
}

/* The fd of handle fh, -1 when none. */
static int fd_of(int64_t fh)
{
	int fd;

	(void)kind_of_fd(fh, &fd);
	return fd;
}

/* The fd parked on nodeid, -1 when none. */
static int parked_of(int64_t nodeid)
{
	struct fsi_inode *ino = nodeid > 0 ? fsi_get(&srv.inodes, (uint64_t)nodeid) : NULL;
	int fd = ino ? ino->parked_fd : -1;

	if (ino)
		fsi_put(&srv.inodes, ino);
	return fd;
}

/* The file position of fd: an open file description's own, so it tells one from another. */
static off_t pos_of(int fd)
{
	return fd >= 0 ? lseek(fd, 0, SEEK_CUR) : -1;
}

/*
 * Parked fds (inode.h, fsi_park): a plain read-only handle's RELEASE leaves its fd on the inode, and
 * the next OPEN by the same uid and gid with the same flags takes it, while a fstat still has the
 * stamp of the stat before the first open. A position set on the parked fd tells whether an OPEN
 * got that very description back (the server's I/O is positioned and never moves it).
 */
static void test_parked_fds(void)
{
	bool root_local = srv.root_local;
	uint32_t uid = cur_uid, gid = cur_gid;
	struct fs_limits lim, tight;
	int64_t n, fh, fh2;
	char path[400], buf[16];
	int fd, fds0, fds1;

	srv.root_local = true; /* as on ext4, XFS, btrfs, F2FS or tmpfs */
	snprintf(path, sizeof(path), "%s/pk", root);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	TAP_CHECK(fd >= 0 && write(fd, "parked", 6) == 6 && close(fd) == 0, "(host) a file pk");
	fds0 = open_fds();
	size_t budget0 = fs_budget_fds_used();
	n = lookup(1, "pk");
	fds1 = open_fds();
	fh = n > 0 ? open_((uint64_t)n, O_RDONLY) : -1;
	TAP_CHECK(fh >= 0 && read_((uint64_t)n, (uint64_t)fh, 0, 6, buf) == 6 && !strcmp(buf, "parked") &&
			  release((uint64_t)n, (uint64_t)fh, false) == 0,
		  "OPEN O_RDONLY, READ, RELEASE");
	TAP_CHECK(parked_of(n) >= 0 && fsi_parked_count(&srv.inodes) == 1 && open_fds() == fds1 + 1,
		  "the RELEASE parked the fd on the inode (one fd more than the lookup's)");
	TAP_CHECK(lseek(parked_of(n), 5, SEEK_SET) == 5, "(test) the parked description at offset 5");
	fh = open_((uint64_t)n, O_RDONLY);
	TAP_CHECK(fh >= 0 && pos_of(fd_of(fh)) == 5 && parked_of(n) < 0 && open_fds() == fds1 + 1,
		  "the next OPEN O_RDONLY takes the parked fd: no open(2), no fd more");
	TAP_CHECK(read_((uint64_t)n, (uint64_t)fh, 1, 5, buf) == 5 && !strcmp(buf, "arked"),
		  "... and reads through it");
	fh2 = open_((uint64_t)n, O_RDONLY);
	TAP_CHECK(fh2 >= 0 && pos_of(fd_of(fh2)) == 0 && open_fds() == fds1 + 2,
		  "a second OPEN meanwhile opens its own fd");
	TAP_CHECK(release((uint64_t)n, (uint64_t)fh2, false) == 0 &&
			  release((uint64_t)n, (uint64_t)fh, false) == 0 && open_fds() == fds1 + 1 &&
			  fsi_parked_count(&srv.inodes) == 1,
		  "two RELEASEs: one fd parked, the other closed");
	(void)lseek(parked_of(n), 5, SEEK_SET);
	as_user(1000, 1000);
	fh = open_((uint64_t)n, O_RDONLY);
	TAP_CHECK(fh >= 0 && pos_of(fd_of(fh)) == 0 && parked_of(n) >= 0,
		  "another uid's OPEN never gets the parked fd");
	TAP_CHECK(release((uint64_t)n, (uint64_t)fh, false) == 0 && open_fds() == fds1 + 1,
		  "... and its RELEASE closes (one fd parked per inode)");
	as_user(uid, gid);
	fh = open_((uint64_t)n, O_RDWR);
	TAP_CHECK(fh >= 0 && pos_of(fd_of(fh)) == 0 && release((uint64_t)n, (uint64_t)fh, false) == 0 &&
			  open_fds() == fds1 + 1 && pos_of(parked_of(n)) == 5,
		  "O_RDWR neither takes the parked fd nor parks its own");
	TAP_CHECK(chmod(path, 0640) == 0, "(host) chmod 0640: the stamp changes");
	fh = open_((uint64_t)n, O_RDONLY);
	TAP_CHECK(fh >= 0 && pos_of(fd_of(fh)) == 0 && parked_of(n) < 0 && open_fds() == fds1 + 1,
		  "after a change of mode the OPEN opens anew and closes the stale parked fd");
	TAP_CHECK(release((uint64_t)n, (uint64_t)fh, false) == 0 && parked_of(n) >= 0,
		  "... and parks the new one");
	TAP_CHECK(chown(path, 1000, 1000) == 0, "(host) chown 1000:1000");
	(void)lseek(parked_of(n), 5, SEEK_SET);
	fh = open_((uint64_t)n, O_RDONLY);
	TAP_CHECK(fh >= 0 && pos_of(fd_of(fh)) == 0 && release((uint64_t)n, (uint64_t)fh, false) == 0,
		  "after a change of owner likewise");
	forget((uint64_t)n, 1);
	TAP_CHECK(fsi_parked_count(&srv.inodes) == 0 && open_fds() == fds0,
		  "FORGET of the inode closes its parked fd");
	n = lookup(1, "pk");
	srv.root_local = false; /* as on NFS, FUSE or 9p: an open revalidates there */
	fh = n > 0 ? open_((uint64_t)n, O_RDONLY) : -1;
	TAP_CHECK(fh >= 0 && release((uint64_t)n, (uint64_t)fh, false) == 0 && parked_of(n) < 0 &&
			  open_fds() == fds1,
		  "not on local storage: nothing parked");
	srv.root_local = true;
	fs_budget_limits(&lim);
	tight = lim;
	tight.max_fds = fs_budget_fds_used() * 2; /* used is half the budget: no parking */
	fs_budget_configure(&tight);
	fh = open_((uint64_t)n, O_RDONLY);
	TAP_CHECK(fh >= 0 && release((uint64_t)n, (uint64_t)fh, false) == 0 && parked_of(n) < 0 &&
			  open_fds() == fds1,
		  "with half the fd budget in use nothing is parked");
	fs_budget_configure(&lim);
	fh = open_((uint64_t)n, O_RDONLY);
	TAP_CHECK(fh >= 0 && release((uint64_t)n, (uint64_t)fh, false) == 0 && parked_of(n) >= 0,
		  "with room again it is");

	/* Parked fds are a cache: a spent budget closes the oldest before the guest hears ENFILE. */
	snprintf(path, sizeof(path), "%s/pk2", root);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	TAP_CHECK(fd >= 0 && close(fd) == 0, "(host) a file pk2");
	int64_t m = lookup(1, "pk2");
	fh = m > 0 ? open_((uint64_t)m, O_RDONLY) : -1;
	TAP_CHECK(fh >= 0 && release((uint64_t)m, (uint64_t)fh, false) == 0 && parked_of(m) >= 0 &&
			  fsi_parked_count(&srv.inodes) == 2,
		  "two files' fds parked");
	tight.max_fds = fs_budget_fds_used(); /* spent */
	fs_budget_configure(&tight);
	int fds2 = open_fds();
	fh = open_((uint64_t)m, O_RDWR);
	TAP_CHECK(fh >= 0 && parked_of(n) < 0 && parked_of(m) >= 0 && open_fds() == fds2,
		  "an OPEN with the fd budget spent closes the oldest parked fd (pk's) instead of ENFILE");
	TAP_CHECK(release((uint64_t)m, (uint64_t)fh, false) == 0, "... RELEASE");
	snprintf(path, sizeof(path), "%s/pk3", root);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	TAP_CHECK(fd >= 0 && close(fd) == 0, "(host) a file pk3");
	tight.max_fds = fs_budget_fds_used(); /* spent again (the RELEASE gave one back) */
	fs_budget_configure(&tight);
	int64_t k = lookup(1, "pk3");
	TAP_CHECK(k > 0 && parked_of(m) < 0 && fsi_parked_count(&srv.inodes) == 0,
		  "a LOOKUP with the fd budget spent closes the next parked fd (pk2's)");
	TAP_CHECK(open_((uint64_t)n, O_RDWR) == -ENFILE,
		  "nothing parked and the budget spent: ENFILE, as before");
	fs_budget_configure(&lim);
	forget((uint64_t)k, 1);
	forget((uint64_t)m, 1);
	forget((uint64_t)n, 1);
	TAP_CHECK(open_fds() == fds0 && fsi_parked_count(&srv.inodes) == 0 &&
			  fs_budget_fds_used() == budget0,
		  "no fd left behind, none counted as parked or in the fd budget");
	srv.root_local = root_local;
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/fs_server_XXXXXX");
	if (!mkdtemp(root) || chmod(root, 0755) < 0)
		return 1;
	snprintf(outside, sizeof(outside), "%s.outside", root);
	test_init();
	test_files();
	test_links_rename();
	test_tmpfile();
	test_escapes();
	test_dirs();
	test_xattr_misc();
	test_creds();
	test_direct_io_and_reinit();
	test_file_kinds();
	test_relookup();
	test_parked_fds();
	test_acl();
	test_forget_bound();
	test_readonly();
	(void)tree_discard(outside); /* there only if a test stopped half-way */
	(void)tree_discard(root);
	return tap_done();
}
