/* test_mmio.c: the virtio-mmio transport state machine, with real workers over a fake VM. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_mmio.h>

#include "tests/support/fake_ring.h"
#include "tests/support/fake_vm.h"
#include "devices/virtio/mmio.h"
#include "devices/virtio/virtio.h"
#include "tests/unit/tap.h"

#define RAM_SIZE (4u << 20)
#define QSIZE 8
#define NQ 2
#define ST_ACK VIRTIO_CONFIG_S_ACKNOWLEDGE
#define ST_DRV VIRTIO_CONFIG_S_DRIVER
#define ST_FOK VIRTIO_CONFIG_S_FEATURES_OK
#define ST_DOK VIRTIO_CONFIG_S_DRIVER_OK

/* An echo device: copies the readable bytes into the writable ones. */
struct echo_dev {
	struct virtio_dev vdev;
	uint8_t config[8];
	int activations, resets;
	uint64_t activated_features;
	int activate_result;
};

static void echo_config_read(struct virtio_dev *d, uint32_t off, void *data, uint32_t len)
{
	struct echo_dev *e = (struct echo_dev *)d;
	memcpy(data, e->config + off, len);
}

static int echo_activate(struct virtio_dev *d, uint64_t features)
{
	struct echo_dev *e = (struct echo_dev *)d;
	e->activations++;
	e->activated_features = features;
	return e->activate_result;
}

static void echo_reset(struct virtio_dev *d)
{
	((struct echo_dev *)d)->resets++;
}

static int echo_handle(struct virtio_dev *d, struct vq_worker *w, struct vq_req *req)
{
	struct vq_reader r;
	struct vq_writer wr;
	vq_reader_init(&r, &req->chain);
	vq_writer_init(&wr, &req->chain);
	uint8_t buf[256];
	size_t n = vq_reader_remaining(&r);
	if (n > vq_writer_remaining(&wr))
		n = vq_writer_remaining(&wr);
	if (n > sizeof(buf))
		n = sizeof(buf);
	uint32_t written = 0;
	if (vq_reader_read(&r, buf, n) == 0 && vq_writer_write(&wr, buf, n) == 0)
		written = (uint32_t)n;
	vq_worker_done(w, req, written);
	return VQ_REQ_PENDING;
}

static void echo_complete(struct virtio_dev *d, struct vq_worker *w, struct vq_req *req, int res)
{
}

static const struct virtio_dev_ops echo_ops = {
	.config_read = echo_config_read,
	.activate = echo_activate,
	.reset = echo_reset,
};
static const struct vq_handler_ops echo_qops = { .handle = echo_handle, .complete = echo_complete };

static struct vm *vm;
static struct echo_dev echo;
static struct virtio_mmio *t;
static uint64_t base;
static struct fake_ring rings[NQ];

static uint32_t rd(uint32_t off)
{
	return fake_vm_read32(vm, base + off);
}

static void wr(uint32_t off, uint32_t v)
{
	fake_vm_write32(vm, base + off, v);
}

/* Steps 1-6 of 3.1.1 with the given driver features; returns the Status read back. */
static uint32_t negotiate(uint64_t features)
{
	wr(VIRTIO_MMIO_STATUS, 0);
	wr(VIRTIO_MMIO_STATUS, ST_ACK);
	wr(VIRTIO_MMIO_STATUS, ST_ACK | ST_DRV);
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)features);
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(features >> 32));
	wr(VIRTIO_MMIO_STATUS, ST_ACK | ST_DRV | ST_FOK);
	return rd(VIRTIO_MMIO_STATUS);
}

static void setup_queue(unsigned int q, struct fake_ring *fr)
{
	wr(VIRTIO_MMIO_QUEUE_SEL, q);
	wr(VIRTIO_MMIO_QUEUE_NUM, fr->size);
	wr(VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)fr->desc);
	wr(VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(fr->desc >> 32));
	wr(VIRTIO_MMIO_QUEUE_AVAIL_LOW, (uint32_t)fr->avail);
	wr(VIRTIO_MMIO_QUEUE_AVAIL_HIGH, 0);
	wr(VIRTIO_MMIO_QUEUE_USED_LOW, (uint32_t)fr->used);
	wr(VIRTIO_MMIO_QUEUE_USED_HIGH, 0);
	wr(VIRTIO_MMIO_QUEUE_READY, 1);
}

#define DRIVER_FEATURES ((1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_RING_F_EVENT_IDX))

/* A full bring-up of both queues; rings at 64 KiB and 1 MiB. */
static uint32_t bring_up(void)
{
	negotiate(DRIVER_FEATURES);
	uint8_t *ram = fake_vm_ram(vm);
	fake_ring_init(&rings[0], ram, RAM_SIZE / 2, QSIZE, 0x10000);
	fake_ring_init(&rings[1], ram, RAM_SIZE, QSIZE, RAM_SIZE / 2);
	setup_queue(0, &rings[0]);
	setup_queue(1, &rings[1]);
	wr(VIRTIO_MMIO_STATUS, ST_ACK | ST_DRV | ST_FOK | ST_DOK);
	return rd(VIRTIO_MMIO_STATUS);
}

/*
 * Wait until cond(arg) holds: the verdict is always the event itself; the 10 s bound only detects a
 * hang (the workers run on their own threads, slowly under sanitizers on a busy machine).
 */
static bool wait_for(bool (*cond)(const void *arg), const void *arg)
{
	for (int i = 0; i < 10000; i++) {
		if (cond(arg))
			return true;
		usleep(1000);
	}
	return cond(arg);
}

static uint16_t want_used;
static bool used_reached(const void *fr)
{
	return fake_ring_used_idx(fr) == want_used;
}

/* Wait for `n` used entries on ring fr. */
static bool wait_used(struct fake_ring *fr, uint16_t n)
{
	want_used = n;
	return wait_for(used_reached, fr);
}

static void test_identity(void)
{
	TAP_CHECK(rd(VIRTIO_MMIO_MAGIC_VALUE) == 0x74726976, "MagicValue is \"virt\"");
	TAP_CHECK(rd(VIRTIO_MMIO_VERSION) == 2, "Version 2 (modern)");
	TAP_CHECK(rd(VIRTIO_MMIO_DEVICE_ID) == VIRTIO_ID_CONSOLE, "DeviceID from the device");
	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	TAP_CHECK(rd(VIRTIO_MMIO_DEVICE_FEATURES) & (1u << (VIRTIO_F_VERSION_1 - 32)),
		  "VERSION_1 offered");
	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	uint32_t lo = rd(VIRTIO_MMIO_DEVICE_FEATURES);
	TAP_CHECK((lo & (1u << VIRTIO_RING_F_EVENT_IDX)) &&
			  (lo & (1u << VIRTIO_RING_F_INDIRECT_DESC)) && (lo & 1u),
		  "ring features and the device's own features offered");
	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 7);
	TAP_CHECK(rd(VIRTIO_MMIO_DEVICE_FEATURES) == 0, "features beyond bit 63 read 0");
	uint8_t b = 0;
	TAP_CHECK(fake_vm_mmio_read(vm, base + VIRTIO_MMIO_CONFIG + 3, &b, 1) == 0 && b == 0x44,
		  "config space byte read");
	uint32_t v = 0xdeadbeef;
	fake_vm_mmio_read(vm, base + VIRTIO_MMIO_CONFIG + 6, &v, 4);
	TAP_CHECK(v == 0, "config read past config_size reads 0");
	uint16_t half = 0xffff;
	fake_vm_mmio_read(vm, base + VIRTIO_MMIO_STATUS, &half, 2);
	TAP_CHECK(half == 0, "a 16-bit register access reads 0");
	wr(VIRTIO_MMIO_QUEUE_SEL, 0);
	TAP_CHECK(rd(VIRTIO_MMIO_QUEUE_NUM_MAX) == QSIZE, "QueueNumMax of queue 0");
	wr(VIRTIO_MMIO_QUEUE_SEL, NQ);
	TAP_CHECK(rd(VIRTIO_MMIO_QUEUE_NUM_MAX) == 0,
		  "QueueNumMax 0 for a queue that does not exist");
	TAP_CHECK(rd(VIRTIO_MMIO_SHM_LEN_LOW) == 0xffffffffu, "no shared memory regions");

	const struct fake_vm_ioeventfd *ev;
	unsigned int n = fake_vm_ioeventfds(vm, &ev);
	TAP_CHECK(n == NQ && ev[0].addr == base + VIRTIO_MMIO_QUEUE_NOTIFY && ev[0].datamatch &&
			  ev[0].data == 0 && ev[1].data == 1 && ev[0].len == 4,
		  "one ioeventfd per queue on QueueNotify with datamatch = queue index");
	const struct fake_vm_irqfd *irq;
	TAP_CHECK(fake_vm_irqfds(vm, &irq) == 1 && irq[0].gsi == virtio_mmio_gsi(t),
		  "irqfd on the GSI");
}

static void test_status_machine(void)
{
	wr(VIRTIO_MMIO_STATUS, 0);
	wr(VIRTIO_MMIO_STATUS, ST_DRV);
	TAP_CHECK(rd(VIRTIO_MMIO_STATUS) == 0, "DRIVER before ACKNOWLEDGE is ignored");
	wr(VIRTIO_MMIO_STATUS, ST_ACK);
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, 1);
	wr(VIRTIO_MMIO_STATUS, ST_ACK | ST_FOK);
	TAP_CHECK(rd(VIRTIO_MMIO_STATUS) == ST_ACK, "FEATURES_OK before DRIVER is ignored");
	wr(VIRTIO_MMIO_STATUS, ST_ACK | ST_DRV | ST_FOK);
	TAP_CHECK(!(rd(VIRTIO_MMIO_STATUS) & ST_FOK),
		  "features written before DRIVER were ignored");

	TAP_CHECK(!(negotiate(1ULL << VIRTIO_RING_F_EVENT_IDX) & ST_FOK),
		  "FEATURES_OK refused without VERSION_1");
	TAP_CHECK(!(negotiate(DRIVER_FEATURES | (1ULL << 40)) & ST_FOK),
		  "FEATURES_OK refused for a feature not offered");
	TAP_CHECK(negotiate(DRIVER_FEATURES) == (ST_ACK | ST_DRV | ST_FOK), "FEATURES_OK accepted");
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, 0);
	wr(VIRTIO_MMIO_STATUS, ST_ACK);
	TAP_CHECK(rd(VIRTIO_MMIO_STATUS) == (ST_ACK | ST_DRV | ST_FOK),
		  "clearing status bits is ignored");

	wr(VIRTIO_MMIO_STATUS, 0);
	wr(VIRTIO_MMIO_STATUS, ST_ACK);
	wr(VIRTIO_MMIO_STATUS, ST_ACK | ST_DRV);
	wr(VIRTIO_MMIO_QUEUE_SEL, 0);
	wr(VIRTIO_MMIO_QUEUE_READY, 1);
	TAP_CHECK(rd(VIRTIO_MMIO_QUEUE_READY) == 0,
		  "queue registers are locked before FEATURES_OK");
	wr(VIRTIO_MMIO_STATUS, 0);
}

static bool needs_reset(const void *arg)
{
	return rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET;
}

static void test_live(void)
{
	echo.activations = echo.resets = 0;
	uint32_t st = bring_up();
	TAP_CHECK(st == (ST_ACK | ST_DRV | ST_FOK | ST_DOK), "DRIVER_OK accepted");
	TAP_CHECK(echo.activations == 1 && echo.activated_features == DRIVER_FEATURES &&
			  echo.vdev.driver_features == DRIVER_FEATURES,
		  "activate() called once with the negotiated features");

	wr(VIRTIO_MMIO_QUEUE_SEL, 0);
	wr(VIRTIO_MMIO_QUEUE_READY, 0);
	TAP_CHECK(rd(VIRTIO_MMIO_QUEUE_READY) == 1, "QueueReady is locked after DRIVER_OK");
	wr(VIRTIO_MMIO_QUEUE_NUM, 2);
	wr(VIRTIO_MMIO_QUEUE_DESC_LOW, 0x5000);

	struct fake_ring *fr = &rings[0];
	uint64_t in = fake_ring_alloc(fr, 4), out = fake_ring_alloc(fr, 4);
	memcpy(fake_ring_host(fr, in), "ping", 4);
	struct fake_buf b[2] = { { in, 4, false }, { out, 4, true } };
	fake_ring_publish(fr, fake_ring_add_chain(fr, b, 2));
	TAP_CHECK(fake_vm_kick(vm, base + VIRTIO_MMIO_QUEUE_NOTIFY, 0) == 0, "kick queue 0");
	TAP_CHECK(wait_used(fr, 1), "the worker completed the chain");
	uint32_t id, len;
	TAP_CHECK(fake_ring_used(fr, &id, &len) && id == 0 && len == 4 &&
			  !memcmp(fake_ring_host(fr, out), "ping", 4),
		  "echoed through the ring registered before the lock (later writes ignored)");
	TAP_CHECK(fake_vm_wait_irq(vm, virtio_mmio_gsi(t), 2000) > 0, "irqfd signalled");
	TAP_CHECK(rd(VIRTIO_MMIO_INTERRUPT_STATUS) == VIRTIO_MMIO_INT_VRING,
		  "InterruptStatus says VRING");
	wr(VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_VRING);
	TAP_CHECK(rd(VIRTIO_MMIO_INTERRUPT_STATUS) == 0, "InterruptACK clears it");

	/* Queue 1 has its own worker; kick it several times with several chains. */
	struct fake_ring *f1 = &rings[1];
	for (int i = 0; i < 5; i++) {
		uint64_t o = fake_ring_alloc(f1, 2);
		struct fake_buf bb[1] = { { o, 2, true } };
		fake_ring_publish(f1, fake_ring_add_chain(f1, bb, 1));
	}
	fake_vm_kick(vm, base + VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	TAP_CHECK(wait_used(f1, 5), "queue 1 served by its own worker");
	TAP_CHECK(fake_ring_used_idx(fr) == 1, "queue 0 untouched by queue 1's kick");

	uint32_t gen = rd(VIRTIO_MMIO_CONFIG_GENERATION);
	(void)fake_vm_wait_irq(vm, virtio_mmio_gsi(t), 0);
	virtio_config_changed(&echo.vdev);
	TAP_CHECK(rd(VIRTIO_MMIO_CONFIG_GENERATION) == gen + 1,
		  "config change bumps ConfigGeneration");
	TAP_CHECK((rd(VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_CONFIG) &&
			  fake_vm_wait_irq(vm, virtio_mmio_gsi(t), 2000) > 0,
		  "config change interrupt");
	wr(VIRTIO_MMIO_INTERRUPT_ACK, 3);

	/* A driver bug on queue 0: avail idx jumps past the queue size. */
	fake_ring_set_avail_idx(fr, (uint16_t)(fr->avail_idx + QSIZE + 1));
	fake_vm_kick(vm, base + VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	TAP_CHECK(wait_for(needs_reset, NULL), "avail idx jump sets DEVICE_NEEDS_RESET");
	TAP_CHECK(rd(VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_CONFIG,
		  "NEEDS_RESET comes with a config change interrupt");

	wr(VIRTIO_MMIO_STATUS, 0);
	TAP_CHECK(rd(VIRTIO_MMIO_STATUS) == 0 && echo.resets == 1,
		  "reset stops workers and resets the device");
	wr(VIRTIO_MMIO_QUEUE_SEL, 0);
	TAP_CHECK(rd(VIRTIO_MMIO_QUEUE_READY) == 0 && rd(VIRTIO_MMIO_INTERRUPT_STATUS) == 0,
		  "reset clears QueueReady and InterruptStatus");

	/* After reset the same rings come back live from scratch. */
	st = bring_up();
	struct fake_buf again[1] = { { fake_ring_alloc(fr, 1), 1, true } };
	fake_ring_publish(fr, fake_ring_add_chain(fr, again, 1));
	fake_vm_kick(vm, base + VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	TAP_CHECK(st & ST_DOK && wait_used(fr, 1), "device works again after reset");
	wr(VIRTIO_MMIO_STATUS, 0);
}

static void test_bad_activation(void)
{
	negotiate(DRIVER_FEATURES);
	struct fake_ring bad;
	fake_ring_init(&bad, fake_vm_ram(vm), RAM_SIZE, QSIZE, 0x10000);
	bad.used = RAM_SIZE - 8; /* the used ring runs off the end of RAM */
	setup_queue(0, &bad);
	wr(VIRTIO_MMIO_STATUS, ST_ACK | ST_DRV | ST_FOK | ST_DOK);
	TAP_CHECK(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET,
		  "DRIVER_OK with a ring outside RAM: NEEDS_RESET");
	wr(VIRTIO_MMIO_STATUS, 0);

	negotiate(DRIVER_FEATURES);
	wr(VIRTIO_MMIO_QUEUE_SEL, 0);
	wr(VIRTIO_MMIO_QUEUE_NUM, 3);
	wr(VIRTIO_MMIO_QUEUE_READY, 1);
	wr(VIRTIO_MMIO_STATUS, ST_ACK | ST_DRV | ST_FOK | ST_DOK);
	TAP_CHECK(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET,
		  "DRIVER_OK with a queue size not a power of two: NEEDS_RESET");
	wr(VIRTIO_MMIO_STATUS, 0);

	echo.activate_result = -EINVAL;
	negotiate(DRIVER_FEATURES);
	wr(VIRTIO_MMIO_STATUS, ST_ACK | ST_DRV | ST_FOK | ST_DOK);
	TAP_CHECK(rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET,
		  "activate() refusing: NEEDS_RESET");
	echo.activate_result = 0;
	wr(VIRTIO_MMIO_STATUS, 0);
}

/*
 * A test that needs its own device variant gets a second transport on a fresh fake VM; rd()/wr()
 * and bring_up() act on it until other_vm_end() puts the shared one back.
 */
struct other_vm {
	struct vm *vm, *keep_vm;
	uint64_t keep_base;
	struct virtio_mmio *t;
};

static bool other_vm_begin(struct other_vm *o, struct echo_dev *e, bool trap_notify)
{
	o->vm = fake_vm_create(RAM_SIZE);
	if (!o->vm)
		return false;
	fake_vm_fail_ioeventfd(o->vm, trap_notify);
	e->vdev.transport = NULL;
	if (virtio_mmio_create(o->vm, &e->vdev, &o->t) != 0) {
		fake_vm_destroy(o->vm);
		return false;
	}
	o->keep_vm = vm;
	o->keep_base = base;
	vm = o->vm;
	base = virtio_mmio_base(o->t);
	return true;
}

static void other_vm_end(struct other_vm *o)
{
	virtio_mmio_destroy(o->t);
	fake_vm_destroy(o->vm);
	vm = o->keep_vm;
	base = o->keep_base;
}

/* Without KVM ioeventfds, QueueNotify traps to the transport, which forwards the kick. */
static void test_trapped_notify(void)
{
	struct echo_dev e2 = echo;
	struct other_vm o;
	bool up = other_vm_begin(&o, &e2, true);
	TAP_CHECK(up, "transport without ioeventfd support");
	if (!up)
		return;
	bring_up();
	struct fake_buf b[1] = { { fake_ring_alloc(&rings[0], 1), 1, true } };
	fake_ring_publish(&rings[0], fake_ring_add_chain(&rings[0], b, 1));
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	TAP_CHECK(wait_used(&rings[0], 1), "a trapped QueueNotify write reaches the worker");
	other_vm_end(&o);
}

/*
 * A device whose every request waits for one byte on a pipe the test controls. It counts the reads
 * it queued and the chains it gave back for lack of an SQE, so the test waits for those events
 * instead of sleeping.
 */
static int slow_pipe[2];
static unsigned int slow_queued, slow_busy; /* atomic: worker writes, test reads */
static int slow_handle(struct virtio_dev *d, struct vq_worker *w, struct vq_req *req)
{
	struct io_uring_sqe *sqe = vq_worker_get_sqe(w, req);
	if (!sqe) {
		__atomic_fetch_add(&slow_busy, 1, __ATOMIC_SEQ_CST);
		return VQ_REQ_BUSY;
	}
	io_uring_prep_read(sqe, slow_pipe[0], req->priv, 1, 0);
	__atomic_fetch_add(&slow_queued, 1, __ATOMIC_SEQ_CST);
	return VQ_REQ_PENDING;
}

static unsigned int want_queued;
static bool slow_full(const void *arg)
{
	return __atomic_load_n(&slow_queued, __ATOMIC_SEQ_CST) == want_queued &&
	       __atomic_load_n(&slow_busy, __ATOMIC_SEQ_CST) > 0;
}
static bool slow_reached(const void *arg)
{
	return __atomic_load_n(&slow_queued, __ATOMIC_SEQ_CST) >= want_queued;
}

static void slow_complete(struct virtio_dev *d, struct vq_worker *w, struct vq_req *req, int res)
{
	vq_worker_done(w, req, res == 1 ? 1 : 0);
}

static const struct vq_handler_ops slow_qops = { .handle = slow_handle, .complete = slow_complete };

static void *late_bytes(void *arg)
{
	usleep(100000);
	if (write(slow_pipe[1], "ij", 2) != 2)
		return NULL;
	return arg;
}

static void test_backpressure(void)
{
	struct echo_dev e2 = echo;
	e2.vdev.queue_ops = &slow_qops;
	e2.vdev.req_priv_size = 8;
	e2.vdev.max_inflight = 4;
	struct other_vm o;
	slow_queued = slow_busy = 0;
	bool up = pipe(slow_pipe) == 0 && other_vm_begin(&o, &e2, false);
	TAP_CHECK(up, "slow device with 4 SQEs in flight at most");
	if (!up)
		return;
	bring_up();
	struct fake_ring *fr = &rings[0];
	for (int i = 0; i < QSIZE; i++) {
		struct fake_buf b[1] = { { fake_ring_alloc(fr, 1), 1, true } };
		fake_ring_publish(fr, fake_ring_add_chain(fr, b, 1));
	}
	fake_vm_kick(vm, base + VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	/* The event: 4 reads queued, and a fifth chain given back for want of an SQE. */
	want_queued = 4;
	TAP_CHECK(wait_for(slow_full, NULL) && fake_ring_used_idx(fr) == 0,
		  "a full queue waits while the SQEs are in flight");
	TAP_CHECK(write(slow_pipe[1], "abc", 3) == 3 && wait_used(fr, 3),
		  "three completions free three slots");
	TAP_CHECK(write(slow_pipe[1], "defgh", 5) == 5 && wait_used(fr, QSIZE),
		  "requests pushed back by backpressure are retried, none failed");
	uint32_t id, len, ok = 0;
	while (fake_ring_used(fr, &id, &len))
		ok += len == 1;
	TAP_CHECK(ok == QSIZE, "every request completed with its byte");

	/* Reset with requests in flight: the worker drains them before it exits. */
	for (int i = 0; i < 2; i++) {
		struct fake_buf b[1] = { { fake_ring_alloc(fr, 1), 1, true } };
		fake_ring_publish(fr, fake_ring_add_chain(fr, b, 1));
	}
	fake_vm_kick(vm, base + VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	/* Both reads are queued (in flight) before the reset. */
	want_queued = QSIZE + 2;
	TAP_CHECK(wait_for(slow_reached, NULL) && fake_ring_used_idx(fr) == QSIZE,
		  "two reads in flight before the reset");
	pthread_t late;
	TAP_CHECK(pthread_create(&late, NULL, late_bytes, NULL) == 0, "bytes arrive 100 ms later");
	wr(VIRTIO_MMIO_STATUS, 0);
	TAP_CHECK(fake_ring_used_idx(fr) == QSIZE + 2,
		  "reset returned only after in-flight I/O completed");
	pthread_join(late, NULL);
	other_vm_end(&o);
	close(slow_pipe[0]);
	close(slow_pipe[1]);
}

/* A device whose rings may only do NOP: 'n' requests submit a NOP, 'w' requests a WRITE. */
static int devnull = -1;
static int restricted_handle(struct virtio_dev *d, struct vq_worker *w, struct vq_req *req)
{
	struct vq_reader r;
	char op = 0;
	vq_reader_init(&r, &req->chain);
	if (vq_reader_read(&r, &op, 1)) {
		vq_worker_done(w, req, 0);
		return VQ_REQ_PENDING;
	}
	struct io_uring_sqe *sqe = vq_worker_get_sqe(w, req);
	if (!sqe)
		return VQ_REQ_BUSY;
	static const struct iovec x = { (void *)"x", 1 };
	if (op == 'w')
		io_uring_prep_writev(sqe, devnull, &x, 1, 0); /* not the worker's own WRITE: refused */
	else
		io_uring_prep_nop(sqe);
	return VQ_REQ_PENDING;
}

/* Used length 2: the SQE ran; 1: refused with -EACCES; 3: anything else. */
static void restricted_complete(struct virtio_dev *d, struct vq_worker *w, struct vq_req *req,
				int res)
{
	vq_worker_done(w, req, res >= 0 ? 2 : res == -EACCES ? 1 : 3);
}

static const struct vq_handler_ops restricted_qops = { .handle = restricted_handle,
						       .complete = restricted_complete };
static const uint8_t nop_only_ops[] = { IORING_OP_NOP };
static const struct uring_rules nop_only = { .ops = nop_only_ops, .nr_ops = 1 };

static void test_restricted_ring(void)
{
	struct echo_dev e2 = echo;
	e2.vdev.queue_ops = &restricted_qops;
	e2.vdev.ring_rules = &nop_only;
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	struct other_vm o;
	bool up = devnull >= 0 && other_vm_begin(&o, &e2, false);
	TAP_CHECK(up, "device whose rings allow only IORING_OP_NOP");
	if (!up)
		return;
	TAP_CHECK(bring_up() & ST_DOK, "restricted rings start");
	struct fake_ring *fr = &rings[0];
	const char ops[2] = { 'n', 'w' };
	for (int i = 0; i < 2; i++) {
		uint64_t g = fake_ring_alloc(fr, 1);
		*(char *)fake_ring_host(fr, g) = ops[i];
		struct fake_buf b[1] = { { g, 1, false } };
		fake_ring_publish(fr, fake_ring_add_chain(fr, b, 1));
	}
	fake_vm_kick(vm, base + VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	uint32_t id, len_nop = 0, len_write = 0;
	bool got = wait_used(fr, 2) && fake_ring_used(fr, &id, &len_nop) &&
		   fake_ring_used(fr, &id, &len_write);
	TAP_CHECK(got && len_nop == 2, "an allowed opcode runs");
	TAP_CHECK(got && len_write == 1, "a WRITEV on a NOP-only ring is refused with -EACCES");
	other_vm_end(&o);
	close(devnull);
}

/*
 * A request that outlives its run. This device answers the stop's cancel by reading again, so the
 * worker abandons the request after its stop wait; the ring, kept across the reset, completes that
 * read during the next run. Its CQE carries the earlier run's tag (same slot, same generation as the
 * new run's first request): it must be dropped, not taken for the new request. Chains name the pipe
 * they read: 'A' or 'B'.
 */
static int stale_pipe[2][2];
static char stale_sink[2];
static unsigned int stale_queued; /* atomic: reads queued by handle() */
static int stale_which(struct vq_req *req)
{
	struct vq_reader r;
	char c = 0;
	vq_reader_init(&r, &req->chain);
	return vq_reader_read(&r, &c, 1) == 0 && c == 'A' ? 0 : 1;
}

static int stale_handle(struct virtio_dev *d, struct vq_worker *w, struct vq_req *req)
{
	struct io_uring_sqe *sqe = vq_worker_get_sqe(w, req);
	if (!sqe)
		return VQ_REQ_BUSY;
	int i = stale_which(req);
	io_uring_prep_read(sqe, stale_pipe[i][0], &stale_sink[i], 1, 0);
	__atomic_fetch_add(&stale_queued, 1, __ATOMIC_SEQ_CST);
	return VQ_REQ_PENDING;
}

/* Used length: the byte read; 0 when cancelled for good. */
static void stale_complete(struct virtio_dev *d, struct vq_worker *w, struct vq_req *req, int res)
{
	int i = stale_which(req);
	if (res == -ECANCELED) {
		struct io_uring_sqe *sqe = vq_worker_get_sqe(w, req);
		if (sqe) { /* stubborn: read again (the worker hands out none once it abandons) */
			io_uring_prep_read(sqe, stale_pipe[i][0], &stale_sink[i], 1, 0);
			return;
		}
	}
	vq_worker_done(w, req, res == 1 ? (uint8_t)stale_sink[i] : 0);
}

static const struct vq_handler_ops stale_qops = { .handle = stale_handle,
						  .complete = stale_complete };

static bool stale_reached(const void *arg)
{
	return __atomic_load_n(&stale_queued, __ATOMIC_SEQ_CST) >= *(const unsigned int *)arg;
}

static void stale_post(struct fake_ring *fr, char which)
{
	uint64_t g = fake_ring_alloc(fr, 1);
	*(char *)fake_ring_host(fr, g) = which;
	struct fake_buf b[1] = { { g, 1, false } };
	fake_ring_publish(fr, fake_ring_add_chain(fr, b, 1));
	fake_vm_kick(vm, base + VIRTIO_MMIO_QUEUE_NOTIFY, 0);
}

static void test_stale_completion(void)
{
	struct echo_dev e2 = echo;
	e2.vdev.queue_ops = &stale_qops;
	struct other_vm o;
	stale_queued = 0;
	bool up = pipe2(stale_pipe[0], O_CLOEXEC) == 0 && pipe2(stale_pipe[1], O_CLOEXEC) == 0 &&
		  other_vm_begin(&o, &e2, false);
	TAP_CHECK(up, "device whose requests read pipe A or B and ignore cancellation");
	if (!up)
		return;
	bring_up();
	struct fake_ring *fr = &rings[0];
	unsigned int want = 1;
	stale_post(fr, 'A');
	TAP_CHECK(wait_for(stale_reached, &want), "run 1: the request reads pipe A");
	wr(VIRTIO_MMIO_STATUS, 0); /* cancelled, read again, abandoned after the stop wait */
	uint32_t id, len = 99;
	TAP_CHECK(fake_ring_used_idx(fr) == 1 && fake_ring_used(fr, &id, &len) && len == 0,
		  "the reset abandoned it (used, length 0) while its read stays in the ring");
	TAP_CHECK(bring_up() & ST_DOK, "run 2 on the same worker and ring");
	want = 2;
	stale_post(fr, 'B');
	TAP_CHECK(wait_for(stale_reached, &want), "run 2: its first request reads pipe B");
	/* The read abandoned in run 1 completes first, then run 2's own. */
	TAP_CHECK(write(stale_pipe[0][1], "a", 1) == 1 && write(stale_pipe[1][1], "b", 1) == 1 &&
			  wait_used(fr, 1),
		  "both reads complete");
	len = 0;
	TAP_CHECK(fake_ring_used(fr, &id, &len) && len == 'b' && fake_ring_used_idx(fr) == 1,
		  "run 2's request got its own byte: run 1's late completion was dropped");
	other_vm_end(&o);
	for (int i = 0; i < 2; i++) {
		close(stale_pipe[i][0]);
		close(stale_pipe[i][1]);
	}
}

/*
 * poll_us: after serving a kick the worker busy-polls with kicks still off, so a chain published
 * meanwhile is served without a kick and the driver is not asked for one; when the poll runs out the
 * worker asks for kicks again (avail_event = avail idx) before it sleeps.
 */
static bool kicks_asked_again(const void *fr)
{
	return fake_ring_avail_event(fr) == 2;
}

static void test_polling(void)
{
	struct echo_dev e2 = echo;
	e2.vdev.poll_us = 400000; /* long enough that the test's own steps fit, even under ASan */
	struct other_vm o;
	bool up = other_vm_begin(&o, &e2, false);
	TAP_CHECK(up, "device with workers polling 400 ms");
	if (!up)
		return;
	bring_up();
	struct fake_ring *fr = &rings[0];
	struct fake_buf b[1] = { { fake_ring_alloc(fr, 1), 1, true } };
	fake_ring_publish(fr, fake_ring_add_chain(fr, b, 1));
	fake_vm_kick(vm, base + VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	TAP_CHECK(wait_used(fr, 1), "a kicked chain is served");
	/* The driver's test (vring_need_event) for the next chain, avail idx 1 -> 2: kick when
	   avail_event lies in [1, 2). */
	uint16_t event = fake_ring_avail_event(fr);
	TAP_CHECK(!((uint16_t)(2 - event - 1) < (uint16_t)(2 - 1)),
		  "while polling, the avail_event asks for no kick for the next chain");
	b[0].gpa = fake_ring_alloc(fr, 1);
	fake_ring_publish(fr, fake_ring_add_chain(fr, b, 1));
	TAP_CHECK(wait_used(fr, 2), "a chain published without a kick is found by polling");
	TAP_CHECK(wait_for(kicks_asked_again, fr),
		  "after the poll runs out, kicks are asked for again before sleeping");
	b[0].gpa = fake_ring_alloc(fr, 1);
	fake_ring_publish(fr, fake_ring_add_chain(fr, b, 1));
	fake_vm_kick(vm, base + VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	TAP_CHECK(wait_used(fr, 3), "and a kick wakes the sleeping worker");
	other_vm_end(&o);
}

int main(void)
{
	vm = fake_vm_create(RAM_SIZE);
	if (!vm) {
		printf("Bail out! no memory\n");
		return 1;
	}
	echo.vdev = (struct virtio_dev){
		.device_id = VIRTIO_ID_CONSOLE,
		.features = 1,
		.config_size = sizeof(echo.config),
		.nr_queues = NQ,
		.queue_max_size = QSIZE,
		.ops = &echo_ops,
		.queue_ops = &echo_qops,
	};
	memcpy(echo.config, "\x11\x22\x33\x44\x55\x66\x77\x88", 8);
	struct echo_dev bad = echo;
	bad.vdev.queue_max_size = 12;
	struct virtio_mmio *tb = NULL;
	TAP_CHECK(virtio_mmio_create(vm, &bad.vdev, &tb) == -EINVAL,
		  "QueueNumMax not a power of two refused");
	TAP_CHECK(virtio_mmio_create(vm, &echo.vdev, &t) == 0, "transport created");
	base = virtio_mmio_base(t);
	const struct fake_vm_mmio *m;
	TAP_CHECK(fake_vm_mmios(vm, &m) == 1 && m[0].base == base,
		  "window registered on the MMIO bus");

	test_identity();
	test_status_machine();
	test_live();
	test_bad_activation();
	test_trapped_notify();
	test_backpressure();
	test_restricted_ring();
	test_stale_completion();
	test_polling();

	virtio_mmio_destroy(t);
	const struct fake_vm_ioeventfd *ev;
	const struct fake_vm_irqfd *irq;
	TAP_CHECK(fake_vm_ioeventfds(vm, &ev) == 0 && fake_vm_irqfds(vm, &irq) == 0,
		  "destroy removes the ioeventfds and the irqfd");
	fake_vm_destroy(vm);
	return tap_done();
}
