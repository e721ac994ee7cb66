/* test_dvq.c: the benchmark driver's ring (dvq.c) against ringvm's own device side (virtq.c) in one
   shared memfd: chains arrive intact, kicks and interrupts follow EVENT_IDX, bad used ids are refused;
   and the driver's latency histogram and data pattern. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "devices/virtio/virtq.h"
#include "tests/bench/device/bench.h"
#include "tests/bench/device/dvq.h"
#include "tests/unit/tap.h"
#include "vmm/guest_mem.h"

#define QSIZE 16
#define SLOTS 4

static struct dmem mem;
static struct guest_mem gm;
static struct dvq dq;
static struct virtq vq;
static struct iovec iov[QSIZE];

static int both_sides(bool indirect)
{
	uint64_t features = (1ULL << VIRTIO_RING_F_EVENT_IDX) |
			    (indirect ? 1ULL << VIRTIO_RING_F_INDIRECT_DESC : 0);
	struct gm_region r = { .gpa = 0, .size = mem.size, .host = mem.base };
	struct vq_layout l;
	int err;

	mem.next = 0;
	err = dvq_init(&dq, &mem, QSIZE, SLOTS, true, indirect);
	if (err)
		return err;
	l = (struct vq_layout){ .size = QSIZE, .desc_gpa = dq.desc_gpa, .avail_gpa = dq.avail_gpa,
				.used_gpa = dq.used_gpa };
	err = gm_init_from(&gm, &r, 1);
	return err ? err : vq_init(&vq, &gm, &l, QSIZE, features, QSIZE);
}

/* Three segments as the FUSE READ request has them: header (readable), reply header + data. */
static unsigned int add_read(unsigned int slot)
{
	struct dvq_seg s[3] = { { 0x10000, 48, false }, { 0x11000, 16, true }, { 0x12000, 4096, true } };

	return dvq_add(&dq, slot, s, 3);
}

static void ring_tests(bool indirect)
{
	const char *mode = indirect ? "indirect" : "direct";
	struct vq_chain c = { .iov = iov };
	unsigned int slot = 99;
	uint32_t len = 0;
	uint64_t one = 1;
	char what[128];

	TAP_CHECK(both_sides(indirect) == 0, "driver ring laid out, device accepts it");
	add_read(2);
	TAP_CHECK(dvq_kick(&dq) == 0 && dq.kicks == 1, "first chain: the device is kicked");
	TAP_CHECK(vq_pop(&vq, &c) == 1, "the device pops it");
	snprintf(what, sizeof(what), "%s chain arrives whole: 1 readable of 48, 2 writable of 4112", mode);
	TAP_CHECK(c.nr_readable == 1 && c.nr_writable == 2 && c.readable_len == 48 &&
			  c.writable_len == 4112 && c.iov[0].iov_base == mem.base + 0x10000,
		  what);
	TAP_CHECK(c.head == (indirect ? 2 : 2 * DVQ_SLOT_DESCS), "head index is the slot's own");
	TAP_CHECK(dvq_get_used(&dq, SLOTS, &slot, &len) == 0, "nothing used yet");
	vq_push(&vq, c.head, 4112);
	vq_publish(&vq);
	TAP_CHECK(dvq_get_used(&dq, SLOTS, &slot, &len) == 1 && slot == 2 && len == 4112,
		  "the used element maps back to slot 2 with its length");

	/* EVENT_IDX, driver to device: the device has not asked for a kick past entry 0 yet. */
	add_read(1);
	TAP_CHECK(dvq_kick(&dq) == 0 && dq.kicks == 1, "no kick while the device is busy (avail_event 0)");
	TAP_CHECK(vq_pop(&vq, &c) == 1 && !vq_enable_kicks(&vq, true), "device drains and re-arms");
	add_read(3);
	TAP_CHECK(dvq_kick(&dq) == 0 && dq.kicks == 2, "kicked again once the device asked");
	TAP_CHECK(dvq_kick(&dq) == 0 && dq.kicks == 2, "nothing new: no kick");

	/* EVENT_IDX, device to driver: no interrupt until the driver arms used_event before sleeping. */
	vq_push(&vq, c.head, 0);
	vq_publish(&vq);
	(void)vq_should_notify(&vq);
	TAP_CHECK(dvq_get_used(&dq, SLOTS, &slot, &len) == 1 && slot == 1, "slot 1 back");
	TAP_CHECK(write(dq.call_fd, &one, sizeof(one)) == sizeof(one) && dvq_wait(&dq, 1000) == 0,
		  "wait returns on the call eventfd");
	TAP_CHECK(vq_pop(&vq, &c) == 1, "device pops slot 3");
	vq_push(&vq, c.head, 0);
	vq_publish(&vq);
	TAP_CHECK(vq_should_notify(&vq), "after the driver armed used_event, the device interrupts");
	TAP_CHECK(dvq_get_used(&dq, SLOTS, &slot, &len) == 1 && slot == 3, "slot 3 back");
	TAP_CHECK(dvq_wait(&dq, 10) == -ETIMEDOUT, "a silent device times out, never hangs");

	/* Hostile device: ids that are no slot head, and an index jump. */
	vq_push(&vq, indirect ? SLOTS : 1, 0);
	vq_publish(&vq);
	TAP_CHECK(dvq_get_used(&dq, SLOTS, &slot, &len) == -EPROTO, "used id that is no slot head refused");
	dq.used->idx = (uint16_t)(dq.last_used + QSIZE + 1);
	TAP_CHECK(dvq_get_used(&dq, SLOTS, &slot, &len) == -EPROTO, "used index jump refused");
	dvq_destroy(&dq);
	gm_destroy(&gm);
}

static void stats_tests(void)
{
	static struct hist h;
	uint64_t p50, p99;
	char buf[4096];

	for (uint64_t v = 1000; v <= 100000; v++)
		hist_add(&h, v);
	p50 = hist_quantile(&h, 0.5);
	p99 = hist_quantile(&h, 0.99);
	TAP_CHECK(p50 > 50500 * 0.984 && p50 < 50500 * 1.016, "p50 of 1..100 us within 1.6 %");
	TAP_CHECK(p99 > 99010 * 0.984 && p99 < 99010 * 1.016, "p99 within 1.6 %");
	TAP_CHECK(h.count == 99001 && h.max_ns == 100000, "count and max exact");
	pattern_fill(buf, 7, 8192, sizeof(buf));
	TAP_CHECK(pattern_check(buf, 7, 8192, sizeof(buf)) == 0, "pattern reads back");
	TAP_CHECK(pattern_check(buf, 7, 4096, sizeof(buf)) == 1, "data from another offset fails");
	TAP_CHECK(pattern_check(buf, 8, 8192, sizeof(buf)) == 1, "data from another file fails");
	buf[4000] ^= 1;
	TAP_CHECK(pattern_check(buf, 7, 8192, sizeof(buf)) == 4000 / 8 * 8 + 1, "one flipped bit found");
}

int main(void)
{
	TAP_CHECK(dmem_create(&mem, 1 << 20) == 0 && mem.size == 2 << 20, "sealed memfd, 2 MiB rounded");
	TAP_CHECK(dmem_ptr(&mem, mem.size - 8, 8) && !dmem_ptr(&mem, mem.size - 8, 9) &&
			  !dmem_ptr(&mem, UINT64_MAX, 2),
		  "dmem_ptr refuses ranges past the end");
	TAP_CHECK(ftruncate(mem.fd, 4096) < 0 && errno == EPERM, "the memfd cannot shrink (F_SEAL_SHRINK)");
	ring_tests(false);
	ring_tests(true);
	stats_tests();
	dmem_destroy(&mem);
	return tap_done();
}
