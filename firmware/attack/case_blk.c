/* case_blk.c: attacks on virtio-blk request parsing (virtio 1.x 5.2.6) and on the image behind it. */
#include "firmware/attack/cases.h"
#include "firmware/attack/rt.h"
#include "firmware/attack/vblk.h"

#define S_OK VIRTIO_BLK_S_OK
#define S_IOERR VIRTIO_BLK_S_IOERR
#define S_UNSUPP VIRTIO_BLK_S_UNSUPP

static void open_rw(struct vblk *b)
{
	vblk_open(b, 0, 64);
	CHECK(!b->ro, "disk 0 is read-only", 0);
	vblk_expect_image(b, 0, 8);
}

/* A legitimate write in the scratch sectors, read back: proof writes reach the image. */
static void scratch_write_works(struct vblk *b, uint8_t fill)
{
	uint8_t *buf = rt_alloc(1024, 512), *back = rt_alloc(1024, 512);
	memset(buf, fill, 1024);
	CHECK(vblk_req(b, VIRTIO_BLK_T_OUT, IMG_SCRATCH + 2, buf, 1024, NULL) == S_OK,
	      "legitimate write to scratch", 0);
	CHECK(vblk_req(b, VIRTIO_BLK_T_IN, IMG_SCRATCH + 2, back, 1024, NULL) == S_OK,
	      "read back of scratch", 0);
	CHECK(!memcmp(buf, back, 1024), "scratch did not read back what was written", back[0]);
}

static const uint64_t past_end[][2] = {
	/* sector, sectors */
	{ IMG_SECTORS, 1 },	   { IMG_SECTORS - 1, 2 },  { IMG_SECTORS + 1000, 1 },
	{ ~0ULL, 1 },		   { ~0ULL >> 9, 1 },	    { 1ULL << 55, 8 },
	{ (~0ULL >> 9) - 7, 16 }, { IMG_SECTORS - 8, 16 },
};

void case_blk_read_past_end(void)
{
	struct vblk b;
	open_rw(&b);
	vblk_expect_image(&b, IMG_SECTORS - 1, 1); /* the last sector is readable */
	uint8_t *buf = rt_alloc(16 * 512, 512);
	for (unsigned int i = 0; i < sizeof(past_end) / sizeof(past_end[0]); i++) {
		uint32_t used;
		memset(buf, 0x5a, 16 * 512);
		uint8_t st = vblk_req(&b, VIRTIO_BLK_T_IN, past_end[i][0], buf,
				      (uint32_t)past_end[i][1] * 512, &used);
		CHECK(st == S_IOERR, "a read past the end did not fail", i);
		CHECK(used == 1 && buf[0] == 0x5a, "a failed read wrote data", used);
	}
	vblk_still_works(&b);
}

void case_blk_write_past_end(void)
{
	struct vblk b;
	open_rw(&b);
	scratch_write_works(&b, 0x11);
	uint8_t *buf = rt_alloc(16 * 512, 512);
	memset(buf, 0xaa, 16 * 512);
	for (unsigned int i = 0; i < sizeof(past_end) / sizeof(past_end[0]); i++) {
		uint8_t st = vblk_req(&b, VIRTIO_BLK_T_OUT, past_end[i][0], buf,
				      (uint32_t)past_end[i][1] * 512, NULL);
		CHECK(st == S_IOERR, "a write past the end did not fail", i);
	}
	/* The last sectors keep the image's bytes (the host checks the whole image too). */
	vblk_expect_image(&b, IMG_SECTORS - 8, 8);
	vblk_still_works(&b);
}

/* A write to sector 0 with no writable byte at all: nowhere to put a status, so NEEDS_RESET, and
   the write must not happen. */
void case_blk_no_status(void)
{
	struct vblk b;
	open_rw(&b);
	struct virtio_blk_outhdr *h = rt_alloc(16, 16);
	uint8_t *data = rt_alloc(512, 512);
	memset(data, 0xcc, 512);
	h->type = VIRTIO_BLK_T_OUT;
	h->sector = 0;
	struct vbuf bufs[2] = { { h, 16, false }, { data, 512, false } };
	dq_submit(&b.q, dq_chain(&b.q, bufs, 2));
	CHECK(vdev_wait_status(&b.d, VIRTIO_CONFIG_S_NEEDS_RESET, 5000),
	      "a request without status did not set NEEDS_RESET", 0);
	vblk_restart(&b, 64);
	vblk_expect_image(&b, 0, 1);
	vblk_still_works(&b);
}

/* The status byte in a device-readable buffer: for a write (no writable byte: NEEDS_RESET, nothing
   written) and for a read (readable after writable: a broken chain). */
void case_blk_status_readonly(void)
{
	struct vblk b;
	open_rw(&b);
	struct virtio_blk_outhdr *h = rt_alloc(16, 16);
	uint8_t *data = rt_alloc(512, 512), *st = rt_alloc(1, 1);
	memset(data, 0xcd, 512);
	*st = VBLK_NO_STATUS;
	h->type = VIRTIO_BLK_T_OUT;
	h->sector = 1;
	struct vbuf w[3] = { { h, 16, false }, { data, 512, false }, { st, 1, false } };
	dq_submit(&b.q, dq_chain(&b.q, w, 3));
	CHECK(vdev_wait_status(&b.d, VIRTIO_CONFIG_S_NEEDS_RESET, 5000),
	      "a write with a read-only status byte did not set NEEDS_RESET", 0);
	CHECK(*st == VBLK_NO_STATUS, "a read-only status byte was written", *st);
	vblk_restart(&b, 64);
	vblk_expect_image(&b, 1, 1);
	struct virtio_blk_outhdr *h2 = rt_alloc(16, 16);
	h2->type = VIRTIO_BLK_T_IN;
	struct vbuf r[3] = { { h2, 16, false }, { data, 512, true }, { st, 1, false } };
	dq_submit(&b.q, dq_chain(&b.q, r, 3));
	CHECK(vdev_wait_status(&b.d, VIRTIO_CONFIG_S_NEEDS_RESET, 5000),
	      "a read with a read-only status byte did not set NEEDS_RESET", 0);
	CHECK(*st == VBLK_NO_STATUS, "a read-only status byte was written", *st);
	vblk_restart(&b, 64);
	vblk_still_works(&b);
}

void case_blk_unknown_type(void)
{
	struct vblk b;
	open_rw(&b);
	static const uint32_t types[] = { 3, 5, 9, 10, 12, 14, 0x1234, 0x80000000u, 0xffffffffu };
	uint8_t *buf = rt_alloc(512, 512);
	for (unsigned int i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		uint32_t used;
		uint8_t st = vblk_req(&b, types[i], 0, buf, 512, &used);
		CHECK(st == S_UNSUPP, "an unknown type was not UNSUPP", types[i]);
	}
	vblk_still_works(&b);
}

/* GET_ID: the whole id, then into 1 byte (and into none): nothing written past the buffer. */
void case_blk_get_id_short(void)
{
	struct vblk b;
	open_rw(&b);
	uint8_t *id = rt_alloc(64, 16);
	memset(id, 0x77, 64);
	uint32_t used;
	CHECK(vblk_req(&b, VIRTIO_BLK_T_GET_ID, 0, id, 20, &used) == S_OK, "GET_ID", 0);
	CHECK(!memcmp(id, "rw.img\0", 7) && used == 21, "GET_ID is not the image's name", used);
	memset(id, 0x77, 64);
	CHECK(vblk_req(&b, VIRTIO_BLK_T_GET_ID, 0, id, 1, &used) == S_OK, "GET_ID into 1 byte", 0);
	CHECK(id[0] == 'r' && used == 2, "GET_ID into 1 byte: the byte", id[0]);
	for (int i = 1; i < 64; i++)
		CHECK(id[i] == 0x77, "GET_ID wrote past a 1-byte buffer at", i);
	CHECK(vblk_req(&b, VIRTIO_BLK_T_GET_ID, 0, NULL, 0, &used) == S_OK && used == 1,
	      "GET_ID with only a status byte", used);
	/* GET_ID with a readable data buffer: wrong direction. */
	struct virtio_blk_outhdr *h = rt_alloc(16, 16);
	uint8_t *st = rt_alloc(1, 1);
	h->type = VIRTIO_BLK_T_GET_ID;
	*st = VBLK_NO_STATUS;
	struct vbuf bufs[3] = { { h, 16, false }, { id, 20, false }, { st, 1, true } };
	dq_roundtrip(&b.q, bufs, 3);
	CHECK(*st == S_IOERR, "GET_ID with readable data", *st);
	vblk_still_works(&b);
}

/* Discard and write-zeroes segments that overflow, exceed the limits or lie about their shape. */
static void range_attacks(struct vblk *b, uint32_t type)
{
	static const struct {
		uint64_t sector;
		uint32_t n, flags;
		uint8_t want;
	} bad[] = {
		{ IMG_SECTORS - 8, 16, 0, S_IOERR },  { IMG_SECTORS, 1, 0, S_IOERR },
		{ ~0ULL - 7, 16, 0, S_IOERR },	      { (~0ULL >> 9) - 1, 8, 0, S_IOERR },
		{ 0, 0xffffffffu, 0, S_IOERR },	      { IMG_SCRATCH, (1u << 21) + 1, 0, S_IOERR },
		{ IMG_SCRATCH, 8, 0x2, S_UNSUPP },     { IMG_SCRATCH, 8, 0x80000000u, S_UNSUPP },
	};
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t st = vblk_range(b, type, bad[i].sector, bad[i].n, bad[i].flags);
		CHECK(st == bad[i].want, "a bad range got status", st | i << 8);
	}
	/* Two segments (max_*_seg is 1), half a segment, a segment and a half. */
	static const uint32_t lens[] = { 32, 8, 24, 0 };
	for (unsigned int i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct virtio_blk_discard_write_zeroes *seg = rt_alloc(32, 16);
		seg[0] = (struct virtio_blk_discard_write_zeroes){ .sector = IMG_SCRATCH,
								   .num_sectors = 1 };
		seg[1] = (struct virtio_blk_discard_write_zeroes){ .sector = 0, .num_sectors = 64 };
		struct virtio_blk_outhdr *h = rt_alloc(16, 16);
		uint8_t *st = rt_alloc(1, 1);
		h->type = type;
		*st = VBLK_NO_STATUS;
		struct vbuf bufs[3] = { { h, 16, false }, { seg, lens[i], false }, { st, 1, true } };
		dq_roundtrip(&b->q, bufs, 3);
		CHECK(*st == S_IOERR, "a malformed segment list got status", *st | i << 8);
	}
}

void case_blk_discard_overflow(void)
{
	struct vblk b;
	open_rw(&b);
	CHECK(vblk_range(&b, VIRTIO_BLK_T_DISCARD, IMG_SCRATCH, 8, 0) == S_OK, "legitimate discard", 0);
	/* UNMAP on a discard is UNSUPP (5.2.6.2). */
	CHECK(vblk_range(&b, VIRTIO_BLK_T_DISCARD, IMG_SCRATCH, 8, 1) == S_UNSUPP,
	      "discard with UNMAP", 0);
	range_attacks(&b, VIRTIO_BLK_T_DISCARD);
	vblk_still_works(&b);
}

void case_blk_write_zeroes_overflow(void)
{
	struct vblk b;
	open_rw(&b);
	scratch_write_works(&b, 0x5e);
	CHECK(vblk_range(&b, VIRTIO_BLK_T_WRITE_ZEROES, IMG_SCRATCH + 2, 2, 0) == S_OK,
	      "legitimate write-zeroes", 0);
	uint8_t *back = rt_alloc(1024, 512);
	CHECK(vblk_req(&b, VIRTIO_BLK_T_IN, IMG_SCRATCH + 2, back, 1024, NULL) == S_OK, "read", 0);
	for (int i = 0; i < 1024; i++)
		CHECK(back[i] == 0, "write-zeroes left data at", i);
	range_attacks(&b, VIRTIO_BLK_T_WRITE_ZEROES);
	vblk_still_works(&b);
}

/* Disk 1 is --disk ...,readonly: every kind of write fails, reads and flushes work. */
void case_blk_readonly_disk(void)
{
	struct vblk b;
	vblk_open(&b, 1, 64);
	CHECK(b.ro, "disk 1 does not offer VIRTIO_BLK_F_RO", 0);
	vblk_expect_image(&b, 0, 8);
	uint8_t *buf = rt_alloc(4096, 512);
	memset(buf, 0xee, 4096);
	CHECK(vblk_req(&b, VIRTIO_BLK_T_OUT, 0, buf, 4096, NULL) == S_IOERR, "write to read-only", 0);
	CHECK(vblk_req(&b, VIRTIO_BLK_T_OUT, IMG_SCRATCH, buf, 512, NULL) == S_IOERR,
	      "write to read-only scratch", 0);
	CHECK(vblk_range(&b, VIRTIO_BLK_T_DISCARD, 0, 8, 0) == S_IOERR, "discard on read-only", 0);
	CHECK(vblk_range(&b, VIRTIO_BLK_T_WRITE_ZEROES, 0, 8, 0) == S_IOERR,
	      "write-zeroes on read-only", 0);
	CHECK(vblk_range(&b, VIRTIO_BLK_T_WRITE_ZEROES, 0, 8, 1) == S_IOERR,
	      "write-zeroes with unmap on read-only", 0);
	CHECK(vblk_req(&b, VIRTIO_BLK_T_FLUSH, 0, NULL, 0, NULL) == S_OK, "flush on read-only", 0);
	vblk_expect_image(&b, 0, 8);
	vblk_still_works(&b);
}

/* Lengths that are not what a request of that type carries. */
void case_blk_bad_lengths(void)
{
	struct vblk b;
	open_rw(&b);
	uint8_t *buf = rt_alloc(4096, 512);
	memset(buf, 0x3c, 4096);
	static const uint32_t lens[] = { 511, 1, 513, 4095 };
	for (unsigned int i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		CHECK(vblk_req(&b, VIRTIO_BLK_T_IN, 0, buf, lens[i], NULL) == S_IOERR,
		      "a read of a partial sector", lens[i]);
		CHECK(vblk_req(&b, VIRTIO_BLK_T_OUT, IMG_SCRATCH, buf, lens[i], NULL) == S_IOERR,
		      "a write of a partial sector", lens[i]);
	}
	uint8_t *st = rt_alloc(1, 1);
	struct virtio_blk_outhdr *h = rt_alloc(16, 16);
	/* A header of 8 bytes; a read whose data is readable; a write with writable data. */
	struct {
		uint32_t type, hlen, dlen;
		bool dwrite;
	} shapes[] = { { VIRTIO_BLK_T_IN, 8, 512, true }, { VIRTIO_BLK_T_IN, 16, 512, false },
		       { VIRTIO_BLK_T_OUT, 16, 512, true }, { VIRTIO_BLK_T_FLUSH, 16, 512, false },
		       { VIRTIO_BLK_T_IN, 15, 0, true }, { VIRTIO_BLK_T_OUT, 0, 0, false } };
	for (unsigned int i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		h->type = shapes[i].type;
		h->sector = 0;
		*st = VBLK_NO_STATUS;
		struct vbuf bufs[3] = { { h, shapes[i].hlen, false },
					{ buf, shapes[i].dlen, shapes[i].dwrite },
					{ st, 1, true } };
		dq_roundtrip(&b.q, bufs, 3);
		CHECK(*st == S_IOERR, "a request of the wrong shape", i);
	}
	vblk_still_works(&b);
}

/* Legitimate use, as the proof the others lean on: reads, writes, flush, a 1 MiB read. */
void case_blk_legitimate(void)
{
	struct vblk b;
	open_rw(&b);
	scratch_write_works(&b, 0x42);
	CHECK(vblk_req(&b, VIRTIO_BLK_T_FLUSH, 0, NULL, 0, NULL) == S_OK, "flush", 0);
	CHECK(vblk_req(&b, VIRTIO_BLK_T_IN, 0, NULL, 0, NULL) == S_OK, "a read of nothing", 0);
	vblk_expect_image(&b, 256, 1024);
	vblk_still_works(&b);
}

/* Four queues (--disk ...,queues=4): reads in flight on all of them, then a reset, 200 times. */
void case_blk_multiqueue_reset(void)
{
	struct vblk b;
	vdev_find(2, 0, &b.d);
	uint16_t nq = (uint16_t)(vreg(&b.d, VIRTIO_MMIO_CONFIG + 34) & 0xffff);
	CHECK(nq == 4, "disk 0 does not have 4 queues", nq);
	struct dq qs[4];
	uint8_t *data = rt_alloc(4 * 8 * 4096, 4096);
	struct virtio_blk_outhdr *h = rt_alloc(4 * 8 * 16, 16);
	uint8_t *st = rt_alloc(32, 1);
	for (int round = 0; round < 200; round++) {
		vdev_start(&b.d, 1ULL << VIRTIO_BLK_F_MQ, qs, 4, 32); /* 8 chains of 3 */
		for (int q = 0; q < 4; q++) {
			for (int i = 0; i < 8; i++) {
				int k = q * 8 + i;
				h[k] = (struct virtio_blk_outhdr){ .type = VIRTIO_BLK_T_IN,
								   .sector = (uint64_t)k * 8 };
				st[k] = VBLK_NO_STATUS;
				struct vbuf bb[3] = { { &h[k], 16, false }, { data + k * 4096, 4096, true },
						      { &st[k], 1, true } };
				dq_push(&qs[q], dq_chain(&qs[q], bb, 3));
			}
			dq_notify(&qs[q]);
		}
		if (round % 4 == 0) {
			/* Every fourth round, wait for everything and check the data first. */
			for (int q = 0; q < 4; q++)
				for (int i = 0; i < 8; i++) {
					uint32_t id, len;
					CHECK(dq_wait(&qs[q], &id, &len, 10000), "no completion", q);
				}
			for (int k = 0; k < 32; k++)
				CHECK(st[k] == 0 && data[k * 4096 + 3] == img_byte((uint64_t)k * 4096 + 3),
				      "multi-queue read", k);
		}
		vreg_w(&b.d, VIRTIO_MMIO_STATUS, 0);
		CHECK(vreg(&b.d, VIRTIO_MMIO_STATUS) == 0, "reset in round", round);
	}
	vblk_restart(&b, 64);
	vblk_still_works(&b);
}

/* Not an attack: a legal write outside the scratch sectors, which tests/boot/attack.sh's image
   check must notice (the proof that check can fail). */
void case_check_disk_write(void)
{
	struct vblk b;
	open_rw(&b);
	uint8_t *buf = rt_alloc(512, 512);
	memset(buf, 0x21, 512);
	CHECK(vblk_req(&b, VIRTIO_BLK_T_OUT, 300, buf, 512, NULL) == S_OK, "write sector 300", 0);
}

/*
 * Disk 0 opened with direct=on (O_DIRECT, falling back to the page cache for what is not aligned):
 * reads and writes through buffers at odd addresses, split at odd offsets, mixed with aligned
 * ones. Every byte must be right either way.
 */
void case_blk_direct_unaligned(void)
{
	struct vblk b;
	open_rw(&b);
	uint8_t *pool = rt_alloc(3 * 4096 + 64, 4096);
	static const uint32_t offs[] = { 0, 1, 7, 511, 513, 4095 };
	static const uint32_t splits[] = { 512, 100, 1, 2000 };
	for (unsigned int i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		for (unsigned int k = 0; k < sizeof(splits) / sizeof(splits[0]); k++) {
			uint8_t *buf = pool + offs[i];
			uint64_t sector = 17 + i * 4 + k;
			/* Read 4 sectors into two pieces split at splits[k]. */
			struct virtio_blk_outhdr *h = rt_alloc(16, 16);
			uint8_t *st = rt_alloc(1, 1);
			*h = (struct virtio_blk_outhdr){ .type = VIRTIO_BLK_T_IN, .sector = sector };
			*st = VBLK_NO_STATUS;
			struct vbuf bufs[4] = { { h, 16, false }, { buf, splits[k], true },
						{ buf + splits[k], 2048 - splits[k], true },
						{ st, 1, true } };
			CHECK(dq_roundtrip(&b.q, bufs, 4) == 2049 && *st == S_OK, "unaligned read",
			      offs[i] << 8 | k);
			for (uint32_t j = 0; j < 2048; j++)
				CHECK(buf[j] == img_byte(sector * 512 + j), "unaligned read's bytes",
				      offs[i] << 16 | j);
			/* Write them to scratch the same way, read back aligned. */
			uint64_t dst = IMG_SCRATCH + (i * 4 + k) % (IMG_SCRATCH_N - 4);
			h->type = VIRTIO_BLK_T_OUT;
			h->sector = dst;
			*st = VBLK_NO_STATUS;
			bufs[1].write = bufs[2].write = false;
			CHECK(dq_roundtrip(&b.q, bufs, 4) == 1 && *st == S_OK, "unaligned write",
			      offs[i] << 8 | k);
			uint8_t *back = rt_alloc(2048, 4096);
			CHECK(vblk_req(&b, VIRTIO_BLK_T_IN, dst, back, 2048, NULL) == S_OK, "read back", 0);
			CHECK(!memcmp(back, buf, 2048), "unaligned write read back differs",
			      offs[i] << 8 | k);
		}
	}
	vblk_still_works(&b);
}
