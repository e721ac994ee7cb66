/*
 * vu_session.c: the vhost-user session fuzzers' front-end (vu_session.h): a session of messages,
 * rings and chains from the input, against the back-end of whichever device the target made.
 *
 * Each input is one session of a front-end (tests/support/vu_front.c) on a socketpair: messages
 * whose request, fields and fds the input chooses (the bring-up QEMU does, or any one message of
 * it out of order, with wrong fds, rings outside memory, a second memory table while rings run),
 * chains the input shapes in the rings, the device's own requests, kicks, and a hang-up at the
 * end, or in the middle of it. The device behind the socket runs on its real queue workers and
 * io_uring, so a ring that starts really runs while the next messages arrive.
 *
 * What must hold whatever the front-end sends (a broken promise traps: libFuzzer reports it):
 *   - no crash and no sanitizer report (ASan, UBSan);
 *   - every message that asks for an answer gets one, or the connection is closed: never a wait
 *     of 2 s for a reply that does not come (a hang);
 *   - once the front-end hangs up, the connection thread ends, with 0 or -EPROTO;
 *   - no fd is left behind by the session.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "devices/vhost_user/vu_decode.h"
#include "tests/fuzz/vu_session.h"

#define MAX_OPS 48 /* per session, so that each input runs in bounded time */

uint64_t vs_take(struct vs_cursor *c, unsigned int bytes)
{
	uint64_t v = 0;
	for (unsigned int i = 0; i < bytes && c->n; i++, c->p++, c->n--)
		v |= (uint64_t)*c->p << (8 * i);
	return v;
}

/* What a correct front-end sends, a chosen wrong value, the right one plus up to 255, or any
   value at all. */
uint64_t vs_pick(struct vs_cursor *c, uint64_t good, uint64_t other)
{
	switch (vs_take(c, 1) & 3) {
	case 0:
		return good;
	case 1:
		return other;
	case 2:
		return good + vs_take(c, 1);
	default:
		return vs_take(c, 8);
	}
}

/* The fd a message carries: the right one, another of ours, or a kind the rule refuses. */
static int pick_fd(struct vs_cursor *c, struct vu_front *f, int right)
{
	unsigned int q = vs_take(c, 1);
	switch (q & 7) {
	case 0:
	case 1:
	case 2:
		return right;
	case 3:
		return f->memfd;
	case 4:
		return f->kick[(q >> 3) % VUF_MAX_QUEUES];
	case 5:
		return f->call[(q >> 3) % VUF_MAX_QUEUES];
	case 6:
		return f->sock; /* a socket: neither an eventfd nor mappable memory */
	default:
		return -1; /* none */
	}
}

/* The verdict on one exchange: go on (0), the connection is gone (1); a hang traps. */
static int outcome(int err)
{
	if (err == -ETIMEDOUT)
		__builtin_trap(); /* a reply the back-end owed never came */
	return err < 0 ? 1 : 0;
}

static int send_req(struct vu_front *f, uint32_t request, const void *payload, uint32_t len,
		    int fd)
{
	return outcome(vuf_request(f, request, payload, len, &fd, fd >= 0 ? 1 : 0));
}

static int op_mem_table(struct vs_cursor *c, struct vu_front *f)
{
	struct vu_memory m;
	memset(&m, 0, sizeof(m));
	m.nregions = (uint32_t)vs_pick(c, 1, 2);
	unsigned int n = m.nregions <= VU_MAX_MEM_REGIONS ? m.nregions : VU_MAX_MEM_REGIONS;
	for (unsigned int i = 0; i < n; i++) {
		uint64_t half = i ? VS_RAM / 2 : 0;
		m.regions[i].guest_phys_addr = vs_pick(c, half, VS_RAM);
		m.regions[i].memory_size = vs_pick(c, n > 1 ? VS_RAM / 2 : VS_RAM, 0);
		m.regions[i].userspace_addr = vs_pick(c, (uint64_t)(uintptr_t)f->ram + half, 0);
		m.regions[i].mmap_offset = vs_pick(c, half, VS_RAM);
	}
	int fds[VU_MAX_MEM_REGIONS];
	unsigned int nr_fds = (unsigned int)vs_pick(c, n, n - 1) % (VU_MAX_MEM_REGIONS + 1);
	for (unsigned int i = 0; i < nr_fds; i++) {
		fds[i] = pick_fd(c, f, f->memfd);
		if (fds[i] < 0)
			fds[i] = f->memfd;
	}
	uint32_t len = (uint32_t)(8 + n * sizeof(m.regions[0]));
	return outcome(vuf_request(f, VU_SET_MEM_TABLE, &m, len, fds, nr_fds));
}

static int op_vring_state(struct vs_cursor *c, struct vu_front *f)
{
	static const uint32_t req[] = { VU_SET_VRING_NUM, VU_SET_VRING_BASE, VU_GET_VRING_BASE,
					VU_SET_VRING_ENABLE };
	uint32_t r = req[vs_take(c, 1) % 4];
	unsigned int q = vs_take(c, 1) % VS_QUEUES;
	uint32_t index = (uint32_t)vs_pick(c, q, VS_QUEUES);
	unsigned int log2 = vs_take(c, 1) % 9;
	struct vu_vring_state s = { index, (uint32_t)vs_pick(c, 1u << log2, 0) };
	if (r != VU_GET_VRING_BASE)
		return send_req(f, r, &s, sizeof(s), -1);
	int err = vuf_send(f, r, 0, &s, sizeof(s), NULL, 0);
	if (!err) {
		struct vu_vring_state back;
		err = vuf_recv(f, r, &back, sizeof(back));
	}
	return outcome(err);
}

static int op_vring_addr(struct vs_cursor *c, struct vu_front *f)
{
	unsigned int q = vs_take(c, 1) % VS_QUEUES;
	const struct fake_ring *r = &f->ring[q];
	uint64_t base = (uint64_t)(uintptr_t)f->ram;
	struct vu_vring_addr a;
	memset(&a, 0, sizeof(a));
	a.index = (uint32_t)vs_pick(c, q, VUF_MAX_QUEUES);
	a.flags = (uint32_t)vs_pick(c, 0, 1);
	a.desc_user_addr = vs_pick(c, base + r->desc, base + VS_RAM - 8);
	a.used_user_addr = vs_pick(c, base + r->used, base - 4096);
	a.avail_user_addr = vs_pick(c, base + r->avail, base + 1);
	a.log_guest_addr = vs_take(c, 8);
	return send_req(f, VU_SET_VRING_ADDR, &a, sizeof(a), -1);
}

static int op_vring_fd(struct vs_cursor *c, struct vu_front *f)
{
	static const uint32_t req[] = { VU_SET_VRING_KICK, VU_SET_VRING_CALL, VU_SET_VRING_ERR };
	unsigned int k = vs_take(c, 1) % 3, q = vs_take(c, 1) % VS_QUEUES;
	int *right[] = { f->kick, f->call, f->err };
	int fd = pick_fd(c, f, right[k][q]);
	uint64_t idx = vs_pick(c, q, q | (fd < 0 ? 0 : VU_VRING_NOFD_MASK));
	if (fd < 0)
		idx |= VU_VRING_NOFD_MASK;
	return send_req(f, req[k], &idx, sizeof(idx), fd);
}

static int op_config(struct vs_cursor *c, struct vu_front *f)
{
	struct {
		uint32_t offset, size, flags;
		uint8_t data[64];
	} cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.offset = (uint32_t)vs_pick(c, 0, 60);
	cfg.size = (uint32_t)vs_pick(c, 8, 64) % 65;
	cfg.flags = (uint32_t)vs_take(c, 4);
	uint32_t len = VU_CONFIG_HDR_SIZE + cfg.size;
	if (vs_take(c, 1) & 1)
		return send_req(f, VU_SET_CONFIG, &cfg, len, -1);
	int err = vuf_send(f, VU_GET_CONFIG, 0, &cfg, len, NULL, 0);
	if (!err)
		err = vuf_recv(f, VU_GET_CONFIG, &cfg, sizeof(cfg));
	return outcome(err);
}

static int op_simple(struct vs_cursor *c, struct vu_front *f)
{
	static const uint32_t get[] = { VU_GET_FEATURES, VU_GET_PROTOCOL_FEATURES, VU_GET_QUEUE_NUM };
	static const uint32_t set[] = { VU_SET_OWNER, VU_RESET_OWNER, VU_RESET_DEVICE };
	unsigned int k = vs_take(c, 1) % 8;
	uint64_t v;
	if (k < 3)
		return outcome(vuf_get_u64(f, get[k], &v));
	if (k < 6)
		return send_req(f, set[k - 3], NULL, 0, -1);
	v = vs_pick(c, (1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_RING_F_INDIRECT_DESC) |
			    (1ULL << VIRTIO_RING_F_EVENT_IDX) | (1ULL << VU_F_PROTOCOL_FEATURES),
		 1ULL << VIRTIO_F_VERSION_1);
	if (k == 6)
		return send_req(f, VU_SET_FEATURES, &v, sizeof(v), -1);
	/* As QEMU sends it: never asking for an acknowledgement, which the features it sets may
	   turn off. */
	v &= 0xff;
	bool ack = f->ack;
	f->ack = false;
	int err = send_req(f, VU_SET_PROTOCOL_FEATURES, &v, sizeof(v), -1);
	f->ack = ack && (v & (1ULL << VU_PROTOCOL_F_REPLY_ACK));
	return err;
}

/* Descriptors the input writes (any index, address, length, flags, next), one head published. */
static int op_chain(struct vs_cursor *c, struct vu_front *f)
{
	unsigned int q = vs_take(c, 1) % VS_QUEUES;
	struct fake_ring *r = &f->ring[q];
	if (!r->size)
		return 0;
	unsigned int n = 1 + vs_take(c, 1) % 4;
	for (unsigned int i = 0; i < n; i++) {
		uint16_t idx = (uint16_t)(vs_take(c, 1) % r->size);
		uint64_t in_ram = vs_take(c, 3) % VS_RAM;
		uint64_t addr = vs_pick(c, in_ram, VS_RAM - 16);
		uint32_t small = 1 + (uint32_t)vs_take(c, 2);
		uint32_t len = (uint32_t)vs_pick(c, small, 16);
		uint16_t flags = (uint16_t)vs_take(c, 1) & 7;
		uint16_t next = (uint16_t)vs_take(c, 1);
		fake_ring_set_desc(r, idx, addr, len, flags, next);
	}
	uint16_t head = (uint16_t)(vs_take(c, 1) % r->size);
	fake_ring_publish(r, (uint16_t)vs_pick(c, head, r->size));
	vuf_kick(f, q);
	return 0;
}

/* Any request number, flags and payload: the last message of the session (no reply is read). */
static int op_raw(struct vs_cursor *c, struct vu_front *f)
{
	uint8_t payload[64];
	uint32_t request = (uint32_t)vs_take(c, 1), flags = (uint32_t)vs_pick(c, VU_VERSION, 0);
	uint32_t len = (uint32_t)vs_take(c, 1) % (sizeof(payload) + 1);
	for (uint32_t i = 0; i < len; i++)
		payload[i] = (uint8_t)vs_take(c, 1);
	int fd = pick_fd(c, f, f->memfd);
	(void)vuf_send(f, request, flags, payload, len, &fd, fd >= 0 ? 1 : 0);
	return 1;
}

/* QEMU's whole bring-up (features, owner, memory table), with or without REPLY_ACK. */
static int op_negotiate(struct vs_cursor *c, struct vu_front *f)
{
	return outcome(vuf_negotiate(f, vs_take(c, 1) & 1));
}

/* One ring's bring-up: NUM (a power of two up to 256), BASE, ADDR, KICK, CALL, ERR, ENABLE. */
static int op_ring(struct vs_cursor *c, struct vu_front *f)
{
	unsigned int q = vs_take(c, 1) % VS_QUEUES;
	uint16_t size = (uint16_t)(1u << (vs_take(c, 1) % 9));
	uint16_t start = (uint16_t)vs_take(c, 2);
	return outcome(vuf_ring(f, q, size, start));
}

void vs_run(struct vu_backend *backend, const uint8_t *data, size_t size, vs_op device_op)
{
	/* Counted for each session: between two, libFuzzer itself may open some (its symbolizer's
	   pipes). */
	int fds_before = vuf_count_fds();
	struct vs_cursor c = { data, size };
	struct vu_front f;
	if (vuf_open(&f, backend, VS_RAM, vs_take(&c, 1) & 1))
		abort();
	/* The order is the corpus's meaning: keep it. */
	const vs_op ops[] = { op_negotiate, op_ring,   op_mem_table, op_vring_state,
			      op_vring_addr, op_vring_fd, op_config, op_simple,
			      op_chain,     op_chain,  device_op,    op_raw };
	bool gone = false;
	for (unsigned int i = 0; i < MAX_OPS && c.n && !gone; i++)
		gone = ops[vs_take(&c, 1) % (sizeof(ops) / sizeof(ops[0]))](&c, &f) != 0;
	vuf_close(&f);
	if (f.result != 0 && f.result != -EPROTO)
		__builtin_trap(); /* the connection thread ended some other way */
	if (vuf_count_fds() != fds_before)
		__builtin_trap(); /* the session left an fd behind */
}
