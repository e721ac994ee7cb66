/* test_virtq.c: split-ring validation, chain walking, notification decisions and the Reader/Writer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/fake_ring.h"
#include "devices/virtio/virtq.h"
#include "tests/unit/tap.h"

#define RAM_SIZE (1u << 20)
#define QSIZE 16
#define ALL_FEATURES ((1ULL << VIRTIO_RING_F_EVENT_IDX) | (1ULL << VIRTIO_RING_F_INDIRECT_DESC))

static uint8_t *ram;
static struct guest_mem gm;
static struct fake_ring fr;
static struct virtq vq;
static struct iovec iov[QSIZE];
static struct vq_chain chain = { .iov = iov };

/* A fresh ring of QSIZE entries at 0x1000 and a validated virtq over it. */
static int setup(uint64_t features, unsigned int max_segs)
{
	memset(ram, 0, RAM_SIZE);
	fake_ring_init(&fr, ram, RAM_SIZE, QSIZE, 0x1000);
	struct vq_layout l = fake_ring_layout(&fr);
	return vq_init(&vq, &gm, &l, QSIZE, features, max_segs);
}

static int init_with(struct vq_layout l, uint16_t max)
{
	struct virtq v;
	return vq_init(&v, &gm, &l, max, 0, 0);
}

static void test_init(void)
{
	TAP_CHECK(setup(0, 0) == 0, "vq_init accepts a well-formed ring");
	TAP_CHECK(vq.max_segs == QSIZE, "max_segs 0 means the queue size");
	struct vq_layout good = fake_ring_layout(&fr), l;
	l = good, l.size = 12;
	TAP_CHECK(init_with(l, QSIZE) == -EINVAL, "queue size not a power of two is refused");
	l = good, l.size = 0;
	TAP_CHECK(init_with(l, QSIZE) == -EINVAL, "queue size 0 is refused");
	l = good, l.size = 32;
	TAP_CHECK(init_with(l, QSIZE) == -EINVAL, "queue size above QueueNumMax is refused");
	l = good, l.desc_gpa += 8;
	TAP_CHECK(init_with(l, QSIZE) == -EINVAL, "descriptor table not 16-aligned is refused");
	l = good, l.avail_gpa += 1;
	TAP_CHECK(init_with(l, QSIZE) == -EINVAL, "avail ring not 2-aligned is refused");
	l = good, l.used_gpa += 2;
	TAP_CHECK(init_with(l, QSIZE) == -EINVAL, "used ring not 4-aligned is refused");
	l = good, l.desc_gpa = RAM_SIZE;
	TAP_CHECK(init_with(l, QSIZE) == -EFAULT, "descriptor table outside RAM is refused");
	l = good, l.used_gpa = RAM_SIZE - 64;
	TAP_CHECK(init_with(l, QSIZE) == -EFAULT,
		  "used ring running past the end of RAM is refused");
	l = good, l.avail_gpa = RAM_SIZE - (6 + 2 * QSIZE) + 2;
	TAP_CHECK(init_with(l, QSIZE) == -EFAULT,
		  "avail ring whose used_event is past RAM is refused");
	l = good, l.desc_gpa = 0xfffffffffffffff0ULL;
	TAP_CHECK(init_with(l, QSIZE) == -EFAULT, "descriptor table address that wraps is refused");

	/* Aligned guest-physical addresses in a region mapped at an odd host address (vhost-user's
	   mmap_offset can do that): the fields would be accessed misaligned. */
	struct guest_mem odd;
	struct gm_region r = { .gpa = 0, .size = RAM_SIZE - 16, .host = ram + 1 };
	struct virtq v;
	TAP_CHECK(gm_init_from(&odd, &r, 1) == 0 &&
			  vq_init(&v, &odd, &good, QSIZE, 0, 0) == -EINVAL && !v.avail,
		  "rings whose host view is misaligned are refused");
	r.host = ram + 16;
	TAP_CHECK(gm_init_from(&odd, &r, 1) == 0 && vq_init(&v, &odd, &good, QSIZE, 0, 0) == 0,
		  "... and accepted where the view keeps the alignment");
}

static uint64_t buf(uint32_t len)
{
	return fake_ring_alloc(&fr, len);
}

static void test_simple_chain(void)
{
	(void)setup(ALL_FEATURES, 0);
	TAP_CHECK(vq_pop(&vq, &chain) == 0, "empty ring pops nothing");
	struct fake_buf b[3] = { { buf(16), 16, false },
				 { buf(512), 512, true },
				 { buf(1), 1, true } };
	uint16_t head = fake_ring_add_chain(&fr, b, 3);
	fake_ring_publish(&fr, head);
	TAP_CHECK(vq_avail_count(&vq) == 1, "one chain available");
	TAP_CHECK(vq_pop(&vq, &chain) == 1, "a readable+writable chain pops");
	TAP_CHECK(chain.head == head && chain.nr_readable == 1 && chain.nr_writable == 2,
		  "chain has 1 readable and 2 writable buffers");
	TAP_CHECK(chain.readable_len == 16 && chain.writable_len == 513, "chain lengths add up");
	TAP_CHECK(iov[1].iov_base == ram + b[1].gpa, "buffers map to guest RAM through gm_ptr");
	TAP_CHECK(vq_pop(&vq, &chain) == 0, "ring is empty again");

	/* Zero-length descriptors are dropped, not turned into empty iovecs. */
	struct fake_buf z[3] = { { buf(8), 8, false }, { buf(8), 0, false }, { buf(4), 4, true } };
	fake_ring_publish(&fr, fake_ring_add_chain(&fr, z, 3));
	TAP_CHECK(vq_pop(&vq, &chain) == 1 && chain.nr_readable == 1 && chain.nr_writable == 1,
		  "zero-length descriptors are skipped");

	fake_ring_publish(&fr, fake_ring_add_chain(&fr, b, 3));
	TAP_CHECK(vq_pop(&vq, &chain) == 1, "popped");
	vq_unpop(&vq);
	uint16_t again = chain.head;
	TAP_CHECK(vq_pop(&vq, &chain) == 1 && chain.head == again,
		  "vq_unpop gives the same chain back");
}

static void test_ring_errors(void)
{
	(void)setup(ALL_FEATURES, 0);
	fake_ring_set_avail_idx(&fr, QSIZE);
	TAP_CHECK(vq_avail_count(&vq) == QSIZE, "avail idx exactly a queue ahead is legal");
	fake_ring_set_avail_idx(&fr, QSIZE + 1);
	TAP_CHECK(vq_pop(&vq, &chain) == -EPROTO && vq.broken,
		  "avail idx jump beyond queue size: -EPROTO");
	fake_ring_set_avail_idx(&fr, 1);
	TAP_CHECK(vq_pop(&vq, &chain) == -EPROTO, "a broken queue stays broken until re-init");

	(void)setup(ALL_FEATURES, 0);
	fake_ring_publish(&fr, QSIZE); /* head index == size */
	TAP_CHECK(vq_pop(&vq, &chain) == -EPROTO && vq.broken, "head index out of range: -EPROTO");

	/* Avail idx wrap-around near 2^16 is fine. */
	(void)setup(ALL_FEATURES, 0);
	vq.last_avail = 65534;
	fr.avail_idx = 65534;
	struct fake_buf b = { buf(4), 4, true };
	fake_ring_publish(&fr, fake_ring_add_chain(&fr, &b, 1));
	fake_ring_publish(&fr, fake_ring_add_chain(&fr, &b, 1));
	TAP_CHECK(vq_avail_count(&vq) == 2 && vq_pop(&vq, &chain) == 1 &&
			  vq_pop(&vq, &chain) == 1 && vq.last_avail == 0,
		  "avail idx wraps around 2^16");
}

static void test_chain_errors(void)
{
	uint64_t d = 0;
	(void)setup(ALL_FEATURES, 0);
	d = buf(64);
	fake_ring_set_desc(&fr, 0, d, 8, VRING_DESC_F_NEXT, QSIZE);
	fake_ring_publish(&fr, 0);
	TAP_CHECK(vq_pop(&vq, &chain) == -EBADMSG, "next index out of range: -EBADMSG");
	TAP_CHECK(!vq.broken && chain.head == 0,
		  "a bad chain is consumed; head reported, ring not broken");

	(void)setup(ALL_FEATURES, 0);
	d = buf(64);
	fake_ring_set_desc(&fr, 0, d, 8, VRING_DESC_F_NEXT, 1);
	fake_ring_set_desc(&fr, 1, d, 8, VRING_DESC_F_NEXT, 0);
	fake_ring_publish(&fr, 0);
	TAP_CHECK(vq_pop(&vq, &chain) == -EBADMSG, "descriptor loop ends on the hop budget");

	(void)setup(ALL_FEATURES, 0);
	d = buf(64);
	fake_ring_set_desc(&fr, 3, d, 8, VRING_DESC_F_NEXT, 3);
	fake_ring_publish(&fr, 3);
	TAP_CHECK(vq_pop(&vq, &chain) == -EBADMSG, "self-loop ends on the hop budget");

	(void)setup(ALL_FEATURES, 4);
	struct fake_buf five[5];
	for (int i = 0; i < 5; i++)
		five[i] = (struct fake_buf){ buf(8), 8, false };
	fake_ring_publish(&fr, fake_ring_add_chain(&fr, five, 5));
	TAP_CHECK(vq_pop(&vq, &chain) == -EBADMSG, "chain longer than max_segs: -EBADMSG");
	fake_ring_publish(&fr, fake_ring_add_chain(&fr, five, 4));
	TAP_CHECK(vq_pop(&vq, &chain) == 1, "chain of exactly max_segs pops");

	(void)setup(ALL_FEATURES, 0);
	struct fake_buf wr[2] = { { buf(8), 8, true }, { buf(8), 8, false } };
	fake_ring_publish(&fr, fake_ring_add_chain(&fr, wr, 2));
	TAP_CHECK(vq_pop(&vq, &chain) == -EBADMSG, "readable after writable: -EBADMSG");

	struct fake_buf out[1] = { { RAM_SIZE - 4, 8, false } };
	fake_ring_publish(&fr, fake_ring_add_chain(&fr, out, 1));
	TAP_CHECK(vq_pop(&vq, &chain) == -EFAULT, "buffer running past the end of RAM: -EFAULT");
	out[0] = (struct fake_buf){ 0xfffffffffffffff0ULL, 0x20, true };
	fake_ring_publish(&fr, fake_ring_add_chain(&fr, out, 1));
	TAP_CHECK(vq_pop(&vq, &chain) == -EFAULT, "buffer address that wraps: -EFAULT");
	out[0] = (struct fake_buf){ 2ULL * RAM_SIZE, 1, true };
	fake_ring_publish(&fr, fake_ring_add_chain(&fr, out, 1));
	TAP_CHECK(vq_pop(&vq, &chain) == -EFAULT, "buffer outside RAM: -EFAULT");
}

static void test_total_length(void)
{
	/* Two 3 GiB regions that are never touched: only the lengths matter to the walk. */
	struct gm_region regions[2] = {
		{ .gpa = 0, .size = RAM_SIZE, .host = ram },
		{ .gpa = 1ULL << 40, .size = 3ULL << 30, .host = ram },
	};
	struct guest_mem big;
	TAP_CHECK(gm_init_from(&big, regions, 2) == 0, "big fake memory");
	memset(ram, 0, RAM_SIZE);
	fake_ring_init(&fr, ram, RAM_SIZE, QSIZE, 0x1000);
	struct vq_layout l = fake_ring_layout(&fr);
	TAP_CHECK(vq_init(&vq, &big, &l, QSIZE, 0, 0) == 0, "ring in big memory");
	struct fake_buf b[2] = { { 1ULL << 40, 3u << 30, true }, { 1ULL << 40, 3u << 30, true } };
	fake_ring_publish(&fr, fake_ring_add_chain(&fr, b, 2));
	TAP_CHECK(vq_pop(&vq, &chain) == -EBADMSG, "writable total of 2^32 or more: -EBADMSG");
	fake_ring_publish(&fr, fake_ring_add_chain(&fr, b, 1));
	TAP_CHECK(vq_pop(&vq, &chain) == 1 && chain.writable_len == 3ULL << 30,
		  "3 GiB buffer is fine");
}

static void test_indirect(void)
{
	(void)setup(ALL_FEATURES, 0);
	struct fake_buf b[3] = { { buf(16), 16, false },
				 { buf(64), 64, true },
				 { buf(1), 1, true } };
	fake_ring_publish(&fr, fake_ring_add_indirect(&fr, b, 3));
	TAP_CHECK(vq_pop(&vq, &chain) == 1 && chain.nr_readable == 1 && chain.nr_writable == 2 &&
			  chain.writable_len == 65,
		  "indirect table chain pops");

	/* Direct descriptors followed by an indirect one (2.7.5.3.2). */
	uint64_t t = buf(32);
	fake_ring_set_table_desc(&fr, t, 0, buf(8), 8, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1);
	fake_ring_set_table_desc(&fr, t, 1, buf(8), 8, VRING_DESC_F_WRITE, 0);
	fake_ring_set_desc(&fr, 5, buf(8), 8, VRING_DESC_F_NEXT, 6);
	fake_ring_set_desc(&fr, 6, t, 32, VRING_DESC_F_INDIRECT, 0);
	fake_ring_publish(&fr, 5);
	TAP_CHECK(vq_pop(&vq, &chain) == 1 && chain.nr_readable == 1 && chain.nr_writable == 2,
		  "direct descriptors then an indirect table pop");

	fake_ring_set_desc(&fr, 7, t, 32, VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT, 8);
	fake_ring_set_desc(&fr, 8, buf(8), 8, VRING_DESC_F_WRITE, 0);
	fake_ring_publish(&fr, 7);
	TAP_CHECK(vq_pop(&vq, &chain) == -EBADMSG, "INDIRECT together with NEXT: -EBADMSG");

	uint64_t nested = buf(32);
	fake_ring_set_table_desc(&fr, nested, 0, buf(8), 8, VRING_DESC_F_NEXT, 1);
	fake_ring_set_table_desc(&fr, nested, 1, t, 32, VRING_DESC_F_INDIRECT, 0);
	fake_ring_set_desc(&fr, 9, nested, 32, VRING_DESC_F_INDIRECT, 0);
	fake_ring_publish(&fr, 9);
	TAP_CHECK(vq_pop(&vq, &chain) == -EBADMSG, "nested indirect table: -EBADMSG");

	fake_ring_set_desc(&fr, 10, t, 24, VRING_DESC_F_INDIRECT, 0);
	fake_ring_publish(&fr, 10);
	TAP_CHECK(vq_pop(&vq, &chain) == -EBADMSG,
		  "indirect length not a multiple of 16: -EBADMSG");
	fake_ring_set_desc(&fr, 10, t, 0, VRING_DESC_F_INDIRECT, 0);
	fake_ring_publish(&fr, 10);
	TAP_CHECK(vq_pop(&vq, &chain) == -EBADMSG, "indirect length 0: -EBADMSG");
	fake_ring_set_desc(&fr, 10, t, 16 * (QSIZE + 1), VRING_DESC_F_INDIRECT, 0);
	fake_ring_publish(&fr, 10);
	TAP_CHECK(vq_pop(&vq, &chain) == -EBADMSG,
		  "indirect table longer than the hop budget: -EBADMSG");
	fake_ring_set_desc(&fr, 10, RAM_SIZE - 16, 32, VRING_DESC_F_INDIRECT, 0);
	fake_ring_publish(&fr, 10);
	TAP_CHECK(vq_pop(&vq, &chain) == -EFAULT, "indirect table outside RAM: -EFAULT");

	uint64_t loop = buf(32);
	fake_ring_set_table_desc(&fr, loop, 0, buf(8), 8, VRING_DESC_F_NEXT, 1);
	fake_ring_set_table_desc(&fr, loop, 1, buf(8), 8, VRING_DESC_F_NEXT, 0);
	fake_ring_set_desc(&fr, 11, loop, 32, VRING_DESC_F_INDIRECT, 0);
	fake_ring_publish(&fr, 11);
	TAP_CHECK(vq_pop(&vq, &chain) == -EBADMSG, "loop inside an indirect table ends");
	fake_ring_set_table_desc(&fr, loop, 1, buf(8), 8, VRING_DESC_F_NEXT, 2);
	fake_ring_publish(&fr, 11);
	TAP_CHECK(vq_pop(&vq, &chain) == -EBADMSG, "next beyond the indirect table: -EBADMSG");

	/* An unaligned indirect table is legal and read with memcpy. */
	uint64_t odd = buf(64) + 4;
	fake_ring_set_table_desc(&fr, odd, 0, buf(8), 8, VRING_DESC_F_WRITE, 0);
	fake_ring_set_desc(&fr, 12, odd, 16, VRING_DESC_F_INDIRECT, 0);
	fake_ring_publish(&fr, 12);
	TAP_CHECK(vq_pop(&vq, &chain) == 1 && chain.nr_writable == 1,
		  "unaligned indirect table pops");

	(void)setup(1ULL << VIRTIO_RING_F_EVENT_IDX, 0);
	fake_ring_publish(&fr, fake_ring_add_indirect(&fr, b, 3));
	TAP_CHECK(vq_pop(&vq, &chain) == -EBADMSG,
		  "indirect descriptor without INDIRECT_DESC negotiated");
}

static void test_used_and_notify(void)
{
	(void)setup(ALL_FEATURES, 0);
	vq_push(&vq, 3, 100);
	TAP_CHECK(fake_ring_used_idx(&fr) == 0, "vq_push alone publishes nothing");
	vq_push(&vq, 5, 7);
	vq_publish(&vq);
	uint32_t id = 0, len = 0;
	TAP_CHECK(fake_ring_used_idx(&fr) == 2, "vq_publish publishes the batch at once");
	TAP_CHECK(fake_ring_used(&fr, &id, &len) && id == 3 && len == 100, "first used element");
	TAP_CHECK(fake_ring_used(&fr, &id, &len) && id == 5 && len == 7, "second used element");

	/* EVENT_IDX (2.7.10): notify when used_event is in [old, new). */
	fake_ring_set_used_event(&fr, 0);
	TAP_CHECK(vq_should_notify(&vq), "used_event 0 crossed by 0..2: notify");
	TAP_CHECK(!vq_should_notify(&vq), "nothing new published: no notify");
	vq_push(&vq, 1, 1);
	vq_publish(&vq);
	TAP_CHECK(!vq_should_notify(&vq), "used_event 0 already passed: no notify");
	fake_ring_set_used_event(&fr, 4);
	vq_push(&vq, 1, 1);
	vq_publish(&vq);
	TAP_CHECK(!vq_should_notify(&vq), "used_event 4 not reached (used 4): no notify");
	vq_push(&vq, 1, 1);
	vq_publish(&vq);
	TAP_CHECK(vq_should_notify(&vq), "used_event 4 reached (used 5): notify");

	/* Wrap-around of the 16-bit indices. */
	vq.used_idx = vq.published = vq.signalled_used = 65534;
	fake_ring_set_used_event(&fr, 65535);
	vq_push(&vq, 1, 1);
	vq_push(&vq, 1, 1);
	vq_publish(&vq);
	TAP_CHECK(vq_should_notify(&vq), "event idx decision across the 2^16 wrap");
	fake_ring_set_used_event(&fr, 65535);
	vq_push(&vq, 1, 1);
	vq_publish(&vq);
	TAP_CHECK(!vq_should_notify(&vq), "event behind after the wrap: no notify");

	/* Held-back interrupts: vq_notify_pending() asks without deciding; the window grows. */
	(void)setup(ALL_FEATURES, 0);
	fake_ring_set_used_event(&fr, 0);
	TAP_CHECK(vq_notify_pending(&vq) == 0, "nothing published: nothing pending");
	vq_push(&vq, 1, 1);
	vq_publish(&vq);
	TAP_CHECK(vq_notify_pending(&vq) == 1, "used_event 0 reached by 1 entry: 1 pending");
	vq_push(&vq, 2, 1);
	vq_push(&vq, 3, 1);
	vq_publish(&vq);
	TAP_CHECK(vq_notify_pending(&vq) == 3,
		  "not decided: the window keeps used_event 0 and grows to 3 entries");
	TAP_CHECK(vq_should_notify(&vq), "a held interrupt is still due when finally decided");
	TAP_CHECK(vq_notify_pending(&vq) == 0 && !vq_should_notify(&vq),
		  "decided: the window is closed");
	fake_ring_set_used_event(&fr, 10);
	vq_push(&vq, 1, 1);
	vq_publish(&vq);
	TAP_CHECK(vq_notify_pending(&vq) == 0, "used_event ahead of the window: nothing pending");
	vq_notify_decided(&vq);
	fake_ring_set_used_event(&fr, 4);
	vq_push(&vq, 1, 1);
	vq_publish(&vq);
	fake_ring_set_used_event(&fr, 9);
	TAP_CHECK(vq_notify_pending(&vq) == 0,
		  "the driver moved used_event past a held window: no longer due");

	/* Without EVENT_IDX: VRING_AVAIL_F_NO_INTERRUPT decides. */
	(void)setup(0, 0);
	vq_push(&vq, 0, 0);
	vq_push(&vq, 0, 0);
	vq_publish(&vq);
	TAP_CHECK(vq_notify_pending(&vq) == 2, "no EVENT_IDX, flags 0: every new entry pending");
	vq_notify_decided(&vq);
	vq_push(&vq, 0, 0);
	vq_publish(&vq);
	TAP_CHECK(vq_should_notify(&vq), "no EVENT_IDX, flags 0: notify");
	fake_ring_set_avail_flags(&fr, VRING_AVAIL_F_NO_INTERRUPT);
	vq_push(&vq, 0, 0);
	vq_publish(&vq);
	TAP_CHECK(!vq_should_notify(&vq), "no EVENT_IDX, NO_INTERRUPT: no notify");

	/* Kick suppression. */
	TAP_CHECK(!vq_enable_kicks(&vq, false) &&
			  fake_ring_used_flags(&fr) == VRING_USED_F_NO_NOTIFY,
		  "no EVENT_IDX: disabling kicks sets VRING_USED_F_NO_NOTIFY");
	TAP_CHECK(!vq_enable_kicks(&vq, true) && fake_ring_used_flags(&fr) == 0,
		  "no EVENT_IDX: enabling kicks clears it");
	(void)setup(ALL_FEATURES, 0);
	struct fake_buf b = { buf(4), 4, true };
	fake_ring_publish(&fr, fake_ring_add_chain(&fr, &b, 1));
	TAP_CHECK(vq_enable_kicks(&vq, true), "enable_kicks reports chains that are already there");
	TAP_CHECK(vq_pop(&vq, &chain) == 1 && !vq_enable_kicks(&vq, true) &&
			  fake_ring_avail_event(&fr) == 1,
		  "EVENT_IDX: avail_event = next avail index we will pop");

	/* A kick after n chains (a receive queue whose driver re-posts what it consumed). */
	TAP_CHECK(!vq_enable_kicks_after(&vq, 8) && fake_ring_avail_event(&fr) == 1 + 7,
		  "after 8: avail_event = last_avail + 7 (the 8th new chain kicks, 2.7.10)");
	TAP_CHECK(!vq_enable_kicks_after(&vq, 0) && fake_ring_avail_event(&fr) == 1,
		  "after 0 is after 1: avail_event = last_avail");
	vq.last_avail = 65530;
	fr.avail_idx = 65530;
	fake_ring_set_avail_idx(&fr, 65530);
	TAP_CHECK(!vq_enable_kicks_after(&vq, 10) && fake_ring_avail_event(&fr) == 3,
		  "avail_event wraps modulo 2^16 (65530 + 9)");
	uint16_t ev = fake_ring_avail_event(&fr), oldi = 65530;
	bool kicked_early = false;
	for (uint16_t i = 1; i < 10; i++)
		kicked_early |= vq_need_event(ev, (uint16_t)(oldi + i), (uint16_t)(oldi + i - 1));
	TAP_CHECK(!kicked_early && vq_need_event(ev, (uint16_t)(oldi + 10), (uint16_t)(oldi + 9)),
		  "a driver adding one chain at a time kicks for the 10th and not before");
	fake_ring_publish(&fr, fake_ring_add_chain(&fr, &b, 1));
	TAP_CHECK(vq_enable_kicks_after(&vq, 10), "after n: reports chains that are already there");
	(void)setup(0, 0);
	fake_ring_set_avail_flags(&fr, 0);
	(void)vq_enable_kicks(&vq, false);
	TAP_CHECK(!vq_enable_kicks_after(&vq, 8) && fake_ring_used_flags(&fr) == 0,
		  "no EVENT_IDX: after n just enables kicks (each chain kicks)");

	/* The filled buffers the driver has not taken, from its used_event. */
	TAP_CHECK(vq_driver_unconsumed(&vq) == 0, "no EVENT_IDX: nothing known, 0");
	(void)setup(ALL_FEATURES, 0);
	for (int i = 0; i < 10; i++)
		vq_push(&vq, 0, 0);
	vq_publish(&vq);
	fake_ring_set_used_event(&fr, 4);
	TAP_CHECK(vq_driver_unconsumed(&vq) == 6, "published 10, used_event 4: 6 not taken");
	fake_ring_set_used_event(&fr, 10);
	TAP_CHECK(vq_driver_unconsumed(&vq) == 0, "used_event at what we published: all taken");
	fake_ring_set_used_event(&fr, 11);
	TAP_CHECK(vq_driver_unconsumed(&vq) == 0, "used_event ahead of what we published: 0, not 65535");
	fake_ring_set_used_event(&fr, (uint16_t)(10 - QSIZE - 1));
	TAP_CHECK(vq_driver_unconsumed(&vq) == 0, "more than the ring holds: nonsense, 0");
	fake_ring_set_used_event(&fr, (uint16_t)(10 - QSIZE));
	TAP_CHECK(vq_driver_unconsumed(&vq) == QSIZE, "a whole ring not taken: QSIZE");
}

static void test_reader_writer(void)
{
	(void)setup(ALL_FEATURES, 0);
	uint64_t a = buf(5), b = buf(7), c = buf(3), d = buf(6);
	memcpy(ram + a, "hello", 5);
	memcpy(ram + b, " world!", 7);
	struct fake_buf bufs[4] = {
		{ a, 5, false }, { b, 7, false }, { c, 3, true }, { d, 6, true }
	};
	fake_ring_publish(&fr, fake_ring_add_chain(&fr, bufs, 4));
	TAP_CHECK(vq_pop(&vq, &chain) == 1, "reader/writer chain");

	struct vq_reader r;
	vq_reader_init(&r, &chain);
	char out[16] = { 0 };
	TAP_CHECK(vq_reader_remaining(&r) == 12, "reader sees 12 readable bytes");
	TAP_CHECK(vq_reader_read(&r, out, 8) == 0 && !memcmp(out, "hello wo", 8),
		  "read across buffers");
	TAP_CHECK(vq_reader_read(&r, out, 5) == -EMSGSIZE && vq_reader_remaining(&r) == 4,
		  "reading past the end fails without progress");
	TAP_CHECK(vq_reader_skip(&r, 1) == 0 && vq_reader_read(&r, out, 3) == 0 &&
			  !memcmp(out, "ld!", 3),
		  "skip then read");
	TAP_CHECK(vq_reader_remaining(&r) == 0, "reader exhausted");

	vq_reader_init(&r, &chain);
	struct iovec v[4];
	unsigned int nr = 0;
	TAP_CHECK(vq_reader_skip(&r, 3) == 0 && vq_reader_iov(&r, 6, v, 4, &nr) == 0 && nr == 2 &&
			  v[0].iov_base == ram + a + 3 && v[0].iov_len == 2 && v[1].iov_len == 4,
		  "reader iov splits at the cursor and at the end");
	TAP_CHECK(vq_reader_iov(&r, 3, v, 0, &nr) == -E2BIG && vq_reader_remaining(&r) == 3,
		  "iov array too small: -E2BIG, no progress");

	struct vq_writer w;
	vq_writer_init(&w, &chain);
	TAP_CHECK(vq_writer_remaining(&w) == 9, "writer sees 9 writable bytes");
	TAP_CHECK(vq_writer_write(&w, "abcd", 4) == 0 && !memcmp(ram + c, "abc", 3) &&
			  ram[d] == 'd',
		  "write across buffers");
	TAP_CHECK(vq_writer_iov(&w, 4, v, 4, &nr) == 0 && nr == 1 && v[0].iov_base == ram + d + 1,
		  "writer iov from the cursor");
	TAP_CHECK(w.written == 8, "writer counts bytes written and handed out");
	TAP_CHECK(vq_writer_write(&w, "xy", 2) == -EMSGSIZE, "writing past the end fails");
	TAP_CHECK(vq_writer_write(&w, "z", 1) == 0 && ram[d + 5] == 'z', "last byte");

	struct iovec three[3] = { { ram, 4 }, { ram + 8, 2 }, { ram + 16, 4 } };
	TAP_CHECK(vq_iov_len(three, 3) == 4 + 2 + 4, "vq_iov_len sums the entries");
}

/*
 * A ring that an earlier back-end stopped at avail index 65530 (vhost-user SET_VRING_BASE): popping
 * and the used ring continue from there, across the 2^16 wrap; a jump past the size is still caught.
 */
static void test_start_index(void)
{
	memset(ram, 0, RAM_SIZE);
	fake_ring_init(&fr, ram, RAM_SIZE, QSIZE, 0x1000);
	fake_ring_set_avail_idx(&fr, 65530);
	fr.used_seen = 65530;
	struct vq_layout l = fake_ring_layout(&fr);
	l.start_idx = 65530;
	TAP_CHECK(vq_init(&vq, &gm, &l, QSIZE, 0, 0) == 0 && vq.last_avail == 65530 &&
			  vq.used_idx == 65530,
		  "start_idx: popping and the used ring start at 65530");
	uint16_t heads[10];
	for (int i = 0; i < 10; i++) {
		struct fake_buf b = { fake_ring_alloc(&fr, 8), 8, true };
		heads[i] = fake_ring_add_chain(&fr, &b, 1);
		fake_ring_publish(&fr, heads[i]);
	}
	int popped = 0, order = 0;
	while (vq_pop(&vq, &chain) == 1) {
		order += chain.head == heads[popped];
		vq_push(&vq, chain.head, 8);
		popped++;
	}
	vq_publish(&vq);
	TAP_CHECK(popped == 10 && order == 10, "the 10 chains published across the wrap pop in order");
	uint32_t id, len;
	int used = 0;
	while (fake_ring_used(&fr, &id, &len))
		used += id == heads[used] && len == 8;
	TAP_CHECK(fake_ring_used_idx(&fr) == 4 && used == 10,
		  "used idx wraps to 4 with the 10 elements in place");
	l.start_idx = 100; /* the driver's avail idx is 4: 65440 ahead of 100, far beyond the size */
	TAP_CHECK(vq_init(&vq, &gm, &l, QSIZE, 0, 0) == 0 && vq_avail_count(&vq) == -EPROTO && vq.why,
		  "a start index far from the driver's avail idx: the ring is broken, with a reason");
}

int main(void)
{
	ram = aligned_alloc(4096, RAM_SIZE);
	struct gm_region r = { .gpa = 0, .size = RAM_SIZE, .host = ram };
	if (!ram || gm_init_from(&gm, &r, 1) != 0) {
		printf("Bail out! no memory\n");
		return 1;
	}
	test_init();
	test_simple_chain();
	test_ring_errors();
	test_chain_errors();
	test_total_length();
	test_indirect();
	test_used_and_notify();
	test_reader_writer();
	test_start_index();
	free(ram);
	return tap_done();
}
