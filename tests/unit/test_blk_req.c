/* test_blk_req.c: the virtio-blk request parser against chains built in fake guest memory. */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/blk/blk_req.h"
#include "tests/support/fake_ring.h"
#include "tests/unit/tap.h"

#define RAM_SIZE (1u << 20)
#define QSIZE 64
#define CAPACITY 100 /* sectors */

static uint8_t *ram;
static struct guest_mem gm;
static struct fake_ring fr;
static struct virtq vq;
static struct iovec iov[QSIZE];
static struct vq_chain chain = { .iov = iov };
static struct blk_limits lim = { .capacity = CAPACITY,
				 .max_discard_sectors = 50,
				 .max_zeroes_sectors = 50 };
static struct blk_req req;

static void reset_ring(void)
{
	memset(ram, 0, RAM_SIZE);
	fake_ring_init(&fr, ram, RAM_SIZE, QSIZE, 0x1000);
	struct vq_layout l = fake_ring_layout(&fr);
	if (vq_init(&vq, &gm, &l, QSIZE, 1ULL << VIRTIO_RING_F_INDIRECT_DESC, 0))
		abort();
}

/* A header in guest RAM. */
static uint64_t hdr(uint32_t type, uint64_t sector)
{
	uint64_t g = fake_ring_alloc(&fr, 16);
	struct virtio_blk_outhdr h = { .type = htole32(type), .sector = htole64(sector) };
	memcpy(ram + g, &h, sizeof(h));
	return g;
}

static uint64_t range_seg(uint64_t sector, uint32_t n, uint32_t flags)
{
	uint64_t g = fake_ring_alloc(&fr, 16);
	struct virtio_blk_discard_write_zeroes s = {
		.sector = htole64(sector),
		.num_sectors = htole32(n),
		.flags = htole32(flags),
	};
	memcpy(ram + g, &s, sizeof(s));
	return g;
}

/* Publish bufs as one chain, pop it and parse it. */
static enum blk_action parse(const struct fake_buf *bufs, unsigned int n)
{
	fake_ring_publish(&fr, fake_ring_add_chain(&fr, bufs, n));
	if (vq_pop(&vq, &chain) != 1)
		return (enum blk_action) - 1;
	blk_req_parse(&chain, &lim, &req);
	return req.action;
}

#define R(g, l)                                                                                    \
	{                                                                                          \
		(g), (l), false                                                                    \
	}
#define W(g, l)                                                                                    \
	{                                                                                          \
		(g), (l), true                                                                     \
	}

static bool is_status(enum blk_action a, uint8_t status)
{
	return a == BLK_ACT_STATUS && req.status == status;
}

static void test_rw(void)
{
	reset_ring();
	uint64_t data = fake_ring_alloc(&fr, 4096), st = fake_ring_alloc(&fr, 1);
	struct fake_buf in[3] = { R(hdr(VIRTIO_BLK_T_IN, 7), 16), W(data, 1024), W(st, 1) };
	TAP_CHECK(parse(in, 3) == BLK_ACT_READ && req.offset == 7 * 512 && req.len == 1024,
		  "IN: read 1024 bytes at sector 7");
	ram[st] = 0xee;
	TAP_CHECK(blk_req_status(&req, VIRTIO_BLK_S_OK, 1024) == 1025 && ram[st] == VIRTIO_BLK_S_OK,
		  "status written to the final byte, used length = data + 1");

	struct fake_buf out[3] = { R(hdr(VIRTIO_BLK_T_OUT, 0), 16), R(data, 512), W(st, 1) };
	TAP_CHECK(parse(out, 3) == BLK_ACT_WRITE && req.offset == 0 && req.len == 512 &&
			  vq_reader_remaining(&req.rd) == 512,
		  "OUT: write 512 bytes at sector 0, reader at the data");

	struct fake_buf split[4] = { R(hdr(VIRTIO_BLK_T_IN, 1), 8), R(0, 0), W(data, 512),
				     W(st, 1) };
	split[1] = (struct fake_buf)R(split[0].gpa + 8, 8);
	TAP_CHECK(parse(split, 4) == BLK_ACT_READ && req.offset == 512,
		  "header split over two descriptors");

	struct fake_buf shared[2] = { R(hdr(VIRTIO_BLK_T_IN, 2), 16), W(data, 513) };
	TAP_CHECK(parse(shared, 2) == BLK_ACT_READ && req.len == 512,
		  "data and status in one descriptor");
	struct iovec v[2];
	unsigned int nr;
	TAP_CHECK(vq_writer_iov(&req.wr, req.len, v, 2, &nr) == 0 &&
			  blk_req_status(&req, VIRTIO_BLK_S_IOERR, 0) == 1 &&
			  ram[data + 512] == VIRTIO_BLK_S_IOERR,
		  "status lands after the data in a shared descriptor");

	struct fake_buf last[3] = { R(hdr(VIRTIO_BLK_T_IN, CAPACITY - 1), 16), W(data, 512),
				    W(st, 1) };
	TAP_CHECK(parse(last, 3) == BLK_ACT_READ, "the last sector is readable");
	struct fake_buf zero[2] = { R(hdr(VIRTIO_BLK_T_IN, CAPACITY), 16), W(st, 1) };
	TAP_CHECK(parse(zero, 2) == BLK_ACT_READ && req.len == 0,
		  "empty read at the end is in range");
}

static void test_rw_errors(void)
{
	reset_ring();
	uint64_t data = fake_ring_alloc(&fr, 4096), st = fake_ring_alloc(&fr, 1);
	struct fake_buf b[3] = { R(hdr(VIRTIO_BLK_T_IN, CAPACITY), 16), W(data, 512), W(st, 1) };
	TAP_CHECK(is_status(parse(b, 3), VIRTIO_BLK_S_IOERR), "read past the end: IOERR");
	b[0].gpa = hdr(VIRTIO_BLK_T_IN, CAPACITY - 1), b[1].len = 1024;
	TAP_CHECK(is_status(parse(b, 3), VIRTIO_BLK_S_IOERR), "read straddling the end: IOERR");
	b[0].gpa = hdr(VIRTIO_BLK_T_IN, UINT64_MAX / 512 + 1), b[1].len = 512;
	TAP_CHECK(is_status(parse(b, 3), VIRTIO_BLK_S_IOERR), "sector * 512 overflowing: IOERR");
	b[0].gpa = hdr(VIRTIO_BLK_T_IN, UINT64_MAX);
	TAP_CHECK(is_status(parse(b, 3), VIRTIO_BLK_S_IOERR),
		  "sector 2^64-1 (sector + 1 wraps to 0): IOERR");
	b[0].gpa = hdr(VIRTIO_BLK_T_IN, UINT64_MAX - 1), b[1].len = 1024;
	TAP_CHECK(is_status(parse(b, 3), VIRTIO_BLK_S_IOERR),
		  "sector 2^64-2, 2 sectors (wraps): IOERR");
	b[1].len = 512;
	b[0].gpa = hdr(VIRTIO_BLK_T_IN, 0), b[1].len = 500;
	TAP_CHECK(is_status(parse(b, 3), VIRTIO_BLK_S_IOERR), "data not a multiple of 512: IOERR");

	struct fake_buf wrong_in[3] = { R(hdr(VIRTIO_BLK_T_IN, 0), 16), R(data, 512), W(st, 1) };
	TAP_CHECK(is_status(parse(wrong_in, 3), VIRTIO_BLK_S_IOERR),
		  "IN with readable data: IOERR");
	struct fake_buf wrong_out[3] = { R(hdr(VIRTIO_BLK_T_OUT, 0), 16), W(data, 512), W(st, 1) };
	TAP_CHECK(is_status(parse(wrong_out, 3), VIRTIO_BLK_S_IOERR),
		  "OUT with writable data: IOERR");

	lim.readonly = true;
	struct fake_buf w[3] = { R(hdr(VIRTIO_BLK_T_OUT, 0), 16), R(data, 512), W(st, 1) };
	TAP_CHECK(is_status(parse(w, 3), VIRTIO_BLK_S_IOERR), "write to a read-only disk: IOERR");
	struct fake_buf r[3] = { R(hdr(VIRTIO_BLK_T_IN, 0), 16), W(data, 512), W(st, 1) };
	TAP_CHECK(parse(r, 3) == BLK_ACT_READ, "read from a read-only disk is fine");
	lim.readonly = false;

	struct fake_buf nostatus[2] = { R(hdr(VIRTIO_BLK_T_OUT, 0), 16), R(data, 512) };
	TAP_CHECK(parse(nostatus, 2) == BLK_ACT_NO_STATUS, "no writable byte: no status to write");
	struct fake_buf shorthdr[2] = { R(hdr(VIRTIO_BLK_T_IN, 0), 8), W(st, 1) };
	TAP_CHECK(is_status(parse(shorthdr, 2), VIRTIO_BLK_S_IOERR), "header of 8 bytes: IOERR");
	struct fake_buf nohdr[1] = { W(st, 1) };
	TAP_CHECK(is_status(parse(nohdr, 1), VIRTIO_BLK_S_IOERR), "no header at all: IOERR");
	ram[st] = 0x55;
	TAP_CHECK(blk_req_status(&req, req.status, 0) == 1 && ram[st] == VIRTIO_BLK_S_IOERR,
		  "the error status reaches the guest");
}

static void test_other_types(void)
{
	reset_ring();
	uint64_t data = fake_ring_alloc(&fr, 64), st = fake_ring_alloc(&fr, 1);
	struct fake_buf f[2] = { R(hdr(VIRTIO_BLK_T_FLUSH, 0), 16), W(st, 1) };
	TAP_CHECK(parse(f, 2) == BLK_ACT_FLUSH, "FLUSH");
	struct fake_buf fx[3] = { R(hdr(VIRTIO_BLK_T_FLUSH, 0), 16), R(data, 512), W(st, 1) };
	TAP_CHECK(is_status(parse(fx, 3), VIRTIO_BLK_S_IOERR), "FLUSH carrying data: IOERR");

	struct fake_buf id[3] = { R(hdr(VIRTIO_BLK_T_GET_ID, 0), 16), W(data, 20), W(st, 1) };
	TAP_CHECK(parse(id, 3) == BLK_ACT_GET_ID && req.len == 20, "GET_ID with a 20-byte buffer");
	id[1].len = 8;
	TAP_CHECK(parse(id, 3) == BLK_ACT_GET_ID && req.len == 8,
		  "GET_ID with a short buffer writes 8");
	id[1].len = 64;
	TAP_CHECK(parse(id, 3) == BLK_ACT_GET_ID && req.len == 20,
		  "GET_ID never writes more than 20");

	uint32_t unsupported[] = { VIRTIO_BLK_T_SCSI_CMD, 10 /* GET_LIFETIME */,
				   VIRTIO_BLK_T_SECURE_ERASE, 99, 0x80000001u };
	for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++) {
		struct fake_buf u[2] = { R(hdr(unsupported[i], 0), 16), W(st, 1) };
		TAP_CHECK(is_status(parse(u, 2), VIRTIO_BLK_S_UNSUPP),
			  "unknown request type: UNSUPP");
	}
}

static void test_ranges(void)
{
	reset_ring();
	uint64_t st = fake_ring_alloc(&fr, 1);
	struct fake_buf d[3] = { R(hdr(VIRTIO_BLK_T_DISCARD, 0), 16), R(range_seg(10, 20, 0), 16),
				 W(st, 1) };
	TAP_CHECK(parse(d, 3) == BLK_ACT_DISCARD && req.offset == 10 * 512 && req.len == 20 * 512,
		  "DISCARD of sectors 10..29");
	d[1].gpa = range_seg(10, 20, VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP);
	TAP_CHECK(is_status(parse(d, 3), VIRTIO_BLK_S_UNSUPP), "DISCARD with UNMAP: UNSUPP");
	d[1].gpa = range_seg(10, 20, 4);
	TAP_CHECK(is_status(parse(d, 3), VIRTIO_BLK_S_UNSUPP),
		  "DISCARD with a reserved flag: UNSUPP");
	d[1].gpa = range_seg(90, 20, 0);
	TAP_CHECK(is_status(parse(d, 3), VIRTIO_BLK_S_IOERR), "DISCARD past the end: IOERR");
	d[1].gpa = range_seg(UINT64_MAX - 5, 10, 0);
	TAP_CHECK(is_status(parse(d, 3), VIRTIO_BLK_S_IOERR),
		  "DISCARD with an overflowing range: IOERR");
	d[1].gpa = range_seg(0, 51, 0);
	TAP_CHECK(is_status(parse(d, 3), VIRTIO_BLK_S_IOERR),
		  "DISCARD above max_discard_sectors: IOERR");
	d[1] = (struct fake_buf)R(range_seg(0, 1, 0), 32);
	TAP_CHECK(is_status(parse(d, 3), VIRTIO_BLK_S_IOERR),
		  "two segments when max is one: IOERR");
	d[1] = (struct fake_buf)R(range_seg(0, 1, 0), 8);
	TAP_CHECK(is_status(parse(d, 3), VIRTIO_BLK_S_IOERR), "truncated segment: IOERR");
	lim.readonly = true;
	d[1] = (struct fake_buf)R(range_seg(0, 1, 0), 16);
	TAP_CHECK(is_status(parse(d, 3), VIRTIO_BLK_S_IOERR), "DISCARD on a read-only disk: IOERR");
	lim.readonly = false;

	struct fake_buf z[3] = { R(hdr(VIRTIO_BLK_T_WRITE_ZEROES, 0), 16),
				 R(range_seg(5, 5, VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP), 16),
				 W(st, 1) };
	TAP_CHECK(parse(z, 3) == BLK_ACT_WRITE_ZEROES && req.unmap && req.offset == 5 * 512,
		  "WRITE_ZEROES with UNMAP");
	z[1].gpa = range_seg(5, 5, 0);
	TAP_CHECK(parse(z, 3) == BLK_ACT_WRITE_ZEROES && !req.unmap, "WRITE_ZEROES without UNMAP");
}

int main(void)
{
	ram = aligned_alloc(4096, RAM_SIZE);
	struct gm_region r = { .gpa = 0, .size = RAM_SIZE, .host = ram };
	if (!ram || gm_init_from(&gm, &r, 1) != 0) {
		printf("Bail out! no memory\n");
		return 1;
	}
	test_rw();
	test_rw_errors();
	test_other_types();
	test_ranges();
	free(ram);
	return tap_done();
}
