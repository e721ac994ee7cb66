/* conform_open.c: open/creat flags, read and write through them, O_APPEND/O_TRUNC, truncate, FIFOs. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/posix/conform.h"

/* Close an fd a check opened (nothing to do when the open failed). */
static void cf_close(long fd)
{
	if (fd >= 0)
		close((int)fd);
}

/* O_TMPFILE: an unnamed file, linked in later through /proc/self/fd (Linux open(2)). */
static void cf_open_tmpfile(void)
{
	char proc[64];
	struct stat st;
	long fd;

	fd = CF("o_tmpfile", open(".", O_TMPFILE | O_RDWR, 0640));
	if (fd >= 0) {
		CF("o_tmpfile-write", write((int)fd, "tmp", 3));
		CF("o_tmpfile-fstat", fstat((int)fd, &st));
		cf_val("o_tmpfile-unnamed", "nlink=%lu mode=%04o size=%lld", (unsigned long)st.st_nlink,
		       (unsigned int)(st.st_mode & 07777), (long long)st.st_size);
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", (int)fd);
		CFS("o_tmpfile-link", linkat(AT_FDCWD, proc, AT_FDCWD, "tmp-linked", AT_SYMLINK_FOLLOW),
		    "tmp-linked");
		cf_val("o_tmpfile-linked-content", "%s", cf_content("tmp-linked"));
		close((int)fd);
	}
	fd = CF("o_tmpfile-o_excl", open(".", O_TMPFILE | O_EXCL | O_WRONLY, 0600));
	if (fd >= 0) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", (int)fd);
		CF("o_tmpfile-o_excl-link", linkat(AT_FDCWD, proc, AT_FDCWD, "tmp-excl", AT_SYMLINK_FOLLOW));
		close((int)fd);
	}
	cf_close(CF("o_tmpfile-rdonly", open(".", O_TMPFILE | O_RDONLY, 0600)));
	cf_close(CF("o_tmpfile-on-file", open("a", O_TMPFILE | O_RDWR, 0600)));
}

/* open(2)/creat(2) flags (POSIX open(), Linux open(2)). */
static void cf_open_flags(void)
{
	char name[300];
	long fd;

	cf_close(CFS("creat-new", open("a", O_CREAT | O_WRONLY, 0666), "a"));
	cf_close(CFS("creat-umask-0777", open("m", O_CREAT | O_WRONLY, 0777), "m"));
	cf_close(CFS("creat-setuid-bits", open("s", O_CREAT | O_WRONLY, 06755), "s"));
	cf_close(CF("creat-excl-exists", open("a", O_CREAT | O_EXCL | O_WRONLY, 0644)));
	cf_close(CFS("creat-excl-new", open("b", O_CREAT | O_EXCL | O_RDWR, 0600), "b"));
	cf_close(CFS("creat(2)", creat("c", 0640), "c"));
	cf_mkfile("k", 0644, "keep");
	cf_close(CFS("creat-existing-keeps-data", open("k", O_CREAT | O_RDWR, 0600), "k"));
	cf_mkfile("t", 0644, "hello");
	cf_age("t");
	cf_close(CFS("o_trunc", open("t", O_WRONLY | O_TRUNC), "t"));
	cf_val("o_trunc-mtime", "changed: %s", cf_yn(cf_mtime("t") != 1000000000LL * 1000000000LL));
	cf_age("t");
	cf_close(CFS("o_trunc-empty", open("t", O_WRONLY | O_TRUNC), "t"));
	cf_val("o_trunc-empty-mtime", "changed: %s",
	       cf_yn(cf_mtime("t") != 1000000000LL * 1000000000LL));
	cf_mkfile("t2", 0644, "hello");
	cf_close(CFS("o_rdonly-o_trunc", open("t2", O_RDONLY | O_TRUNC), "t2"));
	cf_close(CF("o_directory-on-file", open("a", O_RDONLY | O_DIRECTORY)));
	cf_close(CF("o_directory-on-dir", open(".", O_RDONLY | O_DIRECTORY)));
	cf_close(CF("o_wronly-on-dir", open(".", O_WRONLY)));
	cf_close(CF("o_rdwr-on-dir", open(".", O_RDWR)));
	cf_close(CF("o_creat-on-dir", open(".", O_CREAT | O_RDONLY, 0644)));
	cf_close(CFS("o_creat-o_directory-new", open("cd", O_CREAT | O_DIRECTORY | O_RDONLY, 0644), "cd"));
	cf_setup("symlink", symlink("a", "la"));
	cf_setup("symlink", symlink(".", "ldot"));
	cf_close(CF("o_nofollow-on-symlink", open("la", O_RDONLY | O_NOFOLLOW)));
	cf_close(CF("o_nofollow-o_directory-on-dir-symlink", open("ldot", O_RDONLY | O_NOFOLLOW | O_DIRECTORY)));
	fd = CF("o_path-o_nofollow-on-symlink", open("la", O_PATH | O_NOFOLLOW));
	if (fd >= 0) {
		struct stat st;

		CF("o_path-fstat", fstat((int)fd, &st));
		cf_val("o_path-type", "%s", S_ISLNK(st.st_mode) ? "lnk" : "not-lnk");
		CF("o_path-read", read((int)fd, name, 1));
	}
	cf_close(fd);
	cf_close(CF("follow-symlink", open("la", O_RDONLY)));
	cf_setup("symlink", symlink("dangling-target", "ld"));
	cf_close(CFS("o_creat-on-dangling-symlink", open("ld", O_CREAT | O_WRONLY, 0640), "dangling-target"));
	cf_setup("symlink", symlink("dangling2", "ld2"));
	cf_close(CFS("o_creat-o_excl-on-dangling-symlink", open("ld2", O_CREAT | O_EXCL | O_WRONLY, 0640),
		     "dangling2"));
	cf_close(CF("o_creat-o_nofollow-on-symlink", open("ld2", O_CREAT | O_NOFOLLOW | O_WRONLY, 0640)));
	cf_setup("symlink", symlink("nodir/x", "ld3"));
	cf_close(CF("o_creat-on-symlink-into-missing-dir", open("ld3", O_CREAT | O_WRONLY, 0640)));
	cf_close(CF("trailing-slash-on-file", open("a/", O_RDONLY)));
	cf_close(CF("o_creat-trailing-slash", open("new/", O_CREAT | O_WRONLY, 0644)));
	cf_close(CF("file-as-dir-component", open("a/x", O_RDONLY)));
	cf_close(CF("o_creat-in-missing-dir", open("nodir/x", O_CREAT | O_WRONLY, 0644)));
	cf_close(CF("missing", open("missing", O_RDONLY)));
	cf_close(CF("empty-path", open("", O_RDONLY)));
	memset(name, 'n', 255);
	name[255] = '\0';
	cf_close(CF("name-255", open(name, O_CREAT | O_WRONLY, 0644)));
	cf_val("name-255-readback", "%s", cf_desc(name));
	name[255] = 'n';
	name[256] = '\0';
	cf_close(CF("name-256", open(name, O_CREAT | O_WRONLY, 0644)));
	cf_open_tmpfile();
	cf_mkfile("w0200", 0200, "secret");
	cf_close(CF("o_rdonly-mode-0200", open("w0200", O_RDONLY)));
	cf_mkfile("r0444", 0444, "ro");
	cf_close(CF("o_wronly-mode-0444", open("r0444", O_WRONLY)));
	cf_close(CF("o_rdwr-mode-0444", open("r0444", O_RDWR)));
}

/* read(2)/write(2)/lseek(2) and what the access mode and O_APPEND make of them. */
static void cf_open_rw(void)
{
	char buf[64];
	long fd;

	fd = CF("rw-open", open("rw", O_CREAT | O_RDWR, 0644));
	if (fd < 0)
		return;
	CF("rw-write", write((int)fd, "hello", 5));
	cf_val("rw-lseek-cur", "%lld", (long long)lseek((int)fd, 0, SEEK_CUR));
	cf_val("rw-read-at-eof", "%zd", read((int)fd, buf, sizeof(buf)));
	cf_val("rw-pread", "%zd", pread((int)fd, buf, sizeof(buf), 1));
	cf_val("rw-pread-beyond-eof", "%zd", pread((int)fd, buf, sizeof(buf), 100));
	CFS("rw-pwrite-hole", pwrite((int)fd, "x", 1, 10), "rw");
	cf_val("rw-hole-content", "%s", cf_content("rw"));
	cf_val("rw-lseek-end", "%lld", (long long)lseek((int)fd, 0, SEEK_END));
	CF("rw-fsync", fsync((int)fd));
	CF("rw-fdatasync", fdatasync((int)fd));
	close((int)fd);
	CF("closed-fd-read", read((int)fd, buf, 1));
	CF("closed-fd-close", close((int)fd));

	fd = CF("rdonly-open", open("rw", O_RDONLY));
	if (fd >= 0) {
		CF("rdonly-write", write((int)fd, "x", 1));
		CF("rdonly-fsync", fsync((int)fd));
		close((int)fd);
	}
	fd = CF("wronly-open", open("rw", O_WRONLY));
	if (fd >= 0) {
		CF("wronly-read", read((int)fd, buf, 1));
		close((int)fd);
	}
	cf_mkfile("ap", 0644, "hello");
	fd = CF("append-open", open("ap", O_WRONLY | O_APPEND));
	if (fd >= 0) {
		cf_val("append-flags", "accmode=%d append=%s", fcntl((int)fd, F_GETFL) & O_ACCMODE,
		       cf_yn(fcntl((int)fd, F_GETFL) & O_APPEND));
		lseek((int)fd, 0, SEEK_SET);
		CF("append-write-after-seek0", write((int)fd, "12", 2));
		CF("append-pwrite-at-0", pwrite((int)fd, "34", 2, 0));
		close((int)fd);
	}
	cf_val("append-content", "%s", cf_content("ap"));
	cf_mkfile("ro", 0644, "data");
	cf_age("ro");
	fd = open("ro", O_RDONLY);
	if (fd >= 0) {
		CF("read-only-read", read((int)fd, buf, 4));
		close((int)fd);
	}
	cf_val("read-mtime", "changed: %s", cf_yn(cf_mtime("ro") != 1000000000LL * 1000000000LL));
	cf_age("ro");
	fd = open("ro", O_WRONLY);
	if (fd >= 0) {
		CF("write-then-mtime", write((int)fd, "D", 1));
		close((int)fd);
	}
	cf_val("write-mtime", "changed: %s", cf_yn(cf_mtime("ro") != 1000000000LL * 1000000000LL));
	fd = open("ro", O_RDWR);
	if (fd >= 0) {
		CF("unlink-while-open", unlink("ro"));
		{
			struct stat st;

			CF("unlinked-fstat", fstat((int)fd, &st));
			cf_val("unlinked-nlink", "%lu", (unsigned long)st.st_nlink);
		}
		cf_val("unlinked-pread", "%zd", pread((int)fd, buf, sizeof(buf), 0));
		CF("unlinked-write", pwrite((int)fd, "z", 1, 0));
		close((int)fd);
	}
	cf_mkfile("mv", 0644, "moving");
	fd = open("mv", O_RDONLY);
	if (fd >= 0) {
		CF("rename-while-open", rename("mv", "mv2"));
		cf_val("renamed-pread", "%zd", pread((int)fd, buf, sizeof(buf), 0));
		close((int)fd);
	}
}

/* truncate(2)/ftruncate(2): grow, shrink, the wrong kinds of file and fd. */
static void cf_open_truncate(void)
{
	long fd;

	cf_mkfile("tr", 0644, "hello world");
	CFS("truncate-shrink", truncate("tr", 5), "tr");
	cf_val("truncate-shrink-content", "%s", cf_content("tr"));
	CFS("truncate-grow", truncate("tr", 8), "tr");
	cf_val("truncate-grow-content", "%s", cf_content("tr"));
	CF("truncate-negative", truncate("tr", -1));
	CF("truncate-dir", truncate(".", 0));
	CF("truncate-missing", truncate("missing", 0));
	cf_setup("mkfifo", mkfifo("tfifo", 0644));
	CF("truncate-fifo", truncate("tfifo", 0));
	cf_age("tr");
	CFS("truncate-same-size", truncate("tr", 8), "tr");
	cf_val("truncate-same-size-mtime", "changed: %s",
	       cf_yn(cf_mtime("tr") != 1000000000LL * 1000000000LL));
	fd = open("tr", O_RDWR);
	if (fd >= 0) {
		CFS("ftruncate-shrink", ftruncate((int)fd, 2), "tr");
		CFS("ftruncate-grow", ftruncate((int)fd, 4096 + 3), "tr");
		CF("ftruncate-negative", ftruncate((int)fd, -1));
		close((int)fd);
	}
	fd = open("tr", O_RDONLY);
	if (fd >= 0) {
		CF("ftruncate-rdonly-fd", ftruncate((int)fd, 1));
		close((int)fd);
	}
	fd = open(".", O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		CF("ftruncate-dir-fd", ftruncate((int)fd, 0));
		close((int)fd);
	}
	/* Permission is checked when a file is opened, not when the open fd is used. */
	fd = open("tr", O_WRONLY);
	if (fd >= 0) {
		cf_setup("chmod", chmod("tr", 0444));
		CFS("ftruncate-after-chmod-0444", ftruncate((int)fd, 1), "tr");
		cf_setup("chmod", chmod("tr", 0));
		CFS("write-after-chmod-0", write((int)fd, "W", 1), "tr");
		close((int)fd);
	}
	cf_setup("chmod", chmod("tr", 0444));
	CFS("truncate-mode-0444", truncate("tr", 0), "tr");
	cf_setup("chmod", chmod("tr", 0644));
}

/* fallocate(2), SEEK_DATA/SEEK_HOLE, copy_file_range(2). */
static void cf_open_space(void)
{
	long fd = open("sp", O_CREAT | O_RDWR, 0644);

	if (cf_setup("sp", fd) < 0)
		return;
	CFS("fallocate-extend", fallocate((int)fd, 0, 0, 8192), "sp");
	CFS("fallocate-keep-size", fallocate((int)fd, FALLOC_FL_KEEP_SIZE, 8192, 8192), "sp");
	cf_setup("pwrite", pwrite((int)fd, "abcdefgh", 8, 0));
	CFS("fallocate-punch-hole", fallocate((int)fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 2, 3),
	    "sp");
	cf_val("punch-hole-content", "%s", cf_content("sp"));
	CF("fallocate-punch-without-keep-size", fallocate((int)fd, FALLOC_FL_PUNCH_HOLE, 0, 1));
	CF("fallocate-zero-length", fallocate((int)fd, 0, 0, 0));
	close((int)fd);
	fd = open("sparse", O_CREAT | O_RDWR, 0644);
	if (cf_setup("sparse", fd) < 0)
		return;
	cf_setup("pwrite", pwrite((int)fd, "x", 1, 1 << 20));
	cf_val("seek-data", "%lld", (long long)lseek((int)fd, 0, SEEK_DATA));
	cf_val("seek-hole", "%lld", (long long)lseek((int)fd, 0, SEEK_HOLE));
	CF("seek-data-beyond-eof", lseek((int)fd, 2 << 20, SEEK_DATA));
	CFS("pwrite-at-1tib", pwrite((int)fd, "y", 1, 1LL << 40), "sparse");
	CF("pwrite-at-max-offset", pwrite((int)fd, "y", 1, INT64_MAX));
	CF("ftruncate-beyond-max", ftruncate((int)fd, INT64_MAX));
	close((int)fd);
	{
		long in = open("k", O_RDONLY), out = open("cfr", O_CREAT | O_WRONLY, 0644);
		loff_t off = 0;

		if (in >= 0 && out >= 0)
			CFS("copy_file_range", copy_file_range((int)in, &off, (int)out, NULL, 100, 0), "cfr");
		cf_val("copy_file_range-content", "%s", cf_content("cfr"));
		cf_close(in);
		cf_close(out);
	}
}

/* A FIFO is the guest kernel's pipe, whatever file system holds its name. */
static void cf_open_fifo(void)
{
	char buf[8] = { 0 };
	long fd;

	cf_setup("mkfifo", mkfifo("p", 0666));
	cf_close(CF("fifo-wronly-nonblock-no-reader", open("p", O_WRONLY | O_NONBLOCK)));
	cf_close(CF("fifo-rdonly-nonblock", open("p", O_RDONLY | O_NONBLOCK)));
	fd = CF("fifo-rdwr", open("p", O_RDWR));
	if (fd >= 0) {
		CF("fifo-write", write((int)fd, "xy", 2));
		CF("fifo-read", read((int)fd, buf, sizeof(buf)));
		cf_val("fifo-data", "%s", buf);
		close((int)fd);
	}
}

static void cf_open_all(void)
{
	cf_open_flags();
	cf_open_rw();
	cf_open_truncate();
	cf_open_space();
	cf_open_fifo();
}

void cf_open(void)
{
	cf_in_dir("open", cf_open_all);
}
