/* test_fs_limits.c: one fd budget across shares, and 10^5 open directories that cost a bounded heap. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
/* libasan's count of live heap bytes (declared by clang's sanitizer headers, not by GCC's). */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

#include "devices/fs/fs_budget.h"
#include "devices/fs/fs_server.h"
#include "devices/fs/virtio_fs.h"
#include "tests/support/fs_call.h"
#include "tests/support/tree.h"
#include "tests/unit/tap.h"

#define NFILES 300     /* names in the shared directory: a 4 KiB READDIR leaves some in the buffer */
#define NOPEN 100000   /* OPENDIR + READDIR without RELEASEDIR, when RLIMIT_NOFILE allows */
/* The stated bound: the dir buffers of the budget, plus 256 bytes per open handle. */
#define HEAP_BOUND(n) ((size_t)FS_DEFAULT_DIR_BUFFERS * 8192 + (size_t)(n) * 256)

static char root[64];

static size_t heap_in_use(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return __sanitizer_get_current_allocated_bytes();
#else
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
#endif
}

static int populate(void)
{
	char p[128];

	for (int i = 0; i < NFILES; i++) {
		int fd;

		snprintf(p, sizeof(p), "%s/a-rather-long-file-name-%04d", root, i);
		fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		if (fd < 0)
			return -errno;
		close(fd);
	}
	return 0;
}

static int serve(struct fs_server *s, struct fsc *c, size_t max_fds)
{
	int err = fs_server_create(s, root, false, FS_CACHE_AUTO, max_fds);

	if (err)
		return err;
	err = fsc_open(c, s);
	return err ? err : fsc_init(c, 0);
}

/* Two shares, one budget of 100 fds: what one holds, the other cannot have. */
static void test_one_budget(void)
{
	struct fs_limits lim = { .max_fds = 100 };
	struct fs_server a, b;
	struct fsc ca, cb;
	char name[64];
	int got = 0, i;
	int64_t n, first = 0;

	fs_budget_configure(&lim);
	TAP_CHECK(serve(&a, &ca, 4096) == 0 && serve(&b, &cb, 4096) == 0, "two shares");
	for (i = 0; i < NFILES; i++) {
		snprintf(name, sizeof(name), "a-rather-long-file-name-%04d", i);
		n = fsc_lookup(&ca, 1, name);
		if (n < 0)
			break;
		if (!first)
			first = n;
		got++;
	}
	TAP_CHECK(got == 100 && n == -ENFILE, "share A gets the whole budget of 100, then ENFILE");
	TAP_CHECK(fsc_lookup(&cb, 1, "a-rather-long-file-name-0000") == -ENFILE &&
			  fsc_opendir(&cb, 1) == -ENFILE,
		  "share B gets nothing while A holds it all (LOOKUP and OPENDIR: ENFILE)");
	{
		struct fuse_forget_in f = { .nlookup = 1 };

		fsc_call(&ca, FUSE_FORGET, (uint64_t)first, &f, sizeof(f), NULL, NULL);
	}
	TAP_CHECK(fsc_lookup(&cb, 1, "a-rather-long-file-name-0001") > 0,
		  "once A forgets an inode, B can look one up");
	fsc_close(&ca);
	fsc_close(&cb);
	fs_server_destroy(&a);
	fs_server_destroy(&b);
	TAP_CHECK(fs_budget_fds_used() == 0, "every fd went back to the budget");
}

/* nopen handles: 10^5 where the fd limit allows, else what it allows (a sandbox may forbid raising
   the hard limit even to root); the bound scales with it and stays far below nopen * 8 KiB. */
static void test_many_dirs(int nopen)
{
	struct fs_limits lim = { .max_fds = (size_t)nopen + 1000 };
	struct fuse_read_in rd = { .size = 4096 };
	struct fs_server s;
	struct fsc c;
	size_t before, after;
	int64_t fh = -1;
	int i, ok = 0, names = 0;

	fs_budget_configure(&lim);
	TAP_CHECK(serve(&s, &c, 2 * (size_t)nopen + 4096) == 0, "a share for the directory handles");
	before = heap_in_use();
	for (i = 0; i < nopen; i++) {
		fh = fsc_opendir(&c, 1);
		if (fh < 0)
			break;
		rd.fh = (uint64_t)fh;
		rd.offset = 0;
		if (fsc_call(&c, FUSE_READDIR, 1, &rd, sizeof(rd), NULL, NULL) == 0 &&
		    c.rep_len > sizeof(struct fuse_out_header))
			ok++;
	}
	after = heap_in_use();
	printf("# %d OPENDIR + READDIR without RELEASEDIR\n", nopen);
	TAP_CHECK(ok == nopen, "every OPENDIR + READDIR answered, none released");
	printf("# heap grew by %zu KiB for %d open directories (bound %zu KiB)\n",
	       (after - before) / 1024, ok, HEAP_BOUND(nopen) / 1024);
	TAP_CHECK(after - before < HEAP_BOUND(nopen),
		  "heap growth under 16 MiB of dir buffers + 256 bytes per open handle");
	TAP_CHECK(fs_budget_dir_buffers_used() <= FS_DEFAULT_DIR_BUFFERS,
		  "directory buffers held stay within the budget");
	/* The last stream had no buffer of its own: it must still list every name exactly once. */
	{
		struct fuse_out_header oh;
		static bool seen[NFILES];
		int dup = 0;

		names = 0;
		rd.fh = (uint64_t)fh;
		rd.offset = 0;
		for (;;) {
			unsigned char *p, *end;

			if (fsc_call(&c, FUSE_READDIR, 1, &rd, sizeof(rd), NULL, NULL) != 0)
				break;
			memcpy(&oh, c.rep, sizeof(oh));
			if (oh.len == sizeof(oh))
				break;
			p = fsc_body(&c);
			end = c.rep + oh.len;
			while (p + FUSE_NAME_OFFSET <= end) {
				struct fuse_dirent de;
				int k;

				memcpy(&de, p, sizeof(de));
				if (sscanf((char *)p + FUSE_NAME_OFFSET, "a-rather-long-file-name-%4d", &k) == 1 &&
				    k >= 0 && k < NFILES) {
					dup += seen[k];
					seen[k] = true;
					names++;
				}
				rd.offset = de.off;
				p += FUSE_DIRENT_ALIGN(FUSE_NAME_OFFSET + de.namelen);
			}
		}
		TAP_CHECK(names == NFILES && dup == 0,
			  "a stream without its own buffer still lists every name once");
	}
	fsc_close(&c);
	fs_server_destroy(&s);
	TAP_CHECK(fs_budget_fds_used() == 0 && fs_budget_dir_buffers_used() == 0,
		  "destroying the share returns every fd and buffer");
}

int main(void)
{
	struct rlimit rl = { 2 * NOPEN, 2 * NOPEN };
	int nopen = NOPEN;

	strcpy(root, "/var/tmp/ringvm-fslim-XXXXXX");
	if (!mkdtemp(root) || populate()) {
		perror("setup");
		return 1;
	}
	test_one_budget();
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0 && getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 2 * NOPEN)
			nopen = (int)rl.rlim_cur - 2000;
	}
	if (nopen < 10000)
		printf("ok %d # SKIP fewer than 12000 fds allowed\n", ++tap_count);
	else
		test_many_dirs(nopen);
	(void)tree_discard(root);
	return tap_done();
}
