/* test_fs_hang.c: a READ the host file system never answers must not wedge the VMM: device reset
   and teardown finish in bounded time. virtio-fs over a scripted host FUSE mount that hangs. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/virtio_mmio.h>

#include "devices/fs/virtio_fs.h"
#include "tests/support/fake_vm.h"
#include "devices/virtio/mmio.h"
#include "tests/support/fs_guest.h"
#include "tests/support/fuse_req.h"
#include "tests/support/host_fuse.h"
#include "tests/support/mmio_driver.h"
#include "tests/support/spec.h"
#include "tests/unit/tap.h"
#include "vmm/seccomp.h"

/* The queue workers' confinement in ringvm (vmm/seccomp.h), in kill mode. */
static struct seccomp_confinement worker_role = { SECCOMP_MODE_KILL, SECCOMP_ROLE_WORKER_FS, -1 };

#define RAM (16u << 20)
/* How long a reset or teardown may take before the test calls it wedged: far above the worker's
   1 s stop wait, far below forever. */
#define WEDGED_S 30

static struct hf_scratch sc;
static struct host_fuse *hf;
static struct vm *vm;
static struct mmio_driver drv;
static struct virtio_fs *fs;
static struct virtio_mmio *mmio;

/* Bring the device up, open the file, send a READ the file system will never answer, and wait
   (not a verdict) until the file system has it. */
static int hang_a_read(void)
{
	static const struct hf_step hang[] = { { .kind = HF_HANG, .times = 1000 } };
	struct fuse_read_in in = { .size = 8192 };
	uint8_t req[128];
	unsigned int before;
	int ret = md_bring_up(&drv, vm, 2, 256, 0);

	if (!ret)
		ret = fsg_open_file(&drv, 1, "data", O_RDONLY, &in.offset, &in.fh); /* offset: the nodeid, for now */
	if (ret)
		return ret;
	hf_script(hf, FUSE_READ, hang, 1);
	before = hf_served(hf, FUSE_READ);
	{
		uint64_t nodeid = in.offset;
		uint32_t len;

		in.offset = 0;
		len = fuse_mkreq(req, FUSE_READ, nodeid, &in, sizeof(in));
		md_send(&drv, 1, req, len, NULL, 16 + 8192, NULL, NULL);
	}
	for (int i = 0; i < 10000 && hf_served(hf, FUSE_READ) == before; i++)
		usleep(1000);
	return hf_served(hf, FUSE_READ) > before ? 0 : -4;
}

enum { DO_RESET, DO_DESTROY };

static void *do_stop(void *arg)
{
	if ((intptr_t)arg == DO_RESET) {
		md_wr32(&drv, VIRTIO_MMIO_STATUS, 0);
	} else {
		virtio_mmio_destroy(mmio);
		mmio = NULL;
	}
	return NULL;
}

/* Run the stop on a thread; true when it returned within WEDGED_S. *ms: how long it took. */
static bool bounded(intptr_t what, double *ms)
{
	struct timespec t0, t1, dl;
	pthread_t t;
	bool ok;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += WEDGED_S;
	if (pthread_create(&t, NULL, do_stop, (void *)what))
		return false;
	ok = pthread_timedjoin_np(t, NULL, &dl) == 0;
	if (!ok)
		pthread_detach(t); /* wedged: leave it; unmounting below may still free it */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	return ok;
}

static void run_mode(const char *mode, bool no_async_dio)
{
	struct hf_options opt = { .cache = FS_CACHE_NEVER, .threads = 2, .no_async_dio = no_async_dio };
	struct fs_config cfg;
	const char *why;
	char spec[160], name[200];
	double ms = 0;
	int ret;

	ret = hf_mount(sc.back, sc.mnt, &opt, &hf);
	snprintf(spec, sizeof(spec), "%s:/s,cache=never", sc.mnt);
	vm = ret ? NULL : fake_vm_create(RAM);
	ret = vm ? spec_fs_config(spec, &cfg, &why) : -ENOMEM;
	if (!ret)
		ret = virtio_fs_create(&cfg, &fs);
	if (!ret)
		ret = virtio_mmio_create(vm, virtio_fs_virtio_dev(fs), &mmio);
	/* The queue workers under their real seccomp filter (kill mode): the stop, its cancel
	   and the abandon all happen there. */
	if (!ret)
		ret = virtio_mmio_prepare(mmio, seccomp_confine_hook, &worker_role);
	if (!ret)
		ret = hang_a_read();
	snprintf(name, sizeof(name), "%s: a READ is stuck in the host file system", mode);
	TAP_CHECK(ret == 0, name);
	if (ret)
		goto out;
	snprintf(name, sizeof(name), "%s: device reset with the READ in flight finishes", mode);
	TAP_CHECK(bounded(DO_RESET, &ms), name);
	printf("# %s: reset took %.0f ms\n", mode, ms);
	ret = hang_a_read();
	snprintf(name, sizeof(name), "%s: after the reset the device works, another READ is stuck", mode);
	TAP_CHECK(ret == 0, name);
	snprintf(name, sizeof(name), "%s: teardown (ringvm's exit path) with the READ in flight finishes",
		 mode);
	TAP_CHECK(ret == 0 && bounded(DO_DESTROY, &ms), name);
	printf("# %s: teardown took %.0f ms\n", mode, ms);
out:
	/* Unmounting aborts the connection: the abandoned READs end with an error now. */
	hf_unmount(hf);
	hf = NULL;
	if (mmio) {
		virtio_mmio_destroy(mmio);
		mmio = NULL;
	}
	virtio_fs_destroy(fs);
	fs = NULL;
	if (vm)
		fake_vm_destroy(vm);
	vm = NULL;
}

int main(void)
{
	char path[160];
	int ret = hf_scratch_make(&sc, "fs_hang");

	if (ret)
		return ret > 0 ? 0 : 1;
	snprintf(path, sizeof(path), "%s/data", sc.back);
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, 65536) < 0)
		return 1;
	close(fd);
	/* The READ waits in an io-wq worker (synchronous direct I/O) / in FUSE's async queue. */
	run_mode("io-wq worker blocked", true);
	run_mode("async direct I/O pending", false);
	hf_scratch_remove(&sc);
	return tap_done();
}
