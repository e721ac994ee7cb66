/* test_worker_batch.c: a real queue worker asks for one kick per batch of re-posted receive buffers (worker.h: batch_kicks). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "devices/virtio/pace.h"
#include "devices/virtio/virtio.h"
#include "devices/virtio/worker_priv.h"
#include "tests/support/fake_ring.h"
#include "tests/unit/tap.h"

#define RAM_SIZE (4u << 20)
#define QSIZE 128
#define HELD 64	    /* receive buffers the driver keeps posted (Linux fills a port's whole queue) */
#define TOTAL 4096  /* buffers the Linux-like driver consumes: 128 batches of 32 */
#define WORK_US 20  /* the reader's work per buffer: the worker goes back to sleep meanwhile */
#define FEATURES (1ULL << VIRTIO_RING_F_EVENT_IDX)

static uint8_t *ram;
static struct guest_mem gm;
static struct fake_ring fr;
static struct virtq vq;
static struct virtio_dev dev;
static int kick_fd = -1;
static unsigned int kicks;  /* the driver's kicks (test thread only) */
static uint32_t filled;	    /* the device's counter, written into each buffer (worker thread) */
static unsigned int resets; /* atomic */

/* The device: always has data (a host stdin that keeps up): each buffer gets the next number. */
static int fill_handle(struct virtio_dev *d, struct vq_worker *w, struct vq_req *req)
{
	struct vq_writer wr;

	vq_writer_init(&wr, &req->chain);
	uint32_t v = filled++;
	if (vq_writer_write(&wr, &v, sizeof(v)) != 0) {
		vq_worker_done(w, req, 0);
		return VQ_REQ_PENDING;
	}
	vq_worker_done(w, req, sizeof(v));
	return VQ_REQ_PENDING;
}

static void done_complete(struct virtio_dev *d, struct vq_worker *w, struct vq_req *req, int res)
{
	vq_worker_done(w, req, 0);
}

static bool always(struct virtio_dev *d, struct vq_worker *w)
{
	return true;
}

static const struct vq_handler_ops batch_ops = { .handle = fill_handle,
						 .complete = done_complete,
						 .batch_kicks = always };

static int on_interrupt(void *opaque)
{
	return -1; /* no eventfd for the worker to write */
}

static void on_needs_reset(void *opaque, const char *why)
{
	__atomic_fetch_add(&resets, 1, __ATOMIC_SEQ_CST);
}

static struct vq_worker *start(void)
{
	struct vq_worker *w = NULL;

	memset(ram, 0, RAM_SIZE);
	fake_ring_init(&fr, ram, RAM_SIZE, QSIZE, 0x1000);
	struct vq_layout l = fake_ring_layout(&fr);
	kicks = 0;
	filled = 0;
	resets = 0;
	if (vq_init(&vq, &gm, &l, QSIZE, FEATURES, 0) != 0)
		return NULL;
	struct vq_worker_config cfg = {
		.dev = &dev,
		.ops = &batch_ops,
		.ring_max = QSIZE,
		.event_fd = -1,
		.interrupt = on_interrupt,
		.needs_reset = on_needs_reset,
	};
	if (vq_worker_create(&cfg, &w) != 0)
		return NULL;
	if (vq_worker_start(w, &vq, kick_fd) != 0) {
		vq_worker_destroy(w);
		return NULL;
	}
	return w;
}

/* Post one 4-byte receive buffer and kick only if the device asked for it, as Linux's
   virtqueue_kick_prepare does with EVENT_IDX (2.7.10: vring_need_event on avail_event). */
static void post(void)
{
	struct fake_buf b = { fake_ring_alloc(&fr, 4), 4, true };
	uint16_t old = fr.avail_idx;

	fake_ring_publish(&fr, fake_ring_add_chain(&fr, &b, 1));
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* the avail idx store before the avail_event load */
	if (vq_need_event(fake_ring_avail_event(&fr), fr.avail_idx, old)) {
		uint64_t one = 1;

		kicks++;
		if (write(kick_fd, &one, sizeof(one)) != sizeof(one))
			printf("# kick failed: %s\n", strerror(errno));
	}
}

/* Take the next used buffer (10 s at most: a hang fails); its number in *v. */
static bool take(uint32_t *v)
{
	uint32_t id, len;

	for (int i = 0; i < 200000; i++) {
		if (fake_ring_used(&fr, &id, &len)) {
			struct vring_desc *desc = fake_ring_host(&fr, fr.desc);
			uint64_t addr = desc[id % QSIZE].addr;

			if (len != sizeof(*v))
				return false;
			memcpy(v, fake_ring_host(&fr, addr), sizeof(*v));
			return true;
		}
		usleep(50);
	}
	return false;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/*
 * Linux's virtio_console reading a port: take one filled buffer (used_event = the next one it will
 * take: virtqueue_get_buf), empty it, re-post it at once (add_inbuf + kick). The worker may ask
 * for a kick per batch of re-posts; the driver must still get every buffer, without the worker
 * having to look at the ring by itself (each such look is a batched sleep that timed out).
 */
static void test_linux_like(unsigned int held)
{
	struct vq_worker *w = start();
	unsigned int batch = pace_kick_batch(held);
	char what[160];
	bool ok = true;

	snprintf(what, sizeof(what), "a worker whose device batches kicks, EVENT_IDX, %u buffers posted",
		 held);
	TAP_CHECK(w, what);
	if (!w)
		return;
	for (unsigned int i = 0; i < held; i++)
		post();
	for (uint32_t n = 0; n < TOTAL && ok; n++) {
		uint32_t v = UINT32_MAX;

		ok = take(&v) && v == n;
		if (!ok)
			printf("# buffer %u: got %u\n", n, v);
		fake_ring_set_used_event(&fr, fr.used_seen);
		__atomic_thread_fence(__ATOMIC_SEQ_CST); /* virtio_store_mb */
		for (uint64_t until = now_us() + WORK_US; now_us() < until;) {
		}
		post();
	}
	TAP_CHECK(ok, "every buffer comes back filled, in order, while the driver re-posts as it reads");
	vq_worker_stop(w);
	printf("# %u kicks for %u re-posted buffers, %llu batched sleeps timed out\n", kicks, TOTAL,
	       (unsigned long long)w->batch_timeouts);
	/* A kick per buffer: the worker sleeps again during each buffer's WORK_US. */
	snprintf(what, sizeof(what), "the driver kicked for batches (of up to %u), not for each buffer",
		 batch);
	TAP_CHECK(kicks < 2 * TOTAL / batch, what);
	/* Each timeout needs the test thread to stall 10 ms holding filled buffers; a batch asked for
	   beyond what the driver holds would time out for every batch. */
	TAP_CHECK(w->batch_timeouts < TOTAL / batch / 8,
		  "the kicks it asked for came: the worker rarely had to look by itself");
	TAP_CHECK(resets == 0, "no NEEDS_RESET");
	vq_worker_destroy(w);
}

/*
 * A driver unlike Linux's: it takes every filled buffer at once with interrupts off (used_event
 * left at 0, so it seems to hold all of them) and then posts one buffer at a time, waiting for each.
 * The batched kick never comes; the worker's bounded sleep serves it anyway, late but never stuck.
 */
static void test_driver_that_waits(void)
{
	struct vq_worker *w = start();
	bool ok = true;
	uint32_t v;

	TAP_CHECK(w, "a fresh worker");
	if (!w)
		return;
	for (int i = 0; i < HELD; i++)
		post();
	for (int i = 0; i < HELD && ok; i++)
		ok = take(&v) && v == (uint32_t)i;
	TAP_CHECK(ok, "the first buffers come back filled");
	for (uint32_t n = HELD; n < HELD + 20 && ok; n++) {
		post();
		ok = take(&v) && v == n;
	}
	TAP_CHECK(ok, "one buffer at a time, each waited for: all 20 come back (no hang)");
	vq_worker_stop(w);
	printf("# %u kicks, %llu batched sleeps timed out\n", kicks,
	       (unsigned long long)w->batch_timeouts);
	TAP_CHECK(w->batch_timeouts >= 1, "the worker's own look served them (the fallback ran)");
	TAP_CHECK(resets == 0, "no NEEDS_RESET");
	vq_worker_destroy(w);
}

int main(void)
{
	ram = aligned_alloc(4096, RAM_SIZE);
	struct gm_region r = { .gpa = 0, .size = RAM_SIZE, .host = ram };
	kick_fd = eventfd(0, EFD_CLOEXEC);
	if (!ram || kick_fd < 0 || gm_init_from(&gm, &r, 1) != 0) {
		printf("Bail out! no memory or eventfd\n");
		return 1;
	}
	test_linux_like(HELD);
	test_linux_like(8); /* fewer held than a full batch: the batch follows what the driver holds */
	test_driver_that_waits();
	close(kick_fd);
	gm_destroy(&gm);
	free(ram);
	return tap_done();
}
