/* case_rings.c: attacks on split-ring walking (virtio 1.x 2.7): loops, indices, indirect tables, addresses. */
#include "firmware/attack/cases.h"
#include "firmware/attack/rt.h"
#include "firmware/attack/vblk.h"
#include "vmm/layout.h"

#define QSIZE 8 /* small, so max_segs (clamped to the queue size) is reachable */
#define F_NEXT VRING_DESC_F_NEXT
#define F_WRITE VRING_DESC_F_WRITE
#define F_IND VRING_DESC_F_INDIRECT

/* Disk 0 on a QSIZE queue, with the proof that it reads. */
static void open_disk(struct vblk *b)
{
	vblk_open(b, 0, QSIZE);
	vblk_expect_image(b, 0, 1);
}

static struct vring_desc D(const void *addr, uint32_t len, uint16_t flags, uint16_t next)
{
	return (struct vring_desc){ (uint64_t)addr, len, flags, next };
}

/* A read request's pieces: header (sector 1), a 512-byte buffer, status. */
struct rq {
	struct virtio_blk_outhdr *h;
	uint8_t *data;
	uint8_t *st;
};
static struct rq new_read(void)
{
	struct rq r = { rt_alloc(16, 16), rt_alloc(512, 512), rt_alloc(1, 1) };
	r.h->type = VIRTIO_BLK_T_IN;
	r.h->sector = 1;
	*r.st = VBLK_NO_STATUS;
	return r;
}

/*
 * The broken chain at `head` is already in the descriptor table: make it available and kick. The
 * device must give it back (used length 0) or leave it, mark itself NEEDS_RESET, and work again
 * after a reset. A chain it accepted would show as a status byte written: checked not to happen.
 */
static void expect_refused(struct vblk *b, uint16_t head, const uint8_t *st)
{
	dq_submit(&b->q, head);
	CHECK(vdev_wait_status(&b->d, VIRTIO_CONFIG_S_NEEDS_RESET, 5000),
	      "a broken chain did not set NEEDS_RESET", vreg(&b->d, VIRTIO_MMIO_STATUS));
	uint32_t id, len;
	if (dq_wait(&b->q, &id, &len, 100))
		CHECK(id == head && len == 0, "a refused chain came back with data", len);
	if (st)
		CHECK(*st == VBLK_NO_STATUS, "a refused chain was executed", *st);
	vblk_restart(b, QSIZE);
	vblk_still_works(b);
}

/* A read whose middle descriptor is `mid` (NEXT to the status added here): must be refused. */
static void expect_middle_refused(struct vblk *b, uint64_t addr, uint32_t len, uint16_t flags)
{
	struct rq r = new_read();
	b->q.desc[0] = D(r.h, 16, F_NEXT, 1);
	b->q.desc[1] = (struct vring_desc){ addr, len, (uint16_t)(flags | F_NEXT), 2 };
	b->q.desc[2] = D(r.st, 1, F_WRITE, 0);
	expect_refused(b, 0, r.st);
}

void case_rings_desc_loop(void)
{
	struct vblk b;
	open_disk(&b);
	struct rq r = new_read();
	b.q.desc[0] = D(r.h, 16, F_NEXT, 1);
	b.q.desc[1] = D(r.data, 512, F_WRITE | F_NEXT, 2);
	b.q.desc[2] = D(r.st, 1, F_WRITE | F_NEXT, 1); /* back to 1: a cycle */
	expect_refused(&b, 0, r.st);
}

void case_rings_self_loop(void)
{
	struct vblk b;
	open_disk(&b);
	struct rq r = new_read();
	b.q.desc[5] = D(r.h, 16, F_NEXT, 5);
	expect_refused(&b, 5, r.st);
}

/* A chain over every descriptor of the queue that closes into a ring of QSIZE. */
void case_rings_chain_longer_than_queue(void)
{
	struct vblk b;
	open_disk(&b);
	/* Legitimate: header + 6 data + status = QSIZE descriptors, the most a chain may have. */
	struct rq r = new_read();
	uint8_t *data = rt_alloc(6 * 512, 512);
	struct vbuf bufs[QSIZE] = { { r.h, 16, false } };
	for (int i = 0; i < 6; i++)
		bufs[1 + i] = (struct vbuf){ data + i * 512, 512, true };
	bufs[7] = (struct vbuf){ r.st, 1, true };
	r.h->sector = 10;
	CHECK(dq_roundtrip(&b.q, bufs, QSIZE) == 6 * 512 + 1, "a full-length chain", 0);
	CHECK(*r.st == 0 && data[512 * 5] == img_byte(15 * 512), "a full-length chain's data", *r.st);
	/* Now every descriptor NEXT to the following one, the last back to the first. */
	struct rq r2 = new_read();
	b.q.desc[0] = D(r2.h, 16, F_NEXT, 1);
	for (uint16_t i = 1; i < QSIZE; i++)
		b.q.desc[i] = D(r2.data, 512, F_WRITE | F_NEXT, (uint16_t)((i + 1) % QSIZE));
	expect_refused(&b, 0, r2.st);
}

void case_rings_next_past_size(void)
{
	struct vblk b;
	open_disk(&b);
	static const uint16_t nexts[] = { QSIZE, 200, 0xffff };
	for (unsigned int i = 0; i < sizeof(nexts) / sizeof(nexts[0]); i++) {
		struct rq r = new_read();
		b.q.desc[0] = D(r.h, 16, F_NEXT, 1);
		b.q.desc[1] = D(r.data, 512, F_WRITE | F_NEXT, nexts[i]);
		expect_refused(&b, 0, r.st);
	}
}

void case_rings_head_past_size(void)
{
	struct vblk b;
	open_disk(&b);
	static const uint16_t heads[] = { QSIZE, QSIZE + 1, 1000, 0xffff };
	for (unsigned int i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
		expect_refused(&b, heads[i], NULL);
}

/* avail->idx more than the queue size ahead of what the device consumed (2.7.13). */
void case_rings_avail_idx_jump(void)
{
	struct vblk b;
	open_disk(&b);
	static const uint16_t jumps[] = { QSIZE + 1, 1000, 0x8000, 0xffff };
	for (unsigned int i = 0; i < sizeof(jumps) / sizeof(jumps[0]); i++) {
		struct rq r = new_read();
		struct vbuf bufs[3] = { { r.h, 16, false }, { r.data, 512, true }, { r.st, 1, true } };
		uint16_t head = dq_chain(&b.q, bufs, 3);
		for (int k = 0; k < QSIZE; k++)
			b.q.avail->ring[k] = head;
		rt_mb();
		*(volatile uint16_t *)&b.q.avail->idx = (uint16_t)(b.q.avail_idx + jumps[i]);
		dq_notify(&b.q);
		CHECK(vdev_wait_status(&b.d, VIRTIO_CONFIG_S_NEEDS_RESET, 5000),
		      "an avail idx jump did not set NEEDS_RESET", jumps[i]);
		vblk_restart(&b, QSIZE);
		vblk_still_works(&b);
	}
}

/* Legitimate: ring positions and indices run far past the size (masked); 40 rounds of 8 requests. */
void case_rings_indices_wrap(void)
{
	struct vblk b;
	open_disk(&b);
	struct rq rs[QSIZE / 4];
	for (int i = 0; i < QSIZE / 4; i++)
		rs[i] = new_read();
	for (int round = 0; round < 40; round++) {
		uint16_t heads[QSIZE / 4];
		for (int i = 0; i < QSIZE / 4; i++) {
			rs[i].h->sector = (uint64_t)(round * 2 + i);
			*rs[i].st = VBLK_NO_STATUS;
			struct vbuf bufs[3] = { { rs[i].h, 16, false }, { rs[i].data, 512, true },
						{ rs[i].st, 1, true } };
			heads[i] = dq_chain(&b.q, bufs, 3);
			dq_push(&b.q, heads[i]);
		}
		dq_notify(&b.q);
		for (int i = 0; i < QSIZE / 4; i++) {
			uint32_t id, len;
			CHECK(dq_wait(&b.q, &id, &len, 10000), "no completion in round", round);
			CHECK(len == 513, "used length in round", round);
		}
		for (int i = 0; i < QSIZE / 4; i++)
			CHECK(*rs[i].st == 0 && rs[i].data[7] == img_byte(rs[i].h->sector * 512 + 7),
			      "wrong data in round", round);
	}
	CHECK(b.q.used->idx == 1 + 40 * (QSIZE / 4), "used idx after the rounds", b.q.used->idx);
}

/* An indirect descriptor in the ring with the given table (len bytes) and flags. */
static void indirect_refused(struct vblk *b, const void *table, uint32_t len, uint16_t flags,
			     const uint8_t *st)
{
	b->q.desc[3] = D(table, len, F_IND | flags, 4);
	b->q.desc[4] = D(rt_alloc(16, 16), 16, 0, 0);
	expect_refused(b, 3, st);
}

/* Header, data, status in a table of 3, as Linux builds it. */
static struct vring_desc *read_table(struct rq *r)
{
	struct vring_desc *t = rt_alloc(4 * 16, 16);
	t[0] = D(r->h, 16, F_NEXT, 1);
	t[1] = D(r->data, 512, F_WRITE | F_NEXT, 2);
	t[2] = D(r->st, 1, F_WRITE, 0);
	return t;
}

/* The legitimate indirect request every indirect case starts with. */
static void indirect_works(struct vblk *b)
{
	struct rq r = new_read();
	struct vring_desc *t = read_table(&r);
	b->q.desc[6] = D(t, 48, F_IND, 0);
	dq_submit(&b->q, 6);
	uint32_t id, len;
	CHECK(dq_wait(&b->q, &id, &len, 10000) && id == 6 && len == 513, "indirect read", len);
	CHECK(*r.st == 0 && r.data[100] == img_byte(612), "indirect read's data", *r.st);
}

void case_rings_indirect_bad_len(void)
{
	struct vblk b;
	open_disk(&b);
	indirect_works(&b);
	static const uint32_t lens[] = { 47, 49, 8, 0xfffffff0u, 0xffffffffu, 16 * (QSIZE + 1) };
	for (unsigned int i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct rq r = new_read();
		indirect_refused(&b, read_table(&r), lens[i], 0, r.st);
	}
}

void case_rings_indirect_empty(void)
{
	struct vblk b;
	open_disk(&b);
	indirect_works(&b);
	struct rq r = new_read();
	indirect_refused(&b, read_table(&r), 0, 0, r.st);
}

void case_rings_indirect_nested(void)
{
	struct vblk b;
	open_disk(&b);
	indirect_works(&b);
	struct rq r = new_read();
	struct vring_desc *inner = read_table(&r);
	struct vring_desc *outer = rt_alloc(16, 16);
	outer[0] = D(inner, 48, F_IND, 0);
	indirect_refused(&b, outer, 16, 0, r.st);
	/* An indirect table pointing at itself. */
	struct vring_desc *self = rt_alloc(16, 16);
	self[0] = D(self, 16, F_IND, 0);
	indirect_refused(&b, self, 16, 0, NULL);
}

void case_rings_indirect_with_next(void)
{
	struct vblk b;
	open_disk(&b);
	indirect_works(&b);
	struct rq r = new_read();
	indirect_refused(&b, read_table(&r), 48, F_NEXT, r.st);
}

void case_rings_indirect_loop(void)
{
	struct vblk b;
	open_disk(&b);
	indirect_works(&b);
	struct rq r = new_read();
	struct vring_desc *t = read_table(&r);
	t[2] = D(r.st, 1, F_WRITE | F_NEXT, 1); /* status -> data -> status ... */
	indirect_refused(&b, t, 48, 0, r.st);
	struct rq r2 = new_read();
	struct vring_desc *t2 = read_table(&r2);
	t2[1].next = 7; /* past the table's 3 entries */
	indirect_refused(&b, t2, 48, 0, r2.st);
}

void case_rings_indirect_not_negotiated(void)
{
	struct vblk b;
	open_disk(&b);
	vdev_reset(&b.d);
	vdev_negotiate(&b.d, 0);
	dq_setup(&b.d, &b.q, 0, QSIZE);
	CHECK(vdev_driver_ok(&b.d) & VIRTIO_CONFIG_S_DRIVER_OK, "DRIVER_OK", 0);
	vblk_expect_image(&b, 2, 1);
	struct rq r = new_read();
	indirect_refused(&b, read_table(&r), 48, 0, r.st);
}

/* Buffers whose address + length wraps past 2^64, or that cannot be in RAM. */
void case_rings_addr_wrap(void)
{
	struct vblk b;
	open_disk(&b);
	static const uint64_t addrs[] = { 0xfffffffffffff000ULL, 0xffffffffffffffffULL,
					  0x8000000000000000ULL, 1ULL << 32 };
	for (unsigned int i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		expect_middle_refused(&b, addrs[i], 0x2000, F_WRITE);
		/* An indirect table there too. */
		indirect_refused(&b, (void *)addrs[i], 48, 0, NULL);
	}
}

void case_rings_len_ffffffff(void)
{
	struct vblk b;
	open_disk(&b);
	expect_middle_refused(&b, (uint64_t)rt_alloc(512, 512), 0xffffffffu, F_WRITE);
	struct rq r2 = new_read();
	b.q.desc[0] = D(r2.h, 0xffffffffu, F_NEXT, 1);
	b.q.desc[1] = D(r2.st, 1, F_WRITE, 0);
	expect_refused(&b, 0, r2.st);
}

/* Buffers on the virtio windows, the IOAPIC, the hole: never memory. */
void case_rings_buffer_in_mmio(void)
{
	struct vblk b;
	open_disk(&b);
	static const uint64_t addrs[] = { LAYOUT_VIRTIO_MMIO_START, LAYOUT_IOAPIC_ADDR,
					  LAYOUT_MMIO_HOLE_START, LAYOUT_LAPIC_ADDR };
	for (unsigned int i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		expect_middle_refused(&b, addrs[i], 512, F_WRITE);
	}
	/* A buffer straddling the end of RAM. */
	expect_middle_refused(&b, rt_ram.low_end - 256, 512, F_WRITE);
}

/* Readable descriptors after writable ones (2.7.4.2). */
void case_rings_write_before_read(void)
{
	struct vblk b;
	open_disk(&b);
	struct rq r = new_read();
	b.q.desc[0] = D(r.data, 512, F_WRITE | F_NEXT, 1);
	b.q.desc[1] = D(r.h, 16, F_NEXT, 2);
	b.q.desc[2] = D(r.st, 1, F_WRITE, 0);
	expect_refused(&b, 0, r.st);
}

/*
 * The sum of a chain's lengths past 2^32: an indirect table of QSIZE-1 overlapping 40 MiB
 * buffers is refused... with QSIZE 8 that is 280 MiB, so use a queue of 128 and 110 entries.
 */
void case_rings_total_len_overflow(void)
{
	struct vblk b;
	vblk_open(&b, 0, 128);
	vblk_expect_image(&b, 0, 1);
	uint64_t big = 40ULL << 20;
	CHECK(0x1000000 + big <= rt_ram.low_end, "RAM too small for the overlapping buffers", 0);
	struct rq r = new_read();
	struct vring_desc *t = rt_alloc(110 * 16, 16);
	t[0] = D(r.h, 16, F_NEXT, 1);
	for (uint16_t i = 1; i < 109; i++)
		t[i] = (struct vring_desc){ 0x1000000, (uint32_t)big, F_WRITE | F_NEXT,
					    (uint16_t)(i + 1) };
	t[109] = D(r.st, 1, F_WRITE, 0);
	b.q.desc[0] = D(t, 110 * 16, F_IND, 0);
	dq_submit(&b.q, 0);
	CHECK(vdev_wait_status(&b.d, VIRTIO_CONFIG_S_NEEDS_RESET, 5000),
	      "a chain of more than 4 GiB did not set NEEDS_RESET", 0);
	CHECK(*r.st == VBLK_NO_STATUS, "a chain of more than 4 GiB was executed", *r.st);
	vblk_restart(&b, 128);
	vblk_still_works(&b);
}

/* The driver scribbles on the used ring the device owns: the device keeps its own index. */
void case_rings_used_scribble(void)
{
	struct vblk b;
	open_disk(&b);
	for (int i = 0; i < 5; i++) {
		*(volatile uint16_t *)&b.q.used->idx = 0x7777;
		b.q.used->ring[0].id = 0xdeadbeef;
		b.q.used->flags = 0xffff;
		/* Our own consumer follows the device's index, not the scribble. */
		b.q.last_used = 0x7777;
		struct rq r = new_read();
		struct vbuf bufs[3] = { { r.h, 16, false }, { r.data, 512, true }, { r.st, 1, true } };
		dq_submit(&b.q, dq_chain(&b.q, bufs, 3));
		uint64_t deadline = rt_deadline_ms(10000);
		while (*(volatile uint16_t *)&b.q.used->idx == 0x7777 && !rt_past(deadline))
			rt_relax();
		CHECK(b.q.used->idx == (uint16_t)(2 + i), "the device took the driver's used idx",
		      b.q.used->idx);
		CHECK(*r.st == 0, "request after a scribble", *r.st);
		b.q.last_used = b.q.used->idx;
	}
	vblk_still_works(&b);
}

/* EVENT_IDX negotiated, then used_event / avail flags full of garbage: requests still complete. */
void case_rings_event_idx_garbage(void)
{
	struct vblk b;
	vblk_open(&b, 0, QSIZE);
	vdev_reset(&b.d);
	vdev_negotiate(&b.d, 1ULL << VIRTIO_RING_F_EVENT_IDX);
	dq_setup(&b.d, &b.q, 0, QSIZE);
	CHECK(vdev_driver_ok(&b.d) & VIRTIO_CONFIG_S_DRIVER_OK, "DRIVER_OK with EVENT_IDX", 0);
	vblk_expect_image(&b, 0, 1);
	static const uint16_t evs[] = { 0xffff, 0, 0x8000, 3 };
	for (unsigned int i = 0; i < 4; i++) {
		b.q.avail->ring[QSIZE] = evs[i]; /* used_event */
		b.q.avail->flags = evs[i];
		vblk_expect_image(&b, i, 1);
		/* Kicks with nothing new, many times. */
		for (int k = 0; k < 50; k++)
			dq_notify(&b.q);
	}
	vblk_still_works(&b);
}

/* Zero-length descriptors inside a chain are skipped, the request served. */
void case_rings_zero_len_descs(void)
{
	struct vblk b;
	open_disk(&b);
	struct rq r = new_read();
	struct vbuf bufs[6] = { { r.h, 16, false }, { r.h, 0, false }, { r.data, 0, true },
				{ r.data, 512, true }, { (void *)0xd0000000, 0, true },
				{ r.st, 1, true } };
	CHECK(dq_roundtrip(&b.q, bufs, 6) == 513, "a chain with empty descriptors", 0);
	CHECK(*r.st == 0 && r.data[1] == img_byte(513), "its data", *r.st);
	vblk_still_works(&b);
}
