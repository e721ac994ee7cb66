/* fuzz_ring.c: build a split ring from compact fuzz bytes (see fuzz_ring.h). */
#include "tests/fuzz/fuzz_ring.h"

#include <string.h>

#define FZ_DESC 0x0
#define FZ_AVAIL 0x80
#define FZ_USED 0xa0
#define FZ_TABLE 0x1000
#define FZ_DATA 0x2000
#define FZ_REGION2 (1ULL << 20)
#define FZ_HEADER 105

static uint8_t fz_byte(const uint8_t *data, size_t size, size_t i)
{
	return i < size ? data[i] : 0;
}

static void fz_desc(struct fuzz_ring *f, uint64_t table, unsigned int i, const uint8_t *data,
		    size_t size, size_t at)
{
	uint16_t off = (uint16_t)(fz_byte(data, size, at) | fz_byte(data, size, at + 1) << 8);
	uint16_t len = (uint16_t)(fz_byte(data, size, at + 2) | fz_byte(data, size, at + 3) << 8);
	uint8_t flags = fz_byte(data, size, at + 4);
	uint8_t next = fz_byte(data, size, at + 5);
	struct vring_desc d;
	d.flags = flags & (VRING_DESC_F_NEXT | VRING_DESC_F_WRITE | VRING_DESC_F_INDIRECT);
	d.next = next & 0x3f;
	d.len = len;
	if (d.flags & VRING_DESC_F_INDIRECT)
		d.addr = FZ_TABLE + (off & 0x70); /* inside or just past the table */
	else if ((next & 0xc0) == 0xc0)
		d.addr = UINT64_MAX - (off & 0xff);
	else if (next & 0x80)
		d.addr = FZ_REGION2 + off;
	else
		d.addr = FZ_DATA + off;
	/* An indirect table's length stays a fuzz value: lengths that lie are the point. */
	memcpy(f->ram + table + 16 * i, &d, sizeof(d));
}

int fuzz_ring_setup(struct fuzz_ring *f, const uint8_t *data, size_t size, uint64_t features,
		    unsigned int max_segs)
{
	memset(f->ram, 0, sizeof(f->ram));
	for (unsigned int i = 0; i < FZ_QSIZE; i++) {
		fz_desc(f, FZ_DESC, i, data, size, 9 + 6 * i);
		fz_desc(f, FZ_TABLE, i, data, size, 57 + 6 * i);
		uint16_t head = fz_byte(data, size, 1 + i);
		memcpy(f->ram + FZ_AVAIL + 4 + 2 * i, &head, 2);
	}
	uint16_t idx = fz_byte(data, size, 0);
	memcpy(f->ram + FZ_AVAIL + 2, &idx, 2);
	if (size > FZ_HEADER) {
		size_t n = size - FZ_HEADER;
		size_t first = n < FZ_RAM - FZ_DATA ? n : FZ_RAM - FZ_DATA;
		memcpy(f->ram + FZ_DATA, data + FZ_HEADER, first);
		size_t second = n - first < FZ_RAM ? n - first : FZ_RAM;
		memcpy(f->ram + FZ_RAM, data + FZ_HEADER + first, second);
	}
	struct gm_region regions[2] = {
		{ .gpa = 0, .size = FZ_RAM, .host = f->ram },
		{ .gpa = FZ_REGION2, .size = FZ_RAM, .host = f->ram + FZ_RAM },
	};
	if (gm_init_from(&f->gm, regions, 2))
		return -1;
	struct vq_layout l = {
		.size = FZ_QSIZE, .desc_gpa = FZ_DESC, .avail_gpa = FZ_AVAIL, .used_gpa = FZ_USED
	};
	if (vq_init(&f->vq, &f->gm, &l, FZ_QSIZE, features, max_segs))
		return -1;
	return (int)(size < FZ_HEADER ? size : FZ_HEADER);
}
