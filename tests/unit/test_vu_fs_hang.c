/* test_vu_fs_hang.c: a READ abandoned under a vhost-user memory table must never copy into memory
   the address space hands out again: the table's mapping is kept reserved, inaccessible. virtio-fs
   over a scripted host FUSE mount that holds a READ until the test lets it go. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/fuse.h>

#include "devices/fs/virtio_fs.h"
#include "devices/vhost_user/vu_backend.h"
#include "devices/virtio/core.h"
#include "tests/support/fuse_req.h"
#include "tests/support/host_fuse.h"
#include "tests/support/proc_maps.h"
#include "tests/support/vu_front.h"
#include "tests/unit/tap.h"
#include "vmm/seccomp.h"

/* The queue workers' confinement in ringvm (vmm/seccomp.h), in kill mode. */
static struct seccomp_confinement worker_role = { SECCOMP_MODE_KILL, SECCOMP_ROLE_WORKER_FS, -1 };

#define RAM (16u << 20)
#define QSIZE 64
#define FILE_BYTES 65536u
#define READ_BYTES 8192u

/* The back-end's view of the front-end's memfd: its inode, at another address than the front-end's. */
static bool backend_view(const struct pm_map *m, const void *arg)
{
	const struct vu_front *f = arg;
	struct stat st;

	return fstat(f->memfd, &st) == 0 && m->inode == st.st_ino && m->start != (uintptr_t)f->ram;
}

static bool range_free(const struct pm_map *m)
{
	return pm_range_free(m->start, m->end - m->start);
}

static bool up(struct vu_front *f, struct vu_backend *b)
{
	return vuf_open(f, b, RAM, true) == 0 && vuf_negotiate(f, true) == 0 &&
	       vuf_ring(f, 0, QSIZE, 0) == 0 && vuf_ring(f, 1, QSIZE, 0) == 0;
}

/* LOOKUP and OPEN `name` read-only in the root: 0 and its nodeid and fh, or -1. */
static int open_file(struct vu_front *f, const char *name, uint64_t *nodeid, uint64_t *fh)
{
	unsigned char req[256], rep[4096];
	const struct fuse_out_header *oh = (const void *)rep;
	uint32_t len = fuse_mkreq(req, FUSE_LOOKUP, 1, name, (uint32_t)strlen(name) + 1);

	if (vuf_fuse(f, 1, req, len, sizeof(rep), rep) <= 0 || oh->error)
		return -1;
	*nodeid = ((const struct fuse_entry_out *)(rep + sizeof(*oh)))->nodeid;
	struct fuse_open_in oi = { .flags = O_RDONLY };
	len = fuse_mkreq(req, FUSE_OPEN, *nodeid, &oi, sizeof(oi));
	if (vuf_fuse(f, 1, req, len, sizeof(rep), rep) <= 0 || oh->error)
		return -1;
	*fh = ((const struct fuse_open_out *)(rep + sizeof(*oh)))->fh;
	return 0;
}

static uint8_t pattern(uint64_t off)
{
	return (uint8_t)(off * 7 + off / 251);
}

static void run(const char *mnt, struct host_fuse *hf)
{
	struct fs_config cfg = { .cache = FS_CACHE_AUTO, .queues = 1 };
	struct virtio_fs *fs = NULL;
	struct vu_backend *backend = NULL;
	struct vu_front f;
	unsigned char req[256], rep[16 + READ_BYTES];
	uint64_t nodeid = 0, fh = 0;

	snprintf(cfg.host_dir, sizeof(cfg.host_dir), "%s", mnt);
	snprintf(cfg.tag, sizeof(cfg.tag), "test");
	bool ok = virtio_fs_create(&cfg, &fs) == 0 &&
		  vu_backend_create(virtio_fs_virtio_dev(fs), "fs-hang", &backend) == 0 &&
		  vu_backend_prepare(backend, seccomp_confine_hook, &worker_role) == 0 && up(&f, backend);
	TAP_CHECK(ok, "virtio-fs on the scripted mount, on a vhost-user back-end, rings up");
	if (!ok)
		goto out_destroy;
	ok = vuf_fuse_init(&f, 1, rep) > 0 && open_file(&f, "data", &nodeid, &fh) == 0;
	TAP_CHECK(ok, "INIT, LOOKUP and OPEN of the file");

	/* Control: with nothing abandoned, a replaced table's mapping goes back to the address space. */
	struct pm_map old = { 0 }, now = { 0 };
	ok = ok && pm_find(backend_view, &f, &old) && vuf_mem_table(&f) == 0 &&
	     pm_find(backend_view, &f, &now) && now.start != old.start;
	TAP_CHECK(ok, "the same memory table sent again: the back-end maps it anew");
	TAP_CHECK(ok && range_free(&old),
		  "nothing abandoned: the old mapping was given back (its addresses are free)");
	if (!ok)
		goto out_close;

	/* A READ the file system holds: the host kernel's read-ahead waits for it in an io-wq worker,
	   which no cancel reaches. */
	static const struct hf_step hold[] = { { .kind = HF_HOLD } };
	struct fuse_read_in ri = { .fh = fh, .offset = 0, .size = READ_BYTES };
	unsigned int before = hf_served(hf, FUSE_READ);
	hf_script(hf, FUSE_READ, hold, 1);
	uint32_t len = fuse_mkreq(req, FUSE_READ, nodeid, &ri, sizeof(ri));
	uint64_t held = vuf_fuse_post(&f, 1, req, len, sizeof(rep));
	for (int i = 0; i < 10000 && hf_served(hf, FUSE_READ) == before; i++)
		usleep(1000); /* a wait for the file system to have it, not a verdict */
	ok = hf_served(hf, FUSE_READ) > before;
	TAP_CHECK(ok, "the READ is held by the host file system");
	if (!ok)
		goto out_close;

	/* A new table: the ring stops, and gives up on the READ after its pause drain and stop wait
	   (virtio/core.h VIRTIO_CORE_PAUSE_DRAIN_MS, then a second). */
	old = now;
	f.reply_ms = VIRTIO_CORE_PAUSE_DRAIN_MS + 10000;
	ok = vuf_mem_table(&f) == 0;
	f.reply_ms = 0;
	TAP_CHECK(ok, "a new memory table with the READ held: accepted once the ring gave the READ up");
	int64_t used = vuf_fuse_wait(&f, 1, held, sizeof(rep), rep);
	TAP_CHECK(used == 16 && fuse_reply_error(rep) < 0,
		  "the held READ was answered with an error (abandoned)");
	struct pm_map at = { 0 };
	TAP_CHECK(!range_free(&old),
		  "the abandoned READ's mapping stays reserved: nothing can be mapped where it copies");
	TAP_CHECK(pm_at((const void *)old.start, &at) && at.start <= old.start && at.end >= old.end &&
			  !strcmp(at.perms, "---p") && at.inode == 0,
		  "the reservation is inaccessible and holds none of the guest's memory");

	/* The file system answers: the late copy faults in the reservation, and touches nothing. */
	hf_release(hf);
	ri.size = READ_BYTES;
	len = fuse_mkreq(req, FUSE_READ, nodeid, &ri, sizeof(ri));
	used = vuf_fuse(&f, 1, req, len, sizeof(rep), rep);
	bool same = used == 16 + READ_BYTES && fuse_reply_error(rep) == 0;
	for (uint32_t i = 0; same && i < READ_BYTES; i++)
		same = rep[16 + i] == pattern(i);
	TAP_CHECK(same, "released: a READ on the new table returns the file's bytes");

out_close:
	vuf_close(&f);
	TAP_CHECK(f.result == 0, "disconnect: the back-end ends cleanly");
out_destroy:
	vu_backend_destroy(backend);
	virtio_fs_destroy(fs);
}

int main(void)
{
	struct hf_scratch sc;
	struct hf_options opt = { .cache = FS_CACHE_AUTO, .threads = 2 };
	struct host_fuse *hf = NULL;
	uint8_t buf[FILE_BYTES];
	char path[160];
	int err = hf_scratch_make(&sc, "vu_fs_hang");

	if (err)
		return err > 0 ? 0 : 1;
	snprintf(path, sizeof(path), "%s/data", sc.back);
	for (uint32_t i = 0; i < FILE_BYTES; i++)
		buf[i] = pattern(i);
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		return 1;
	close(fd);
	err = hf_mount(sc.back, sc.mnt, &opt, &hf);
	TAP_CHECK(err == 0, "the scripted file system is mounted");
	if (!err)
		run(sc.mnt, hf);
	hf_unmount(hf);
	hf_scratch_remove(&sc);
	return tap_done();
}
