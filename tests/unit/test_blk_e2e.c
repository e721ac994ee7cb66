/* test_blk_e2e.c: virtio-blk end to end: transport, real workers and io_uring on a temp file. */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_mmio.h>

#include "devices/blk/blk.h"
#include "tests/support/fake_ring.h"
#include "tests/support/fake_vm.h"
#include "devices/virtio/mmio.h"
#include "tests/support/page_cache.h"
#include "tests/support/spec.h"
#include "tests/unit/tap.h"
#include "vmm/seccomp.h"

/* The queue workers' confinement in ringvm (vmm/seccomp.h), in kill mode. */
static struct seccomp_confinement worker_role = { SECCOMP_MODE_KILL, SECCOMP_ROLE_WORKER, -1 };

#define RAM_SIZE (16u << 20)
#define DISK_SECTORS 2048
#define QSIZE 256

struct disk {
	struct vm *vm;
	struct blk_dev *blk;
	struct virtio_mmio *mmio; /* attached by disk_open, as vmm/devices.c does */
	uint64_t base;
	uint32_t gsi;
	unsigned int nq;
	struct fake_ring rings[2];
};

static char path[64];
static int file_fd = -1;

static uint32_t rd32(struct disk *d, uint32_t off)
{
	return fake_vm_read32(d->vm, d->base + off);
}

static void wr32(struct disk *d, uint32_t off, uint32_t v)
{
	fake_vm_write32(d->vm, d->base + off, v);
}

/*
 * Create the disk, attach it on a virtio-mmio transport of a fresh fake VM (the device knows no VM),
 * and bring it up the way Linux's virtio_mmio + virtio_blk do.
 */
static int disk_open(struct disk *d, const char *spec)
{
	memset(d, 0, sizeof(*d));
	struct blk_config cfg;
	int err = spec_blk_config(spec, &cfg, NULL);
	if (err)
		return err;
	err = blk_create(&cfg, 1, &d->blk);
	if (err)
		return err;
	d->vm = fake_vm_create(RAM_SIZE);
	err = d->vm ? virtio_mmio_create(d->vm, blk_virtio_dev(d->blk), &d->mmio) : -ENOMEM;
	/* The queue workers under their real seccomp filter (kill mode), as in ringvm. */
	if (!err)
		err = virtio_mmio_prepare(d->mmio, seccomp_confine_hook, &worker_role);
	if (err) {
		blk_destroy(d->blk);
		fake_vm_destroy(d->vm);
		memset(d, 0, sizeof(*d));
		return err;
	}
	d->base = virtio_mmio_base(d->mmio);
	d->gsi = virtio_mmio_gsi(d->mmio);

	wr32(d, VIRTIO_MMIO_STATUS, 0);
	wr32(d, VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	wr32(d, VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	for (uint32_t sel = 0; sel < 2; sel++) {
		wr32(d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, sel);
		uint32_t f = rd32(d, VIRTIO_MMIO_DEVICE_FEATURES);
		wr32(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, sel);
		wr32(d, VIRTIO_MMIO_DRIVER_FEATURES, f); /* accept everything offered */
	}
	wr32(d, VIRTIO_MMIO_STATUS,
	     VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK);
	uint16_t nq;
	fake_vm_mmio_read(d->vm,
			  d->base + VIRTIO_MMIO_CONFIG +
				  offsetof(struct virtio_blk_config, num_queues),
			  &nq, 2);
	d->nq = nq < 2 ? nq : 2;
	uint8_t *ram = fake_vm_ram(d->vm);
	for (unsigned int q = 0; q < d->nq; q++) {
		struct fake_ring *fr = &d->rings[q];
		fake_ring_init(fr, ram, (q + 1) * (RAM_SIZE / 2), QSIZE,
			       q * (RAM_SIZE / 2) + 0x10000);
		wr32(d, VIRTIO_MMIO_QUEUE_SEL, q);
		wr32(d, VIRTIO_MMIO_QUEUE_NUM, QSIZE);
		wr32(d, VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)fr->desc);
		wr32(d, VIRTIO_MMIO_QUEUE_AVAIL_LOW, (uint32_t)fr->avail);
		wr32(d, VIRTIO_MMIO_QUEUE_USED_LOW, (uint32_t)fr->used);
		wr32(d, VIRTIO_MMIO_QUEUE_READY, 1);
	}
	wr32(d, VIRTIO_MMIO_STATUS,
	     VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK |
		     VIRTIO_CONFIG_S_DRIVER_OK);
	return (rd32(d, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_DRIVER_OK) ? 0 : -EIO;
}

/* The transport first: it stops and drains the workers, then the device's backend can go. */
static void disk_close(struct disk *d)
{
	virtio_mmio_destroy(d->mmio);
	blk_destroy(d->blk);
	fake_vm_destroy(d->vm);
}

/* One request in flight on queue q; buffers allocated in that queue's half of RAM. */
struct io {
	uint64_t hdr, data, status;
	uint32_t len;
	uint16_t head;
};

/* payload (len bytes, may be NULL) is copied in before the chain is published, as a driver must. */
static void io_prepare(struct disk *d, unsigned int q, struct io *io, uint32_t type,
		       uint64_t sector, uint32_t len, unsigned int data_offset, const void *payload)
{
	struct fake_ring *fr = &d->rings[q];
	io->hdr = fake_ring_alloc(fr, 16);
	io->data = len ? fake_ring_alloc(fr, len + 4096) + data_offset : 0;
	io->status = fake_ring_alloc(fr, 1);
	io->len = len;
	struct virtio_blk_outhdr h = { .type = htole32(type), .sector = htole64(sector) };
	memcpy(fake_ring_host(fr, io->hdr), &h, sizeof(h));
	*(uint8_t *)fake_ring_host(fr, io->status) = 0xff;
	if (payload)
		memcpy(fake_ring_host(fr, io->data), payload, len);
	bool to_guest = type == VIRTIO_BLK_T_IN || type == VIRTIO_BLK_T_GET_ID;
	/* Data in up to three descriptors, through an indirect table, as Linux does for big I/O. */
	struct fake_buf b[5] = { { io->hdr, 16, false } };
	unsigned int n = 1;
	uint32_t piece = len / 3 & ~511u;
	if (len && piece && len > 1024) {
		b[n++] = (struct fake_buf){ io->data, piece, to_guest };
		b[n++] = (struct fake_buf){ io->data + piece, piece, to_guest };
		b[n++] = (struct fake_buf){ io->data + 2 * piece, len - 2 * piece, to_guest };
	} else if (len) {
		b[n++] = (struct fake_buf){ io->data, len, to_guest };
	}
	b[n++] = (struct fake_buf){ io->status, 1, true };
	io->head = n > 3 ? fake_ring_add_indirect(fr, b, n) : fake_ring_add_chain(fr, b, n);
	fake_ring_publish(fr, io->head);
}

static bool wait_used(struct fake_ring *fr, uint16_t n)
{
	for (int i = 0; i < 5000; i++) {
		if ((uint16_t)(fake_ring_used_idx(fr) - fr->used_seen) >= n)
			return true;
		usleep(1000);
	}
	return false;
}

/* Run one request synchronously; returns the status byte (or -1) and the used length. */
static int io_run(struct disk *d, unsigned int q, struct io *io, uint32_t *used_len)
{
	fake_vm_kick(d->vm, d->base + VIRTIO_MMIO_QUEUE_NOTIFY, q);
	if (!wait_used(&d->rings[q], 1)) {
		printf("# no used entry on queue %u\n", q);
		return -1;
	}
	uint32_t id, len;
	if (!fake_ring_used(&d->rings[q], &id, &len) || id != io->head) {
		printf("# used id %u, expected head %u\n", id, io->head);
		return -1;
	}
	if (used_len)
		*used_len = len;
	return *(uint8_t *)fake_ring_host(&d->rings[q], io->status);
}

static int do_io(struct disk *d, unsigned int q, struct io *io, uint32_t type, uint64_t sector,
		 uint32_t len, uint32_t *used_len)
{
	io_prepare(d, q, io, type, sector, len, 0, NULL);
	return io_run(d, q, io, used_len);
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 9));
}

static void test_basic(void)
{
	struct disk d;
	char spec[128];
	snprintf(spec, sizeof(spec), "%s,queues=2,id=e2e-disk", path);
	int err = disk_open(&d, spec);
	/* Every request feature the device offers was accepted and the device is live. */
	uint64_t want = (1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_BLK_F_FLUSH) |
			(1ULL << VIRTIO_BLK_F_MQ) | (1ULL << VIRTIO_BLK_F_DISCARD) |
			(1ULL << VIRTIO_BLK_F_WRITE_ZEROES) | (1ULL << VIRTIO_BLK_F_SEG_MAX) |
			(1ULL << VIRTIO_BLK_F_BLK_SIZE);
	uint64_t offered = 0;
	uint32_t dev_status = 0;
	if (err == 0) {
		for (uint32_t sel = 0; sel < 2; sel++) {
			wr32(&d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, sel);
			offered |= (uint64_t)rd32(&d, VIRTIO_MMIO_DEVICE_FEATURES) << (32 * sel);
		}
		dev_status = rd32(&d, VIRTIO_MMIO_STATUS);
	}
	TAP_CHECK(err == 0 && (offered & want) == want &&
			  dev_status == (VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
				     VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK),
		  "disk brought up with all offered features (FLUSH, MQ, DISCARD, WRITE_ZEROES)");
	if (err)
		return;
	uint64_t cap = 0;
	fake_vm_mmio_read(d.vm, d.base + VIRTIO_MMIO_CONFIG, &cap, 8);
	uint32_t seg_max = 0, blk_size = 0;
	fake_vm_mmio_read(d.vm,
			  d.base + VIRTIO_MMIO_CONFIG + offsetof(struct virtio_blk_config, seg_max),
			  &seg_max, 4);
	fake_vm_mmio_read(
		d.vm, d.base + VIRTIO_MMIO_CONFIG + offsetof(struct virtio_blk_config, blk_size),
		&blk_size, 4);
	TAP_CHECK(cap == DISK_SECTORS && d.nq == 2 && seg_max == QSIZE - 2 && blk_size == 512,
		  "config: capacity, num_queues=2, seg_max, blk_size");

	struct io io;
	uint32_t used = 0;
	const uint32_t len = 8192;
	uint8_t expect[8192], got[8192];
	fill(expect, len, 1);
	io_prepare(&d, 0, &io, VIRTIO_BLK_T_OUT, 16, len, 0, expect);
	TAP_CHECK(io_run(&d, 0, &io, &used) == VIRTIO_BLK_S_OK && used == 1,
		  "write 8 KiB: OK, used len 1");
	TAP_CHECK(pread(file_fd, got, len, 16 * 512) == len && !memcmp(got, expect, len),
		  "the file holds what the guest wrote");
	TAP_CHECK(do_io(&d, 1, &io, VIRTIO_BLK_T_IN, 16, len, &used) == VIRTIO_BLK_S_OK &&
			  used == len + 1 &&
			  !memcmp(fake_ring_host(&d.rings[1], io.data), expect, len),
		  "read back on queue 1: same bytes, used len = data + 1");

	fill(expect, 4096, 9);
	TAP_CHECK(pwrite(file_fd, expect, 4096, 100 * 512) == 4096, "host writes a block");
	TAP_CHECK(do_io(&d, 0, &io, VIRTIO_BLK_T_IN, 100, 4096, NULL) == VIRTIO_BLK_S_OK &&
			  !memcmp(fake_ring_host(&d.rings[0], io.data), expect, 4096),
		  "the guest reads host-written data bit-exact");

	TAP_CHECK(do_io(&d, 0, &io, VIRTIO_BLK_T_FLUSH, 0, 0, &used) == VIRTIO_BLK_S_OK &&
			  used == 1,
		  "FLUSH: OK");
	TAP_CHECK(do_io(&d, 0, &io, VIRTIO_BLK_T_IN, DISK_SECTORS - 1, 1024, &used) ==
				  VIRTIO_BLK_S_IOERR &&
			  used == 1,
		  "read across the end of the disk: IOERR");
	TAP_CHECK(do_io(&d, 0, &io, VIRTIO_BLK_T_GET_ID, 0, 20, &used) == VIRTIO_BLK_S_OK &&
			  used == 21 &&
			  !memcmp(fake_ring_host(&d.rings[0], io.data), "e2e-disk\0", 9),
		  "GET_ID returns the id");
	TAP_CHECK(do_io(&d, 0, &io, 77, 0, 0, NULL) == VIRTIO_BLK_S_UNSUPP, "unknown type: UNSUPP");

	/* WRITE_ZEROES over the block the host wrote. */
	struct virtio_blk_discard_write_zeroes seg = { .sector = htole64(100),
						       .num_sectors = htole32(8) };
	io_prepare(&d, 0, &io, VIRTIO_BLK_T_WRITE_ZEROES, 0, 16, 0, &seg);
	uint8_t zero[4096] = { 0 };
	TAP_CHECK(io_run(&d, 0, &io, NULL) == VIRTIO_BLK_S_OK &&
			  pread(file_fd, got, 4096, 100 * 512) == 4096 && !memcmp(got, zero, 4096),
		  "WRITE_ZEROES zeroes the range in the file");
	seg.sector = htole64(16);
	io_prepare(&d, 0, &io, VIRTIO_BLK_T_DISCARD, 0, 16, 0, &seg);
	TAP_CHECK(io_run(&d, 0, &io, NULL) == VIRTIO_BLK_S_OK, "DISCARD: OK");

	/* A full queue at once: every request completes, with the right data. */
	struct fake_ring *fr = &d.rings[1];
	static uint8_t pattern[QSIZE * 512];
	fill(pattern, sizeof(pattern), 3);
	TAP_CHECK(pwrite(file_fd, pattern, sizeof(pattern), 1024 * 512) == (ssize_t)sizeof(pattern),
		  "host fills 256 sectors");
	uint64_t data[QSIZE], status[QSIZE];
	uint16_t heads[QSIZE];
	int index_of[QSIZE];
	for (unsigned int i = 0; i < QSIZE; i++) {
		data[i] = fake_ring_alloc(fr, 512);
		status[i] = fake_ring_alloc(fr, 1);
		uint64_t h = fake_ring_alloc(fr, 16);
		struct virtio_blk_outhdr hd = { .type = htole32(VIRTIO_BLK_T_IN),
						.sector = htole64(1024 + i) };
		memcpy(fake_ring_host(fr, h), &hd, sizeof(hd));
		struct fake_buf b[3] = { { h, 16, false },
					 { data[i], 512, true },
					 { status[i], 1, true } };
		heads[i] = fake_ring_add_indirect(fr, b, 3);
		index_of[heads[i]] = (int)i;
		fake_ring_publish(fr, heads[i]);
	}
	fake_vm_kick(d.vm, d.base + VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	TAP_CHECK(wait_used(fr, QSIZE), "a full queue of 256 reads completes");
	unsigned int good = 0;
	uint32_t id, ulen;
	while (fake_ring_used(fr, &id, &ulen)) {
		if (id >= QSIZE || ulen != 513)
			continue;
		unsigned int i = (unsigned int)index_of[id];
		good += heads[i] == id &&
			*(uint8_t *)fake_ring_host(fr, status[i]) == VIRTIO_BLK_S_OK &&
			!memcmp(fake_ring_host(fr, data[i]), pattern + 512 * i, 512);
	}
	TAP_CHECK(good == QSIZE, "all 256 reads returned the right sector");
	TAP_CHECK(fake_vm_wait_irq(d.vm, d.gsi, 1000) > 0, "the guest was interrupted");

	/* The file shrinks under the guest: reads past the new end fail, never hang. */
	TAP_CHECK(ftruncate(file_fd, 512 * 512) == 0, "host truncates the file");
	TAP_CHECK(do_io(&d, 0, &io, VIRTIO_BLK_T_IN, 600, 512, NULL) == VIRTIO_BLK_S_IOERR,
		  "read beyond the shrunk file: IOERR");
	TAP_CHECK(ftruncate(file_fd, DISK_SECTORS * 512) == 0, "file size restored");

	/* No status byte: buffers returned with length 0 and the device asks for a reset. */
	struct fake_ring *f0 = &d.rings[0];
	struct fake_buf nb[1] = { { fake_ring_alloc(f0, 16), 16, false } };
	uint16_t nh = fake_ring_add_chain(f0, nb, 1);
	fake_ring_publish(f0, nh);
	fake_vm_kick(d.vm, d.base + VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	TAP_CHECK(wait_used(f0, 1) && fake_ring_used(f0, &id, &ulen) && id == nh && ulen == 0,
		  "request without a status byte: given back with length 0");
	TAP_CHECK(rd32(&d, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET,
		  "... and NEEDS_RESET");
	disk_close(&d);
}

static void test_readonly_and_direct(void)
{
	struct disk d;
	char spec[128];
	snprintf(spec, sizeof(spec), "%s,readonly,poll_us=200", path);
	TAP_CHECK(disk_open(&d, spec) == 0, "read-only disk, workers busy-polling 200 us");
	wr32(&d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	TAP_CHECK(rd32(&d, VIRTIO_MMIO_DEVICE_FEATURES) & (1u << VIRTIO_BLK_F_RO),
		  "VIRTIO_BLK_F_RO offered");
	struct io io;
	TAP_CHECK(do_io(&d, 0, &io, VIRTIO_BLK_T_OUT, 0, 512, NULL) == VIRTIO_BLK_S_IOERR,
		  "write to a read-only disk: IOERR");
	TAP_CHECK(do_io(&d, 0, &io, VIRTIO_BLK_T_IN, 0, 512, NULL) == VIRTIO_BLK_S_OK,
		  "read from it: OK");
	disk_close(&d);

	snprintf(spec, sizeof(spec), "%s,direct=on", path);
	int err = disk_open(&d, spec);
	if (err == -EOPNOTSUPP) {
		TAP_CHECK(true, "# SKIP O_DIRECT not supported on this file system");
		return;
	}
	TAP_CHECK(err == 0, "direct=on disk");
	uint8_t expect[4096];
	fill(expect, sizeof(expect), 5);
	TAP_CHECK(pwrite(file_fd, expect, sizeof(expect), 200 * 512) == 4096 && fsync(file_fd) == 0,
		  "host data for the direct reads");
	TAP_CHECK(do_io(&d, 0, &io, VIRTIO_BLK_T_IN, 200, 4096, NULL) == VIRTIO_BLK_S_OK &&
			  !memcmp(fake_ring_host(&d.rings[0], io.data), expect, 4096),
		  "aligned O_DIRECT read (alone in the queue: made on the worker's thread)");
	{
		/* Eight published at once: the worker sees company and keeps them in flight together. */
		struct io many[8];
		uint8_t want[8][4096];
		for (unsigned int i = 0; i < 8; i++) {
			fill(want[i], 4096, 20 + i);
			if (pwrite(file_fd, want[i], 4096, (off_t)(400 + 8 * i) * 512) != 4096)
				want[i][0] ^= 1; /* the check below fails */
		}
		fsync(file_fd);
		for (unsigned int i = 0; i < 8; i++)
			io_prepare(&d, 0, &many[i], VIRTIO_BLK_T_IN, 400 + 8 * i, 4096, 0, NULL);
		fake_vm_kick(d.vm, d.base + VIRTIO_MMIO_QUEUE_NOTIFY, 0);
		bool all = wait_used(&d.rings[0], 8);
		unsigned int good = 0;
		uint32_t id, ulen;
		while (all && fake_ring_used(&d.rings[0], &id, &ulen))
			for (unsigned int i = 0; i < 8; i++)
				good += many[i].head == id &&
					*(uint8_t *)fake_ring_host(&d.rings[0], many[i].status) ==
						VIRTIO_BLK_S_OK &&
					!memcmp(fake_ring_host(&d.rings[0], many[i].data), want[i], 4096);
		TAP_CHECK(good == 8, "eight O_DIRECT reads published together: each its own sector");
	}
	io_prepare(&d, 0, &io, VIRTIO_BLK_T_IN, 200, 4096, 8, NULL);
	TAP_CHECK(io_run(&d, 0, &io, NULL) == VIRTIO_BLK_S_OK &&
			  !memcmp(fake_ring_host(&d.rings[0], io.data), expect, 4096),
		  "unaligned guest buffer: buffered fallback reads the same bytes");
	fill(expect, 4096, 6);
	io_prepare(&d, 0, &io, VIRTIO_BLK_T_OUT, 300, 4096, 8, expect);
	uint8_t got[4096];
	TAP_CHECK(io_run(&d, 0, &io, NULL) == VIRTIO_BLK_S_OK &&
			  pread(file_fd, got, 4096, 300 * 512) == 4096 &&
			  !memcmp(got, expect, 4096),
		  "unaligned write through the fallback lands in the file");
	disk_close(&d);
}

/*
 * READs through the page cache (direct=off) on local storage: what the cache holds is copied on the
 * queue's thread at once (RWF_NOWAIT), the rest goes on through the ring from where that stopped.
 * The disk's first 32 pages are written from the host; all, none or only a first part of them
 * (tests/support/page_cache.h) are in the page cache when the guest reads them, into three
 * descriptors. A kernel that keeps the pages anyway (a tmpfs /var/tmp) has these cases skipped.
 */
static void test_page_cache_reads(void)
{
	enum { PAGES = 32, LEN = PAGES * 4096 };
	static uint8_t want[LEN];
	struct disk d;
	char spec[128];

	fill(want, LEN, 77);
	snprintf(spec, sizeof(spec), "%s,queues=2,direct=off", path);
	TAP_CHECK(pwrite(file_fd, want, LEN, 0) == LEN &&
			  posix_fadvise(file_fd, 0, 0, POSIX_FADV_RANDOM) == 0,
		  "host writes the disk's first 32 pages");
	TAP_CHECK(disk_open(&d, spec) == 0, "direct=off disk, two queues");
	for (unsigned int k = 0; k < PAGE_CACHE_CASES && d.blk; k++) {
		char what[160];
		struct io io;
		uint32_t used = 0;

		if (!page_cache_arrange(file_fd, LEN, k)) {
			snprintf(what, sizeof(what),
				 "# SKIP READ, %s: the page cache keeps this file's pages",
				 page_cache_case_name(k));
			TAP_CHECK(true, what);
			continue;
		}
		io_prepare(&d, k % 2, &io, VIRTIO_BLK_T_IN, 0, LEN, 0, NULL);
		memset(fake_ring_host(&d.rings[k % 2], io.data), 0, LEN);
		snprintf(what, sizeof(what), "READ of 32 pages, %s: OK, every byte in place, used %u",
			 page_cache_case_name(k), LEN + 1);
		TAP_CHECK(io_run(&d, k % 2, &io, &used) == VIRTIO_BLK_S_OK && used == LEN + 1 &&
				  !memcmp(fake_ring_host(&d.rings[k % 2], io.data), want, LEN),
			  what);
	}
	if (d.blk)
		disk_close(&d);
}

/*
 * A device never attaches itself: blk_create() runs with no VM in the process, the disk is on no bus
 * until its creator hands blk_virtio_dev() to a transport, and destroying that transport detaches it.
 */
static void test_attach_is_the_creators(void)
{
	struct blk_config cfg;
	struct blk_dev *blk = NULL;
	TAP_CHECK(spec_blk_config(path, &cfg, NULL) == 0 && blk_create(&cfg, 1, &blk) == 0,
		  "blk_create with no VM at all");
	if (!blk)
		return;
	struct virtio_dev *vdev = blk_virtio_dev(blk);
	TAP_CHECK(vdev->device_id == VIRTIO_ID_BLOCK && vdev->nr_queues == 1 && !vdev->transport,
		  "the created disk exposes its virtio_dev, with no transport");
	struct vm *vm = fake_vm_create(RAM_SIZE);
	struct virtio_mmio *t = NULL;
	TAP_CHECK(vm && fake_vm_nr_registered(vm) == 0, "nothing on the VM before the attach");
	TAP_CHECK(vm && virtio_mmio_create(vm, vdev, &t) == 0 && vdev->transport &&
			  fake_vm_nr_registered(vm) > 0 && virtio_mmio_base(t) != 0,
		  "the caller attaches it on virtio-mmio");
	virtio_mmio_destroy(t);
	const struct fake_vm_irqfd *irq;
	const struct fake_vm_ioeventfd *ioev;
	TAP_CHECK(!vdev->transport && (!vm || (fake_vm_irqfds(vm, &irq) == 0 &&
					       fake_vm_ioeventfds(vm, &ioev) == 0)),
		  "transport destroyed: the disk is detached, eventfds gone, backend still ours");
	blk_destroy(blk);
	fake_vm_destroy(vm);
}

int main(void)
{
	/* Under /var/tmp: a disk-backed file system, where O_DIRECT and fallocate are real. */
	snprintf(path, sizeof(path), "/var/tmp/ringvm-blk-e2e-XXXXXX");
	file_fd = mkstemp(path);
	if (file_fd < 0 || ftruncate(file_fd, DISK_SECTORS * 512) < 0) {
		printf("Bail out! cannot create %s\n", path);
		return 1;
	}
	struct blk_config cfg;
	struct blk_dev *blk;
	TAP_CHECK(spec_blk_config("/nonexistent/disk.img", &cfg, NULL) == 0 &&
			  blk_create(&cfg, 1, &blk) == -ENOENT,
		  "blk_create on a missing file: -ENOENT before anything runs");

	test_attach_is_the_creators();
	test_basic();
	test_readonly_and_direct();
	test_page_cache_reads();
	close(file_fd);
	unlink(path);
	return tap_done();
}
