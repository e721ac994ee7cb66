/* test_blk_durable.c: virtio-blk without FLUSH writes through (RWF_DSYNC), and WRITE_ZEROES writes
   zeroes where the file system has no fallocate; on a scripted host FUSE mount that counts fsyncs. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_mmio.h>

#include "devices/blk/blk.h"
#include "tests/support/fake_vm.h"
#include "devices/virtio/mmio.h"
#include "tests/support/host_fuse.h"
#include "tests/support/mmio_driver.h"
#include "tests/support/spec.h"
#include "tests/unit/tap.h"
#include "vmm/seccomp.h"

/* The queue workers' confinement in ringvm (vmm/seccomp.h), in kill mode. */
static struct seccomp_confinement worker_role = { SECCOMP_MODE_KILL, SECCOMP_ROLE_WORKER, -1 };

#define RAM (8u << 20)
#define DISK (1u << 20)

static struct hf_scratch sc;
static struct host_fuse *hf;

struct disk {
	struct vm *vm;
	struct blk_dev *blk;
	struct virtio_mmio *mmio;
	struct mmio_driver drv;
};

/* The image on the FUSE mount, its device negotiating `features` on top of VERSION_1. */
static int disk_up(struct disk *d, uint64_t features)
{
	struct blk_config cfg;
	char spec[160];
	int ret;

	memset(d, 0, sizeof(*d));
	snprintf(spec, sizeof(spec), "%s/disk.img", sc.mnt);
	d->vm = fake_vm_create(RAM);
	ret = d->vm ? spec_blk_config(spec, &cfg, NULL) : -ENOMEM;
	if (!ret)
		ret = blk_create(&cfg, 1, &d->blk);
	if (!ret)
		ret = virtio_mmio_create(d->vm, blk_virtio_dev(d->blk), &d->mmio);
	/* The queue workers under their real seccomp filter (kill mode), as in ringvm. */
	if (!ret)
		ret = virtio_mmio_prepare(d->mmio, seccomp_confine_hook, &worker_role);
	if (!ret)
		ret = md_bring_up(&d->drv, d->vm, 1, 64, features);
	return ret;
}

static void disk_down(struct disk *d)
{
	if (d->mmio)
		md_wr32(&d->drv, VIRTIO_MMIO_STATUS, 0);
	virtio_mmio_destroy(d->mmio);
	blk_destroy(d->blk);
	if (d->vm)
		fake_vm_destroy(d->vm);
}

/* One request: header, then `len` bytes of data (OUT) or a WRITE_ZEROES segment; the status. */
static int blk_out(struct disk *d, uint32_t type, uint64_t off, const void *data, uint32_t len)
{
	static uint8_t req[16 + 65536];
	struct virtio_blk_outhdr h = { .type = type, .sector = off / 512 };
	uint8_t st = 0xff;
	int64_t used;

	memcpy(req, &h, sizeof(h));
	memcpy(req + 16, data, len);
	used = md_roundtrip(&d->drv, 0, req, 16 + len, NULL, 1, NULL, &st);
	return used == 1 ? st : -1;
}

static bool back_is(uint64_t off, uint8_t byte, size_t len)
{
	char path[160];
	uint8_t *buf = malloc(len);
	bool ok;
	int fd;

	snprintf(path, sizeof(path), "%s/disk.img", sc.back);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ok = buf && fd >= 0 && pread(fd, buf, len, (off_t)off) == (ssize_t)len;
	for (size_t i = 0; ok && i < len; i++)
		ok = buf[i] == byte;
	if (fd >= 0)
		close(fd);
	free(buf);
	return ok;
}

static void test_writethrough(void)
{
	static uint8_t data[4096];
	struct disk d;
	int ret;

	memset(data, 0x5a, sizeof(data));
	ret = disk_up(&d, 1ULL << VIRTIO_BLK_F_FLUSH);
	TAP_CHECK(ret == 0, "disk up, FLUSH negotiated");
	hf_script(hf, FUSE_FSYNC, NULL, 0);
	TAP_CHECK(!ret && blk_out(&d, VIRTIO_BLK_T_OUT, 0, data, sizeof(data)) == VIRTIO_BLK_S_OK &&
			  hf_served(hf, FUSE_FSYNC) == 0,
		  "with FLUSH: a write completes without an fsync (the driver flushes when it wants)");
	disk_down(&d);

	ret = disk_up(&d, 0);
	TAP_CHECK(ret == 0, "disk up, FLUSH not negotiated");
	hf_script(hf, FUSE_FSYNC, NULL, 0);
	TAP_CHECK(!ret && blk_out(&d, VIRTIO_BLK_T_OUT, 4096, data, sizeof(data)) == VIRTIO_BLK_S_OK &&
			  hf_served(hf, FUSE_FSYNC) >= 1 && back_is(4096, 0x5a, sizeof(data)),
		  "without FLUSH: the write was synced (RWF_DSYNC) before it completed");
	disk_down(&d);
}

static void test_write_zeroes(void)
{
	static const struct hf_step nofalloc[] = { { .kind = HF_ERROR, .err = -EOPNOTSUPP, .times = 1000 } };
	struct virtio_blk_discard_write_zeroes seg = { .sector = 16, .num_sectors = 256 };
	static uint8_t ff[65536];
	struct disk d;
	int ret;

	memset(ff, 0xff, sizeof(ff));
	ret = disk_up(&d, (1ULL << VIRTIO_BLK_F_FLUSH) | (1ULL << VIRTIO_BLK_F_WRITE_ZEROES));
	TAP_CHECK(ret == 0, "disk up with WRITE_ZEROES");
	ret = ret ? ret : blk_out(&d, VIRTIO_BLK_T_OUT, 0, ff, sizeof(ff));
	ret = ret ? ret : blk_out(&d, VIRTIO_BLK_T_OUT, 65536, ff, sizeof(ff));
	ret = ret ? ret : blk_out(&d, VIRTIO_BLK_T_OUT, 131072, ff, sizeof(ff));
	TAP_CHECK(ret == VIRTIO_BLK_S_OK && back_is(0, 0xff, 3 * 65536), "192 KiB of 0xff written");
	hf_script(hf, FUSE_FALLOCATE, nofalloc, 1);
	TAP_CHECK(blk_out(&d, VIRTIO_BLK_T_WRITE_ZEROES, 0, &seg, sizeof(seg)) == VIRTIO_BLK_S_OK,
		  "WRITE_ZEROES of 128 KiB at 8 KiB with no fallocate at all: OK");
	TAP_CHECK(back_is(0, 0xff, 8192) && back_is(8192, 0, 131072) &&
			  back_is(8192 + 131072, 0xff, 3 * 65536 - 8192 - 131072),
		  "the range reads back as zeroes, its neighbours untouched");
	TAP_CHECK(hf_served(hf, FUSE_FALLOCATE) >= 1,
		  "fallocate was tried first (and refused by the file system)");
	hf_script(hf, FUSE_FALLOCATE, NULL, 0);
	disk_down(&d);
}

int main(void)
{
	struct hf_options opt = { .cache = FS_CACHE_AUTO, .threads = 2 };
	char path[160];
	int ret = hf_scratch_make(&sc, "blk_durable");

	if (ret > 0)
		return 0;
	snprintf(path, sizeof(path), "%s/disk.img", sc.back);
	int fd = ret ? -1 : open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
	if (!ret && (fd < 0 || ftruncate(fd, DISK) < 0))
		ret = -errno;
	if (fd >= 0)
		close(fd);
	if (!ret)
		ret = hf_mount(sc.back, sc.mnt, &opt, &hf);
	TAP_CHECK(ret == 0, "scripted FUSE mount holding a 1 MiB image");
	if (!ret) {
		test_writethrough();
		test_write_zeroes();
	}
	hf_unmount(hf);
	hf_scratch_remove(&sc);
	return tap_done();
}
