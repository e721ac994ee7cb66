/* test_uring.c: each device's sealed io_uring runs exactly its declared opcodes and refuses the rest. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "devices/blk/blk.h"
#include "devices/console/virtio_console.h"
#include "devices/fs/virtio_fs.h"
#include "devices/virtio/uring.h"
#include "tests/unit/tap.h"

/*
 * For each device's rules (blk_ring_rules, fs_ring_rules, vcon_ring_rules, as the devices hand them to their
 * workers): a ring made by uring_create runs every declared opcode, and the worker's own READ, WRITE
 * and ASYNC_CANCEL, as a plain ring would (real work on a scratch file and an eventfd); every other
 * opcode the kernel knows, every SQE flag and every io_uring_register(2) operation is refused with
 * EACCES, the restriction's error.
 */

static int file_fd = -1, efd = -1;
static char buf[4096];
static struct iovec iov = { buf, sizeof(buf) };

static int run_one(struct io_uring *ring, struct io_uring_sqe *sqe_in)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	if (!sqe)
		return -ENOSPC;
	*sqe = *sqe_in;
	io_uring_sqe_set_data64(sqe, 42);
	if (io_uring_submit_and_wait(ring, 1) < 0 || io_uring_peek_cqe(ring, &cqe) != 0)
		return -EIO;
	int res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

/* A legitimate SQE for op, as the device or the worker would fill it; false for an op this test
   does not know (a device declared something new: teach the test what it is for). */
static bool prep_legit(struct io_uring_sqe *sqe, uint8_t op, int *want_min)
{
	memset(sqe, 0, sizeof(*sqe));
	*want_min = 0;
	switch (op) {
	case IORING_OP_READV:
		io_uring_prep_readv(sqe, file_fd, &iov, 1, 0);
		*want_min = (int)sizeof(buf);
		return true;
	case IORING_OP_WRITEV:
		io_uring_prep_writev(sqe, file_fd, &iov, 1, 0);
		*want_min = (int)sizeof(buf);
		return true;
	case IORING_OP_FSYNC:
		io_uring_prep_fsync(sqe, file_fd, IORING_FSYNC_DATASYNC);
		return true;
	case IORING_OP_FALLOCATE:
		io_uring_prep_fallocate(sqe, file_fd, FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE, 0,
					4096);
		return true;
	case IORING_OP_POLL_ADD: { /* virtio-console: a non-blocking port fd said EAGAIN */
		uint64_t one = 1;
		if (write(efd, &one, sizeof(one)) != sizeof(one))
			return false;
		io_uring_prep_poll_add(sqe, efd, POLLIN);
		*want_min = POLLIN;
		return true;
	}
	case IORING_OP_CLOSE: { /* virtio-fs: a FORGET's or RELEASE's fd */
		int fd = dup(file_fd);
		if (fd < 0)
			return false;
		io_uring_prep_close(sqe, fd);
		*want_min = 0;
		return true;
	}
	case IORING_OP_WRITE: /* the worker's interrupt: 8 bytes to an eventfd */
		io_uring_prep_write(sqe, efd, buf, 8, 0);
		memset(buf, 0, 8);
		buf[0] = 1;
		*want_min = 8;
		return true;
	case IORING_OP_READ: { /* the worker's kick/stop read of an eventfd */
		uint64_t one = 1;
		if (write(efd, &one, sizeof(one)) != sizeof(one))
			return false;
		io_uring_prep_read(sqe, efd, buf, 8, 0);
		*want_min = 8;
		return true;
	}
	default:
		return false;
	}
}

static bool declared(const struct uring_rules *r, uint8_t op)
{
	for (unsigned int i = 0; i < r->nr_ops; i++)
		if (r->ops[i] == op)
			return true;
	return op == IORING_OP_READ || op == IORING_OP_WRITE || op == IORING_OP_ASYNC_CANCEL;
}

static void check_device(const char *name, const struct uring_rules *rules,
			 const struct io_uring_probe *probe)
{
	struct io_uring ring;
	char what[200];
	snprintf(what, sizeof(what), "%s: sealed ring created (%u opcodes declared)", name,
		 rules->nr_ops);
	TAP_CHECK(uring_create(&ring, 8, 16, rules) == 0, what);

	/* Every declared opcode does its work. */
	bool all = true;
	for (unsigned int i = 0; i <= rules->nr_ops + 1; i++) {
		uint8_t op = i < rules->nr_ops ? rules->ops[i]
			     : i == rules->nr_ops ? IORING_OP_READ : IORING_OP_WRITE;
		struct io_uring_sqe sqe;
		int want_min;
		if (!prep_legit(&sqe, op, &want_min)) {
			printf("# %s: opcode %u is declared but this test does not know it\n", name, op);
			all = false;
			continue;
		}
		int res = run_one(&ring, &sqe);
		if (res < want_min) {
			printf("# %s: declared opcode %u answered %d\n", name, op, res);
			all = false;
		}
	}
	struct io_uring_sqe sqe;
	memset(&sqe, 0, sizeof(sqe));
	io_uring_prep_cancel64(&sqe, 12345, 0); /* nothing to cancel: ENOENT, not EACCES */
	int res = run_one(&ring, &sqe);
	snprintf(what, sizeof(what),
		 "%s: each declared opcode, and the worker's eventfd READ and WRITE and ASYNC_CANCEL (%d), work",
		 name, res);
	TAP_CHECK(all && res == -ENOENT, what);

	/* Every other opcode the kernel supports: EACCES, whatever its arguments. */
	unsigned int refused = 0, others = 0;
	all = true;
	for (unsigned int op = 0; op < IORING_OP_LAST; op++) {
		if (declared(rules, (uint8_t)op))
			continue;
		memset(&sqe, 0, sizeof(sqe));
		sqe.opcode = (uint8_t)op;
		sqe.fd = -1;
		res = run_one(&ring, &sqe);
		bool known = io_uring_opcode_supported(probe, (int)op);
		others++;
		if (res == -EACCES)
			refused++;
		else if (known || res >= 0) {
			printf("# %s: opcode %u answered %d, want -EACCES\n", name, op, res);
			all = false;
		}
	}
	snprintf(what, sizeof(what),
		 "%s: the %u other opcodes (OPENAT, SOCKET, CONNECT, SENDMSG, WRITE, UNLINKAT, ...) "
		 "are refused with EACCES (%u refused)",
		 name, others, refused);
	TAP_CHECK(all && refused > 0, what);
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_OPENAT;
	sqe.fd = AT_FDCWD;
	sqe.addr = (uint64_t)(uintptr_t) "/etc/passwd";
	snprintf(what, sizeof(what), "%s: an OPENAT of /etc/passwd is refused with EACCES", name);
	TAP_CHECK(run_one(&ring, &sqe) == -EACCES, what);

	/* Every SQE flag, on an allowed opcode. */
	all = true;
	for (unsigned int bit = 0; bit < 8; bit++) {
		int want_min;
		if (rules->sqe_flags & (1u << bit) || !prep_legit(&sqe, IORING_OP_READ, &want_min))
			continue;
		sqe.flags = (uint8_t)(1u << bit);
		res = run_one(&ring, &sqe);
		if (res != -EACCES && res != -EINVAL) { /* EINVAL: a flag the kernel does not know */
			printf("# %s: SQE flag 0x%x answered %d\n", name, 1u << bit, res);
			all = false;
		}
		uint64_t drain;
		if (read(efd, &drain, sizeof(drain)) < 0) { /* the unread count, if refused */
		}
	}
	snprintf(what, sizeof(what),
		 "%s: every SQE flag (FIXED_FILE, IO_DRAIN, IO_LINK, ASYNC, BUFFER_SELECT, ...) refused",
		 name);
	TAP_CHECK(all, what);

	/* No io_uring_register(2) operation at all. */
	int fds[1] = { file_fd };
	struct io_uring_probe *p = io_uring_get_probe_ring(&ring);
	int r1 = io_uring_register_files(&ring, fds, 1);
	int r2 = io_uring_register_eventfd(&ring, efd);
	int r3 = io_uring_register_buffers(&ring, &iov, 1);
	snprintf(what, sizeof(what),
		 "%s: registering files (%d), an eventfd (%d), buffers (%d) or probing is refused", name,
		 r1, r2, r3);
	TAP_CHECK(r1 == -EACCES && r2 == -EACCES && r3 == -EACCES && !p, what);
	if (p)
		io_uring_free_probe(p);
	io_uring_queue_exit(&ring);
}

static void *write_one(void *arg)
{
	uint64_t one = 1;
	return (void *)(intptr_t)(write(*(int *)arg, &one, sizeof(one)) == sizeof(one));
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* the vDSO: no system call */
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*
 * Rings are made with COOP_TASKRUN (uring.c): a completion that ends while the ring's thread runs
 * in user space waits for the thread to enter the kernel. A worker's busy-poll makes no system call
 * for up to its window, so it must see such a completion without one (uring_cq_owed, or the
 * completion queue if an interrupt ran it meanwhile), and a peek must then reap it. Another thread
 * ends a READ on an eventfd (a kick) while this one only looks.
 */
static void check_owed_completion(void)
{
	struct io_uring ring;
	int kick = eventfd(0, EFD_CLOEXEC); /* blocking: the READ waits, as a worker's kick read does */
	bool made = kick >= 0 && uring_create(&ring, 8, 16, &fs_ring_rules) == 0;
	TAP_CHECK(made && (ring.flags & IORING_SETUP_COOP_TASKRUN) &&
			  (ring.flags & IORING_SETUP_TASKRUN_FLAG),
		  "a worker's ring is made with COOP_TASKRUN and TASKRUN_FLAG");
	if (!made) {
		if (kick >= 0)
			close(kick);
		return;
	}
	uint64_t val = 0;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, kick, &val, sizeof(val), 0);
	io_uring_sqe_set_data64(sqe, 7);
	bool armed = io_uring_submit(&ring) == 1 && io_uring_cq_ready(&ring) == 0;
	pthread_t writer;
	bool started = armed && pthread_create(&writer, NULL, write_one, &kick) == 0;
	bool seen = false;
	for (uint64_t end = now_ms() + 10000; started && !seen && now_ms() < end;)
		seen = io_uring_cq_ready(&ring) || uring_cq_owed(&ring);
	void *wrote = NULL;
	if (started)
		pthread_join(writer, &wrote);
	TAP_CHECK(seen && wrote, "a kick read ended by another thread is seen (ready or owed) by a "
				 "thread that makes no system call");
	struct io_uring_cqe *cqe = NULL;
	bool reaped = seen && io_uring_peek_cqe(&ring, &cqe) == 0 && cqe &&
		      io_uring_cqe_get_data64(cqe) == 7 && cqe->res == (int)sizeof(val) && val == 1;
	TAP_CHECK(reaped && !uring_cq_owed(&ring), "and a peek reaps it (8 bytes, count 1), owing nothing");
	io_uring_queue_exit(&ring);
	close(kick);
}

int main(void)
{
	char path[] = "/var/tmp/ringvm-uring-XXXXXX";
	file_fd = mkstemp(path);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	memset(buf, 'x', sizeof(buf));
	struct io_uring_probe *probe = io_uring_get_probe();
	bool ready = file_fd >= 0 && efd >= 0 && probe && pwrite(file_fd, buf, sizeof(buf), 0) == 4096;
	TAP_CHECK(ready, "a scratch file, an eventfd and the kernel's opcode list");
	if (file_fd >= 0)
		unlink(path);
	if (!ready)
		return tap_done();
	check_device("virtio-blk", &blk_ring_rules, probe);
	check_device("virtio-fs", &fs_ring_rules, probe);
	check_device("virtio-console", &vcon_ring_rules, probe);
	/* What the worker asks before it closes an fd through the ring (vq_worker_close_fd). */
	TAP_CHECK(uring_rules_allow(&fs_ring_rules, IORING_OP_CLOSE) &&
			  !uring_rules_allow(&blk_ring_rules, IORING_OP_CLOSE) &&
			  !uring_rules_allow(&vcon_ring_rules, IORING_OP_CLOSE) &&
			  uring_rules_allow(NULL, IORING_OP_CLOSE),
		  "uring_rules_allow: CLOSE on virtio-fs's ring and an unrestricted one only");

	/* The refusals come from the seal: the same OPENAT on an unsealed ring opens the file. */
	struct io_uring ring;
	struct io_uring_sqe sqe;
	memset(&sqe, 0, sizeof(sqe));
	io_uring_prep_openat(&sqe, AT_FDCWD, "/etc/passwd", O_RDONLY | O_CLOEXEC, 0);
	int fd = uring_create(&ring, 8, 16, NULL) == 0 ? run_one(&ring, &sqe) : -1;
	TAP_CHECK(fd >= 0, "without rules (test devices only) the ring is not sealed: OPENAT opens");
	if (fd >= 0) {
		close(fd);
		io_uring_queue_exit(&ring);
	}
	check_owed_completion();
	struct uring_rules bad = { .ops = NULL, .nr_ops = 1 };
	TAP_CHECK(uring_create(&ring, 8, 16, &bad) == -EINVAL, "rules without their opcodes: refused");
	io_uring_free_probe(probe);
	close(file_fd);
	close(efd);
	return tap_done();
}
