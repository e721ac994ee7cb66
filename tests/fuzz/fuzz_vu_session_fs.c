/*
 * fuzz_vu_session_fs.c: libFuzzer target for the vhost-user back-end's connection state machine with
 * virtio-fs behind it, sharing a small directory (the session itself: tests/fuzz/vu_session.c).
 * The device's own operation is a FUSE request the input shapes (an opcode of the common ones, the
 * node, the body's fields, a name, the reply's room), posted on either queue without waiting: the
 * FUSE session, its open files and its inodes live on while the messages around them change the
 * rings and the memory, and die with the device reset that a hang-up is. The session's fd check
 * then says that every file the guest opened was closed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/fuse.h>

#include "devices/fs/virtio_fs.h"
#include "tests/fuzz/vu_session.h"
#include "tests/support/fuse_req.h"
#include "tests/support/tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An opcode and the size of its fixed body; `named`: a name follows it. */
struct fuse_op {
	uint32_t opcode;
	uint32_t body;
	bool named;
};

static const struct fuse_op fuse_ops[] = {
	{ FUSE_INIT, sizeof(struct fuse_init_in), false },
	{ FUSE_LOOKUP, 0, true },
	{ FUSE_GETATTR, sizeof(struct fuse_getattr_in), false },
	{ FUSE_OPEN, sizeof(struct fuse_open_in), false },
	{ FUSE_READ, sizeof(struct fuse_read_in), false },
	{ FUSE_WRITE, sizeof(struct fuse_write_in), false },
	{ FUSE_CREATE, sizeof(struct fuse_create_in), true },
	{ FUSE_RELEASE, sizeof(struct fuse_release_in), false },
	{ FUSE_FLUSH, sizeof(struct fuse_flush_in), false },
	{ FUSE_FORGET, sizeof(struct fuse_forget_in), false },
	{ FUSE_OPENDIR, sizeof(struct fuse_open_in), false },
	{ FUSE_READDIRPLUS, sizeof(struct fuse_read_in), false },
	{ FUSE_RELEASEDIR, sizeof(struct fuse_release_in), false },
	{ FUSE_MKDIR, sizeof(struct fuse_mkdir_in), true },
	{ FUSE_UNLINK, 0, true },
	{ FUSE_SETATTR, sizeof(struct fuse_setattr_in), false },
	{ FUSE_FSYNC, sizeof(struct fuse_fsync_in), false },
	{ FUSE_STATFS, 0, false },
	{ FUSE_DESTROY, 0, false },
};

/* A FUSE request on a ring: 0 (nothing waits for its reply; the session goes on). */
static int op_fuse(struct vs_cursor *c, struct vu_front *f)
{
	static const char *const names[] = { "a", "d", "new", "..", "" };
	unsigned int q = vs_take(c, 1) % VS_QUEUES;
	if (!f->ring[q].size || !f->ring[0].size)
		return 0;
	const struct fuse_op *op = &fuse_ops[vs_take(c, 1) % (sizeof(fuse_ops) / sizeof(fuse_ops[0]))];
	uint64_t nodeid = vs_pick(c, 1, vs_take(c, 1));
	uint8_t body[sizeof(struct fuse_setattr_in) + 64] = { 0 };
	uint32_t len = op->body;
	if (op->opcode == FUSE_INIT) {
		struct fuse_init_in in = { .max_readahead = 131072 };
		in.major = (uint32_t)vs_pick(c, FUSE_KERNEL_VERSION, 6);
		in.minor = (uint32_t)vs_pick(c, 38, 0);
		in.flags = (uint32_t)vs_take(c, 4);
		memcpy(body, &in, sizeof(in));
	} else {
		/* Fields from the input: handles and small offsets are small numbers, often right. */
		for (uint32_t i = 0; i < len; i++)
			body[i] = (uint8_t)vs_take(c, 1);
	}
	if (op->named) {
		const char *name = names[vs_take(c, 1) % (sizeof(names) / sizeof(names[0]))];
		memcpy(body + len, name, strlen(name) + 1);
		len += (uint32_t)strlen(name) + 1;
	}
	len = (uint32_t)vs_pick(c, len, vs_take(c, 1)) % sizeof(body);
	uint8_t req[sizeof(struct fuse_in_header) + sizeof(body)];
	uint32_t n = fuse_mkreq(req, op->opcode, nodeid, body, len);
	uint32_t room = (uint32_t)vs_pick(c, 4096, vs_take(c, 1));
	(void)vuf_fuse_post(f, q, req, n, room % 8192);
	return 0;
}

static char dir[] = "/tmp/ringvm-fuzz-vu-fs.XXXXXX";

/* At exit (libFuzzer's end): the share and what the sessions created in it. */
static void remove_share(void)
{
	(void)tree_remove(dir); /* what cannot go stays: a leftover, not a failure */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vu_backend *backend;
	if (!backend) {
		struct fs_config cfg = { .cache = FS_CACHE_AUTO, .queues = 1 };
		struct virtio_fs *fs;
		char path[sizeof(dir) + 8];
		if (!mkdtemp(dir))
			abort();
		atexit(remove_share);
		snprintf(path, sizeof(path), "%s/a", dir);
		int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		if (fd < 0 || pwrite(fd, "some bytes of a", 15, 0) != 15)
			abort();
		close(fd);
		snprintf(path, sizeof(path), "%s/d", dir);
		if (mkdir(path, 0755) < 0)
			abort();
		snprintf(cfg.host_dir, sizeof(cfg.host_dir), "%s", dir);
		snprintf(cfg.tag, sizeof(cfg.tag), "fuzz");
		if (virtio_fs_create(&cfg, &fs) ||
		    vu_backend_create(virtio_fs_virtio_dev(fs), "fuzz-fs", &backend) ||
		    vu_backend_prepare(backend, NULL, NULL))
			abort();
	}
	vs_run(backend, data, size, op_fuse);
	return 0;
}
