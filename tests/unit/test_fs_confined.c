/* test_fs_confined.c: every FUSE operation the server implements, served by a thread confined to the
   virtio-fs worker's seccomp filter (SECCOMP_ROLE_WORKER_FS, kill mode). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "devices/fs/fs_server.h"
#include "tests/support/fs_call.h"
#include "tests/support/tree.h"
#include "tests/unit/tap.h"
#include "vmm/seccomp.h"

/*
 * A child process plays a queue worker: it makes the server and runs the device's per-thread setup
 * (fs_thread_prepare), confines itself to the worker-fs role in kill mode, as the real workers do
 * (devices/virtio/worker.c), then serves one request of every kind, as a guest's root and as an
 * ordinary guest user (fsuid switches, capability raising). It reports each result through a pipe
 * made before the filter. A system call the role's list misses kills it with SIGSYS: the parent
 * then names the last operation that got through.
 */

#define STEPS 64
#define EXPECTED_STEPS 44 /* report() calls in serve_everything */
struct step {
	char name[24];
	int result;
};

static int report_fd = -1;
static struct fsc c;

static void report(const char *name, int64_t result)
{
	struct step s;
	memset(&s, 0, sizeof(s));
	snprintf(s.name, sizeof(s.name), "%s", name);
	s.result = result < 0 ? (int)result : 0;
	if (write(report_fd, &s, sizeof(s)) != sizeof(s))
		_exit(3);
}

static int64_t call(uint32_t op, uint64_t node, const void *in, size_t len, const char *n1,
		    const char *n2)
{
	return fsc_call(&c, op, node, in, len, n1, n2);
}

static int64_t entry_id(int err)
{
	return err ? err : (int64_t)((struct fuse_entry_out *)fsc_body(&c))->nodeid;
}

static void run_as(uint32_t uid)
{
	c.uid = c.gid = uid;
}

/* The operations, in a guest's order; `d` is a directory of the share. */
static void serve_everything(void)
{
	report("INIT", fsc_init(&c, 0));
	struct fuse_mkdir_in mk = { .mode = 0777, .umask = 0 };
	int64_t d = entry_id(call(FUSE_MKDIR, FUSE_ROOT_ID, &mk, sizeof(mk), "d", NULL));
	report("MKDIR", d);
	int64_t fh = fsc_create(&c, d, "f", O_RDWR, 0644);
	report("CREATE", fh);
	int64_t f = fsc_lookup(&c, d, "f");
	report("LOOKUP", f);
	report("WRITE", fsc_write(&c, f, fh, 0, "hello, confined world", 0));
	struct fuse_read_in rd = { .fh = fh, .offset = 0, .size = 5 };
	report("READ", call(FUSE_READ, f, &rd, sizeof(rd), NULL, NULL));
	struct fuse_fsync_in fs = { .fh = fh };
	report("FSYNC", call(FUSE_FSYNC, f, &fs, sizeof(fs), NULL, NULL));
	struct fuse_flush_in fl = { .fh = fh };
	report("FLUSH", call(FUSE_FLUSH, f, &fl, sizeof(fl), NULL, NULL));
	struct fuse_fallocate_in fa = { .fh = fh, .offset = 0, .length = 8192 };
	report("FALLOCATE", call(FUSE_FALLOCATE, f, &fa, sizeof(fa), NULL, NULL));
	struct fuse_lseek_in ls = { .fh = fh, .offset = 0, .whence = SEEK_DATA };
	report("LSEEK", call(FUSE_LSEEK, f, &ls, sizeof(ls), NULL, NULL));
	struct fuse_setattr_in sa = { .valid = FATTR_MODE | FATTR_UID | FATTR_GID | FATTR_SIZE |
					       FATTR_ATIME | FATTR_MTIME | FATTR_CTIME,
				      .mode = 0640, .uid = 1000, .gid = 1000, .size = 5 };
	report("SETATTR", call(FUSE_SETATTR, f, &sa, sizeof(sa), NULL, NULL));
	struct fuse_getattr_in ga = { 0 };
	report("GETATTR", call(FUSE_GETATTR, f, &ga, sizeof(ga), NULL, NULL));
	report("SETXATTR", fsc_setxattr(&c, f, "user.test", "v"));
	struct fuse_getxattr_in gx = { .size = 64 };
	report("GETXATTR", call(FUSE_GETXATTR, f, &gx, sizeof(gx), "user.test", NULL));
	report("LISTXATTR", call(FUSE_LISTXATTR, f, &gx, sizeof(gx), NULL, NULL));
	report("REMOVEXATTR", fsc_removexattr(&c, f, "user.test"));
	struct fuse_access_in ac = { .mask = R_OK };
	report("ACCESS", call(FUSE_ACCESS, f, &ac, sizeof(ac), NULL, NULL));
	int64_t g = fsc_create(&c, d, "g", O_RDWR, 0600);
	report("CREATE g", g);
	int64_t gn = fsc_lookup(&c, d, "g");
	struct fuse_copy_file_range_in cr = { .fh_in = (uint64_t)fh, .nodeid_out = (uint64_t)gn,
					      .fh_out = (uint64_t)g, .len = 5 };
	report("COPY_FILE_RANGE", call(FUSE_COPY_FILE_RANGE, f, &cr, sizeof(cr), NULL, NULL));
	struct fuse_release_in rl = { .fh = fh };
	report("RELEASE", call(FUSE_RELEASE, f, &rl, sizeof(rl), NULL, NULL));
	rl.fh = g;
	(void)call(FUSE_RELEASE, gn, &rl, sizeof(rl), NULL, NULL);
	int64_t ofh = fsc_open_(&c, f, O_RDONLY);
	report("OPEN", ofh);
	rl.fh = ofh;
	(void)call(FUSE_RELEASE, f, &rl, sizeof(rl), NULL, NULL);

	report("SYMLINK", call(FUSE_SYMLINK, d, NULL, 0, "l", "f"));
	int64_t l = fsc_lookup(&c, d, "l");
	report("READLINK", call(FUSE_READLINK, l, NULL, 0, NULL, NULL));
	struct fuse_link_in ln = { .oldnodeid = (uint64_t)f };
	report("LINK", call(FUSE_LINK, d, &ln, sizeof(ln), "h", NULL));
	struct fuse_rename_in rn = { .newdir = (uint64_t)d };
	report("RENAME", call(FUSE_RENAME, d, &rn, sizeof(rn), "h", "h2"));
	struct fuse_rename2_in rn2 = { .newdir = (uint64_t)d, .flags = RENAME_NOREPLACE };
	report("RENAME2", call(FUSE_RENAME2, d, &rn2, sizeof(rn2), "h2", "h3"));
	report("MKNOD fifo", fsc_mknod(&c, d, "p", S_IFIFO | 0600, 0));
	struct fuse_create_in tc = { .flags = O_RDWR, .mode = 0600 };
	int tmp = (int)call(FUSE_TMPFILE, d, &tc, sizeof(tc), "/", NULL); /* the guest sends "/" */
	report("TMPFILE", tmp == -EOPNOTSUPP ? 0 : tmp);
	report("STATFS", call(FUSE_STATFS, d, NULL, 0, NULL, NULL));

	int64_t dh = fsc_opendir(&c, d);
	report("OPENDIR", dh);
	struct fuse_read_in rdd = { .fh = dh, .offset = 0, .size = 4096 };
	report("READDIR", call(FUSE_READDIR, d, &rdd, sizeof(rdd), NULL, NULL));
	report("READDIRPLUS", call(FUSE_READDIRPLUS, d, &rdd, sizeof(rdd), NULL, NULL));
	struct fuse_fsync_in fsd = { .fh = dh };
	report("FSYNCDIR", call(FUSE_FSYNCDIR, d, &fsd, sizeof(fsd), NULL, NULL));
	rl.fh = dh;
	report("RELEASEDIR", call(FUSE_RELEASEDIR, d, &rl, sizeof(rl), NULL, NULL));

	/* An ordinary guest user: fsuid/fsgid switch, capabilities raised again, its umask. */
	run_as(1000);
	struct fuse_create_in cu = { .flags = O_RDWR, .mode = 0666, .umask = 022 };
	int err = (int)call(FUSE_CREATE, d, &cu, sizeof(cu), "u", NULL);
	int64_t ufh = err ? err : (int64_t)((struct fuse_open_out *)((char *)fsc_body(&c) +
								 sizeof(struct fuse_entry_out)))->fh;
	report("CREATE as uid 1000", ufh);
	int64_t u = fsc_lookup(&c, d, "u");
	report("WRITE as uid 1000", fsc_write(&c, u, ufh, 0, "mine", 0));
	struct fuse_setattr_in tr = { .valid = FATTR_SIZE | FATTR_FH, .fh = ufh, .size = 1 };
	report("SETATTR truncate as uid 1000", call(FUSE_SETATTR, u, &tr, sizeof(tr), NULL, NULL));
	rl.fh = ufh;
	(void)call(FUSE_RELEASE, u, &rl, sizeof(rl), NULL, NULL);
	report("UNLINK as uid 1000", call(FUSE_UNLINK, d, NULL, 0, "u", NULL));
	run_as(0);

	struct fuse_forget_in fg = { .nlookup = 1 };
	report("FORGET", call(FUSE_FORGET, l, &fg, sizeof(fg), NULL, NULL) == 1 ? 0 : -EPROTO);
	struct {
		struct fuse_batch_forget_in h;
		struct fuse_forget_one one;
	} bf = { { .count = 1 }, { .nodeid = (uint64_t)gn, .nlookup = 1 } };
	report("BATCH_FORGET",
	       call(FUSE_BATCH_FORGET, 0, &bf, sizeof(bf), NULL, NULL) == 1 ? 0 : -EPROTO);
	const char *names[] = { "f", "g", "l", "h3", "p" };
	int un = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !un; i++)
		un = (int)call(FUSE_UNLINK, d, NULL, 0, names[i], NULL);
	report("UNLINK", un);
	report("RMDIR", call(FUSE_RMDIR, FUSE_ROOT_ID, NULL, 0, "d", NULL));
	struct fuse_syncfs_in sy = { 0 };
	report("SYNCFS", call(FUSE_SYNCFS, FUSE_ROOT_ID, &sy, sizeof(sy), NULL, NULL));
	report("DESTROY", call(FUSE_DESTROY, 0, NULL, 0, NULL, NULL));
}

static char root[] = "/var/tmp/ringvm-confined-XXXXXX";

static void child(void)
{
	static struct fs_server srv;
	if (fs_server_create(&srv, root, false, FS_CACHE_AUTO, 4096) != 0 || fsc_open(&c, &srv) != 0 ||
	    fs_thread_prepare(&srv) != 0)
		_exit(1);
	struct seccomp_confinement conf = { SECCOMP_MODE_KILL, SECCOMP_ROLE_WORKER_FS, -1 };
	if (seccomp_confine(&conf) != 0)
		_exit(2);
	serve_everything();
	_exit(0);
}

int main(void)
{
	int p[2];
	bool ready = mkdtemp(root) != NULL && chmod(root, 0777) == 0 && pipe2(p, O_CLOEXEC) == 0;
	TAP_CHECK(ready, "a share and a pipe for the confined server's reports");
	if (!ready)
		return tap_done();
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		report_fd = p[1];
		child();
	}
	close(p[1]);
	struct step steps[STEPS];
	unsigned int n = 0;
	while (n < STEPS && read(p[0], &steps[n], sizeof(steps[n])) == sizeof(steps[n]))
		n++;
	close(p[0]);
	int st = 0;
	waitpid(pid, &st, 0);

	char what[160];
	snprintf(what, sizeof(what), "the confined server ran every operation (%u reported; last: %.23s)",
		 n, n ? steps[n - 1].name : "none");
	TAP_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 && n == EXPECTED_STEPS, what);
	if (WIFSIGNALED(st))
		printf("# the child died by signal %d (%s) after %.23s\n", WTERMSIG(st),
		       WTERMSIG(st) == SIGSYS ? "a system call outside the worker-fs list" : "?",
		       n ? steps[n - 1].name : "its setup");
	/* Each operation succeeded under the filter, as on an unconfined server. */
	for (unsigned int i = 0; i < n; i++) {
		snprintf(what, sizeof(what), "%.23s answered under the filter (%d)", steps[i].name,
			 steps[i].result);
		TAP_CHECK(steps[i].result == 0, what);
	}
	(void)tree_discard(root);
	return tap_done();
}
