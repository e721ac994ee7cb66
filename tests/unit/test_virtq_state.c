/* test_virtq_state.c: the state report of a queue says what the ring and its worker hold. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "tests/support/fake_ring.h"
#include "devices/virtio/virtio.h"
#include "devices/virtio/virtq_state.h"
#include "devices/virtio/worker.h"
#include "tests/unit/tap.h"

#define RAM_SIZE (1u << 20)
#define QSIZE 16
#define EVENT_IDX (1ULL << VIRTIO_RING_F_EVENT_IDX)

static uint8_t *ram;
static struct guest_mem gm;
static struct fake_ring fr;
static struct virtq vq;

/* "key=value " is in line (the value exactly: followed by a space or the newline). */
static bool has(const char *line, const char *kv)
{
	size_t n = strlen(kv);
	for (const char *p = strstr(line, kv); p; p = strstr(p + 1, kv))
		if ((p == line || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n'))
			return true;
	return false;
}

static bool starts(const char *line, const char *prefix)
{
	return strncmp(line, prefix, strlen(prefix)) == 0;
}

/* A fresh ring of QSIZE with the driver's `avail` chains published, the first `popped` of them
   taken by the device and `pushed` of those returned and published. */
static bool ring_with(uint64_t features, unsigned int avail, unsigned int popped,
		      unsigned int pushed)
{
	memset(ram, 0, RAM_SIZE);
	fake_ring_init(&fr, ram, RAM_SIZE, QSIZE, 0x1000);
	struct vq_layout l = fake_ring_layout(&fr);
	if (vq_init(&vq, &gm, &l, QSIZE, features, 0) != 0)
		return false;
	for (unsigned int i = 0; i < avail; i++) {
		struct fake_buf b = { fake_ring_alloc(&fr, 8), 8, true };
		fake_ring_publish(&fr, fake_ring_add_chain(&fr, &b, 1));
	}
	struct iovec iov[QSIZE];
	struct vq_chain c = { .iov = iov };
	for (unsigned int i = 0; i < popped; i++) {
		if (vq_pop(&vq, &c) != 1)
			return false;
		if (i < pushed)
			vq_push(&vq, c.head, 8);
	}
	vq_publish(&vq);
	return true;
}

/* The ring's words and the device's indices, as the ring holds them; "owed" both ways. */
static void test_ring_fields(void)
{
	struct vq_state s;
	char line[640];

	TAP_CHECK(ring_with(EVENT_IDX, 5, 3, 2), "a ring: 5 chains available, 3 taken, 2 returned");
	fake_ring_set_used_event(&fr, 1); /* the driver waits for the second reply */
	fake_ring_set_avail_flags(&fr, 0);
	(void)vq_enable_kicks(&vq, true); /* avail_event = last_avail = 3 */
	vq_state_take(&vq, 0, &s);
	vq_state_line(&s, 7, "\"test\" q0 requestq0", line, sizeof(line));
	printf("# %s", line);
	TAP_CHECK(starts(line, "ringvm-state: #7 vq \"test\" q0 requestq0 size="),
		  "the line starts with the prefix, the report's number and the queue's name");
	TAP_CHECK(has(line, "size=16") && has(line, "last_avail=3") && has(line, "avail_idx=5") &&
			  has(line, "used_idx=2") && has(line, "published=2"),
		  "size, last_avail (taken), avail idx (guest), used idx (guest), published");
	TAP_CHECK(has(line, "used_event=1") && has(line, "avail_event=3") && has(line, "event_idx=1"),
		  "used_event and avail_event as the ring holds them");
	TAP_CHECK(has(line, "signalled=0") && has(line, "owed=1"),
		  "used_event 1 published, last interrupt at 0: an interrupt is owed");
	vq_state_take(&vq, 2, &s);
	TAP_CHECK(!s.owed, "the interrupt sent at used idx 2: nothing owed");
	fake_ring_set_used_event(&fr, 4);
	vq_state_take(&vq, 0, &s);
	TAP_CHECK(!s.owed, "used_event 4 not yet published: nothing owed");
	fake_ring_set_used_event(&fr, 0xffff);
	vq_state_take(&vq, 0xfffe, &s);
	TAP_CHECK(s.owed, "across the wrap: used_event 0xffff in [0xfffe, 2) is owed");

	/* The driver's words change under the report: it reads guest memory, not a copy. */
	fake_ring_set_avail_idx(&fr, 9);
	fake_ring_set_avail_flags(&fr, VRING_AVAIL_F_NO_INTERRUPT);
	vq_state_take(&vq, 0, &s);
	vq_state_line(&s, 8, "x", line, sizeof(line));
	TAP_CHECK(has(line, "avail_idx=9") && has(line, "avail_flags=0x1"),
		  "avail idx and flags read at the moment of the report");

	TAP_CHECK(ring_with(0, 3, 3, 3), "a ring without EVENT_IDX: 3 chains returned");
	vq_state_take(&vq, 1, &s);
	TAP_CHECK(s.owed && !s.event_idx, "published past the last interrupt, interrupts on: owed");
	fake_ring_set_avail_flags(&fr, VRING_AVAIL_F_NO_INTERRUPT);
	vq_state_take(&vq, 1, &s);
	TAP_CHECK(!s.owed, "VRING_AVAIL_F_NO_INTERRUPT: nothing owed");
	vq_state_take(&vq, 3, &s);
	(void)vq_enable_kicks(&vq, false);
	vq_state_take(&vq, 3, &s);
	TAP_CHECK(!s.owed && s.words.used_flags == VRING_USED_F_NO_NOTIFY,
		  "everything signalled: nothing owed; used flags as the device wrote them");

	char small[48];
	size_t n = vq_state_line(&s, 1, "q", small, sizeof(small));
	TAP_CHECK(n == sizeof(small) - 1 && small[n - 1] == '\n' && small[n] == '\0',
		  "a line cut short by the buffer still ends with its newline");
}

/* The worker: one request done inline, one left in flight (a read of a pipe nobody writes). */
static int stall_fd[2] = { -1, -1 };
static unsigned int handled, interrupts;

static int hold_handle(struct virtio_dev *d, struct vq_worker *w, struct vq_req *req)
{
	(void)d;
	if (__atomic_fetch_add(&handled, 1, __ATOMIC_SEQ_CST) == 0) {
		vq_worker_done(w, req, 0);
		return VQ_REQ_PENDING;
	}
	struct io_uring_sqe *sqe = vq_worker_get_sqe(w, req);
	if (!sqe)
		return VQ_REQ_BUSY;
	io_uring_prep_read(sqe, stall_fd[0], req->chain.iov[0].iov_base, 1, 0);
	return VQ_REQ_PENDING;
}

static void hold_complete(struct virtio_dev *d, struct vq_worker *w, struct vq_req *req, int res)
{
	(void)d, (void)res;
	vq_worker_done(w, req, 1);
}

static const struct vq_handler_ops hold_ops = { .handle = hold_handle, .complete = hold_complete };

static int on_interrupt(void *opaque)
{
	(void)opaque;
	__atomic_fetch_add(&interrupts, 1, __ATOMIC_SEQ_CST);
	return -1; /* signalled here (counted), no eventfd for the worker to write */
}

static void on_needs_reset(void *opaque, const char *why)
{
	(void)opaque, (void)why;
}

/* The worker thread ("vq0") blocked in io_uring_enter (syscall 426, state S), now. */
static bool worker_blocked_now(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	bool blocked = false;
	while (d && (e = readdir(d)) != NULL && !blocked) {
		char path[300], buf[256] = "";
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		bool ours = fgets(buf, sizeof(buf), f) && strcmp(buf, "vq0\n") == 0;
		fclose(f);
		snprintf(path, sizeof(path), "/proc/self/task/%s/syscall", e->d_name);
		if (!ours || !(f = fopen(path, "r")))
			continue;
		blocked = fgets(buf, sizeof(buf), f) && strncmp(buf, "426 ", 4) == 0;
		fclose(f);
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
		if (!blocked || !(f = fopen(path, "r")))
			continue;
		const char *st = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		blocked = st && strncmp(st, ") S ", 4) == 0;
		fclose(f);
	}
	if (d)
		closedir(d);
	return blocked;
}

/* Bounded wait until the worker sleeps: blocked in its ring wait in two looks 2 ms apart (one
   look could catch the submit-only io_uring_enter of a pass). */
static bool worker_sleeps(void)
{
	for (int i = 0; i < 2500; i++) {
		if (worker_blocked_now()) {
			usleep(2000);
			if (worker_blocked_now())
				return true;
		}
		usleep(1000);
	}
	return false;
}

/* One line from fd within 5 s (the worker answers on its own thread). */
static bool read_line(int fd, char *buf, size_t len)
{
	struct pollfd p = { fd, POLLIN, 0 };
	if (poll(&p, 1, 5000) != 1)
		return false;
	ssize_t n = read(fd, buf, len - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return buf[n - 1] == '\n';
}

static void test_worker_answers(void)
{
	int out[2], kick_fd = eventfd(0, EFD_CLOEXEC);
	struct virtio_dev dev;
	struct vq_worker *w = NULL;
	char line[640];

	memset(&dev, 0, sizeof(dev));
	TAP_CHECK(kick_fd >= 0 && pipe(out) == 0 && pipe(stall_fd) == 0 && ring_with(EVENT_IDX, 0, 0, 0),
		  "pipes, a kick eventfd and an empty ring");
	struct vq_worker_config cfg = {
		.dev = &dev, .ops = &hold_ops, .ring_max = QSIZE, .event_fd = -1,
		.interrupt = on_interrupt, .needs_reset = on_needs_reset,
		.name = "\"virtio-test\" q0 requestq0",
	};
	TAP_CHECK(vq_worker_create(&cfg, &w) == 0, "worker made");
	if (!w)
		return;
	TAP_CHECK(vq_worker_state_request(w, 1, out[1]) == -ESRCH,
		  "a worker serving no queue is not asked (-ESRCH)");
	TAP_CHECK(vq_worker_start(w, &vq, kick_fd) == 0, "worker serves the ring");
	fake_ring_set_used_event(&fr, 0); /* interrupt at the first reply */
	for (int i = 0; i < 2; i++) {
		struct fake_buf b = { fake_ring_alloc(&fr, 8), 8, true };
		fake_ring_publish(&fr, fake_ring_add_chain(&fr, &b, 1));
	}
	uint64_t one = 1;
	TAP_CHECK(write(kick_fd, &one, sizeof(one)) == sizeof(one), "kick");
	bool done = false;
	for (int i = 0; i < 5000 && !done; i++, usleep(1000))
		done = __atomic_load_n(&handled, __ATOMIC_SEQ_CST) == 2 && fake_ring_used_idx(&fr) == 1 &&
		       __atomic_load_n(&interrupts, __ATOMIC_SEQ_CST) == 1;
	TAP_CHECK(done, "both chains handled, the first returned and interrupted for");
	TAP_CHECK(worker_sleeps(), "the worker went to sleep in io_uring_enter");

	TAP_CHECK(vq_worker_state_request(w, 1, out[1]) == 0, "report 1 asked");
	TAP_CHECK(read_line(out[0], line, sizeof(line)), "the worker wrote one line");
	printf("# %s", line);
	TAP_CHECK(starts(line, "ringvm-state: #1 vq \"virtio-test\" q0 requestq0 size="),
		  "named as its config says");
	TAP_CHECK(has(line, "size=16") && has(line, "last_avail=2") && has(line, "avail_idx=2") &&
			  has(line, "used_idx=1") && has(line, "published=1"),
		  "2 taken of 2 available, 1 returned");
	TAP_CHECK(has(line, "requests=1") && has(line, "sqes=1"),
		  "one request open, its read in flight in io_uring");
	TAP_CHECK(has(line, "asleep=1") && has(line, "kicks=1") && has(line, "irqs=1") &&
			  has(line, "signalled=1") && has(line, "owed=0"),
		  "asleep when asked; one kick, one interrupt at used idx 1, nothing owed");
	TAP_CHECK(has(line, "avail_event=2"), "kicks asked for from avail idx 2 on");
	done = false;
	for (int i = 0; i < 5000 && !done; i++, usleep(1000))
		done = vq_worker_state_answered(w, 1); /* stored just after the line's write */
	TAP_CHECK(done && !vq_worker_state_answered(w, 2), "the asker sees report 1 answered");

	/* The driver's next chain, not kicked: the report shows work the worker was never told of. */
	TAP_CHECK(worker_sleeps(), "the worker went back to sleep after answering");
	struct fake_buf b = { fake_ring_alloc(&fr, 8), 8, true };
	fake_ring_publish(&fr, fake_ring_add_chain(&fr, &b, 1));
	TAP_CHECK(vq_worker_state_request(w, 2, out[1]) == 0 && read_line(out[0], line, sizeof(line)),
		  "report 2 answered");
	printf("# %s", line);
	TAP_CHECK(has(line, "last_avail=2") && has(line, "avail_idx=3") && has(line, "asleep=1"),
		  "a chain added without a kick: avail idx ahead of last_avail, the worker asleep");

	/* The read completes: the request ends, the worker goes on. */
	TAP_CHECK(write(stall_fd[1], "x", 1) == 1, "the held read completes");
	done = false;
	for (int i = 0; i < 5000 && !done; i++, usleep(1000))
		done = fake_ring_used_idx(&fr) == 2;
	TAP_CHECK(done, "its reply is published after the reports");
	vq_worker_destroy(w);
	close(kick_fd);
	close(out[0]);
	close(out[1]);
	close(stall_fd[0]);
	close(stall_fd[1]);
}

int main(void)
{
	ram = aligned_alloc(4096, RAM_SIZE);
	struct gm_region r = { .gpa = 0, .size = RAM_SIZE, .host = ram };
	if (!ram || gm_init_from(&gm, &r, 1) != 0) {
		printf("Bail out! no memory\n");
		return 1;
	}
	test_ring_fields();
	test_worker_answers();
	gm_destroy(&gm);
	free(ram);
	return tap_done();
}
