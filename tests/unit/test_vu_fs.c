/* test_vu_fs.c: virtio-fs over the vhost-user back-end: FUSE INIT, CREATE, WRITE, READ, reconnect. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/fuse.h>

#include "devices/fs/virtio_fs.h"
#include "devices/vhost_user/vu_backend.h"
#include "tests/support/fuse_req.h"
#include "tests/unit/tap.h"
#include "tests/support/vu_front.h"
#include "vmm/seccomp.h"

/* The queue workers' confinement in ringvm (vmm/seccomp.h), in kill mode. */
static struct seccomp_confinement worker_role = { SECCOMP_MODE_KILL, SECCOMP_ROLE_WORKER_FS, -1 };

#define RAM (16u << 20)
#define QSIZE 64

static struct vu_backend *backend;
static char dir[64];

/* Connect, negotiate and start the hiprio queue (0) and request queue 1. */
static bool up(struct vu_front *f)
{
	return vuf_open(f, backend, RAM, true) == 0 && vuf_negotiate(f, true) == 0 &&
	       vuf_ring(f, 0, QSIZE, 0) == 0 && vuf_ring(f, 1, QSIZE, 0) == 0;
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ringvm-vu-fs.XXXXXX");
	struct fs_config cfg = { .cache = FS_CACHE_AUTO, .queues = 1 };
	struct virtio_fs *fs = NULL;
	bool ok = mkdtemp(dir) != NULL;
	if (ok) {
		snprintf(cfg.host_dir, sizeof(cfg.host_dir), "%s", dir);
		snprintf(cfg.tag, sizeof(cfg.tag), "test");
		ok = virtio_fs_create(&cfg, &fs) == 0 &&
		     vu_backend_create(virtio_fs_virtio_dev(fs), "fs-test", &backend) == 0 &&
		     vu_backend_prepare(backend, seccomp_confine_hook, &worker_role) == 0;
	}
	TAP_CHECK(ok, "virtio-fs on a temp directory, on a vhost-user back-end");
	if (!ok)
		return tap_done();
	int fds = vuf_count_fds();

	struct vu_front f;
	unsigned char req[8192], rep[8192];
	const struct fuse_out_header *oh = (const void *)rep;
	uint64_t v = 0;
	TAP_CHECK(up(&f), "hiprio and request queue set up");
	TAP_CHECK(vuf_get_u64(&f, VU_GET_QUEUE_NUM, &v) == 0 && v == 2, "GET_QUEUE_NUM: 2");
	int64_t used = vuf_fuse_init(&f, 1, rep);
	TAP_CHECK(used == sizeof(struct fuse_out_header) + sizeof(struct fuse_init_out) &&
			  oh->error == 0,
		  "FUSE INIT over request queue 1");
	TAP_CHECK(vuf_wait_call(&f, 1, 2000) > 0, "its call eventfd was signalled");

	struct fuse_create_in ci = { .flags = O_RDWR, .mode = 0644 };
	unsigned char body[64];
	memcpy(body, &ci, sizeof(ci));
	memcpy(body + sizeof(ci), "hello.txt", 10);
	uint32_t len = fuse_mkreq(req, FUSE_CREATE, 1, body, sizeof(ci) + 10);
	used = vuf_fuse(&f, 1, req, len, 4096, rep);
	TAP_CHECK(used == sizeof(*oh) + sizeof(struct fuse_entry_out) + sizeof(struct fuse_open_out) &&
			  oh->error == 0,
		  "CREATE hello.txt");
	uint64_t nodeid = ((struct fuse_entry_out *)(rep + sizeof(*oh)))->nodeid;
	uint64_t fh = ((struct fuse_open_out *)(rep + sizeof(*oh) + sizeof(struct fuse_entry_out)))->fh;

	struct fuse_write_in wi = { .fh = fh, .offset = 0, .size = 3000 };
	unsigned char wb[sizeof(wi) + 3000];
	memcpy(wb, &wi, sizeof(wi));
	for (int i = 0; i < 3000; i++)
		wb[sizeof(wi) + i] = (unsigned char)('a' + i % 26);
	len = fuse_mkreq(req, FUSE_WRITE, nodeid, wb, sizeof(wb));
	used = vuf_fuse(&f, 1, req, len, 64, rep);
	TAP_CHECK(used == sizeof(*oh) + sizeof(struct fuse_write_out) && oh->error == 0 &&
			  ((struct fuse_write_out *)(rep + sizeof(*oh)))->size == 3000,
		  "WRITE 3000 bytes");
	char host[4096];
	snprintf(host, sizeof(host), "%s/hello.txt", dir);
	int hfd = open(host, O_RDONLY | O_CLOEXEC);
	TAP_CHECK(hfd >= 0 && pread(hfd, host, 3000, 0) == 3000 && !memcmp(host, wb + sizeof(wi), 3000),
		  "the host file holds the bytes");
	if (hfd >= 0)
		close(hfd);
	struct fuse_read_in ri = { .fh = fh, .offset = 100, .size = 2000 };
	len = fuse_mkreq(req, FUSE_READ, nodeid, &ri, sizeof(ri));
	used = vuf_fuse(&f, 1, req, len, 16 + 2000, rep);
	TAP_CHECK(used == 16 + 2000 && oh->error == 0 && !memcmp(rep + 16, wb + sizeof(wi) + 100, 2000),
		  "READ 2000 bytes back, checked against what the host file holds");

	vuf_close(&f);
	TAP_CHECK(f.result == 0 && vuf_count_fds() == fds,
		  "disconnect: the back-end ends cleanly, no fd left (the session's files closed)");

	bool again = up(&f);
	TAP_CHECK(again, "a new front-end connects");
	if (!again) { /* no rings to drive: the checks below would only crash */
		vuf_close(&f);
		return tap_done();
	}
	len = fuse_mkreq(req, FUSE_GETATTR, nodeid, (struct fuse_getattr_in[1]){ { 0 } },
		    sizeof(struct fuse_getattr_in));
	used = vuf_fuse(&f, 1, req, len, 4096, rep);
	TAP_CHECK(used == 16 && fuse_reply_error(rep) == -EIO,
		  "before its INIT, the old session's requests fail (the device was reset)");
	used = vuf_fuse_init(&f, 1, rep);
	TAP_CHECK(used > 0 && oh->error == 0, "INIT again");
	used = vuf_fuse(&f, 1, req, len, 4096, rep);
	TAP_CHECK(used == 16 && fuse_reply_error(rep) == -ESTALE,
		  "the old nodeid is forgotten (ESTALE): reconnect means a new session");
	len = fuse_mkreq(req, FUSE_LOOKUP, 1, "hello.txt", 10);
	used = vuf_fuse(&f, 1, req, len, 4096, rep);
	TAP_CHECK(used == sizeof(*oh) + sizeof(struct fuse_entry_out) && oh->error == 0 &&
			  ((struct fuse_entry_out *)(rep + sizeof(*oh)))->attr.size == 3000,
		  "LOOKUP finds the file written in the first session");
	vuf_close(&f);
	TAP_CHECK(vuf_count_fds() == fds, "no fd leaked");

	vu_backend_destroy(backend);
	virtio_fs_destroy(fs);
	snprintf(host, sizeof(host), "%s/hello.txt", dir);
	unlink(host);
	rmdir(dir);
	return tap_done();
}
