/*
 * fuzz_vu_session.c: libFuzzer target for the vhost-user back-end's connection state machine with
 * virtio-blk behind it, on a small file (the session itself: tests/fuzz/vu_session.c). The
 * device's own operation is a well-formed block request: a read, write, flush or GET_ID that
 * really reaches the file while the messages around it change the rings and the memory under it.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/virtio_blk.h>

#include "devices/blk/blk.h"
#include "tests/fuzz/vu_session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define DISK_BYTES (256u << 10)

/* A well-formed block request on a ring (the device really reads or writes the file). */
static int op_blk(struct vs_cursor *c, struct vu_front *f)
{
	unsigned int q = vs_take(c, 1) % VS_QUEUES;
	if (!f->ring[q].size || !f->ring[0].size)
		return 0;
	static const uint32_t type[] = { VIRTIO_BLK_T_IN, VIRTIO_BLK_T_OUT, VIRTIO_BLK_T_FLUSH,
					 VIRTIO_BLK_T_GET_ID };
	struct vuf_blk_req io;
	uint32_t len = 512 * (1 + (uint32_t)vs_take(c, 1) % 8);
	uint32_t t = type[vs_take(c, 1) % 4];
	uint64_t sector = vs_take(c, 1);
	vuf_blk_put(f, q, &io, t, vs_pick(c, sector, DISK_BYTES / 512), len, NULL);
	vuf_kick(f, q);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vu_backend *backend;
	if (!backend) {
		char path[] = "/tmp/ringvm-fuzz-vu.XXXXXX";
		int fd = mkstemp(path);
		struct blk_config cfg;
		memset(&cfg, 0, sizeof(cfg));
		snprintf(cfg.path, sizeof(cfg.path), "%s", path);
		cfg.queues = VS_QUEUES;
		struct blk_dev *blk;
		if (fd < 0 || ftruncate(fd, DISK_BYTES) < 0 || blk_create(&cfg, 1, &blk) ||
		    vu_backend_create(blk_virtio_dev(blk), "fuzz", &backend) ||
		    vu_backend_prepare(backend, NULL, NULL))
			abort();
		close(fd);
		unlink(path); /* the device holds it open */
	}
	vs_run(backend, data, size, op_blk);
	return 0;
}
