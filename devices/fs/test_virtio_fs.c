/* test_virtio_fs.c: end to end: a fake driver brings up virtio-fs over MMIO and sends FUSE requests. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_ring.h>

#include "devices/fs/virtio_fs.h"
#include "devices/virtio/fake_ring.h"
#include "devices/virtio/fake_vm.h"
#include "devices/virtio/mmio.h"
#include "tests/unit/tap.h"

#define NQ 3 /* hiprio + 2 request queues */
#define QSIZE 1024 /* the chain budget (max_segs) is clamped to the queue size: 1 MiB needs 258 */
#define RAM (16u << 20)

static struct vm *vm;
static uint64_t base;
static uint32_t gsi;
static struct fake_ring rings[NQ];
static char dir[64];

static uint32_t rd32(uint64_t off)
{
	return fake_vm_read32(vm, base + off);
}

static void wr32(uint64_t off, uint32_t v)
{
	fake_vm_write32(vm, base + off, v);
}

static int bring_up(void)
{
	const struct fake_vm_mmio *m;
	const struct fake_vm_irqfd *irq;
	unsigned int q;

	if (fake_vm_mmios(vm, &m) != 1 || fake_vm_irqfds(vm, &irq) != 1)
		return -1;
	base = m[0].base;
	gsi = irq[0].gsi;
	if (rd32(VIRTIO_MMIO_MAGIC_VALUE) != 0x74726976 || rd32(VIRTIO_MMIO_DEVICE_ID) != 26)
		return -2;
	wr32(VIRTIO_MMIO_STATUS, 0);
	wr32(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	wr32(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	wr32(VIRTIO_MMIO_DRIVER_FEATURES, 1u << (VIRTIO_F_VERSION_1 - 32));
	wr32(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	wr32(VIRTIO_MMIO_DRIVER_FEATURES, 1u << VIRTIO_RING_F_INDIRECT_DESC);
	wr32(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
					 VIRTIO_CONFIG_S_FEATURES_OK);
	if (!(rd32(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_FEATURES_OK))
		return -3;
	for (q = 0; q < NQ; q++) {
		/* Rings low in RAM, highest queue first; data comes from queue 0's heap above all. */
		struct fake_ring *r = &rings[q];
		struct vq_layout l;

		fake_ring_init(r, fake_vm_ram(vm), RAM, QSIZE, 0x10000 * (uint64_t)(NQ - q));
		l = fake_ring_layout(r);
		wr32(VIRTIO_MMIO_QUEUE_SEL, q);
		if (rd32(VIRTIO_MMIO_QUEUE_NUM_MAX) < QSIZE)
			return -4;
		wr32(VIRTIO_MMIO_QUEUE_NUM, QSIZE);
		wr32(VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)l.desc_gpa);
		wr32(VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(l.desc_gpa >> 32));
		wr32(VIRTIO_MMIO_QUEUE_AVAIL_LOW, (uint32_t)l.avail_gpa);
		wr32(VIRTIO_MMIO_QUEUE_AVAIL_HIGH, (uint32_t)(l.avail_gpa >> 32));
		wr32(VIRTIO_MMIO_QUEUE_USED_LOW, (uint32_t)l.used_gpa);
		wr32(VIRTIO_MMIO_QUEUE_USED_HIGH, (uint32_t)(l.used_gpa >> 32));
		wr32(VIRTIO_MMIO_QUEUE_READY, 1);
	}
	wr32(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
					 VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK);
	if (rd32(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET)
		return -5;
	return 0;
}

/* Wait for the next used element of queue q (2 s at most). */
static bool wait_used(unsigned int q, uint32_t *id, uint32_t *len)
{
	int i;

	for (i = 0; i < 4000; i++) {
		if (fake_ring_used(&rings[q], id, len))
			return true;
		usleep(500);
	}
	return false;
}

/*
 * Send req (split into readable descriptors at the offsets in rsplit, 0-terminated) with `wcap`
 * bytes of writable buffer (split at wsplit), wait for completion. Returns the used length, or -1
 * on timeout; the reply is copied to out.
 */
static int64_t roundtrip(unsigned int q, const void *req, uint32_t len, const uint32_t *rsplit,
			 uint32_t wcap, const uint32_t *wsplit, void *out)
{
	struct fake_buf bufs[16];
	unsigned int n = 0, i;
	uint32_t prev = 0, id, used;
	uint64_t wgpa = 0;

	for (i = 0; rsplit && rsplit[i]; i++) {
		bufs[n].gpa = fake_ring_alloc(&rings[0], rsplit[i] - prev);
		bufs[n].len = rsplit[i] - prev;
		bufs[n].writable = false;
		memcpy(fake_ring_host(&rings[0], bufs[n].gpa), (const char *)req + prev, bufs[n].len);
		prev = rsplit[i];
		n++;
	}
	if (len > prev) {
		bufs[n].gpa = fake_ring_alloc(&rings[0], len - prev);
		bufs[n].len = len - prev;
		bufs[n].writable = false;
		memcpy(fake_ring_host(&rings[0], bufs[n].gpa), (const char *)req + prev, bufs[n].len);
		n++;
	}
	if (wcap) {
		wgpa = fake_ring_alloc(&rings[0], wcap);
		prev = 0;
		for (i = 0; wsplit && wsplit[i]; i++) {
			bufs[n++] = (struct fake_buf){ wgpa + prev, wsplit[i] - prev, true };
			prev = wsplit[i];
		}
		bufs[n++] = (struct fake_buf){ wgpa + prev, wcap - prev, true };
	}
	fake_ring_publish(&rings[q], fake_ring_add_chain(&rings[q], bufs, n));
	fake_vm_kick(vm, base + VIRTIO_MMIO_QUEUE_NOTIFY, q);
	if (!wait_used(q, &id, &used))
		return -1;
	if (wcap && out)
		memcpy(out, fake_ring_host(&rings[0], wgpa), wcap);
	return used;
}

/* A FUSE request: header + body, returns its length. */
static uint32_t mkreq(void *buf, uint32_t op, uint64_t nodeid, const void *body, uint32_t blen)
{
	struct fuse_in_header h = { .len = (uint32_t)sizeof(h) + blen, .opcode = op,
				    .unique = op * 100 + 1, .nodeid = nodeid };

	memcpy(buf, &h, sizeof(h));
	if (blen)
		memcpy((char *)buf + sizeof(h), body, blen);
	return h.len;
}

static int reply_error(const void *rep)
{
	return ((const struct fuse_out_header *)rep)->error;
}

static void test_flow(void)
{
	unsigned char req[8192], rep[8192];
	const struct fuse_out_header *oh = (const void *)rep;
	uint64_t nodeid, fh;
	uint32_t len;
	int64_t used;

	{
		struct fuse_init_in in = { .major = 7, .minor = 38, .max_readahead = 131072,
					   .flags = FUSE_MAX_PAGES | FUSE_INIT_EXT };

		len = mkreq(req, FUSE_INIT, 0, &in, sizeof(in));
		used = roundtrip(1, req, len, NULL, 4096, NULL, rep);
		TAP_CHECK(used == sizeof(struct fuse_out_header) + sizeof(struct fuse_init_out) &&
				  oh->error == 0 && oh->unique == FUSE_INIT * 100 + 1,
			  "INIT over request queue 1");
		TAP_CHECK(fake_vm_wait_irq(vm, gsi, 1000) > 0, "the queue interrupt fired");
	}
	{
		struct fuse_create_in in = { .flags = O_RDWR, .mode = 0644 };
		unsigned char b[64];

		memcpy(b, &in, sizeof(in));
		memcpy(b + sizeof(in), "hello.txt", 10);
		len = mkreq(req, FUSE_CREATE, 1, b, sizeof(in) + 10);
		used = roundtrip(2, req, len, NULL, 4096, NULL, rep);
		TAP_CHECK(used == sizeof(*oh) + sizeof(struct fuse_entry_out) +
					  sizeof(struct fuse_open_out) &&
				  oh->error == 0,
			  "CREATE over request queue 2");
		nodeid = ((struct fuse_entry_out *)(rep + sizeof(*oh)))->nodeid;
		fh = ((struct fuse_open_out *)(rep + sizeof(*oh) + sizeof(struct fuse_entry_out)))->fh;
	}
	{
		/* WRITE with its payload over three readable descriptors: writev from guest memory. */
		struct fuse_write_in in = { .fh = fh, .offset = 0, .size = 3000 };
		uint32_t split[] = { 40, 80 + 1000, 0 };
		unsigned char b[4000];
		char host[3001];
		int fd;

		memcpy(b, &in, sizeof(in));
		for (int i = 0; i < 3000; i++)
			b[sizeof(in) + i] = (unsigned char)('a' + i % 26);
		len = mkreq(req, FUSE_WRITE, nodeid, b, sizeof(in) + 3000);
		used = roundtrip(1, req, len, split, 64, NULL, rep);
		TAP_CHECK(used == sizeof(*oh) + sizeof(struct fuse_write_out) && oh->error == 0 &&
				  ((struct fuse_write_out *)(rep + sizeof(*oh)))->size == 3000,
			  "WRITE 3000 bytes from three descriptors");
		snprintf(host, sizeof(host), "%s/hello.txt", dir);
		fd = open(host, O_RDONLY);
		TAP_CHECK(fd >= 0 && pread(fd, host, 3000, 0) == 3000 &&
				  !memcmp(host, b + sizeof(in), 3000),
			  "host file holds the bytes");
		if (fd >= 0)
			close(fd);
	}
	{
		/* READ into a header slot plus two data descriptors. */
		struct fuse_read_in in = { .fh = fh, .offset = 100, .size = 2000 };
		uint32_t wsplit[] = { 16, 16 + 700, 0 };

		len = mkreq(req, FUSE_READ, nodeid, &in, sizeof(in));
		used = roundtrip(2, req, len, NULL, 16 + 2000, wsplit, rep);
		TAP_CHECK(used == 16 + 2000 && oh->error == 0 && oh->len == 16 + 2000 &&
				  rep[16] == 'a' + 100 % 26 && rep[16 + 1999] == 'a' + 2099 % 26,
			  "READ 2000 bytes straight into two guest buffers");
		in.offset = 2900;
		len = mkreq(req, FUSE_READ, nodeid, &in, sizeof(in));
		used = roundtrip(2, req, len, NULL, 16 + 2000, NULL, rep);
		TAP_CHECK(used == 16 + 100 && oh->len == 16 + 100, "READ across EOF is short");
		len = mkreq(req, FUSE_READ, nodeid, &in, sizeof(in));
		used = roundtrip(2, req, len, NULL, 8, NULL, rep);
		TAP_CHECK(used == 0, "READ with no room for a header completes with 0 bytes");
		in.fh = fh + 12345;
		len = mkreq(req, FUSE_READ, nodeid, &in, sizeof(in));
		used = roundtrip(1, req, len, NULL, 4096, NULL, rep);
		TAP_CHECK(used == 16 && reply_error(rep) == -EBADF, "READ with a bad fh -> EBADF");
	}
	{
		struct fuse_fsync_in in = { .fh = fh };

		len = mkreq(req, FUSE_FSYNC, nodeid, &in, sizeof(in));
		used = roundtrip(1, req, len, NULL, 64, NULL, rep);
		TAP_CHECK(used == 16 && reply_error(rep) == 0, "FSYNC through io_uring");
	}
	{
		struct fuse_release_in in = { .fh = fh };

		len = mkreq(req, FUSE_RELEASE, nodeid, &in, sizeof(in));
		used = roundtrip(1, req, len, NULL, 64, NULL, rep);
		TAP_CHECK(used == 16 && reply_error(rep) == 0, "RELEASE");
	}
	{
		struct fuse_forget_in in = { .nlookup = 1 };

		len = mkreq(req, FUSE_FORGET, nodeid, &in, sizeof(in));
		used = roundtrip(0, req, len, NULL, 0, NULL, NULL);
		TAP_CHECK(used == 0, "FORGET on the hiprio queue: completed, no reply");
	}
	{
		len = mkreq(req, FUSE_GETATTR, nodeid, (struct fuse_getattr_in[1]){ { 0 } },
			    sizeof(struct fuse_getattr_in));
		used = roundtrip(1, req, len, NULL, 4096, NULL, rep);
		TAP_CHECK(used == 16 && reply_error(rep) == -ESTALE, "forgotten nodeid -> ESTALE");
	}
	/* Hostile shapes. */
	len = mkreq(req, FUSE_STATFS, 1, NULL, 0);
	((struct fuse_in_header *)req)->len = 9999;
	used = roundtrip(1, req, len, NULL, 4096, NULL, rep);
	TAP_CHECK(used == 16 && reply_error(rep) == -EINVAL, "hdr.len that lies -> EINVAL reply");
	used = roundtrip(1, req, 20, NULL, 4096, NULL, rep);
	TAP_CHECK(used == 0, "a request shorter than a header completes with 0 bytes");
	len = mkreq(req, 4242, 1, NULL, 0);
	used = roundtrip(2, req, len, NULL, 4096, NULL, rep);
	TAP_CHECK(used == 16 && reply_error(rep) == -ENOSYS, "unknown opcode -> ENOSYS");
	len = mkreq(req, FUSE_LOOKUP, 1, "../etc", 7);
	used = roundtrip(2, req, len, NULL, 4096, NULL, rep);
	TAP_CHECK(used == 16 && reply_error(rep) == -EINVAL, "LOOKUP '../etc' -> EINVAL");
	{
		struct fuse_write_in in = { .fh = 1, .offset = 0, .size = 100 };

		len = mkreq(req, FUSE_WRITE, 1, &in, sizeof(in));
		((struct fuse_in_header *)req)->len = len + 100;
		used = roundtrip(1, req, len, NULL, 64, NULL, rep);
		TAP_CHECK(used == 16 && reply_error(rep) == -EINVAL,
			  "WRITE whose size exceeds the payload -> EINVAL, nothing written");
	}
	len = mkreq(req, FUSE_STATFS, 1, NULL, 0);
	used = roundtrip(2, req, len, NULL, 4096, NULL, rep);
	TAP_CHECK(used == 16 + sizeof(struct fuse_statfs_out) && reply_error(rep) == 0,
		  "the device still serves after bad requests");
	TAP_CHECK(!(rd32(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET),
		  "no NEEDS_RESET for bad FUSE requests");
}

/* Several READs in flight at once on one queue, then a 1 MiB WRITE in 256 page-sized pieces. */
static void test_parallel_and_big(void)
{
	unsigned char req[256], rep[4096];
	struct fuse_out_header oh;
	uint64_t nodeid, fh, wgpa[8];
	struct fake_buf bufs[260];
	uint32_t len, id, used;
	int i, done = 0, good = 0;

	{
		struct fuse_create_in in = { .flags = O_RDWR, .mode = 0644 };
		unsigned char b[64];

		memcpy(b, &in, sizeof(in));
		memcpy(b + sizeof(in), "big", 4);
		len = mkreq(req, FUSE_CREATE, 1, b, sizeof(in) + 4);
		if (roundtrip(1, req, len, NULL, 4096, NULL, rep) <= 0)
			return;
		nodeid = ((struct fuse_entry_out *)(rep + 16))->nodeid;
		fh = ((struct fuse_open_out *)(rep + 16 + sizeof(struct fuse_entry_out)))->fh;
	}
	{
		struct fuse_write_in in = { .fh = fh, .offset = 0, .size = 1u << 20 };
		uint64_t hgpa = fake_ring_alloc(&rings[0], 40 + sizeof(in));
		uint64_t data = fake_ring_alloc(&rings[0], 1u << 20);
		uint64_t rgpa = fake_ring_alloc(&rings[0], 32);
		unsigned char *d = fake_ring_host(&rings[0], data);

		len = mkreq(req, FUSE_WRITE, nodeid, &in, sizeof(in));
		((struct fuse_in_header *)req)->len = len + (1u << 20);
		memcpy(fake_ring_host(&rings[0], hgpa), req, len);
		for (i = 0; i < (1 << 20); i++)
			d[i] = (unsigned char)(i * 7);
		bufs[0] = (struct fake_buf){ hgpa, len, false };
		for (i = 0; i < 256; i++)
			bufs[1 + i] = (struct fake_buf){ data + (uint64_t)i * 4096, 4096, false };
		bufs[257] = (struct fake_buf){ rgpa, 32, true };
		fake_ring_publish(&rings[1], fake_ring_add_indirect(&rings[1], bufs, 258));
		fake_vm_kick(vm, base + VIRTIO_MMIO_QUEUE_NOTIFY, 1);
		if (!wait_used(1, &id, &used))
			used = 0;
		TAP_CHECK(used == 24 &&
				  ((struct fuse_write_out *)((char *)fake_ring_host(&rings[0], rgpa) + 16))
						  ->size == (1u << 20),
			  "1 MiB WRITE from 256 page descriptors (indirect table)");
	}
	for (i = 0; i < 8; i++) {
		struct fuse_read_in in = { .fh = fh, .offset = (uint64_t)i * 65536, .size = 65536 };
		uint64_t rg = fake_ring_alloc(&rings[0], 64);

		wgpa[i] = fake_ring_alloc(&rings[0], 16 + 65536);
		len = mkreq(req, FUSE_READ, nodeid, &in, sizeof(in));
		memcpy(fake_ring_host(&rings[0], rg), req, len);
		bufs[0] = (struct fake_buf){ rg, len, false };
		bufs[1] = (struct fake_buf){ wgpa[i], 16 + 65536, true };
		fake_ring_publish(&rings[2], fake_ring_add_chain(&rings[2], bufs, 2));
	}
	fake_vm_kick(vm, base + VIRTIO_MMIO_QUEUE_NOTIFY, 2);
	while (done < 8 && wait_used(2, &id, &used)) {
		done++;
		if (used == 16 + 65536)
			good++;
	}
	for (i = 0; i < 8; i++) {
		const unsigned char *p = fake_ring_host(&rings[0], wgpa[i]);

		memcpy(&oh, p, sizeof(oh));
		if (oh.error || p[16 + 100] != (unsigned char)((i * 65536 + 100) * 7))
			good = -100;
	}
	TAP_CHECK(done == 8 && good == 8, "8 READs published at once all complete with the right bytes");
}

static void test_parse(void)
{
	struct fs_config c;
	const char *err = NULL;

	TAP_CHECK(fs_parse_spec("/srv/data:/data,readonly,cache=never,queues=4", &c, &err) == 0 &&
			  !strcmp(c.host_dir, "/srv/data") && !strcmp(c.guest_dir, "/data") &&
			  c.readonly && c.cache == FS_CACHE_NEVER && c.queues == 4 &&
			  !strcmp(c.tag, "data"),
		  "parse a full --share");
	TAP_CHECK(fs_parse_spec("/a:/x/y", &c, &err) == 0 && !strcmp(c.tag, "x_y") && c.queues == 1 &&
			  c.cache == FS_CACHE_AUTO && !c.readonly,
		  "defaults and derived tag");
	TAP_CHECK(fs_parse_spec("/a:/", &c, &err) == 0 && !strcmp(c.tag, "root"), "tag of '/'");
	TAP_CHECK(fs_parse_spec("/a:/b,tag=src", &c, &err) == 0 && !strcmp(c.tag, "src"), "tag=");
	TAP_CHECK(fs_parse_spec("/a", &c, &err) == -EINVAL && err, "missing GUESTDIR refused");
	TAP_CHECK(fs_parse_spec("/a:rel", &c, &err) == -EINVAL, "relative GUESTDIR refused");
	TAP_CHECK(fs_parse_spec("/a:/b,cache=sometimes", &c, &err) == -EINVAL, "bad cache= refused");
	TAP_CHECK(fs_parse_spec("/a:/b,queues=0", &c, &err) == -EINVAL, "queues=0 refused");
	TAP_CHECK(fs_parse_spec("/a:/b,queues=17", &c, &err) == -EINVAL, "queues=17 refused");
	TAP_CHECK(fs_parse_spec("/a:/b,tag=a:b", &c, &err) == -EINVAL, "tag with ':' refused");
	TAP_CHECK(fs_parse_spec("/a:/b,tag=0123456789012345678901234567890123456", &c, &err) ==
			  -EINVAL,
		  "37-byte tag refused");
	TAP_CHECK(fs_parse_spec("/a:/b,bogus", &c, &err) == -EINVAL, "unknown option refused");
	TAP_CHECK(fs_parse_root("/", &c, &err) == 0 && c.readonly && !strcmp(c.tag, "root") &&
			  !strcmp(c.guest_dir, "/"),
		  "--root / is read-only");
	TAP_CHECK(fs_parse_root("/srv,rw", &c, &err) == 0 && !c.readonly, "--root ,rw");
	TAP_CHECK(fs_parse_root("/srv,xx", &c, &err) == -EINVAL, "--root bad option refused");
}

int main(void)
{
	struct fs_config cfg;
	struct virtio_fs *fs = NULL;
	struct virtio_mmio *mmio = NULL;
	struct virtio_dev *vdev;
	const char *err;
	char cmd[128], tag[37] = { 0 };
	unsigned int i;

	test_parse();
	snprintf(dir, sizeof(dir), "/tmp/virtio_fs_XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	snprintf(cmd, sizeof(cmd), "%s/missing:/m", dir);
	TAP_CHECK(fs_parse_spec(cmd, &cfg, &err) == 0 && virtio_fs_create(&cfg, &fs) == -ENOENT,
		  "a missing directory is refused before boot");
	/* The device never attaches itself: created with no VM in the process, it is on no bus until
	   the test, like vmm/devices.c, hands it to a transport. */
	snprintf(cmd, sizeof(cmd), "%s:/data,tag=myfs,queues=2", dir);
	TAP_CHECK(fs_parse_spec(cmd, &cfg, &err) == 0 && virtio_fs_create(&cfg, &fs) == 0,
		  "virtio-fs created with no VM at all");
	if (!fs)
		return tap_done();
	vdev = virtio_fs_virtio_dev(fs);
	TAP_CHECK(vdev->device_id == VIRTIO_ID_FS && vdev->nr_queues == NQ && !vdev->transport,
		  "it exposes its virtio_dev, with no transport");
	vm = fake_vm_create(RAM);
	TAP_CHECK(vm != NULL && fake_vm_nr_registered(vm) == 0, "fake VM, nothing registered on it");
	if (!vm) {
		virtio_fs_destroy(fs);
		return tap_done();
	}
	TAP_CHECK(virtio_mmio_create(vm, vdev, &mmio) == 0 && vdev->transport &&
			  fake_vm_nr_registered(vm) > 0,
		  "the test attaches it on virtio-mmio");
	TAP_CHECK(bring_up() == 0, "driver brought the device up (3 queues)");
	for (i = 0; i < 36; i += 4) {
		uint32_t v = rd32(VIRTIO_MMIO_CONFIG + i);

		memcpy(tag + i, &v, 4);
	}
	TAP_CHECK(!strcmp(tag, "myfs") && rd32(VIRTIO_MMIO_CONFIG + 36) == 2,
		  "config: tag and num_request_queues");
	test_flow();
	test_parallel_and_big();
	wr32(VIRTIO_MMIO_STATUS, 0);
	TAP_CHECK(bring_up() == 0, "reset and a second bring-up");
	{
		unsigned char req[128], rep[4096];
		struct fuse_init_in in = { .major = 7, .minor = 38 };
		uint32_t len = mkreq(req, FUSE_GETATTR, 1, (struct fuse_getattr_in[1]){ { 0 } },
				     sizeof(struct fuse_getattr_in));

		TAP_CHECK(roundtrip(1, req, len, NULL, 4096, NULL, rep) == 16 &&
				  reply_error(rep) == -EIO,
			  "after a reset the session is gone (EIO before INIT)");
		len = mkreq(req, FUSE_INIT, 0, &in, sizeof(in));
		TAP_CHECK(roundtrip(2, req, len, NULL, 4096, NULL, rep) > 16 && reply_error(rep) == 0,
			  "INIT again after the reset");
	}
	wr32(VIRTIO_MMIO_STATUS, 0);
	/* The transport first (its workers drain), then the device's backend. */
	virtio_mmio_destroy(mmio);
	TAP_CHECK(!vdev->transport, "transport destroyed: the device is detached");
	virtio_fs_destroy(fs);
	fake_vm_destroy(vm);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return tap_done();
}
