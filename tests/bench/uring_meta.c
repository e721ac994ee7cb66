/*
 * uring_meta.c: `make bench-uring-meta`: what one metadata operation costs inline versus through
 * io_uring, one at a time (a FUSE request is one operation; a queue's worker waits for nothing
 * else). Why virtio-fs runs metadata inline: the kernel has opcodes for statx, mkdirat, unlinkat...,
 * but it cannot run them without blocking, so it hands them to an io-wq thread, and the handoff
 * costs more than the operation (openat first tries a cached open in place: about a wash).
 * READ and WRITE go through the ring: they run in place when the data is cached and keep many
 * requests in flight when it is not.
 *
 * Prints one line per operation: ns per call inline, through the ring, and the ratio.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 20000

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* One SQE submitted and waited for; its result. */
static int ring_one(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	int r = io_uring_submit_and_wait(ring, 1);
	if (r < 0)
		return r;
	r = io_uring_wait_cqe(ring, &cqe);
	if (r < 0)
		return r;
	r = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return r;
}

static void report(const char *op, double inline_ns, double ring_ns)
{
	printf("%-22s inline %8.0f ns   io_uring %8.0f ns   io_uring/inline %.1fx\n", op, inline_ns,
	       ring_ns, ring_ns / inline_ns);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/var/tmp";
	char path[4096];
	struct io_uring ring;
	struct statx stx;
	int dfd, fd, r;

	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/ringvm-uring-meta.%d", dir, (int)getpid());
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (dfd < 0 || fd < 0 || io_uring_queue_init(8, &ring, 0) < 0) {
		fprintf(stderr, "uring_meta: setup: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	const char *name = strrchr(path, '/') + 1;

	double t0 = now_ns();
	for (int i = 0; i < ROUNDS; i++)
		if (statx(dfd, name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &stx) < 0)
			return 1;
	double t_inline = (now_ns() - t0) / ROUNDS;
	t0 = now_ns();
	for (int i = 0; i < ROUNDS; i++) {
		io_uring_prep_statx(io_uring_get_sqe(&ring), dfd, name, AT_SYMLINK_NOFOLLOW,
				    STATX_BASIC_STATS, &stx);
		if ((r = ring_one(&ring)) < 0) {
			fprintf(stderr, "uring_meta: statx: %s\n", strerror(-r));
			return 1;
		}
	}
	report("statx", t_inline, (now_ns() - t0) / ROUNDS);

	t0 = now_ns();
	for (int i = 0; i < ROUNDS; i++) {
		fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 1;
		close(fd);
	}
	t_inline = (now_ns() - t0) / ROUNDS;
	t0 = now_ns();
	for (int i = 0; i < ROUNDS; i++) {
		io_uring_prep_openat(io_uring_get_sqe(&ring), dfd, name, O_RDONLY | O_CLOEXEC, 0);
		if ((fd = ring_one(&ring)) < 0) {
			fprintf(stderr, "uring_meta: openat: %s\n", strerror(-fd));
			return 1;
		}
		close(fd);
	}
	report("openat+close", t_inline, (now_ns() - t0) / ROUNDS);

	/* mkdirat + unlinkat(AT_REMOVEDIR): a create and a remove, the shape of MKDIR/RMDIR. */
	char sub[64];
	snprintf(sub, sizeof(sub), "%s.d", name);
	t0 = now_ns();
	for (int i = 0; i < ROUNDS; i++)
		if (mkdirat(dfd, sub, 0700) < 0 || unlinkat(dfd, sub, AT_REMOVEDIR) < 0)
			return 1;
	t_inline = (now_ns() - t0) / ROUNDS;
	t0 = now_ns();
	for (int i = 0; i < ROUNDS; i++) {
		io_uring_prep_mkdirat(io_uring_get_sqe(&ring), dfd, sub, 0700);
		if ((r = ring_one(&ring)) < 0)
			break;
		io_uring_prep_unlinkat(io_uring_get_sqe(&ring), dfd, sub, AT_REMOVEDIR);
		if ((r = ring_one(&ring)) < 0)
			break;
	}
	if (r < 0)
		printf("%-22s io_uring: %s\n", "mkdirat+unlinkat", strerror(-r));
	else
		report("mkdirat+unlinkat", t_inline, (now_ns() - t0) / ROUNDS);

	unlinkat(dfd, sub, AT_REMOVEDIR);
	unlink(path);
	io_uring_queue_exit(&ring);
	return 0;
}
