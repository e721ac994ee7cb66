/* fake_ring.c: a driver-side split-ring builder over fake guest RAM (tests and fuzzers only). */
#include "tests/support/fake_ring.h"

#include <string.h>

/* Ring words are little-endian like the guest's (the host is x86-64). */
static void fr_w16(struct fake_ring *r, uint64_t gpa, uint16_t v)
{
	__atomic_store_n((uint16_t *)(r->ram + gpa), v, __ATOMIC_RELEASE);
}

static uint16_t fr_r16(const struct fake_ring *r, uint64_t gpa)
{
	return __atomic_load_n((const uint16_t *)(r->ram + gpa), __ATOMIC_ACQUIRE);
}

void fake_ring_init(struct fake_ring *r, uint8_t *ram, uint64_t ram_size, uint16_t size,
		    uint64_t base)
{
	memset(r, 0, sizeof(*r));
	r->ram = ram;
	r->ram_size = ram_size;
	r->size = size;
	r->desc = base;
	r->avail = base + 16ULL * size;
	r->used = (r->avail + 6ULL + 2ULL * size + 3) & ~3ULL;
	uint64_t end = r->used + 6ULL + 8ULL * size;
	memset(ram + base, 0, end - base);
	r->heap = (end + 15) & ~15ULL;
	r->heap_end = ram_size;
}

struct vq_layout fake_ring_layout(const struct fake_ring *r)
{
	return (struct vq_layout){
		.size = r->size,
		.desc_gpa = r->desc,
		.avail_gpa = r->avail,
		.used_gpa = r->used,
	};
}

uint64_t fake_ring_alloc(struct fake_ring *r, uint64_t len)
{
	uint64_t at = r->heap;
	if (len > r->heap_end - at)
		return 0;
	r->heap = (at + len + 15) & ~15ULL;
	if (r->heap > r->heap_end)
		r->heap = r->heap_end;
	memset(r->ram + at, 0, len);
	return at;
}

void *fake_ring_host(struct fake_ring *r, uint64_t gpa)
{
	return r->ram + (gpa < r->ram_size ? gpa : 0);
}

void fake_ring_set_table_desc(struct fake_ring *r, uint64_t table, uint16_t idx, uint64_t addr,
			      uint32_t len, uint16_t flags, uint16_t next)
{
	struct vring_desc d = { .addr = addr, .len = len, .flags = flags, .next = next };
	memcpy(r->ram + table + 16ULL * idx, &d, sizeof(d));
}

void fake_ring_set_desc(struct fake_ring *r, uint16_t idx, uint64_t addr, uint32_t len,
			uint16_t flags, uint16_t next)
{
	fake_ring_set_table_desc(r, r->desc, idx, addr, len, flags, next);
}

uint16_t fake_ring_add_chain(struct fake_ring *r, const struct fake_buf *bufs, unsigned int n)
{
	uint16_t head = r->next_desc;
	for (unsigned int i = 0; i < n; i++) {
		uint16_t idx = (uint16_t)((head + i) % r->size);
		uint16_t next = (uint16_t)((idx + 1) % r->size);
		uint16_t flags = (bufs[i].writable ? VRING_DESC_F_WRITE : 0) |
				 (i + 1 < n ? VRING_DESC_F_NEXT : 0);
		fake_ring_set_desc(r, idx, bufs[i].gpa, bufs[i].len, flags, next);
	}
	r->next_desc = (uint16_t)((head + n) % r->size);
	return head;
}

uint16_t fake_ring_add_indirect(struct fake_ring *r, const struct fake_buf *bufs, unsigned int n)
{
	uint64_t table = fake_ring_alloc(r, 16ULL * n);
	for (unsigned int i = 0; i < n; i++) {
		uint16_t flags = (bufs[i].writable ? VRING_DESC_F_WRITE : 0) |
				 (i + 1 < n ? VRING_DESC_F_NEXT : 0);
		fake_ring_set_table_desc(r, table, (uint16_t)i, bufs[i].gpa, bufs[i].len, flags,
					 (uint16_t)(i + 1));
	}
	uint16_t head = r->next_desc;
	fake_ring_set_desc(r, head, table, (uint32_t)(16 * n), VRING_DESC_F_INDIRECT, 0);
	r->next_desc = (uint16_t)((head + 1) % r->size);
	return head;
}

void fake_ring_publish(struct fake_ring *r, uint16_t head)
{
	fr_w16(r, r->avail + 4 + 2ULL * (r->avail_idx % r->size), head);
	r->avail_idx++;
	/* Release store: the entry and the descriptors are visible before the new idx. */
	fr_w16(r, r->avail + 2, r->avail_idx);
}

void fake_ring_set_avail_idx(struct fake_ring *r, uint16_t idx)
{
	r->avail_idx = idx;
	fr_w16(r, r->avail + 2, idx);
}

void fake_ring_set_avail_flags(struct fake_ring *r, uint16_t flags)
{
	fr_w16(r, r->avail, flags);
}

void fake_ring_set_used_event(struct fake_ring *r, uint16_t v)
{
	fr_w16(r, r->avail + 4 + 2ULL * r->size, v);
}

uint16_t fake_ring_used_idx(const struct fake_ring *r)
{
	return fr_r16(r, r->used + 2);
}

uint16_t fake_ring_used_flags(const struct fake_ring *r)
{
	return fr_r16(r, r->used);
}

uint16_t fake_ring_avail_event(const struct fake_ring *r)
{
	return fr_r16(r, r->used + 4 + 8ULL * r->size);
}

bool fake_ring_used(struct fake_ring *r, uint32_t *id, uint32_t *len)
{
	if (fake_ring_used_idx(r) == r->used_seen)
		return false;
	struct vring_used_elem e;
	memcpy(&e, r->ram + r->used + 4 + 8ULL * (r->used_seen % r->size), sizeof(e));
	*id = e.id;
	*len = e.len;
	r->used_seen++;
	return true;
}
