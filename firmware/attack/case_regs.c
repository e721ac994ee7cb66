/* case_regs.c: attacks on the virtio-mmio register file and status machine (virtio 1.x 4.2.2, 3.1.1). */
#include "firmware/attack/cases.h"
#include "firmware/attack/rt.h"
#include "firmware/attack/vblk.h"
#include "firmware/attack/vfuse.h"
#include "vmm/layout.h"

#define S_ACK VIRTIO_CONFIG_S_ACKNOWLEDGE
#define S_DRV VIRTIO_CONFIG_S_DRIVER
#define S_FOK VIRTIO_CONFIG_S_FEATURES_OK
#define S_DOK VIRTIO_CONFIG_S_DRIVER_OK
#define S_NR VIRTIO_CONFIG_S_NEEDS_RESET
#define S_RUNNING (S_ACK | S_DRV | S_FOK | S_DOK)

static uint64_t rd(uint64_t a, unsigned int width)
{
	switch (width) {
	case 1: return mmio_r8(a);
	case 2: return mmio_r16(a);
	case 4: return mmio_r32(a);
	default: return mmio_r64(a);
	}
}

static void wr(uint64_t a, unsigned int width, uint64_t v)
{
	switch (width) {
	case 1: mmio_w8(a, (uint8_t)v); break;
	case 2: mmio_w16(a, (uint16_t)v); break;
	case 4: mmio_w32(a, (uint32_t)v); break;
	default: mmio_w64(a, v); break;
	}
}

/* The identity registers every case checks before and after: the transport is still itself. */
static void expect_identity(const struct vdev *d, uint32_t id)
{
	CHECK(vreg(d, VIRTIO_MMIO_MAGIC_VALUE) == 0x74726976u, "MagicValue", vreg(d, 0));
	CHECK(vreg(d, VIRTIO_MMIO_VERSION) == 2, "Version", vreg(d, VIRTIO_MMIO_VERSION));
	CHECK(vreg(d, VIRTIO_MMIO_DEVICE_ID) == id, "DeviceID", vreg(d, VIRTIO_MMIO_DEVICE_ID));
}

/*
 * Every offset of the window at every width (1, 2, 4, 8 bytes, aligned or not): registers answer
 * only 32-bit aligned reads (others read 0, 4.2.2.2), config space answers any width with the
 * same bytes, and nothing past the config reads anything but 0.
 */
static void read_every_width(const struct vdev *d, uint32_t id, uint32_t config_size)
{
	expect_identity(d, id);
	uint8_t cfg[256];
	for (uint32_t i = 0; i < config_size; i++)
		cfg[i] = mmio_r8(d->base + VIRTIO_MMIO_CONFIG + i);
	for (unsigned int width = 1; width <= 8; width *= 2) {
		for (uint32_t off = 0; off + width <= LAYOUT_VIRTIO_MMIO_SIZE; off++) {
			uint64_t v = rd(d->base + off, width);
			if (off >= VIRTIO_MMIO_CONFIG) {
				uint32_t c = off - VIRTIO_MMIO_CONFIG;
				uint64_t want = 0;
				if (c + width <= config_size)
					memcpy(&want, cfg + c, width);
				CHECK(v == want, "config read differs at offset", off | width << 16);
			} else if (width != 4 || off % 4) {
				CHECK(v == 0, "a non-32-bit register read answered at offset",
				      off | width << 16);
			}
		}
	}
	expect_identity(d, id);
}

void case_regs_read_widths_blk(void)
{
	struct vblk b;
	vblk_open(&b, 0, 64);
	vblk_expect_image(&b, 0, 1);
	read_every_width(&b.d, 2, sizeof(struct virtio_blk_config));
	vblk_still_works(&b);
}

void case_regs_read_widths_fs(void)
{
	struct vfs f;
	vfs_open(&f);
	vfs_prove_hello(&f);
	read_every_width(&f.d, 26, 40 /* struct virtio_fs_config */);
	char tag[7];
	for (int i = 0; i < 6; i++)
		tag[i] = (char)mmio_r8(f.d.base + VIRTIO_MMIO_CONFIG + (uint32_t)i);
	tag[6] = 0;
	CHECK(!memcmp(tag, "share\0", 6), "the share's tag", tag[0]);
	vfs_still_works(&f);
}

/* Write `v` at every offset and width of the window except Status (written by the caller). */
static void write_everywhere(const struct vdev *d, uint64_t v)
{
	for (unsigned int width = 1; width <= 8; width *= 2)
		for (uint32_t off = 0; off + width <= LAYOUT_VIRTIO_MMIO_SIZE; off++)
			if (off + width <= VIRTIO_MMIO_STATUS || off >= VIRTIO_MMIO_STATUS + 4)
				wr(d->base + off, width, v);
}

void case_regs_write_garbage(void)
{
	struct vblk b;
	vblk_open(&b, 0, 64);
	vblk_expect_image(&b, 0, 1);
	uint64_t features = vdev_features(&b.d);
	static const uint64_t pats[] = { ~0ULL, 0, 0x8000000180000001ULL, 0xd0000000d0000000ULL };
	for (unsigned int p = 0; p < sizeof(pats) / sizeof(pats[0]); p++) {
		/* Live device: every write but Status must bounce off (queues are locked). */
		write_everywhere(&b.d, pats[p]);
		expect_identity(&b.d, 2);
		CHECK(vdev_features(&b.d) == features, "DeviceFeatures changed", p);
		vreg_w(&b.d, VIRTIO_MMIO_QUEUE_SEL, 0);
		CHECK(vreg(&b.d, VIRTIO_MMIO_QUEUE_READY) == 1, "queue 0 no longer ready", p);
		vblk_still_works(&b);
		/* Between FEATURES_OK and DRIVER_OK the queue registers take the garbage; DRIVER_OK
		   must then refuse the rings (NEEDS_RESET) or run them, never crash. */
		vdev_reset(&b.d);
		vdev_negotiate(&b.d, 0);
		write_everywhere(&b.d, pats[p]);
		vreg_w(&b.d, VIRTIO_MMIO_STATUS, vreg(&b.d, VIRTIO_MMIO_STATUS) | S_DOK);
		expect_identity(&b.d, 2);
		vblk_restart(&b, 64);
		vblk_still_works(&b);
	}
}

static void expect_status(const struct vdev *d, uint32_t want, const char *why)
{
	uint32_t s = vreg(d, VIRTIO_MMIO_STATUS);
	CHECK(s == want, why, s);
}

void case_regs_status_order(void)
{
	struct vblk b;
	vblk_open(&b, 0, 64);
	vblk_expect_image(&b, 0, 1);
	const struct vdev *d = &b.d;
	vdev_reset(d);
	vreg_w(d, VIRTIO_MMIO_STATUS, S_DOK);
	expect_status(d, 0, "DRIVER_OK from 0 accepted");
	vreg_w(d, VIRTIO_MMIO_STATUS, S_FOK);
	expect_status(d, 0, "FEATURES_OK from 0 accepted");
	vreg_w(d, VIRTIO_MMIO_STATUS, S_DRV);
	expect_status(d, 0, "DRIVER without ACKNOWLEDGE accepted");
	vreg_w(d, VIRTIO_MMIO_STATUS, S_ACK);
	expect_status(d, S_ACK, "ACKNOWLEDGE refused");
	vreg_w(d, VIRTIO_MMIO_STATUS, S_ACK | S_FOK | S_DOK);
	expect_status(d, S_ACK, "FEATURES_OK/DRIVER_OK without DRIVER accepted");
	vreg_w(d, VIRTIO_MMIO_STATUS, S_ACK | S_DRV);
	expect_status(d, S_ACK | S_DRV, "DRIVER refused");
	vreg_w(d, VIRTIO_MMIO_STATUS, S_DRV);
	expect_status(d, S_ACK | S_DRV, "a status bit was cleared");
	vreg_w(d, VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK);
	expect_status(d, S_ACK | S_DRV, "FEATURES_OK without VERSION_1 accepted");
	vreg_w(d, VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_NR);
	expect_status(d, S_ACK | S_DRV, "the driver set NEEDS_RESET");
	/* DRIVER_OK with no queue ready: legal, and then nothing to do. */
	vdev_reset(d);
	vdev_negotiate(d, 0);
	vreg_w(d, VIRTIO_MMIO_STATUS, S_RUNNING);
	expect_status(d, S_RUNNING, "DRIVER_OK with no queue");
	vreg_w(d, VIRTIO_MMIO_STATUS, S_RUNNING);
	vreg_w(d, VIRTIO_MMIO_STATUS, S_RUNNING | VIRTIO_CONFIG_S_FAILED);
	expect_status(d, S_RUNNING | VIRTIO_CONFIG_S_FAILED, "FAILED not recorded");
	/* A running device told DRIVER_OK twice and FEATURES_OK again stays as it is. */
	vblk_restart(&b, 64);
	vreg_w(d, VIRTIO_MMIO_STATUS, S_RUNNING);
	vreg_w(d, VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK);
	expect_status(d, S_RUNNING, "a running device changed status");
	vblk_still_works(&b);
}

void case_regs_features(void)
{
	struct vblk b;
	vblk_open(&b, 0, 64);
	vblk_expect_image(&b, 0, 1);
	const struct vdev *d = &b.d;
	static const uint64_t bad[] = { 1ULL << 63, 1ULL << VIRTIO_F_VERSION_1 | 1ULL << 50,
					1ULL << VIRTIO_F_VERSION_1 | 1ULL << 31, 0, ~0ULL };
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		vdev_reset(d);
		vreg_w(d, VIRTIO_MMIO_STATUS, S_ACK | S_DRV);
		vreg_w(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
		vreg_w(d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)bad[i]);
		vreg_w(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
		vreg_w(d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(bad[i] >> 32));
		/* A selector past 1 addresses nothing. */
		vreg_w(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 2);
		vreg_w(d, VIRTIO_MMIO_DRIVER_FEATURES, ~0u);
		vreg_w(d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0xffffffffu);
		CHECK(vreg(d, VIRTIO_MMIO_DEVICE_FEATURES) == 0, "DeviceFeatures past word 1", i);
		vreg_w(d, VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK);
		expect_status(d, S_ACK | S_DRV, "FEATURES_OK accepted unoffered or missing features");
	}
	/* Features are frozen by FEATURES_OK: a later write must not take INDIRECT_DESC away. */
	vdev_reset(d);
	vdev_negotiate(d, 1ULL << VIRTIO_RING_F_INDIRECT_DESC);
	vreg_w(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	vreg_w(d, VIRTIO_MMIO_DRIVER_FEATURES, 0);
	vreg_w(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	vreg_w(d, VIRTIO_MMIO_DRIVER_FEATURES, 0);
	dq_setup(d, &b.q, 0, 64);
	CHECK(vdev_driver_ok(d) == S_RUNNING, "DRIVER_OK after a late features write", 0);
	/* An indirect request works: the features were not changed. */
	struct virtio_blk_outhdr *h = rt_alloc(sizeof(*h), 16);
	uint8_t *data = rt_alloc(512, 512), *st = rt_alloc(1, 1);
	struct vring_desc *t = rt_alloc(3 * 16, 16);
	h->type = VIRTIO_BLK_T_IN;
	*st = VBLK_NO_STATUS;
	t[0] = (struct vring_desc){ (uint64_t)h, sizeof(*h), VRING_DESC_F_NEXT, 1 };
	t[1] = (struct vring_desc){ (uint64_t)data, 512, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 2 };
	t[2] = (struct vring_desc){ (uint64_t)st, 1, VRING_DESC_F_WRITE, 0 };
	b.q.desc[0] = (struct vring_desc){ (uint64_t)t, 48, VRING_DESC_F_INDIRECT, 0 };
	dq_submit(&b.q, 0);
	uint32_t id, len;
	CHECK(dq_wait(&b.q, &id, &len, 10000), "indirect request not answered", 0);
	CHECK(*st == VIRTIO_BLK_S_OK && data[5] == img_byte(5), "indirect read", *st);
	b.q.next_desc = 1;
	vblk_still_works(&b);
}

void case_regs_queue_after_driver_ok(void)
{
	struct vblk b;
	vblk_open(&b, 0, 64);
	vblk_expect_image(&b, 0, 1);
	const struct vdev *d = &b.d;
	dq_program(d, 0, 1, LAYOUT_VIRTIO_MMIO_START, LAYOUT_VIRTIO_MMIO_START,
		   LAYOUT_VIRTIO_MMIO_START, false);
	vreg_w(d, VIRTIO_MMIO_QUEUE_READY, 0);
	vreg_w(d, VIRTIO_MMIO_QUEUE_SEL, 0);
	CHECK(vreg(d, VIRTIO_MMIO_QUEUE_READY) == 1, "QueueReady changed after DRIVER_OK", 0);
	/* Queues that do not exist (past num_queues) take nothing either. */
	uint32_t nq = vreg(d, VIRTIO_MMIO_CONFIG + 32) >> 16;
	CHECK(nq >= 1 && nq <= 16, "num_queues", nq);
	for (uint32_t q = nq; q < nq + 40; q += 7) {
		dq_program(d, (uint16_t)q, 8, 0x100000, 0x100000, 0x100000, true);
		CHECK(vreg(d, VIRTIO_MMIO_QUEUE_READY) == 0, "a queue past the last became ready", q);
		CHECK(vreg(d, VIRTIO_MMIO_QUEUE_NUM_MAX) == 0, "QueueNumMax of a missing queue", q);
	}
	vreg_w(d, VIRTIO_MMIO_QUEUE_SEL, 0);
	/* The rings given at setup still carry requests. */
	vblk_still_works(&b);
	vblk_expect_image(&b, 100, 4);
}

/* Program queue 0 with (num, rings) between FEATURES_OK and DRIVER_OK: NEEDS_RESET must follow. */
static void expect_bad_layout(struct vblk *b, uint32_t num, uint64_t desc, uint64_t avail,
			      uint64_t used)
{
	vdev_reset(&b->d);
	vdev_negotiate(&b->d, 1ULL << VIRTIO_RING_F_INDIRECT_DESC);
	dq_program(&b->d, 0, num, desc, avail, used, true);
	uint32_t s = vdev_driver_ok(&b->d);
	CHECK(s & S_NR, "a bad queue layout was accepted, num", num);
	/* A notify of the refused queue does nothing. */
	vreg_w(&b->d, VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	vblk_restart(b, 64);
	vblk_still_works(b);
}

/* Room for rings of up to 1024 entries, in RAM. */
static void good_rings(uint64_t *desc, uint64_t *avail, uint64_t *used)
{
	*desc = (uint64_t)rt_alloc(16 * 1024, 4096);
	*avail = (uint64_t)rt_alloc(4096, 4096);
	*used = (uint64_t)rt_alloc(16 * 1024, 4096);
}

void case_regs_queue_num_zero(void)
{
	struct vblk b;
	uint64_t de, av, us;
	vblk_open(&b, 0, 64);
	vblk_expect_image(&b, 0, 1);
	good_rings(&de, &av, &us);
	expect_bad_layout(&b, 0, de, av, us);
}

void case_regs_queue_num_not_pow2(void)
{
	struct vblk b;
	uint64_t de, av, us;
	vblk_open(&b, 0, 64);
	vblk_expect_image(&b, 0, 1);
	good_rings(&de, &av, &us);
	expect_bad_layout(&b, 3, de, av, us);
	expect_bad_layout(&b, 255, de, av, us);
	expect_bad_layout(&b, 100, de, av, us);
}

void case_regs_queue_num_too_big(void)
{
	struct vblk b;
	uint64_t de, av, us;
	vblk_open(&b, 0, 64);
	vblk_expect_image(&b, 0, 1);
	uint32_t max = vreg(&b.d, VIRTIO_MMIO_QUEUE_NUM_MAX);
	good_rings(&de, &av, &us);
	expect_bad_layout(&b, max * 2, de, av, us);
	expect_bad_layout(&b, 32768, de, av, us);
	expect_bad_layout(&b, 65536, de, av, us);
	expect_bad_layout(&b, 0xffffffffu, de, av, us);
}

void case_regs_rings_mmio_hole(void)
{
	struct vblk b;
	uint64_t de, av, us;
	vblk_open(&b, 0, 64);
	vblk_expect_image(&b, 0, 1);
	good_rings(&de, &av, &us);
	/* The device's own window, the IOAPIC, the LAPIC, the start of the hole: one area at a time. */
	static const uint64_t hole[] = { LAYOUT_VIRTIO_MMIO_START, LAYOUT_IOAPIC_ADDR,
					 LAYOUT_LAPIC_ADDR, LAYOUT_MMIO_HOLE_START,
					 LAYOUT_MMIO_HOLE_END - 4096 };
	for (unsigned int i = 0; i < sizeof(hole) / sizeof(hole[0]); i++) {
		expect_bad_layout(&b, 64, hole[i], av, us);
		expect_bad_layout(&b, 64, de, hole[i], us);
		expect_bad_layout(&b, 64, de, av, hole[i]);
	}
}

void case_regs_rings_ram_end(void)
{
	struct vblk b;
	uint64_t de, av, us;
	vblk_open(&b, 0, 64);
	vblk_expect_image(&b, 0, 1);
	good_rings(&de, &av, &us);
	uint64_t end = rt_ram.low_end;
	/* Each area starts in RAM and ends past it; and one starting exactly at the end. */
	expect_bad_layout(&b, 64, end - 512, av, us);
	expect_bad_layout(&b, 64, de, end - 64, us);
	expect_bad_layout(&b, 64, de, av, end - 256);
	expect_bad_layout(&b, 64, end, av, us);
	/* A used ring in RAM but misaligned (2.7.2 wants 4 bytes). */
	expect_bad_layout(&b, 64, de, av, us + 2);
}

void case_regs_rings_above_4g(void)
{
	struct vblk b;
	uint64_t de, av, us;
	vblk_open(&b, 0, 64);
	vblk_expect_image(&b, 0, 1);
	CHECK(rt_ram.high_end == 0, "this case wants a machine without RAM above 4 GiB", 0);
	good_rings(&de, &av, &us);
	expect_bad_layout(&b, 64, 1ULL << 32, av, us);
	expect_bad_layout(&b, 64, de, 1ULL << 40, us);
	expect_bad_layout(&b, 64, de, av, 0xfffffffffffff000ULL); /* wraps past 2^64 */
	expect_bad_layout(&b, 64, 0xffffffffffffff00ULL, av, us);
	expect_bad_layout(&b, 64, de | 1ULL << 63, av, us);
}

/* --memory 3200M: rings and buffers above 4 GiB work; areas crossing either end of RAM do not. */
void case_rings_high_ram(void)
{
	struct vblk b;
	CHECK(rt_ram.high_end > rt_ram.high_start, "no RAM above 4 GiB (run with --memory 3200M)", 0);
	CHECK(rt_ram.low_end == LAYOUT_MMIO_HOLE_START, "low RAM does not reach the hole",
	      rt_ram.low_end);
	vblk_open(&b, 0, 64);
	vblk_expect_image(&b, 0, 1);
	/* A queue entirely in high RAM, with its data buffers there too. */
	uint64_t hi = rt_ram.high_start + 0x100000;
	vdev_reset(&b.d);
	vdev_negotiate(&b.d, 0);
	memset((void *)hi, 0, 0x10000);
	dq_program(&b.d, 0, 64, hi, hi + 0x1000, hi + 0x2000, true);
	CHECK(vdev_driver_ok(&b.d) == S_RUNNING, "rings above 4 GiB refused", 0);
	b.q = (struct dq){ .d = &b.d, .size = 64, .desc = (void *)hi, .avail = (void *)(hi + 0x1000),
			   .used = (void *)(hi + 0x2000) };
	struct virtio_blk_outhdr *h = (void *)(hi + 0x4000);
	uint8_t *data = (void *)(hi + 0x5000), *st = (void *)(hi + 0x6000);
	*h = (struct virtio_blk_outhdr){ .type = VIRTIO_BLK_T_IN, .sector = 9 };
	*st = VBLK_NO_STATUS;
	struct vbuf bufs[3] = { { h, 16, false }, { data, 1024, true }, { st, 1, true } };
	CHECK(dq_roundtrip(&b.q, bufs, 3) == 1025, "read through high RAM: used length", 0);
	CHECK(*st == 0, "read through high RAM: status", *st);
	for (uint32_t i = 0; i < 1024; i++)
		CHECK(data[i] == img_byte(9 * 512 + i), "read through high RAM: bytes", i);
	uint64_t de, av, us;
	good_rings(&de, &av, &us);
	expect_bad_layout(&b, 64, rt_ram.high_end - 512, av, us);
	expect_bad_layout(&b, 64, rt_ram.low_end - 512, av, us);
	expect_bad_layout(&b, 64, de, av, rt_ram.high_end - 8);
	expect_bad_layout(&b, 64, de, av, rt_ram.high_end);
}

void case_regs_notify_bad_queue(void)
{
	struct vblk b;
	struct vfs f;
	vblk_open(&b, 0, 64);
	vblk_expect_image(&b, 0, 1);
	vfs_open(&f);
	vfs_prove_hello(&f);
	static const uint32_t qs[] = { 1, 2, 3, 16, 255, 0xffff, 0x10000, 0xffffffffu };
	for (unsigned int i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		vreg_w(&b.d, VIRTIO_MMIO_QUEUE_NOTIFY, qs[i]);
		if (qs[i] > 1)
			vreg_w(&f.d, VIRTIO_MMIO_QUEUE_NOTIFY, qs[i]);
		for (unsigned int w = 1; w <= 8; w *= 2) {
			wr(b.d.base + VIRTIO_MMIO_QUEUE_NOTIFY, w, qs[i]);
			wr(f.d.base + VIRTIO_MMIO_QUEUE_NOTIFY, w, qs[i]);
		}
	}
	/* Kicks of a queue with nothing new are harmless too. */
	for (int i = 0; i < 100; i++)
		vreg_w(&b.d, VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	vblk_still_works(&b);
	vfs_still_works(&f);
}

/*
 * Reset while requests are in flight, 1000 times: each round starts the device on the same rings,
 * makes 16 reads available, kicks, and resets at once. Status 0 must read back at once (the reset
 * is synchronous: in-flight I/O drained) and the used ring must not move after it.
 */
void case_regs_reset_inflight(void)
{
	struct vblk b;
	vblk_open(&b, 0, 64);
	vblk_expect_image(&b, 0, 1);
	const struct vdev *d = &b.d;
	struct dq q = { .d = d, .size = 64 };
	q.desc = rt_alloc(16 * 64, 4096);
	q.avail = rt_alloc(6 + 2 * 64, 4096);
	q.used = rt_alloc(6 + 8 * 64, 4096);
	struct virtio_blk_outhdr *h = rt_alloc(16 * sizeof(*h), 16);
	uint8_t *data = rt_alloc(16 * 4096, 4096), *st = rt_alloc(16, 1);
	for (int round = 0; round < 1000; round++) {
		vdev_reset(d);
		vdev_negotiate(d, 0);
		memset(q.avail, 0, 6 + 2 * 64);
		memset(q.used, 0, 6 + 8 * 64);
		q.avail_idx = q.last_used = q.next_desc = 0;
		dq_program(d, 0, 64, (uint64_t)q.desc, (uint64_t)q.avail, (uint64_t)q.used, true);
		CHECK(vdev_driver_ok(d) == S_RUNNING, "DRIVER_OK in round", round);
		for (int i = 0; i < 16; i++) {
			h[i] = (struct virtio_blk_outhdr){ .type = VIRTIO_BLK_T_IN,
							   .sector = (uint64_t)(i * 8 + round % 64) };
			struct vbuf bufs[3] = { { &h[i], 16, false },
						{ data + i * 4096, 4096, true },
						{ st + i, 1, true } };
			dq_push(&q, dq_chain(&q, bufs, 3));
		}
		dq_notify(&q);
		for (int spin = 0; spin < (round % 8) * 200; spin++)
			rt_relax();
		vreg_w(d, VIRTIO_MMIO_STATUS, 0);
		CHECK(vreg(d, VIRTIO_MMIO_STATUS) == 0, "status after a reset in round", round);
		uint16_t used = *(volatile uint16_t *)&q.used->idx;
		CHECK(used <= 16, "used index beyond what was made available", used);
		for (int spin = 0; spin < 2000; spin++)
			rt_relax();
		CHECK(*(volatile uint16_t *)&q.used->idx == used, "the used ring moved after reset",
		      round);
	}
	vblk_restart(&b, 64);
	vblk_still_works(&b);
}

/* The same with FUSE READs in flight on virtio-fs (io_uring on the file), whose reset also
   forgets the session: 300 times. */
void case_regs_reset_inflight_fs(void)
{
	struct vfs f;
	vfs_open(&f);
	vfs_prove_hello(&f);
	uint8_t *out = rt_alloc(16 * 256, 8);
	struct fuse_in_header *req = rt_alloc(16 * 128, 8);
	for (int round = 0; round < 300; round++) {
		vfs_open(&f);
		vfs_init(&f);
		struct fuse_entry_out e;
		CHECK(vfs_lookup(&f, FUSE_ROOT_ID, "hello.txt", &e) == 0, "LOOKUP in round", round);
		uint64_t fh = vfs_open_fh(&f, e.nodeid, false);
		for (int i = 0; i < 16; i++) {
			struct fuse_in_header *r = (void *)((uint8_t *)req + i * 128);
			*r = (struct fuse_in_header){ .len = 80, .opcode = FUSE_READ,
						      .unique = (uint64_t)i + 100, .nodeid = e.nodeid };
			*(struct fuse_read_in *)(r + 1) = (struct fuse_read_in){ .fh = fh, .size = 200 };
			struct vbuf bufs[2] = { { r, 80, false }, { out + i * 256, 256, true } };
			dq_push(&f.rq, dq_chain(&f.rq, bufs, 2));
		}
		dq_notify(&f.rq);
		vreg_w(&f.d, VIRTIO_MMIO_STATUS, 0);
		CHECK(vreg(&f.d, VIRTIO_MMIO_STATUS) == 0, "status after a reset in round", round);
		uint16_t used = *(volatile uint16_t *)&f.rq.used->idx;
		for (int spin = 0; spin < 2000; spin++)
			rt_relax();
		CHECK(*(volatile uint16_t *)&f.rq.used->idx == used, "the used ring moved after reset",
		      round);
	}
	vfs_open(&f);
	vfs_prove_hello(&f);
	vfs_still_works(&f);
}

/*
 * Rings on top of each other: the used ring over the avail ring (the device's used->idx becomes the
 * driver's avail->idx) and over the descriptor table. The device may serve garbage or go
 * NEEDS_RESET; it must not spin forever or hang the reset, and must work again after one.
 */
void case_regs_rings_overlap(void)
{
	struct vblk b;
	vblk_open(&b, 0, 64);
	vblk_expect_image(&b, 0, 1);
	uint8_t *area = rt_alloc(8192, 4096);
	const uint64_t layouts[][3] = {
		{ (uint64_t)area, (uint64_t)area + 4096, (uint64_t)area + 4096 },
		{ (uint64_t)area, (uint64_t)area, (uint64_t)area },
		{ (uint64_t)area + 4096, (uint64_t)area, (uint64_t)area + 4096 + 2 },
	};
	for (unsigned int i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		for (unsigned int ev = 0; ev < 2; ev++) {
			vdev_reset(&b.d);
			vdev_negotiate(&b.d, ev ? 1ULL << VIRTIO_RING_F_EVENT_IDX : 0);
			memset(area, 0, 8192);
			dq_program(&b.d, 0, 64, layouts[i][0], layouts[i][1], layouts[i][2], true);
			uint32_t s = vdev_driver_ok(&b.d);
			struct dq q = { .d = &b.d, .size = 64, .desc = (void *)layouts[i][0],
					.avail = (void *)layouts[i][1], .used = (void *)layouts[i][2] };
			if (!(s & S_NR)) {
				struct virtio_blk_outhdr *h = rt_alloc(16, 16);
				uint8_t *data = rt_alloc(512, 512), *st = rt_alloc(1, 1);
				h->type = VIRTIO_BLK_T_IN;
				struct vbuf bufs[3] = { { h, 16, false }, { data, 512, true },
							{ st, 1, true } };
				for (int k = 0; k < 3; k++)
					dq_submit(&q, dq_chain(&q, bufs, 3));
				for (int spin = 0; spin < 200000; spin++)
					rt_relax();
			}
			vreg_w(&b.d, VIRTIO_MMIO_STATUS, 0);
			CHECK(vreg(&b.d, VIRTIO_MMIO_STATUS) == 0, "reset after overlapping rings", i);
		}
	}
	vblk_restart(&b, 64);
	vblk_still_works(&b);
}
