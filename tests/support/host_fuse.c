/* host_fuse.c: the fs server over the host's /dev/fuse, in a child process, READ/WRITE answers shaped by a script. */
#define _GNU_SOURCE
#include "tests/support/host_fuse.h"
#include "tests/support/tree.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * Why a child process: a process that serves a FUSE mount and also holds files open on it hangs at
 * exit (closing a file sends FLUSH, and the threads that would answer are gone) - exactly what a
 * crashing test or a sanitizer abort does. The server lives in a child that outlives its parent's
 * exit long enough to answer, and dies with it (PR_SET_PDEATHSIG). The scripts sit in shared memory.
 */

#define HF_MAX_THREADS 64
/* fusectl's statfs type (fs/fuse/control.c; not in the uapi headers). */
#define HF_FUSECTL_MAGIC 0x65735543
/* A request is at most a 1 MiB WRITE plus its headers. */
#define HF_BUF (FS_MAX_IO + 64 * 1024)

struct hf_script {
	struct hf_step steps[HF_MAX_STEPS];
	unsigned int n, pos, served;
	uint32_t used; /* requests steps[pos] already answered */
};

/* Shared between the test (parent) and the server (child): MAP_SHARED, process-shared lock. */
struct hf_shared {
	pthread_mutex_t lock;
	pthread_cond_t released; /* hf_release: held requests go on */
	unsigned int releases;   /* hf_release calls so far */
	struct hf_script read, write, fsync, fallocate;
};

struct host_fuse {
	struct hf_shared *sh;
	pid_t child;
	char mnt[PATH_MAX];
	dev_t dev; /* the mount's device: its connection in /sys/fs/fuse/connections */
};

/* The child's state. */
struct hf_server {
	struct fs_server srv;
	struct hf_shared *sh;
	int fd; /* /dev/fuse */
	bool no_async_dio;
};

static struct hf_script *hf_script_of(struct hf_shared *sh, uint32_t opcode)
{
	switch (opcode) {
	case FUSE_READ:
		return &sh->read;
	case FUSE_WRITE:
		return &sh->write;
	case FUSE_FSYNC:
		return &sh->fsync;
	case FUSE_FALLOCATE:
		return &sh->fallocate;
	default:
		return NULL;
	}
}

/* The step for this request of a scripted opcode (HF_PASS when the script ran out); *releases: the
   hf_release calls made before the request was counted as served (an HF_HOLD waits for the next). */
static struct hf_step hf_next_step(struct hf_shared *sh, uint32_t opcode, unsigned int *releases)
{
	struct hf_script *sc = hf_script_of(sh, opcode);
	struct hf_step st = { .kind = HF_PASS };

	if (!sc)
		return st;
	pthread_mutex_lock(&sh->lock);
	*releases = sh->releases;
	sc->served++;
	if (sc->pos < sc->n) {
		st = sc->steps[sc->pos];
		if (++sc->used >= (st.times ? st.times : 1)) {
			sc->pos++;
			sc->used = 0;
		}
	}
	pthread_mutex_unlock(&sh->lock);
	return st;
}

/* Serve one decoded request into out; returns the reply length (0: no reply). */
static size_t hf_serve(struct hf_server *hs, struct fuse_req *r, const uint8_t *in, size_t n,
		       uint8_t *out)
{
	unsigned int releases = 0;
	struct hf_step st = hf_next_step(hs->sh, r->hdr.opcode, &releases);
	size_t len;

	if (st.kind == HF_ERROR)
		return fs_reply_error(out, r->hdr.unique, st.err);
	if (st.kind == HF_HANG)
		return 0; /* no reply, ever */
	if (st.kind == HF_HOLD) {
		/* From when it was counted as served (hf_served): a release the test sends once it saw
		   the request arrive is never missed. */
		pthread_mutex_lock(&hs->sh->lock);
		while (hs->sh->releases == releases)
			pthread_cond_wait(&hs->sh->released, &hs->sh->lock);
		pthread_mutex_unlock(&hs->sh->lock);
	}
	if (st.kind == HF_SHORT && r->hdr.opcode == FUSE_READ && r->in.read.size > st.n)
		r->in.read.size = st.n;
	if (st.kind == HF_SHORT && r->hdr.opcode == FUSE_WRITE && r->in.write.size > st.n)
		r->in.write.size = st.n;
	len = fs_dispatch(&hs->srv, r, in, n, out, HF_BUF);
	if (r->hdr.opcode == FUSE_INIT && hs->no_async_dio &&
	    len >= sizeof(struct fuse_out_header) + sizeof(struct fuse_init_out)) {
		struct fuse_init_out io;

		memcpy(&io, out + sizeof(struct fuse_out_header), sizeof(io));
		io.flags &= ~(uint32_t)FUSE_ASYNC_DIO;
		memcpy(out + sizeof(struct fuse_out_header), &io, sizeof(io));
	}
	return len;
}

static void *hf_loop(void *arg)
{
	struct hf_server *hs = arg;
	uint8_t *in = malloc(HF_BUF), *out = malloc(HF_BUF);

	if (!in || !out)
		goto out;
	for (;;) {
		struct fuse_decode_ctx ctx;
		struct fuse_req r;
		ssize_t n = read(hs->fd, in, HF_BUF);
		size_t len;

		if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == ENOENT))
			continue; /* ENOENT: the request was interrupted before we read it */
		if (n <= 0)
			break; /* ENODEV: unmounted or aborted */
		fs_server_decode_ctx(&hs->srv, &ctx);
		if (fuse_decode(in, (size_t)n, (size_t)n, &ctx, &r)) {
			if (!fuse_decode_has_header((size_t)n) || fuse_opcode_no_reply(r.hdr.opcode))
				continue;
			len = fs_reply_error(out, r.hdr.unique, -EINVAL);
		} else {
			len = hf_serve(hs, &r, in, (size_t)n, out);
		}
		if (len && write(hs->fd, out, len) < 0 && errno == ENODEV)
			break;
	}
out:
	free(in);
	free(out);
	return NULL;
}

/* The child: set up the server, report to the parent through `status`, serve until unmounted. */
static int hf_child(const char *host_dir, const struct hf_options *opt, struct hf_shared *sh,
		    int fd, int status)
{
	static struct hf_server hs;
	pthread_t tid[HF_MAX_THREADS];
	unsigned int started = 0;
	int err;

	hs.sh = sh;
	hs.fd = fd;
	hs.no_async_dio = opt->no_async_dio;
	err = fs_server_create(&hs.srv, host_dir, opt->readonly, opt->cache, 1 << 16);
	hs.srv.allow_dev = opt->allow_dev;
	hs.srv.allow_suid = opt->allow_suid;
	hs.srv.xattr = opt->xattr_all ? FS_XATTR_ALL : FS_XATTR_USER;
	while (!err && started < opt->threads) {
		err = -pthread_create(&tid[started], NULL, hf_loop, &hs);
		if (!err)
			started++;
	}
	if (write(status, &err, sizeof(err)) != sizeof(err) || err)
		return 1;
	close(status);
	for (unsigned int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	fs_server_destroy(&hs.srv);
	return 0;
}

/* /sys/fs/fuse/connections is where a connection can be aborted; mount it if nobody did. */
static void hf_fusectl(void)
{
	struct statfs sf;

	if (statfs("/sys/fs/fuse/connections", &sf) == 0 && sf.f_type == HF_FUSECTL_MAGIC)
		return;
	if (mount("fusectl", "/sys/fs/fuse/connections", "fusectl", 0, NULL) < 0 && errno != EBUSY)
		fprintf(stderr, "host_fuse: mount fusectl: %s\n", strerror(errno));
}

int hf_mount(const char *host_dir, const char *mountpoint, const struct hf_options *opt,
	     struct host_fuse **out)
{
	struct host_fuse *hf;
	pthread_mutexattr_t ma;
	char opts[256];
	int fd, pipefd[2], err = -EIO;
	struct stat st;

	if (opt->threads < 1 || opt->threads > HF_MAX_THREADS || strlen(mountpoint) >= PATH_MAX)
		return -EINVAL;
	hf = calloc(1, sizeof(*hf));
	if (!hf)
		return -ENOMEM;
	strcpy(hf->mnt, mountpoint);
	hf->sh = mmap(NULL, sizeof(*hf->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	if (hf->sh == MAP_FAILED) {
		free(hf);
		return -ENOMEM;
	}
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&hf->sh->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	pthread_cond_init(&hf->sh->released, &ca);
	pthread_condattr_destroy(&ca);
	hf_fusectl();
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto err_free;
	}
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0,default_permissions,allow_other", fd);
	if (pipe2(pipefd, O_CLOEXEC) < 0 ||
	    mount("ringvm-fs", mountpoint, "fuse.ringvm", MS_NOSUID | MS_NODEV, opts) < 0) {
		err = -errno;
		close(fd);
		goto err_free;
	}
	hf->child = fork();
	if (hf->child == 0) {
		close(pipefd[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(hf_child(host_dir, opt, hf->sh, fd, pipefd[1]));
	}
	close(fd); /* the child's copy keeps the connection; ours would keep a dead one alive */
	close(pipefd[1]);
	if (hf->child < 0 || read(pipefd[0], &err, sizeof(err)) != sizeof(err))
		err = -EIO;
	close(pipefd[0]);
	if (err) {
		hf_unmount(hf);
		return err;
	}
	if (stat(mountpoint, &st) == 0)
		hf->dev = st.st_dev;
	*out = hf;
	return 0;

err_free:
	munmap(hf->sh, sizeof(*hf->sh));
	free(hf);
	return err;
}

static void hf_free(struct host_fuse *hf)
{
	if (hf->child > 0)
		waitpid(hf->child, NULL, 0);
	pthread_cond_destroy(&hf->sh->released);
	pthread_mutex_destroy(&hf->sh->lock);
	munmap(hf->sh, sizeof(*hf->sh));
	free(hf);
}

void hf_wait(struct host_fuse *hf)
{
	hf_free(hf);
}

void hf_unmount(struct host_fuse *hf)
{
	char path[96];
	int fd;

	if (!hf)
		return;
	if (umount2(hf->mnt, MNT_DETACH) < 0)
		fprintf(stderr, "host_fuse: umount %s: %s\n", hf->mnt, strerror(errno));
	/* A file still open keeps a detached mount's connection alive, and the server blocked in
	   read(): aborting the connection ends it either way. */
	snprintf(path, sizeof(path), "/sys/fs/fuse/connections/%u/abort", minor(hf->dev));
	fd = hf->dev ? open(path, O_WRONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		if (write(fd, "1", 1) < 0)
			fprintf(stderr, "host_fuse: %s: %s\n", path, strerror(errno));
		close(fd);
	} else if (hf->child > 0) {
		kill(hf->child, SIGKILL);
	}
	hf_release(hf); /* a held server thread must see the aborted connection to end */
	hf_free(hf);
}

void hf_release(struct host_fuse *hf)
{
	pthread_mutex_lock(&hf->sh->lock);
	hf->sh->releases++;
	pthread_cond_broadcast(&hf->sh->released);
	pthread_mutex_unlock(&hf->sh->lock);
}

void hf_script(struct host_fuse *hf, uint32_t opcode, const struct hf_step *steps, unsigned int n)
{
	struct hf_script *sc = hf_script_of(hf->sh, opcode);

	if (!sc || n > HF_MAX_STEPS)
		return;
	pthread_mutex_lock(&hf->sh->lock);
	if (n)
		memcpy(sc->steps, steps, n * sizeof(*steps));
	sc->n = n;
	sc->pos = sc->served = sc->used = 0;
	pthread_mutex_unlock(&hf->sh->lock);
}

unsigned int hf_steps_left(struct host_fuse *hf, uint32_t opcode)
{
	struct hf_script *sc = hf_script_of(hf->sh, opcode);
	unsigned int left;

	if (!sc)
		return 0;
	pthread_mutex_lock(&hf->sh->lock);
	left = sc->n - sc->pos;
	pthread_mutex_unlock(&hf->sh->lock);
	return left;
}

unsigned int hf_served(struct host_fuse *hf, uint32_t opcode)
{
	struct hf_script *sc = hf_script_of(hf->sh, opcode);
	unsigned int n;

	if (!sc)
		return 0;
	pthread_mutex_lock(&hf->sh->lock);
	n = sc->served;
	pthread_mutex_unlock(&hf->sh->lock);
	return n;
}

int hf_scratch_make(struct hf_scratch *s, const char *test)
{
	if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0) {
		printf("ok 1 # SKIP needs root and /dev/fuse to mount the scripted file system\n1..1\n");
		return 1;
	}
	snprintf(s->top, sizeof(s->top), "/tmp/%s_XXXXXX", test);
	if (!mkdtemp(s->top))
		return -errno;
	snprintf(s->back, sizeof(s->back), "%s/back", s->top);
	snprintf(s->mnt, sizeof(s->mnt), "%s/mnt", s->top);
	return mkdir(s->back, 0755) || mkdir(s->mnt, 0755) ? -errno : 0;
}

void hf_scratch_remove(const struct hf_scratch *s)
{
	(void)tree_discard(s->top);
}
