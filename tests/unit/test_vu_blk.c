/* test_vu_blk.c: virtio-blk over the vhost-user back-end, driven by a test front-end on a socketpair. */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "devices/blk/blk.h"
#include "devices/vhost_user/vu_backend.h"
#include "tests/support/spec.h"
#include "tests/unit/tap.h"
#include "tests/support/vu_front.h"
#include "vmm/seccomp.h"

/* The queue workers' confinement in ringvm (vmm/seccomp.h), in kill mode. */
static struct seccomp_confinement worker_role = { SECCOMP_MODE_KILL, SECCOMP_ROLE_WORKER, -1 };

#define RAM (16u << 20)
#define QSIZE 256
#define DISK_BYTES (4u << 20)

static struct vu_backend *backend;
static int disk_fd = -1;
static char path[64];

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 9));
}

/* A front-end up to a running ring 0 (and 1 when two). */
static bool up(struct vu_front *f, bool ack, unsigned int rings, bool seal)
{
	if (vuf_open(f, backend, RAM, seal) || vuf_negotiate(f, ack))
		return false;
	for (unsigned int q = 0; q < rings; q++)
		if (vuf_ring(f, q, QSIZE, 0))
			return false;
	return true;
}

static void test_negotiation_and_io(void)
{
	struct vu_front f;
	uint64_t v = 0;
	TAP_CHECK(vuf_open(&f, backend, RAM, true) == 0, "front-end connected over a socketpair");
	TAP_CHECK(vuf_get_u64(&f, VU_GET_FEATURES, &v) == 0 && (v & (1ULL << VIRTIO_F_VERSION_1)) &&
			  (v & (1ULL << VU_F_PROTOCOL_FEATURES)) && (v & (1ULL << VIRTIO_BLK_F_MQ)),
		  "GET_FEATURES: VERSION_1, PROTOCOL_FEATURES and the device's own (MQ)");
	TAP_CHECK(vuf_get_u64(&f, VU_GET_PROTOCOL_FEATURES, &v) == 0 &&
			  v == ((1ULL << VU_PROTOCOL_F_MQ) | (1ULL << VU_PROTOCOL_F_REPLY_ACK) |
				(1ULL << VU_PROTOCOL_F_CONFIG) | (1ULL << VU_PROTOCOL_F_RESET_DEVICE)),
		  "GET_PROTOCOL_FEATURES: MQ, REPLY_ACK, CONFIG, RESET_DEVICE");
	TAP_CHECK(vuf_negotiate(&f, true) == 0, "features, owner and memory table accepted (acked)");
	TAP_CHECK(vuf_get_u64(&f, VU_GET_QUEUE_NUM, &v) == 0 && v == 2, "GET_QUEUE_NUM: 2");
	struct vu_config c = { .offset = 0, .size = sizeof(struct virtio_blk_config) };
	struct virtio_blk_config bc;
	int n = vuf_send(&f, VU_GET_CONFIG, 0, &c, VU_CONFIG_HDR_SIZE + c.size, NULL, 0) ? -1
		: vuf_recv(&f, VU_GET_CONFIG, &c, sizeof(c));
	memcpy(&bc, c.region, sizeof(bc));
	TAP_CHECK(n == (int)(VU_CONFIG_HDR_SIZE + sizeof(bc)) &&
			  le64toh(bc.capacity) == DISK_BYTES / 512 && le16toh(bc.num_queues) == 2,
		  "GET_CONFIG: capacity and num_queues from the device");
	TAP_CHECK(vuf_ring(&f, 0, QSIZE, 0) == 0 && vuf_ring(&f, 1, QSIZE, 0) == 0,
		  "rings 0 and 1 set up and enabled");

	uint8_t want[4096], got[4096];
	struct vuf_blk_req io;
	fill(want, sizeof(want), 1);
	TAP_CHECK(vuf_blk(&f, 0, &io, VIRTIO_BLK_T_OUT, 8, sizeof(want), want) == VIRTIO_BLK_S_OK,
		  "write 4 KiB at sector 8 through ring 0");
	TAP_CHECK(vuf_wait_call(&f, 0, 2000) > 0, "the call eventfd was signalled");
	TAP_CHECK(pread(disk_fd, got, sizeof(got), 8 * 512) == sizeof(got) &&
			  !memcmp(got, want, sizeof(got)),
		  "the host file holds the bytes");
	TAP_CHECK(vuf_blk(&f, 1, &io, VIRTIO_BLK_T_IN, 8, sizeof(got), NULL) == VIRTIO_BLK_S_OK &&
			  !memcmp(f.ram + io.data, want, sizeof(want)),
		  "read back through ring 1: same bytes in guest memory");

	/* GET_VRING_BASE while requests are queued: the ring stops, drained, at a consistent index. */
	struct vuf_blk_req many[20];
	uint8_t blk[20][512];
	uint16_t before = f.ring[0].avail_idx;
	for (unsigned int i = 0; i < 20; i++) {
		fill(blk[i], 512, 10 + i);
		vuf_blk_put(&f, 0, &many[i], VIRTIO_BLK_T_OUT, 100 + i, 512, blk[i]);
	}
	vuf_kick(&f, 0);
	struct vu_vring_state s = { 0, 0 };
	n = vuf_send(&f, VU_GET_VRING_BASE, 0, &s, sizeof(s), NULL, 0) ? -1
		: vuf_recv(&f, VU_GET_VRING_BASE, &s, sizeof(s));
	uint16_t base = (uint16_t)s.num;
	TAP_CHECK(n == sizeof(s) && s.index == 0 && base >= before && base <= before + 20,
		  "GET_VRING_BASE mid-stream answers an index within what was published");
	TAP_CHECK(fake_ring_used_idx(&f.ring[0]) == base,
		  "the stopped ring is drained: used idx == the returned base");
	struct vu_vring_state nb = { 0, base };
	uint64_t idx0 = 0;
	TAP_CHECK(vuf_request(&f, VU_SET_VRING_BASE, &nb, sizeof(nb), NULL, 0) == 0 &&
			  vuf_request(&f, VU_SET_VRING_KICK, &idx0, sizeof(idx0), &f.kick[0], 1) == 0,
		  "SET_VRING_BASE + SET_VRING_KICK restart the ring");
	vuf_kick(&f, 0);
	bool all = vuf_wait_used(&f, 0, (uint16_t)(before + 20));
	unsigned int ok = 0, once = 0, count[QSIZE] = { 0 };
	uint32_t id, len;
	while (fake_ring_used(&f.ring[0], &id, &len))
		if (id < QSIZE)
			count[id]++;
	for (unsigned int i = 0; i < 20; i++) {
		uint8_t disk[512];
		once += count[many[i].head] == 1;
		ok += f.ram[many[i].status] == VIRTIO_BLK_S_OK &&
		      pread(disk_fd, disk, 512, (100 + i) * 512) == 512 && !memcmp(disk, blk[i], 512);
	}
	TAP_CHECK(all && once == 20, "every request before and after the stop completed exactly once");
	TAP_CHECK(ok == 20, "all 20 writes are on disk");
	vuf_close(&f);
	TAP_CHECK(f.result == 0, "front-end close: the back-end ends the connection cleanly");
}

/* What is waiting on an eventfd now (non-blocking: 0 when nothing). */
static uint64_t drain(int fd)
{
	uint64_t v = 0;
	return read(fd, &v, sizeof(v)) == sizeof(v) ? v : 0;
}

/* One 4 KiB read on ring 0 that asks for its interrupt (used_event at the current used idx). */
static bool read_asking_call(struct vu_front *f)
{
	struct vuf_blk_req io;
	fake_ring_set_used_event(&f->ring[0], fake_ring_used_idx(&f->ring[0]));
	return vuf_blk(f, 0, &io, VIRTIO_BLK_T_IN, 8, 4096, NULL) == VIRTIO_BLK_S_OK;
}

/*
 * SET_VRING_CALL on a running ring (QEMU sends it when the guest masks a vector): the worker writes
 * the ring's call eventfd through its io_uring, on a fd number fixed for the back-end's life, so
 * the next interrupt reaches the new eventfd and the old one hears nothing more; with NOFD (the
 * front-end polls) neither does.
 */
static void test_call_swap(void)
{
	struct vu_front f;
	if (!up(&f, true, 1, true)) {
		TAP_CHECK(false, "front-end up for the call swap");
		return;
	}
	uint64_t idx0 = 0, nofd = VU_VRING_NOFD_MASK;
	int fresh = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	TAP_CHECK(read_asking_call(&f) && vuf_wait_call(&f, 0, 2000) > 0,
		  "a request asking for its interrupt signals the call eventfd");
	TAP_CHECK(fresh >= 0 && vuf_request(&f, VU_SET_VRING_CALL, &idx0, sizeof(idx0), &fresh, 1) == 0,
		  "SET_VRING_CALL on the running ring: accepted");
	drain(f.call[0]);
	bool done = read_asking_call(&f);
	uint64_t got = vuf_wait_fd(fresh, 2000);
	TAP_CHECK(done && got > 0 && drain(f.call[0]) == 0,
		  "after the swap the interrupt reaches the new eventfd, not the old one");
	TAP_CHECK(vuf_request(&f, VU_SET_VRING_CALL, &nofd, sizeof(nofd), NULL, 0) == 0,
		  "SET_VRING_CALL with NOFD on the running ring: accepted");
	done = read_asking_call(&f);
	/* Back to the first eventfd, and one more request: its interrupt is written after the NOFD
	   request's (one ring, in order), so by the time it arrives the other one went wherever it
	   went. */
	done = vuf_request(&f, VU_SET_VRING_CALL, &idx0, sizeof(idx0), &f.call[0], 1) == 0 && done &&
	       read_asking_call(&f);
	got = vuf_wait_call(&f, 0, 2000);
	TAP_CHECK(done && got == 1 && drain(fresh) == 0,
		  "NOFD: its request completes and signals no eventfd of the front-end");
	vuf_close(&f);
	if (fresh >= 0)
		close(fresh);
}

static void test_reconnect(int fds_before)
{
	struct vu_front f;
	uint8_t want[4096];
	struct vuf_blk_req io;
	fill(want, sizeof(want), 1);
	TAP_CHECK(vuf_count_fds() == fds_before, "no fd left behind by the first connection");
	TAP_CHECK(up(&f, false, 1, true), "a second front-end connects and sets up from scratch");
	TAP_CHECK(vuf_blk(&f, 0, &io, VIRTIO_BLK_T_IN, 8, sizeof(want), NULL) == VIRTIO_BLK_S_OK &&
			  !memcmp(f.ram + io.data, want, sizeof(want)),
		  "it reads what the first one wrote");
	vuf_close(&f);
}

/* A refused message with REPLY_ACK: failure reply, the connection goes on. */
static void test_refused_with_ack(void)
{
	struct vu_front f;
	if (!up(&f, true, 1, true)) {
		TAP_CHECK(false, "front-end with REPLY_ACK up");
		vuf_close(&f);
		return;
	}
	uint32_t four = 0;
	TAP_CHECK(vuf_request(&f, VU_SET_FEATURES, &four, 4, NULL, 0) == 1,
		  "SET_FEATURES with 4 bytes: failure reply");
	int many[10];
	for (unsigned int i = 0; i < 10; i++)
		many[i] = dup(f.call[0]);
	uint64_t idx = 0;
	TAP_CHECK(vuf_request(&f, VU_SET_VRING_CALL, &idx, sizeof(idx), many, 10) == 1,
		  "SET_VRING_CALL with 10 fds: failure reply");
	for (unsigned int i = 0; i < 10; i++)
		close(many[i]);
	struct vu_memory m = { .nregions = 2 };
	m.regions[0] = (struct vu_mem_region){ 0, RAM / 2, (uint64_t)(uintptr_t)f.ram, 0 };
	m.regions[1] = (struct vu_mem_region){ RAM / 4, RAM / 2,
					       (uint64_t)(uintptr_t)f.ram + RAM / 2, RAM / 2 };
	int two[2] = { f.memfd, f.memfd };
	TAP_CHECK(vuf_request(&f, VU_SET_MEM_TABLE, &m, 8 + 2 * sizeof(m.regions[0]), two, 2) == 1,
		  "SET_MEM_TABLE with overlapping regions: failure reply");
	m.nregions = 1;
	TAP_CHECK(vuf_request(&f, VU_SET_MEM_TABLE, &m, 8 + sizeof(m.regions[0]), &f.kick[1], 1) == 1,
		  "SET_MEM_TABLE whose region fd is an eventfd, not a file: failure reply");
	m.regions[0].memory_size = RAM + 4096;
	TAP_CHECK(vuf_request(&f, VU_SET_MEM_TABLE, &m, 8 + sizeof(m.regions[0]), two, 1) == 1,
		  "SET_MEM_TABLE with a region beyond its file's end: failure reply");
	m.regions[0] = (struct vu_mem_region){ 0, RAM - 4096, (uint64_t)(uintptr_t)f.ram, 1 };
	TAP_CHECK(vuf_request(&f, VU_SET_MEM_TABLE, &m, 8 + sizeof(m.regions[0]), two, 1) == 1,
		  "SET_MEM_TABLE whose mmap_offset puts the running ring's fields on odd host "
		  "addresses: failure reply");
	m.regions[0] = (struct vu_mem_region){ 0, RAM / 2, (uint64_t)(uintptr_t)f.ram + RAM / 2,
					       RAM / 2 };
	TAP_CHECK(vuf_request(&f, VU_SET_MEM_TABLE, &m, 8 + sizeof(m.regions[0]), two, 1) == 1,
		  "SET_MEM_TABLE that leaves the running ring outside it: failure reply");
	struct vu_vring_addr a = { .index = 1,
				   .desc_user_addr = (uint64_t)(uintptr_t)f.ram + RAM - 64,
				   .avail_user_addr = (uint64_t)(uintptr_t)f.ram + 0x2000,
				   .used_user_addr = (uint64_t)(uintptr_t)f.ram + 0x3000 };
	struct vu_vring_state num1 = { 1, QSIZE };
	TAP_CHECK(vuf_request(&f, VU_SET_VRING_NUM, &num1, sizeof(num1), NULL, 0) == 0 &&
			  vuf_request(&f, VU_SET_VRING_ADDR, &a, sizeof(a), NULL, 0) == 1,
		  "SET_VRING_ADDR with a descriptor table running off guest memory: failure reply");
	struct vu_vring_state bad = { 7, QSIZE };
	TAP_CHECK(vuf_request(&f, VU_SET_VRING_NUM, &bad, sizeof(bad), NULL, 0) == 1,
		  "SET_VRING_NUM on queue 7 of 2: failure reply");
	struct vu_vring_state run = { 0, 64 };
	TAP_CHECK(vuf_request(&f, VU_SET_VRING_NUM, &run, sizeof(run), NULL, 0) == 1,
		  "SET_VRING_NUM on a running ring: failure reply");
	TAP_CHECK(vuf_request(&f, 99, NULL, 0, NULL, 0) == 1, "unknown request 99: failure reply");
	uint64_t idx1 = 1;
	TAP_CHECK(vuf_request(&f, VU_SET_VRING_KICK, &idx1, sizeof(idx1), &f.memfd, 1) == 1,
		  "SET_VRING_KICK with a file instead of an eventfd: failure reply");
	TAP_CHECK(vuf_request(&f, VU_SET_VRING_CALL, &idx1, sizeof(idx1), &f.sock, 1) == 1,
		  "SET_VRING_CALL with a socket instead of an eventfd: failure reply");
	uint64_t nofd = 1 | VU_VRING_NOFD_MASK;
	TAP_CHECK(vuf_request(&f, VU_SET_VRING_KICK, &nofd, sizeof(nofd), NULL, 0) == 1,
		  "SET_VRING_KICK without an fd (polling): failure reply");
	uint64_t legacy = 1ULL << VU_F_PROTOCOL_FEATURES;
	TAP_CHECK(vuf_request(&f, VU_SET_FEATURES, &legacy, sizeof(legacy), NULL, 0) == 1,
		  "SET_FEATURES without VERSION_1: failure reply");
	struct vu_config c = { .offset = 0, .size = 4 };
	TAP_CHECK(vuf_request(&f, VU_SET_CONFIG, &c, VU_CONFIG_HDR_SIZE + 4, NULL, 0) == 1,
		  "SET_CONFIG on a read-only config space: failure reply");
	c = (struct vu_config){ .offset = sizeof(struct virtio_blk_config) - 4, .size = 16 };
	TAP_CHECK(vuf_send(&f, VU_GET_CONFIG, 0, &c, VU_CONFIG_HDR_SIZE + 16, NULL, 0) == 0 &&
			  vuf_recv(&f, VU_GET_CONFIG, &c, sizeof(c)) == 0,
		  "GET_CONFIG beyond the config space: an empty reply (the spec's error)");
	uint8_t want[4096];
	struct vuf_blk_req io;
	fill(want, sizeof(want), 1);
	TAP_CHECK(vuf_blk(&f, 0, &io, VIRTIO_BLK_T_IN, 8, sizeof(want), NULL) == VIRTIO_BLK_S_OK &&
			  !memcmp(f.ram + io.data, want, sizeof(want)),
		  "after every refusal the ring still serves");

	/* A broken ring: the avail index jumps past the ring size -> the ring's error eventfd. */
	fake_ring_set_avail_idx(&f.ring[0], (uint16_t)(f.ring[0].avail_idx + QSIZE + 1));
	vuf_kick(&f, 0);
	TAP_CHECK(vuf_wait_err(&f, 0, 2000) > 0, "a broken ring signals its error eventfd (NEEDS_RESET)");
	uint64_t v;
	TAP_CHECK(vuf_get_u64(&f, VU_GET_FEATURES, &v) == 0, "the connection is still up");
	vuf_close(&f);
}

/* Without REPLY_ACK (or when a reply is impossible) a bad message closes the connection. */
static void test_closed(int fds_before)
{
	struct {
		const char *what;
		uint32_t request, flags, size;
		bool needs_setup;
	} cases[] = {
		{ "SET_VRING_NUM on queue 9 without REPLY_ACK", VU_SET_VRING_NUM, 0, 8, true },
		{ "a header announcing 64 KiB of payload", VU_SET_FEATURES, 0, 65536, false },
		{ "protocol version 2", VU_GET_FEATURES, 2, 0, false },
		{ "GET_VRING_BASE with a 4-byte payload", VU_GET_VRING_BASE, 0, 4, false },
	};
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vu_front f;
		bool ok = vuf_open(&f, backend, RAM, true) == 0 &&
			  (!cases[i].needs_setup || vuf_negotiate(&f, false) == 0);
		struct vu_vring_state s = { 9, QSIZE };
		if (cases[i].size > sizeof(s)) {
			/* Only the header: the back-end must refuse before reading any payload. */
			struct vu_header h = { cases[i].request, VU_VERSION, cases[i].size };
			ok = ok && write(f.sock, &h, sizeof(h)) == sizeof(h);
		} else {
			ok = ok && vuf_send(&f, cases[i].request, cases[i].flags, &s, cases[i].size,
					    NULL, 0) == 0;
		}
		uint64_t v;
		ok = ok && vuf_recv(&f, cases[i].request, &v, sizeof(v)) == -ECONNRESET;
		char what[128];
		snprintf(what, sizeof(what), "%s: connection closed by the back-end", cases[i].what);
		TAP_CHECK(ok && vuf_join(&f) == -EPROTO, what);
		vuf_close(&f);
	}
	/* A message cut in the middle: the header promises 8 bytes, the front-end goes away. */
	struct vu_front f;
	struct vu_header h = { VU_SET_FEATURES, VU_VERSION, 8 };
	bool ok = vuf_open(&f, backend, RAM, true) == 0 && write(f.sock, &h, sizeof(h)) == sizeof(h);
	close(f.sock);
	f.sock = -1;
	TAP_CHECK(ok && vuf_join(&f) == -EPROTO, "a message cut short: the back-end drops it");
	vuf_close(&f);
	TAP_CHECK(vuf_count_fds() == fds_before, "no fd leaked by refused messages and closes");
}

/* The front-end shrinks guest memory under our mapping: SIGBUS is caught, the connection dropped. */
static void test_shrunk_memory(void)
{
	struct vu_front f;
	bool ok = up(&f, true, 1, false);
	TAP_CHECK(ok, "front-end with an unsealed memfd up");
	if (!ok) {
		vuf_close(&f);
		return;
	}
	/* The test must not touch its own mapping from here on: it would fault too. */
	TAP_CHECK(ftruncate(f.memfd, 0) == 0, "the front-end truncates its memfd to 0");
	vuf_kick(&f, 0);
	TAP_CHECK(vuf_join(&f) == -EPROTO,
		  "the worker's fault was caught and the back-end dropped the connection");
	munmap(f.ram, f.ram_size);
	f.ram = NULL;
	vuf_close(&f);
	struct vu_front g;
	uint8_t want[4096];
	struct vuf_blk_req io;
	fill(want, sizeof(want), 1);
	TAP_CHECK(up(&g, true, 1, true) &&
			  vuf_blk(&g, 0, &io, VIRTIO_BLK_T_IN, 8, sizeof(want), NULL) ==
				  VIRTIO_BLK_S_OK &&
			  !memcmp(g.ram + io.data, want, sizeof(want)),
		  "the process is alive and serves the next front-end");
	vuf_close(&g);
}

int main(void)
{
	snprintf(path, sizeof(path), "/tmp/ringvm-vu-blk.XXXXXX");
	disk_fd = mkstemp(path);
	struct blk_config cfg;
	char spec[128];
	snprintf(spec, sizeof(spec), "%s,queues=2", path);
	struct blk_dev *blk = NULL;
	bool ok = disk_fd >= 0 && ftruncate(disk_fd, DISK_BYTES) == 0 &&
		  spec_blk_config(spec, &cfg, NULL) == 0 && blk_create(&cfg, 1, &blk) == 0 &&
		  vu_backend_create(blk_virtio_dev(blk), "test", &backend) == 0 &&
		  vu_backend_prepare(backend, seccomp_confine_hook, &worker_role) == 0;
	TAP_CHECK(ok, "virtio-blk on a 4 MiB file, on a vhost-user back-end");
	if (!ok)
		return tap_done();
	int fds = vuf_count_fds();
	test_negotiation_and_io();
	test_call_swap();
	test_reconnect(fds);
	test_refused_with_ack();
	test_closed(fds);
	test_shrunk_memory();
	TAP_CHECK(vuf_count_fds() == fds, "no fd leaked overall");
	vu_backend_destroy(backend);
	blk_destroy(blk);
	close(disk_fd);
	unlink(path);
	return tap_done();
}
