/* test_xfer.c: the short-transfer state machine against a fake file that answers as scripted. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <liburing.h>

#include "devices/virtio/xfer.h"
#include "tests/support/page_cache.h"
#include "tests/unit/tap.h"

/*
 * The fake file holds FILE_LEN bytes; "guest memory" is three buffers of uneven sizes. Each
 * submission is answered by the next script entry: a positive number moves at most that many bytes
 * (really copied, file <-> buffers, at the offset and buffers xfer asked for), 0 is EOF / nothing
 * written, a negative number is that error. At the end the buffers (read) or the file (write) are
 * compared byte for byte with what a correct transfer gives.
 */
#define FILE_LEN 10000
#define REQ 6000

static unsigned char file[FILE_LEN], mem[3][REQ];

static int fake_io(struct xfer *x, int answer)
{
	size_t want = 0, moved = 0;

	if (answer <= 0)
		return answer;
	for (unsigned int i = 0; i < x->nr; i++)
		want += x->iov[i].iov_len;
	if ((size_t)answer > want)
		answer = (int)want;
	for (unsigned int i = 0; i < x->nr && moved < (size_t)answer; i++) {
		size_t n = x->iov[i].iov_len;
		uint64_t at = x->offset + moved;

		if (n > (size_t)answer - moved)
			n = (size_t)answer - moved;
		if (at + n > FILE_LEN)
			n = at < FILE_LEN ? FILE_LEN - at : 0;
		if (x->is_write)
			memcpy(file + at, x->iov[i].iov_base, n);
		else
			memcpy(x->iov[i].iov_base, file + at, n);
		moved += n;
	}
	return (int)moved;
}

/* Run a transfer of REQ bytes at `off` over buffers of 1000, 2000, 3000 bytes, with `script`. */
static struct xfer run(bool write, uint64_t off, const int *script, unsigned int n,
		       unsigned int *submits)
{
	struct iovec iov[3] = { { mem[0], 1000 }, { mem[1], 2000 }, { mem[2], 3000 } };
	struct xfer x;
	unsigned int i = 0;

	xfer_init(&x, write, iov, 3, off, REQ);
	*submits = 0;
	for (;;) {
		int answer = i < n ? script[i++] : REQ;

		(*submits)++;
		if (xfer_complete(&x, fake_io(&x, answer)) == XFER_DONE)
			break;
	}
	return x;
}

static void fill(void)
{
	for (int i = 0; i < FILE_LEN; i++)
		file[i] = (unsigned char)(i * 7 + i / 251);
	memset(mem, 0xee, sizeof(mem));
}

/* Byte i of the request in the three buffers. */
static unsigned char *mem_byte(int i)
{
	return i < 1000 ? &mem[0][i] : i < 3000 ? &mem[1][i - 1000] : &mem[2][i - 3000];
}

/* The buffers hold file[off .. off+len) in order. */
static bool mem_is_file(uint64_t off, size_t len)
{
	unsigned char flat[REQ];

	memcpy(flat, mem[0], 1000);
	memcpy(flat + 1000, mem[1], 2000);
	memcpy(flat + 3000, mem[2], 3000);
	return !memcmp(flat, file + off, len);
}

/* A case's answers, as the two arguments (answers, count) run() takes. */
#define ANSWERS(...) (const int[]){ __VA_ARGS__ }, sizeof((const int[]){ __VA_ARGS__ }) / sizeof(int)

/*
 * xfer_try_nowait on a real file (on /var/tmp: a disk, where the page cache can be emptied):
 * PAGES pages, read into three buffers that split them unevenly. Pages are dropped from the cache
 * (tests/support/page_cache.h); where the kernel keeps them anyway (tmpfs) the check that needs it
 * is reported as skipped.
 */
#define PAGES 32
#define PG 4096

static unsigned char disk[PAGES * PG], got[PAGES * PG + 4000];

/* A transfer of len bytes at off into got[], over buffers of 1000, 5000 and the rest. */
static void nowait_init(struct xfer *x, struct iovec *iov, uint64_t off, size_t len)
{
	memset(got, 0xee, sizeof(got));
	iov[0] = (struct iovec){ got, 1000 };
	iov[1] = (struct iovec){ got + 1000, 5000 };
	iov[2] = (struct iovec){ got + 6000, sizeof(got) - 6000 };
	xfer_init(x, false, iov, 3, off, len);
}

static void test_nowait(void)
{
	char path[] = "/var/tmp/ringvm-test-xfer-XXXXXX";
	int fd = mkstemp(path);
	struct iovec iov[3];
	struct xfer x;
	bool ok;

	if (fd < 0) {
		TAP_CHECK(false, "a file on /var/tmp for the RWF_NOWAIT checks");
		return;
	}
	unlink(path);
	for (size_t i = 0; i < sizeof(disk); i++)
		disk[i] = (unsigned char)(i * 13 + i / 4093);
	/* No readahead on this fd: reading page 0 must not bring page 1 back. */
	ok = pwrite(fd, disk, sizeof(disk), 0) == (ssize_t)sizeof(disk) &&
	     posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM) == 0;
	TAP_CHECK(ok, "the RWF_NOWAIT file written");

	nowait_init(&x, iov, 100, sizeof(disk) - 100);
	ok = xfer_try_nowait(&x, fd);
	TAP_CHECK(ok && x.done == sizeof(disk) - 100 && !x.eof && !x.error &&
			  !memcmp(got, disk + 100, sizeof(disk) - 100),
		  "nowait, all in the page cache: done on the thread, every byte in place");

	nowait_init(&x, iov, 0, sizeof(got));
	ok = xfer_try_nowait(&x, fd);
	TAP_CHECK(ok && x.eof && !x.error && x.done == sizeof(disk) && !memcmp(got, disk, sizeof(disk)),
		  "nowait across the end of the file: finished, EOF after the file's bytes");

	if (!page_cache_drop(fd, sizeof(disk))) {
		TAP_CHECK(true, "# SKIP the page cache keeps this file's pages (nowait with nothing cached)");
		TAP_CHECK(true, "# SKIP the page cache keeps this file's pages (nowait, first part cached)");
		close(fd);
		return;
	}
	nowait_init(&x, iov, 0, sizeof(disk));
	ok = xfer_try_nowait(&x, fd);
	bool rest = !ok && x.done == 0 && x.retries == 0 && !x.error;
	while (xfer_sync(&x, fd) == XFER_MORE) {
	}
	TAP_CHECK(rest && x.done == sizeof(disk) && !x.error && !memcmp(got, disk, sizeof(disk)),
		  "nowait with nothing cached: nothing moved, no retry counted; the blocking rest reads it all");

	off_t prefix = page_cache_prefix(fd, sizeof(disk));
	nowait_init(&x, iov, 0, sizeof(disk));
	if (prefix) {
		ok = xfer_try_nowait(&x, fd);
		rest = !ok && x.done == (uint64_t)prefix && x.offset == (uint64_t)prefix && !x.error &&
		       !x.eof && !memcmp(got, disk, (size_t)prefix);
		while (xfer_sync(&x, fd) == XFER_MORE) {
		}
		TAP_CHECK(rest && x.done == sizeof(disk) && !memcmp(got, disk, sizeof(disk)),
			  "nowait with the first part cached: that part now, the rest from there on");
	} else {
		TAP_CHECK(true, "# SKIP the first part of the file could not be cached alone");
	}
	close(fd);
}

/* Run sqe on ring: its result. */
static int ring_run(struct io_uring *ring, const struct io_uring_sqe *prepared)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;

	*sqe = *prepared;
	if (io_uring_submit_and_wait(ring, 1) < 0 || io_uring_peek_cqe(ring, &cqe) != 0)
		return -EIO;
	int res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

/*
 * xfer_prep_sqe on a real ring and file: two buffers go as READV/WRITEV; after a short completion
 * that used up the first buffer, the rest is one buffer and goes as READ/WRITE from where the first
 * stopped; rw_flags reach the SQE either way.
 */
static void test_prep_sqe(void)
{
	static unsigned char src[8192], a[100], b[4000], back[4100];
	char path[] = "/tmp/ringvm-test-xfer-XXXXXX";
	int fd = mkstemp(path);
	struct io_uring ring;

	bool ready = fd >= 0 && io_uring_queue_init(4, &ring, 0) == 0;
	TAP_CHECK(ready, "prep: a temporary file and an io_uring (the devices need both)");
	if (!ready) {
		if (fd >= 0)
			close(fd);
		return;
	}
	unlink(path);
	for (unsigned int i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i * 7 + 3);
	TAP_CHECK(pwrite(fd, src, sizeof(src), 0) == (ssize_t)sizeof(src), "prep: file written");

	struct iovec iov[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	struct io_uring_sqe sqe;
	struct xfer x;
	xfer_init(&x, false, iov, 2, 50, sizeof(a) + sizeof(b));
	xfer_prep_sqe(&x, &sqe, fd, 0);
	TAP_CHECK(sqe.opcode == IORING_OP_READV && sqe.len == 2 && sqe.off == 50,
		  "prep: two buffers are one READV");
	(void)xfer_complete(&x, (int)sizeof(a)); /* a short answer: the first buffer only */
	memset(b, 0, sizeof(b));
	xfer_prep_sqe(&x, &sqe, fd, RWF_NOWAIT);
	int res = ring_run(&ring, &sqe);
	TAP_CHECK(sqe.opcode == IORING_OP_READ && sqe.len == sizeof(b) && sqe.off == 150 &&
			  sqe.rw_flags == RWF_NOWAIT && res == (int)sizeof(b) &&
			  xfer_complete(&x, res) == XFER_DONE &&
			  memcmp(b, src + 150, sizeof(b)) == 0,
		  "prep: the rest of a short read is one READ from where it stopped, flags kept");

	/* A write: the buffers' bytes land at 1000 (READV/WRITEV with two, WRITE with one). */
	memset(a, 0xa5, sizeof(a));
	memset(b, 0x5a, sizeof(b));
	struct iovec wiov[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	xfer_init(&x, true, wiov, 2, 1000, sizeof(a) + sizeof(b));
	xfer_prep_sqe(&x, &sqe, fd, RWF_DSYNC);
	TAP_CHECK(sqe.opcode == IORING_OP_WRITEV && sqe.rw_flags == RWF_DSYNC,
		  "prep: two buffers are one WRITEV, flags kept");
	res = ring_run(&ring, &sqe);
	(void)xfer_complete(&x, res < (int)sizeof(a) ? res : (int)sizeof(a)); /* say: short */
	xfer_prep_sqe(&x, &sqe, fd, RWF_DSYNC);
	res = ring_run(&ring, &sqe);
	bool same = pread(fd, back, sizeof(back), 1000) == (ssize_t)sizeof(back);
	for (unsigned int i = 0; same && i < sizeof(back); i++)
		same = back[i] == (i < sizeof(a) ? 0xa5 : 0x5a);
	TAP_CHECK(sqe.opcode == IORING_OP_WRITE && sqe.off == 1100 && sqe.len == sizeof(b) &&
			  res == (int)sizeof(b) && xfer_complete(&x, res) == XFER_DONE && same,
		  "prep: the rest of a short write is one WRITE from where it stopped");
	TAP_CHECK(x.done == sizeof(a) + sizeof(b) && !x.error, "prep: the write is whole");
	io_uring_queue_exit(&ring);
	close(fd);
}

int main(void)
{
	test_nowait();
	test_prep_sqe();
	unsigned int submits;
	struct xfer x;
	char label[128];

	/* Every split point of the first piece, 1 .. REQ-1 bytes: the rest continues exactly there. */
	{
		unsigned int bad = 0;

		for (int split = 1; split < REQ; split++) {
			int s[1] = { split };

			fill();
			x = run(false, 17, s, 1, &submits);
			if (x.done != REQ || x.error || x.eof || submits != 2 || !mem_is_file(17, REQ))
				bad++;
		}
		TAP_CHECK(bad == 0, "read split at every byte 1..5999: all 6000 bytes, in place");
	}
	{
		unsigned int bad = 0;

		for (int split = 1; split < REQ; split++) {
			int s[1] = { split };
			unsigned char want[REQ];

			fill();
			for (int i = 0; i < REQ; i++) {
				want[i] = (unsigned char)(i ^ 0x5a);
				*mem_byte(i) = want[i];
			}
			x = run(true, 33, s, 1, &submits);
			if (x.done != REQ || x.error || submits != 2 || memcmp(file + 33, want, REQ))
				bad++;
		}
		TAP_CHECK(bad == 0, "write split at every byte 1..5999: the file holds all 6000 bytes");
	}

	fill();
	x = run(false, 0, ANSWERS(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	     1, 1, 1, 1, 1, 1), &submits);
	TAP_CHECK(x.done == REQ && !x.error && submits == 21 && mem_is_file(0, REQ),
		  "1 byte at a time, 20 times, then the rest");

	fill();
	x = run(false, 5, ANSWERS(1000, 2500), &submits);
	TAP_CHECK(x.done == REQ && submits == 3 && mem_is_file(5, REQ),
		  "at a buffer boundary, then inside one");

	fill();
	x = run(false, 0, ANSWERS(1500, 0), &submits);
	TAP_CHECK(x.done == 1500 && x.eof && !x.error && mem_is_file(0, 1500),
		  "0 after 1500 bytes: EOF, 1500 done");

	fill();
	x = run(false, FILE_LEN - 2500, NULL, 0, &submits);
	TAP_CHECK(x.done == 2500 && x.eof && mem_is_file(FILE_LEN - 2500, 2500),
		  "a read across the real end of file stops there");

	fill();
	x = run(false, 9, ANSWERS(-EAGAIN, -EINTR, 100, -EAGAIN), &submits);
	TAP_CHECK(x.done == REQ && !x.error && submits == 5 && mem_is_file(9, REQ),
		  "EAGAIN, EINTR, then data");

	fill();
	x = run(false, 0, ANSWERS(2100, -EIO), &submits);
	TAP_CHECK(x.done == 2100 && x.error == -EIO && !x.eof && mem_is_file(0, 2100),
		  "an error after 2100 bytes: error set, 2100 done");

	{
		int s[XFER_MAX_RETRIES + 5];

		for (unsigned int i = 0; i < sizeof(s) / sizeof(s[0]); i++)
			s[i] = -EAGAIN;
		fill();
		x = run(false, 0, s, sizeof(s) / sizeof(s[0]), &submits);
		TAP_CHECK(x.error == -EAGAIN && x.done == 0 && submits == XFER_MAX_RETRIES + 1,
			  "EAGAIN forever: ends with EAGAIN after XFER_MAX_RETRIES resubmissions");
		s[XFER_MAX_RETRIES / 2] = 10; /* progress resets the count */
		fill();
		x = run(false, 0, s, XFER_MAX_RETRIES + 4, &submits);
		TAP_CHECK(x.done == REQ && !x.error, "progress in between resets the retry budget");
	}

	fill();
	x = run(true, 0, ANSWERS(300, 0), &submits);
	TAP_CHECK(x.done == 300 && x.error == -EIO && submits == 2,
		  "a write that moves nothing: EIO, never a loop");

	fill();
	x = run(false, 0, ANSWERS(99999), &submits);
	TAP_CHECK(x.done == REQ && submits == 1 && mem_is_file(0, REQ),
		  "a larger answer than asked counts as what was asked");

	fill();
	x = run(false, 0, NULL, 0, &submits);
	snprintf(label, sizeof(label), "after XFER_DONE nothing changes");
	TAP_CHECK(xfer_complete(&x, 5) == XFER_DONE && x.done == REQ && xfer_finished(&x), label);
	return tap_done();
}
