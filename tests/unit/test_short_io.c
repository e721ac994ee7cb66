/* test_short_io.c: short transfers end to end: virtio-fs and virtio-blk over a file system that answers short on demand. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>

#include "devices/blk/blk.h"
#include "devices/fs/virtio_fs.h"
#include "devices/virtio/mmio.h"
#include "devices/virtio/xfer.h"
#include "tests/support/fs_guest.h"
#include "tests/support/fuse_req.h"
#include "tests/support/host_fuse.h"
#include "tests/support/mmio_driver.h"
#include "tests/support/spec.h"
#include "tests/unit/tap.h"
#include "vmm/seccomp.h"

/* The queue workers' confinement in ringvm (vmm/seccomp.h), in kill mode. */
static struct seccomp_confinement worker_role = { SECCOMP_MODE_KILL, SECCOMP_ROLE_WORKER, -1 };
static struct seccomp_confinement worker_fs_role = { SECCOMP_MODE_KILL, SECCOMP_ROLE_WORKER_FS, -1 };

/*
 * The devices' files live on a host FUSE mount served by ringvm's own server (tests/support/
 * host_fuse.h) in direct-I/O mode, whose READ and WRITE answers follow a script: a read of 1 byte,
 * one that stops inside a guest buffer or at a buffer boundary, 0 (end of file), EAGAIN, EINTR,
 * EOPNOTSUPP, an error after progress. That is what 9p, NFS and FUSE file systems do by themselves;
 * here it comes on demand, through the real kernel, the real io_uring and the real devices, and the
 * bytes the guest receives are compared with the file's. Root only (mount); without root or
 * /dev/fuse every check is reported as skipped.
 */

#define RAM (32u << 20)
#define FILE_SIZE (256u * 1024)
#define IO 65536u

static struct hf_scratch sc;
static struct host_fuse *hf;
static struct vm *vm;
static struct mmio_driver drv;
static uint8_t expect[FILE_SIZE]; /* what the backing file holds */

static uint8_t pattern(uint64_t off, unsigned int seed)
{
	return (uint8_t)((off * 131 + off / 4099 + seed) ^ (off >> 9));
}

static int write_file(const char *name, unsigned int seed)
{
	char path[160];
	int fd;

	for (uint32_t i = 0; i < FILE_SIZE; i++)
		expect[i] = pattern(i, seed);
	snprintf(path, sizeof(path), "%s/%s", sc.back, name);
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (pwrite(fd, expect, FILE_SIZE, 0) != FILE_SIZE) {
		close(fd);
		return -EIO;
	}
	close(fd);
	return 0;
}

/* The backing file's bytes [off, off+len) read directly (not through the mount). */
static bool back_equals(const char *name, uint64_t off, const uint8_t *want, size_t len)
{
	static uint8_t got[IO];
	char path[160];
	int fd;
	bool same;

	snprintf(path, sizeof(path), "%s/%s", sc.back, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || len > sizeof(got))
		return false;
	same = pread(fd, got, len, (off_t)off) == (ssize_t)len && !memcmp(got, want, len);
	close(fd);
	return same;
}

static void script(uint32_t opcode, const struct hf_step *steps, unsigned int n)
{
	hf_script(hf, opcode, steps, n);
}

#define SHORT(bytes) { .kind = HF_SHORT, .n = (bytes) }
#define SHORTS(bytes, t) { .kind = HF_SHORT, .n = (bytes), .times = (t) }
#define ERR(e) { .kind = HF_ERROR, .err = (e) }
#define ERRS(e, t) { .kind = HF_ERROR, .err = (e), .times = (t) }
/* A script as the two arguments (steps, count) the helpers take. */
#define STEPS(...) ((const struct hf_step[]){ __VA_ARGS__ }), \
		   (sizeof((const struct hf_step[]){ __VA_ARGS__ }) / sizeof(struct hf_step))

/* ------------------------------------------------------------------------------ virtio-fs ---- */

static uint64_t fs_nodeid, fs_fh;

static int fs_open_file(void)
{
	return fsg_open_file(&drv, 1, "data", O_RDWR, &fs_nodeid, &fs_fh);
}

/*
 * A READ of `size` bytes at `off` into a reply buffer split like Linux's virtio-fs does it (header,
 * then data pages; here uneven pieces so short reads land inside and at their edges), with the
 * host file system answering per `steps`. Checks the reply: `want_len` data bytes equal to the
 * file's, or the error `want_err`; and that the device went through every scripted answer.
 */
static void fs_read_case(const char *what, uint64_t off, uint32_t size, const struct hf_step *steps,
			 unsigned int nsteps, uint32_t want_len, int want_err)
{
	static uint8_t rep[16 + IO];
	uint8_t req[128];
	struct fuse_read_in in = { .fh = fs_fh, .offset = off, .size = size };
	uint32_t wsplit[] = { 16, 16 + 1000, 16 + 4096, 16 + 4096 + 3000, 0 };
	uint32_t len = fuse_mkreq(req, FUSE_READ, fs_nodeid, &in, sizeof(in));
	int64_t used;
	char name[160];

	script(FUSE_READ, steps, nsteps);
	memset(rep, 0xee, sizeof(rep));
	used = md_roundtrip(&drv, 1, req, len, NULL, 16 + size, wsplit, rep);
	snprintf(name, sizeof(name), "fs READ %s", what);
	if (want_err)
		TAP_CHECK(used == 16 && fuse_reply_error(rep) == want_err &&
				  ((struct fuse_out_header *)rep)->len == 16,
			  name);
	else
		TAP_CHECK(used == 16 + want_len && fuse_reply_error(rep) == 0 &&
				  ((struct fuse_out_header *)rep)->len == 16 + want_len &&
				  !memcmp(rep + 16, expect + off, want_len),
			  name);
	snprintf(name, sizeof(name), "fs READ %s: every scripted answer was used", what);
	TAP_CHECK(hf_steps_left(hf, FUSE_READ) == 0, name);
	script(FUSE_READ, NULL, 0);
}

/*
 * A WRITE of `size` bytes at `off` from four uneven guest buffers, the host file system answering per
 * `steps`. Checks the reply (`want_size` written, or the error `want_err`) and the backing file:
 * exactly want_size new bytes landed, the rest is unchanged.
 */
static void fs_write_case(const char *what, uint64_t off, uint32_t size, unsigned int seed,
			  const struct hf_step *steps, unsigned int nsteps, uint32_t want_size,
			  int want_err)
{
	static uint8_t req[128 + IO], after[IO];
	uint8_t rep[64];
	struct fuse_write_in in = { .fh = fs_fh, .offset = off, .size = size };
	uint32_t hdr = sizeof(struct fuse_in_header) + sizeof(in);
	uint32_t rsplit[] = { hdr, hdr + 700, hdr + 4096, hdr + 9000, 0 };
	uint32_t len;
	int64_t used;
	char name[160];

	for (uint32_t i = 0; i < size; i++)
		req[hdr + i] = pattern(off + i, seed);
	len = fuse_mkreq(req, FUSE_WRITE, fs_nodeid, &in, sizeof(in));
	((struct fuse_in_header *)req)->len = len + size;
	memcpy(after, expect + off, size);
	memcpy(after, req + hdr, want_size);
	script(FUSE_WRITE, steps, nsteps);
	used = md_roundtrip(&drv, 1, req, len + size, rsplit, 64, NULL, rep);
	snprintf(name, sizeof(name), "fs WRITE %s", what);
	if (want_err)
		TAP_CHECK(used == 16 && fuse_reply_error(rep) == want_err, name);
	else
		TAP_CHECK(used == 16 + sizeof(struct fuse_write_out) && fuse_reply_error(rep) == 0 &&
				  ((struct fuse_write_out *)(rep + 16))->size == want_size,
			  name);
	snprintf(name, sizeof(name), "fs WRITE %s: the file holds exactly what was reported", what);
	TAP_CHECK(back_equals("data", off, after, size) && hf_steps_left(hf, FUSE_WRITE) == 0, name);
	memcpy(expect + off, after, size);
	script(FUSE_WRITE, NULL, 0);
}

static void test_fs(void)
{
	struct fs_config cfg;
	struct virtio_fs *fs = NULL;
	struct virtio_mmio *mmio = NULL;
	const char *why;
	char spec[160];
	int ret;

	snprintf(spec, sizeof(spec), "%s:/s,cache=never", sc.mnt);
	vm = fake_vm_create(RAM);
	ret = vm ? spec_fs_config(spec, &cfg, &why) : -ENOMEM;
	if (!ret)
		ret = virtio_fs_create(&cfg, &fs);
	if (!ret)
		ret = virtio_mmio_create(vm, virtio_fs_virtio_dev(fs), &mmio);
	/* The queue workers under their real seccomp filter (kill mode): the synchronous
	   fallback (xfer_sync) runs there. */
	if (!ret)
		ret = virtio_mmio_prepare(mmio, seccomp_confine_hook, &worker_fs_role);
	if (!ret)
		ret = md_bring_up(&drv, vm, 2, 1024, 0);
	if (!ret)
		ret = fs_open_file();
	TAP_CHECK(ret == 0, "virtio-fs up over the scripted FUSE mount, file opened");
	if (ret)
		goto out;

	/* Short reads are continued at the right file offset and the right place in the buffers. */
	fs_read_case("whole, no script", 0, IO, NULL, 0, IO, 0);
	fs_read_case("1 byte, then the rest", 10, IO, STEPS(SHORT(1)), IO, 0);
	fs_read_case("1 byte at a time, 40 times", 0, IO, STEPS(SHORTS(1, 40)), IO, 0);
	fs_read_case("short inside a guest buffer", 3, IO, STEPS(SHORT(500), SHORT(2)),
		     IO, 0);
	fs_read_case("short at a buffer boundary", 0, IO,
		     STEPS(SHORT(1000), SHORT(3096), SHORT(3000)), IO, 0);
	fs_read_case("short across several buffers", 777, IO, STEPS(SHORT(9999)), IO, 0);
	/* 0 is end of file: the reply is short, with exactly the bytes read before. */
	fs_read_case("1000 bytes, then 0 (EOF)", 0, IO, STEPS(SHORT(1000), SHORT(0)),
		     1000, 0);
	fs_read_case("0 at once (EOF)", 4096, IO, STEPS(SHORT(0)), 0, 0);
	fs_read_case("at the real end of file", FILE_SIZE - 100, IO, NULL, 0, 100, 0);
	fs_read_case("EAGAIN, then the data", 0, IO, STEPS(ERRS(-EAGAIN, 3)), IO, 0);
	fs_read_case("EINTR, then the data", 0, IO, STEPS(ERR(-EINTR)), IO, 0);
	fs_read_case("short, EINTR, short, EAGAIN, rest", 1, IO,
		     STEPS(SHORT(4095), ERR(-EINTR), SHORT(1),
			   ERR(-EAGAIN)),
		     IO, 0);
	fs_read_case("EOPNOTSUPP from the ring: served synchronously", 5, IO,
		     STEPS(ERR(-EOPNOTSUPP), SHORT(100)), IO, 0);
	/* An error after progress is the error: a short reply would tell the guest "EOF here". */
	fs_read_case("700 bytes, then EIO", 0, IO, STEPS(SHORT(700), ERR(-EIO)),
		     0, -EIO);
	fs_read_case("an error at once", 0, IO, STEPS(ERR(-ENOLINK)), 0, -ENOLINK);
	{
		/* A file answering EAGAIN forever: the request ends with EAGAIN after a bounded
		   number of attempts (io_uring may add one retry of its own per attempt). */
		static uint8_t rep[16 + IO];
		uint8_t req[128];
		struct fuse_read_in in = { .fh = fs_fh, .offset = 0, .size = IO };
		uint32_t len = fuse_mkreq(req, FUSE_READ, fs_nodeid, &in, sizeof(in));
		unsigned int served;

		script(FUSE_READ, STEPS(ERRS(-EAGAIN, 100000)));
		int64_t used = md_roundtrip(&drv, 1, req, len, NULL, 16 + IO, NULL, rep);

		served = hf_served(hf, FUSE_READ);
		TAP_CHECK(used == 16 && fuse_reply_error(rep) == -EAGAIN,
			  "fs READ EAGAIN forever -> EAGAIN");
		TAP_CHECK(served > XFER_MAX_RETRIES && served <= 2 * (XFER_MAX_RETRIES + 1),
			  "fs READ EAGAIN forever: a bounded number of attempts");
		script(FUSE_READ, NULL, 0);
	}
	fs_read_case("the device still serves after it", 0, IO, NULL, 0, IO, 0);

	/* Short writes go on with the rest; what landed is what the reply says. */
	fs_write_case("whole, no script", 0, IO, 1, NULL, 0, IO, 0);
	fs_write_case("1 byte, then the rest", 1, IO, 2, STEPS(SHORT(1)), IO, 0);
	fs_write_case("short inside and at buffer edges", 100, IO, 3,
		      STEPS(SHORT(300), SHORT(400), SHORT(3396),
			    SHORT(1)),
		      IO, 0);
	fs_write_case("EAGAIN and EINTR, then the rest", 0, IO, 4,
		      STEPS(SHORT(5000), ERR(-EAGAIN), ERR(-EINTR)),
		      IO, 0);
	fs_write_case("1000 bytes, then ENOSPC: 1000 reported", 0, IO, 5,
		      STEPS(SHORT(1000), ERR(-ENOSPC)), 1000, 0);
	fs_write_case("ENOSPC at once", 0, IO, 6, STEPS(ERR(-ENOSPC)), 0, -ENOSPC);
	/* io_uring itself resubmits a regular file's write that moved nothing (xfer's own rule for
	   that, EIO rather than a loop, is unit-tested in test_xfer). */
	fs_write_case("answered with 0 bytes, then the rest", 0, IO, 7, STEPS(SHORT(0)), IO, 0);
	fs_write_case("EOPNOTSUPP from the ring: served synchronously", 8, IO, 8,
		      STEPS(ERR(-EOPNOTSUPP), SHORT(10)), IO, 0);
	TAP_CHECK(!(md_rd32(&drv, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET),
		  "no NEEDS_RESET after all of it");
out:
	if (mmio)
		md_wr32(&drv, VIRTIO_MMIO_STATUS, 0);
	virtio_mmio_destroy(mmio);
	virtio_fs_destroy(fs);
	if (vm)
		fake_vm_destroy(vm);
	vm = NULL;
}

/* ----------------------------------------------------------------------------- virtio-blk ---- */

/* A blk request of `size` bytes at byte `off` (IN or OUT), data in uneven pieces; returns status. */
static int blk_rw(bool write, uint64_t off, uint32_t size, const uint8_t *data, uint8_t *out)
{
	static uint8_t req[16 + IO], rep[IO + 1];
	struct virtio_blk_outhdr h = { .type = write ? VIRTIO_BLK_T_OUT : VIRTIO_BLK_T_IN,
				       .sector = off / 512 };
	uint32_t rsplit[] = { 16, 16 + 1536, 16 + 4096, 0 };
	uint32_t wsplit[] = { 512, 4096, 8192, size, 0 };
	int64_t used;

	memcpy(req, &h, sizeof(h));
	if (write) {
		memcpy(req + 16, data, size);
		used = md_roundtrip(&drv, 0, req, 16 + size, rsplit, 1, NULL, rep);
		return used == 1 ? rep[0] : -1;
	}
	used = md_roundtrip(&drv, 0, req, 16, NULL, size + 1, wsplit, rep);
	if (used < 1)
		return -1;
	memcpy(out, rep, size);
	return rep[size];
}

static void blk_read_case(const char *what, uint64_t off, const struct hf_step *steps,
			  unsigned int nsteps, int want_status)
{
	static uint8_t got[IO];
	char name[160];
	int st;

	script(FUSE_READ, steps, nsteps);
	st = blk_rw(false, off, IO, NULL, got);
	snprintf(name, sizeof(name), "blk READ %s", what);
	TAP_CHECK(st == want_status && (st != VIRTIO_BLK_S_OK || !memcmp(got, expect + off, IO)),
		  name);
	snprintf(name, sizeof(name), "blk READ %s: every scripted answer was used", what);
	TAP_CHECK(hf_steps_left(hf, FUSE_READ) == 0, name);
	script(FUSE_READ, NULL, 0);
}

static void blk_write_case(const char *what, uint64_t off, unsigned int seed,
			   const struct hf_step *steps, unsigned int nsteps)
{
	static uint8_t data[IO];
	char name[160];
	int st;

	for (uint32_t i = 0; i < IO; i++)
		data[i] = pattern(off + i, seed);
	script(FUSE_WRITE, steps, nsteps);
	st = blk_rw(true, off, IO, data, NULL);
	snprintf(name, sizeof(name), "blk WRITE %s", what);
	TAP_CHECK(st == VIRTIO_BLK_S_OK && back_equals("disk.img", off, data, IO) &&
			  hf_steps_left(hf, FUSE_WRITE) == 0,
		  name);
	memcpy(expect + off, data, IO);
	script(FUSE_WRITE, NULL, 0);
}

static void test_blk(void)
{
	struct blk_config cfg;
	struct blk_dev *blk = NULL;
	struct virtio_mmio *mmio = NULL;
	char spec[160];
	int ret;

	snprintf(spec, sizeof(spec), "%s/disk.img", sc.mnt);
	vm = fake_vm_create(RAM);
	ret = vm ? write_file("disk.img", 9) : -ENOMEM;
	if (!ret)
		ret = spec_blk_config(spec, &cfg, NULL);
	if (!ret)
		ret = blk_create(&cfg, 1, &blk);
	if (!ret)
		ret = virtio_mmio_create(vm, blk_virtio_dev(blk), &mmio);
	if (!ret)
		ret = virtio_mmio_prepare(mmio, seccomp_confine_hook, &worker_role);
	if (!ret)
		ret = md_bring_up(&drv, vm, 1, 256, 0);
	TAP_CHECK(ret == 0, "virtio-blk up with its image on the scripted FUSE mount");
	if (ret)
		goto out;
	blk_read_case("whole, no script", 0, NULL, 0, VIRTIO_BLK_S_OK);
	blk_read_case("1 byte, inside a buffer, at a boundary", 512,
		      STEPS(SHORT(1), SHORT(600), SHORT(935)), VIRTIO_BLK_S_OK);
	blk_read_case("EAGAIN and EINTR between pieces", 4096,
		      STEPS(SHORT(2048), ERR(-EAGAIN), ERR(-EINTR)),
		      VIRTIO_BLK_S_OK);
	blk_read_case("0 inside the image -> IOERR, never a short success", 0,
		      STEPS(SHORT(4096), SHORT(0)), VIRTIO_BLK_S_IOERR);
	blk_read_case("an error after progress -> IOERR", 0,
		      STEPS(SHORT(100), ERR(-EIO)), VIRTIO_BLK_S_IOERR);
	blk_write_case("short pieces", 8192, 11,
		       STEPS(SHORT(1), SHORT(511), SHORT(3000)));
	blk_write_case("EINTR, then short", 0, 12, STEPS(ERR(-EINTR), SHORT(17)));
	blk_read_case("reads back what the short writes wrote", 8192, NULL, 0, VIRTIO_BLK_S_OK);
out:
	if (mmio)
		md_wr32(&drv, VIRTIO_MMIO_STATUS, 0);
	virtio_mmio_destroy(mmio);
	blk_destroy(blk);
	if (vm)
		fake_vm_destroy(vm);
	vm = NULL;
}

int main(void)
{
	struct hf_options opt = { .cache = FS_CACHE_NEVER, .threads = 2, .no_async_dio = true };
	int ret = hf_scratch_make(&sc, "short_io");

	if (ret > 0)
		return 0;
	if (!ret)
		ret = write_file("data", 7);
	if (!ret)
		ret = hf_mount(sc.back, sc.mnt, &opt, &hf);
	TAP_CHECK(ret == 0, "scripted FUSE mount of a host directory");
	if (!ret) {
		test_fs();
		test_blk();
	}
	hf_unmount(hf);
	hf_scratch_remove(&sc);
	return tap_done();
}
