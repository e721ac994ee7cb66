/* test_virtio_fs.c: end to end: a fake driver brings up virtio-fs over MMIO and sends FUSE requests. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_ring.h>

#include "devices/fs/virtio_fs.h"
#include "tests/support/fake_ring.h"
#include "tests/support/fake_vm.h"
#include "devices/virtio/mmio.h"
#include "tests/support/fuse_req.h"
#include "tests/support/mmio_driver.h"
#include "tests/support/spec.h"
#include "tests/support/open_fds.h"
#include "tests/support/page_cache.h"
#include "tests/support/tree.h"
#include "tests/unit/tap.h"
#include "vmm/seccomp.h"

/* The queue workers' confinement in ringvm (vmm/seccomp.h), in kill mode. */
static struct seccomp_confinement worker_role = { SECCOMP_MODE_KILL, SECCOMP_ROLE_WORKER_FS, -1 };

#define NQ 3 /* hiprio + 2 request queues */
#define QSIZE 1024 /* the chain budget (max_segs) is clamped to the queue size: 1 MiB needs 258 */
#define RAM (16u << 20)

static struct vm *vm;
static struct mmio_driver drv;
static char dir[64];

static int bring_up(void)
{
	return md_bring_up(&drv, vm, NQ, QSIZE, 0);
}

/* The fds a FORGET or RELEASE drops close on the queue's ring, with a submission the worker makes
   anyway, at the latest as it goes to sleep: wait up to 2 s for the count to come back. */
static bool fds_back_to(int want)
{
	for (int i = 0; i < 2000 && open_fds() != want; i++)
		usleep(1000);
	return open_fds() == want;
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

		len = fuse_mkreq(req, FUSE_INIT, 0, &in, sizeof(in));
		used = md_roundtrip(&drv, 1, req, len, NULL, 4096, NULL, rep);
		TAP_CHECK(used == sizeof(struct fuse_out_header) + sizeof(struct fuse_init_out) &&
				  oh->error == 0 && oh->unique == FUSE_INIT * 100 + 1,
			  "INIT over request queue 1");
		TAP_CHECK(fake_vm_wait_irq(vm, drv.gsi, 1000) > 0, "the queue interrupt fired");
	}
	int fds_before_create = open_fds();
	{
		struct fuse_create_in in = { .flags = O_RDWR, .mode = 0644 };
		unsigned char b[64];

		memcpy(b, &in, sizeof(in));
		memcpy(b + sizeof(in), "hello.txt", 10);
		len = fuse_mkreq(req, FUSE_CREATE, 1, b, sizeof(in) + 10);
		used = md_roundtrip(&drv, 2, req, len, NULL, 4096, NULL, rep);
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
		len = fuse_mkreq(req, FUSE_WRITE, nodeid, b, sizeof(in) + 3000);
		used = md_roundtrip(&drv, 1, req, len, split, 64, NULL, rep);
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

		len = fuse_mkreq(req, FUSE_READ, nodeid, &in, sizeof(in));
		used = md_roundtrip(&drv, 2, req, len, NULL, 16 + 2000, wsplit, rep);
		TAP_CHECK(used == 16 + 2000 && oh->error == 0 && oh->len == 16 + 2000 &&
				  rep[16] == 'a' + 100 % 26 && rep[16 + 1999] == 'a' + 2099 % 26,
			  "READ 2000 bytes straight into two guest buffers");
		in.offset = 2900;
		len = fuse_mkreq(req, FUSE_READ, nodeid, &in, sizeof(in));
		used = md_roundtrip(&drv, 2, req, len, NULL, 16 + 2000, NULL, rep);
		TAP_CHECK(used == 16 + 100 && oh->len == 16 + 100, "READ across EOF is short");
		len = fuse_mkreq(req, FUSE_READ, nodeid, &in, sizeof(in));
		used = md_roundtrip(&drv, 2, req, len, NULL, 8, NULL, rep);
		TAP_CHECK(used == 0, "READ with no room for a header completes with 0 bytes");
		in.fh = fh + 12345;
		len = fuse_mkreq(req, FUSE_READ, nodeid, &in, sizeof(in));
		used = md_roundtrip(&drv, 1, req, len, NULL, 4096, NULL, rep);
		TAP_CHECK(used == 16 && fuse_reply_error(rep) == -EBADF, "READ with a bad fh -> EBADF");
	}
	{
		/*
		 * READ of a file on local storage: what the page cache holds is copied on the queue's
		 * thread at once (RWF_NOWAIT), the rest goes on through the ring from where that
		 * stopped. hello.txt grows to 32 pages from the host; all, none or only a first part of
		 * them (tests/support/page_cache.h) are in the page cache when the guest reads it. A
		 * kernel that keeps the pages anyway (a tmpfs /tmp) has these cases reported as
		 * skipped.
		 */
		static unsigned char want[32 * 4096], big[16 + 32 * 4096];
		const struct fuse_out_header *bh = (const void *)big;
		struct fuse_read_in in = { .fh = fh, .offset = 100, .size = sizeof(want) - 100 };
		uint32_t wsplit[] = { 16, 16 + 5000, 0 };
		char host[128];
		int fd;

		for (size_t i = 0; i < sizeof(want); i++)
			want[i] = (unsigned char)(i * 29 + i / 4091);
		snprintf(host, sizeof(host), "%s/hello.txt", dir);
		fd = open(host, O_RDWR | O_CLOEXEC);
		TAP_CHECK(fd >= 0 && pwrite(fd, want, sizeof(want), 0) == (ssize_t)sizeof(want) &&
				  posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM) == 0,
			  "hello.txt grows to 32 pages from the host");
		for (int k = 0; k < PAGE_CACHE_CASES && fd >= 0; k++) {
			char what[160];

			if (!page_cache_arrange(fd, sizeof(want), k)) {
				snprintf(what, sizeof(what),
					 "# SKIP READ, %s: the page cache keeps this file's pages",
					 page_cache_case_name(k));
				TAP_CHECK(true, what);
				continue;
			}
			memset(big, 0, sizeof(big));
			len = fuse_mkreq(req, FUSE_READ, nodeid, &in, sizeof(in));
			used = md_roundtrip(&drv, 1 + k % 2, req, len, NULL, sizeof(big), wsplit, big);
			snprintf(what, sizeof(what), "READ of 32 pages at 100, %s: every byte in place",
				 page_cache_case_name(k));
			TAP_CHECK(used == (int64_t)(16 + sizeof(want) - 100) && bh->error == 0 &&
					  bh->len == used && !memcmp(big + 16, want + 100, sizeof(want) - 100),
				  what);
		}
		if (fd >= 0)
			close(fd);
	}
	{
		struct fuse_fsync_in in = { .fh = fh };

		len = fuse_mkreq(req, FUSE_FSYNC, nodeid, &in, sizeof(in));
		used = md_roundtrip(&drv, 1, req, len, NULL, 64, NULL, rep);
		TAP_CHECK(used == 16 && fuse_reply_error(rep) == 0, "FSYNC through io_uring");
	}
	{
		struct fuse_release_in in = { .fh = fh };

		len = fuse_mkreq(req, FUSE_RELEASE, nodeid, &in, sizeof(in));
		used = md_roundtrip(&drv, 1, req, len, NULL, 64, NULL, rep);
		TAP_CHECK(used == 16 && fuse_reply_error(rep) == 0, "RELEASE");
	}
	{
		struct fuse_forget_in in = { .nlookup = 1 };

		len = fuse_mkreq(req, FUSE_FORGET, nodeid, &in, sizeof(in));
		used = md_roundtrip(&drv, 0, req, len, NULL, 0, NULL, NULL);
		TAP_CHECK(used == 0, "FORGET on the hiprio queue: completed, no reply");
	}
	{
		len = fuse_mkreq(req, FUSE_GETATTR, nodeid, (struct fuse_getattr_in[1]){ { 0 } },
			    sizeof(struct fuse_getattr_in));
		used = md_roundtrip(&drv, 1, req, len, NULL, 4096, NULL, rep);
		TAP_CHECK(used == 16 && fuse_reply_error(rep) == -ESTALE, "forgotten nodeid -> ESTALE");
	}
	TAP_CHECK(fds_before_create > 0 && fds_back_to(fds_before_create),
		  "RELEASE and FORGET closed the handle's and the inode's fds (on the queues' rings)");
	/* Hostile shapes. */
	len = fuse_mkreq(req, FUSE_STATFS, 1, NULL, 0);
	((struct fuse_in_header *)req)->len = 9999;
	used = md_roundtrip(&drv, 1, req, len, NULL, 4096, NULL, rep);
	TAP_CHECK(used == 16 && fuse_reply_error(rep) == -EINVAL, "hdr.len that lies -> EINVAL reply");
	used = md_roundtrip(&drv, 1, req, 20, NULL, 4096, NULL, rep);
	TAP_CHECK(used == 0, "a request shorter than a header completes with 0 bytes");
	len = fuse_mkreq(req, 4242, 1, NULL, 0);
	used = md_roundtrip(&drv, 2, req, len, NULL, 4096, NULL, rep);
	TAP_CHECK(used == 16 && fuse_reply_error(rep) == -ENOSYS, "unknown opcode -> ENOSYS");
	len = fuse_mkreq(req, FUSE_LOOKUP, 1, "../etc", 7);
	used = md_roundtrip(&drv, 2, req, len, NULL, 4096, NULL, rep);
	TAP_CHECK(used == 16 && fuse_reply_error(rep) == -EINVAL, "LOOKUP '../etc' -> EINVAL");
	{
		struct fuse_write_in in = { .fh = 1, .offset = 0, .size = 100 };

		len = fuse_mkreq(req, FUSE_WRITE, 1, &in, sizeof(in));
		((struct fuse_in_header *)req)->len = len + 100;
		used = md_roundtrip(&drv, 1, req, len, NULL, 64, NULL, rep);
		TAP_CHECK(used == 16 && fuse_reply_error(rep) == -EINVAL,
			  "WRITE whose size exceeds the payload -> EINVAL, nothing written");
	}
	len = fuse_mkreq(req, FUSE_STATFS, 1, NULL, 0);
	used = md_roundtrip(&drv, 2, req, len, NULL, 4096, NULL, rep);
	TAP_CHECK(used == 16 + sizeof(struct fuse_statfs_out) && fuse_reply_error(rep) == 0,
		  "the device still serves after bad requests");
	TAP_CHECK(!(md_rd32(&drv, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET),
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
		len = fuse_mkreq(req, FUSE_CREATE, 1, b, sizeof(in) + 4);
		if (md_roundtrip(&drv, 1, req, len, NULL, 4096, NULL, rep) <= 0)
			return;
		nodeid = ((struct fuse_entry_out *)(rep + 16))->nodeid;
		fh = ((struct fuse_open_out *)(rep + 16 + sizeof(struct fuse_entry_out)))->fh;
	}
	{
		struct fuse_write_in in = { .fh = fh, .offset = 0, .size = 1u << 20 };
		uint64_t hgpa = md_alloc(&drv, 40 + sizeof(in));
		uint64_t data = md_alloc(&drv, 1u << 20);
		uint64_t rgpa = md_alloc(&drv, 32);
		unsigned char *d = md_host(&drv, data);

		len = fuse_mkreq(req, FUSE_WRITE, nodeid, &in, sizeof(in));
		((struct fuse_in_header *)req)->len = len + (1u << 20);
		memcpy(md_host(&drv, hgpa), req, len);
		for (i = 0; i < (1 << 20); i++)
			d[i] = (unsigned char)(i * 7);
		bufs[0] = (struct fake_buf){ hgpa, len, false };
		for (i = 0; i < 256; i++)
			bufs[1 + i] = (struct fake_buf){ data + (uint64_t)i * 4096, 4096, false };
		bufs[257] = (struct fake_buf){ rgpa, 32, true };
		fake_ring_publish(&drv.rings[1], fake_ring_add_indirect(&drv.rings[1], bufs, 258));
		fake_vm_kick(vm, drv.base + VIRTIO_MMIO_QUEUE_NOTIFY, 1);
		if (!md_wait_used(&drv, 1, &id, &used))
			used = 0;
		TAP_CHECK(used == 24 &&
				  ((struct fuse_write_out *)((char *)md_host(&drv, rgpa) + 16))
						  ->size == (1u << 20),
			  "1 MiB WRITE from 256 page descriptors (indirect table)");
	}
	for (i = 0; i < 8; i++) {
		struct fuse_read_in in = { .fh = fh, .offset = (uint64_t)i * 65536, .size = 65536 };
		uint64_t rg = md_alloc(&drv, 64);

		wgpa[i] = md_alloc(&drv, 16 + 65536);
		len = fuse_mkreq(req, FUSE_READ, nodeid, &in, sizeof(in));
		memcpy(md_host(&drv, rg), req, len);
		bufs[0] = (struct fake_buf){ rg, len, false };
		bufs[1] = (struct fake_buf){ wgpa[i], 16 + 65536, true };
		fake_ring_publish(&drv.rings[2], fake_ring_add_chain(&drv.rings[2], bufs, 2));
	}
	fake_vm_kick(vm, drv.base + VIRTIO_MMIO_QUEUE_NOTIFY, 2);
	while (done < 8 && md_wait_used(&drv, 2, &id, &used)) {
		done++;
		if (used == 16 + 65536)
			good++;
	}
	for (i = 0; i < 8; i++) {
		const unsigned char *p = md_host(&drv, wgpa[i]);

		memcpy(&oh, p, sizeof(oh));
		if (oh.error || p[16 + 100] != (unsigned char)((i * 65536 + 100) * 7))
			good = -100;
	}
	TAP_CHECK(done == 8 && good == 8, "8 READs published at once all complete with the right bytes");
}

/*
 * A writer without CAP_FSETID (FUSE_WRITE_KILL_SUIDGID) on a file written here, on the worker's
 * thread, while writes of a writer with it wait on the queue's io_uring: the kill is the first
 * file's only. The worker leaves the first kind of kill to the host kernel by dropping CAP_FSETID
 * (fs_creds.c), and io_uring runs a queued write with the credentials of its later submit, so a
 * queued write must never see it dropped. The queued writes go to an O_SYNC file (a ring write
 * whenever the queue holds more than one request); 24 requests published at once make slices of
 * several, each KILL write among the queued ones.
 */
static void test_kill_beside_queued_writes(void)
{
	enum { N = 24, BS = 512 };
	unsigned char req[256], rep[4096];
	struct fake_buf bufs[3];
	uint64_t node[2], fh[2], rgpa[N];
	const char *names[2] = { "kq", "kh" };
	char path[2][128];
	struct stat st[2];
	uint32_t id, used;
	int i, done = 0, good = 0;

	if (geteuid() != 0) {
		printf("ok %d # SKIP not root: no CAP_FSETID to drop\n", ++tap_count);
		return;
	}
	for (i = 0; i < 2; i++) {
		struct fuse_create_in in = { .flags = O_RDWR | (i == 0 ? O_SYNC : 0), .mode = 0777 };
		unsigned char b[64];
		uint32_t len;

		memcpy(b, &in, sizeof(in));
		memcpy(b + sizeof(in), names[i], 3);
		len = fuse_mkreq(req, FUSE_CREATE, 1, b, sizeof(in) + 3);
		if (md_roundtrip(&drv, 1, req, len, NULL, 4096, NULL, rep) <= 16 || fuse_reply_error(rep)) {
			TAP_CHECK(false, "CREATE the two files");
			return;
		}
		node[i] = ((struct fuse_entry_out *)(rep + 16))->nodeid;
		fh[i] = ((struct fuse_open_out *)(rep + 16 + sizeof(struct fuse_entry_out)))->fh;
		snprintf(path[i], sizeof(path[i]), "%s/%s", dir, names[i]);
	}
	TAP_CHECK(chmod(path[0], 04777) == 0 && chmod(path[1], 04777) == 0, "host: both setuid, 4777");
	for (i = 0; i < N; i++) {
		/* The first before any queued write (the ones after it need CAP_FSETID back), the
		   last after queued ones at the end of a slice (which it must not drop). */
		bool kill = i == 0 || i == N - 1 || (i >= 12 && i % 3 == 2);
		struct fuse_write_in in = { .fh = fh[kill], .offset = (uint64_t)i * BS, .size = BS,
					    .write_flags = kill ? FUSE_WRITE_KILL_SUIDGID : 0 };
		struct fuse_in_header *h = (struct fuse_in_header *)req;
		uint64_t hg = md_alloc(&drv, 64 + sizeof(in)), data = md_alloc(&drv, BS);
		uint32_t len = fuse_mkreq(req, FUSE_WRITE, node[kill], &in, sizeof(in));

		h->len = len + BS;
		h->unique = 1000 + (uint64_t)i;
		h->uid = h->gid = kill ? 1234 : 0;
		memcpy(md_host(&drv, hg), req, len);
		memset(md_host(&drv, data), 'a' + i % 26, BS);
		rgpa[i] = md_alloc(&drv, 32);
		bufs[0] = (struct fake_buf){ hg, len, false };
		bufs[1] = (struct fake_buf){ data, BS, false };
		bufs[2] = (struct fake_buf){ rgpa[i], 32, true };
		fake_ring_publish(&drv.rings[1], fake_ring_add_chain(&drv.rings[1], bufs, 3));
	}
	fake_vm_kick(vm, drv.base + VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	while (done < N && md_wait_used(&drv, 1, &id, &used)) {
		done++;
		if (used == 24)
			good++;
	}
	for (i = 0; i < N; i++) {
		const unsigned char *p = md_host(&drv, rgpa[i]);
		struct fuse_out_header oh;

		memcpy(&oh, p, sizeof(oh));
		if (oh.error || ((const struct fuse_write_out *)(p + 16))->size != BS)
			good = -100;
	}
	TAP_CHECK(done == N && good == N, "24 WRITEs published at once, two writers: all complete whole");
	TAP_CHECK(stat(path[0], &st[0]) == 0 && stat(path[1], &st[1]) == 0 &&
			  (st[1].st_mode & 07777) == 0777,
		  "the KILL writer's file (written on the worker's thread) lost setuid");
	TAP_CHECK((st[0].st_mode & 07777) == 04777,
		  "the other writer's file (its writes queued on the ring beside those) kept it");
	for (i = 0; i < 2; i++) {
		struct fuse_release_in in = { .fh = fh[i] };
		uint32_t len = fuse_mkreq(req, FUSE_RELEASE, node[i], &in, sizeof(in));

		if (md_roundtrip(&drv, 1, req, len, NULL, 4096, NULL, rep) != 16 || fuse_reply_error(rep))
			printf("# RELEASE %s failed\n", names[i]);
	}
}

static void test_parse(void)
{
	struct fs_config c;
	const char *err = NULL;

	TAP_CHECK(spec_fs_config("/srv/data:/data,readonly,cache=never,queues=4", &c, &err) == 0 &&
			  !strcmp(c.host_dir, "/srv/data") && !strcmp(c.guest_dir, "/data") &&
			  c.readonly && c.cache == FS_CACHE_NEVER && c.queues == 4 &&
			  !strcmp(c.tag, "data"),
		  "parse a full --share");
	TAP_CHECK(spec_fs_config("/a:/x/y", &c, &err) == 0 && !strcmp(c.tag, "x_y") && c.queues == 1 &&
			  c.cache == FS_CACHE_AUTO && !c.readonly,
		  "defaults and derived tag");
	TAP_CHECK(spec_fs_config("/a:/", &c, &err) == 0 && !strcmp(c.tag, "root"), "tag of '/'");
	TAP_CHECK(spec_fs_config("/a:/b,tag=src", &c, &err) == 0 && !strcmp(c.tag, "src"), "tag=");
	TAP_CHECK(spec_fs_config("/a", &c, &err) == -EINVAL && err, "missing GUESTDIR refused");
	TAP_CHECK(spec_fs_config("/a:rel", &c, &err) == -EINVAL, "relative GUESTDIR refused");
	TAP_CHECK(spec_fs_config("/a:/b,cache=sometimes", &c, &err) == -EINVAL, "bad cache= refused");
	TAP_CHECK(spec_fs_config("/a:/b,queues=0", &c, &err) == -EINVAL, "queues=0 refused");
	TAP_CHECK(spec_fs_config("/a:/b,queues=17", &c, &err) == -EINVAL, "queues=17 refused");
	TAP_CHECK(spec_fs_config("/a:/b,tag=a:b", &c, &err) == -EINVAL, "tag with ':' refused");
	TAP_CHECK(spec_fs_config("/a:/b,tag=0123456789012345678901234567890123456", &c, &err) ==
			  -EINVAL,
		  "37-byte tag refused");
	TAP_CHECK(spec_fs_config("/a:/b,bogus", &c, &err) == -EINVAL, "unknown option refused");
	TAP_CHECK(spec_fs_root("/", &c, &err) == 0 && c.readonly && !strcmp(c.tag, "root") &&
			  !strcmp(c.guest_dir, "/"),
		  "--root / is read-only");
	TAP_CHECK(spec_fs_root("/srv,rw", &c, &err) == 0 && !c.readonly, "--root ,rw");
	TAP_CHECK(spec_fs_root("/srv,xx", &c, &err) == -EINVAL, "--root bad option refused");
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
	TAP_CHECK(spec_fs_config(cmd, &cfg, &err) == 0 && virtio_fs_create(&cfg, &fs) == -ENOENT,
		  "a missing directory is refused before boot");
	/* The device never attaches itself: created with no VM in the process, it is on no bus until
	   the test, like vmm/devices.c, hands it to a transport. */
	snprintf(cmd, sizeof(cmd), "%s:/data,tag=myfs,queues=2", dir);
	TAP_CHECK(spec_fs_config(cmd, &cfg, &err) == 0 && virtio_fs_create(&cfg, &fs) == 0,
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
	/* The queue workers under their real seccomp filter (kill mode), as in ringvm. */
	TAP_CHECK(virtio_mmio_create(vm, vdev, &mmio) == 0 && vdev->transport &&
			  virtio_mmio_prepare(mmio, seccomp_confine_hook, &worker_role) == 0 &&
			  fake_vm_nr_registered(vm) > 0,
		  "the test attaches it on virtio-mmio");
	TAP_CHECK(bring_up() == 0, "driver brought the device up (3 queues)");
	for (i = 0; i < 36; i += 4) {
		uint32_t v = md_rd32(&drv, VIRTIO_MMIO_CONFIG + i);

		memcpy(tag + i, &v, 4);
	}
	TAP_CHECK(!strcmp(tag, "myfs") && md_rd32(&drv, VIRTIO_MMIO_CONFIG + 36) == 2,
		  "config: tag and num_request_queues");
	test_flow();
	test_parallel_and_big();
	test_kill_beside_queued_writes();
	md_wr32(&drv, VIRTIO_MMIO_STATUS, 0);
	TAP_CHECK(bring_up() == 0, "reset and a second bring-up");
	{
		unsigned char req[128], rep[4096];
		struct fuse_init_in in = { .major = 7, .minor = 38 };
		uint32_t len = fuse_mkreq(req, FUSE_GETATTR, 1, (struct fuse_getattr_in[1]){ { 0 } },
				     sizeof(struct fuse_getattr_in));

		TAP_CHECK(md_roundtrip(&drv, 1, req, len, NULL, 4096, NULL, rep) == 16 &&
				  fuse_reply_error(rep) == -EIO,
			  "after a reset the session is gone (EIO before INIT)");
		len = fuse_mkreq(req, FUSE_INIT, 0, &in, sizeof(in));
		TAP_CHECK(md_roundtrip(&drv, 2, req, len, NULL, 4096, NULL, rep) > 16 && fuse_reply_error(rep) == 0,
			  "INIT again after the reset");
	}
	md_wr32(&drv, VIRTIO_MMIO_STATUS, 0);
	/* The transport first (its workers drain), then the device's backend. */
	virtio_mmio_destroy(mmio);
	TAP_CHECK(!vdev->transport, "transport destroyed: the device is detached");
	virtio_fs_destroy(fs);
	fake_vm_destroy(vm);
	(void)tree_discard(dir);
	return tap_done();
}
