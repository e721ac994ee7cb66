/* setup.c: the vhost-user handshake, the queues, and the setup requests before a run. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/fuse.h>
#include <linux/virtio_fs.h>
#include <linux/virtio_ring.h>

#include "tests/bench/device/setup.h"
#include "tests/bench/device/target.h"
#include "tests/bench/device/workload.h"

/* The hiprio queue of virtio-fs: started like a guest would, never used by the workloads. */
#define HIPRIO_SIZE 16

static struct dvq hiprio = { .kick_fd = -1, .call_fd = -1 };

static int say(int err, const char *what, const char *detail)
{
	fprintf(stderr, "device bench: %s: %s\n", what, detail && detail[0] ? detail : strerror(-err));
	return err;
}

static int lookup(struct bench *b, uint64_t parent, const char *name, uint64_t *nodeid)
{
	struct op op = { .kind = OP_LOOKUP, .nodeid = parent };
	struct op_result r;
	int err;

	snprintf(op.name, sizeof(op.name), "%s", name);
	err = target_sync(&b->jobv[0], &op, &r);
	if (err)
		return say(err, "LOOKUP", b->jobv[0].errmsg);
	if (r.err)
		return say(r.err, name, NULL);
	*nodeid = r.nodeid;
	return 0;
}

/* FUSE INIT, then what the workload needs to find. */
static int fs_requests(struct bench *b)
{
	struct job *j0 = &b->jobv[0];
	struct op op = { .kind = OP_INIT };
	struct op_result r;
	char name[OP_NAME_MAX];
	uint64_t tree, untar;
	int err = target_sync(j0, &op, &r);

	if (err || r.err)
		return say(err ? err : r.err, "FUSE INIT", err ? j0->errmsg : NULL);
	b->max_write = (uint32_t)r.size;
	b->fuse_minor = r.mode;
	b->killpriv_v2 = b->has_writer_uid && (r.flags & FUSE_HANDLE_KILLPRIV_V2);
	err = lookup(b, FUSE_ROOT_ID, DATA_NAME, &b->data_nodeid);
	if (err)
		return err;
	op = (struct op){ .kind = OP_OPEN, .nodeid = b->data_nodeid,
			  .flags = O_RDWR | (b->direct ? O_DIRECT : 0) };
	err = target_sync(j0, &op, &r);
	if (err || r.err)
		return say(err ? err : r.err, "OPEN " DATA_NAME, err ? j0->errmsg : NULL);
	b->data_fh = r.fh;
	if (b->workload == WL_META) {
		uint32_t dirs = (b->tree_files + TREE_DIR_FILES - 1) / TREE_DIR_FILES;

		b->dir_nodeids = calloc(dirs, sizeof(*b->dir_nodeids));
		if (!b->dir_nodeids)
			return -ENOMEM;
		err = lookup(b, FUSE_ROOT_ID, TREE_NAME, &tree);
		for (uint32_t d = 0; !err && d < dirs; d++) {
			wl_tree_dir_name(name, d);
			err = lookup(b, tree, name, &b->dir_nodeids[d]);
		}
		return err;
	}
	if (b->workload == WL_UNTAR) {
		err = lookup(b, FUSE_ROOT_ID, UNTAR_NAME, &untar);
		for (unsigned int i = 0; !err && i < b->jobs; i++) {
			snprintf(name, sizeof(name), "j%u", i);
			err = lookup(b, untar, name, &b->jobv[i].dir_nodeid);
		}
		return err;
	}
	return 0;
}

static int host_open(struct bench *b)
{
	b->host_fd = open(b->file, (b->workload == WL_RANDWRITE ? O_RDWR : O_RDONLY) |
					   (b->direct ? O_DIRECT : 0) | O_CLOEXEC);
	if (b->host_fd < 0)
		return say(-errno, b->file, NULL);
	return 0;
}

/* Config space: the tag and request queues of virtio-fs, the capacity and queues of virtio-blk. */
static int read_config(struct bench *b, unsigned int *queues)
{
	int err;

	if (b->target == TARGET_FS) {
		struct virtio_fs_config c;

		err = vu_get_config(&b->vu, &c, sizeof(c));
		if (err == -EOPNOTSUPP) {
			/* C virtiofsd leaves config space to QEMU: count from GET_QUEUE_NUM. */
			snprintf(b->tag, sizeof(b->tag), "(no GET_CONFIG)");
			*queues = b->vu.max_queues > 1 ? b->vu.max_queues - 1 : 1;
			return 0;
		}
		if (err)
			return say(err, "GET_CONFIG", b->vu.err);
		snprintf(b->tag, sizeof(b->tag), "%.*s", (int)sizeof(c.tag), (const char *)c.tag);
		*queues = c.num_request_queues;
		return 0;
	}
	/* Up to num_queues only: back-ends built against older headers refuse a longer read. */
	struct virtio_blk_config c = { 0 };

	err = vu_get_config(&b->vu, &c, offsetof(struct virtio_blk_config, num_queues) +
						 sizeof(c.num_queues));
	if (err)
		return say(err, "GET_CONFIG", b->vu.err);
	b->capacity_sectors = c.capacity;
	*queues = (b->vu.acked & (1ull << VIRTIO_BLK_F_MQ)) ? c.num_queues : 1;
	if (b->capacity_sectors * 512 < b->file_size)
		return say(-EINVAL, "virtio-blk capacity", "smaller than the data file");
	return 0;
}

int setup_peer(struct bench *b)
{
	uint64_t want = (1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_RING_F_EVENT_IDX) |
			(b->indirect ? 1ull << VIRTIO_RING_F_INDIRECT_DESC : 0);
	unsigned int queues = 1, first;
	int err;

	b->jobv = calloc(b->jobs, sizeof(*b->jobv));
	if (!b->jobv)
		return -ENOMEM;
	for (unsigned int i = 0; i < b->jobs; i++) {
		b->jobv[i].id = i;
		b->jobv[i].vr.kick_fd = b->jobv[i].vr.call_fd = -1;
	}
	if (b->target == TARGET_HOST) {
		err = host_open(b);
		for (unsigned int i = 0; !err && i < b->jobs; i++)
			err = target_job_init(b, &b->jobv[i]);
		return err ? say(err, "host io_uring", NULL) : 0;
	}
	if (b->target == TARGET_BLK)
		want |= (1ull << VIRTIO_BLK_F_MQ) | (1ull << VIRTIO_BLK_F_FLUSH);
	err = vu_connect(&b->vu, b->socket, 5000);
	if (!err)
		err = vu_negotiate(&b->vu, (1ull << VU_PROTOCOL_F_MQ) | (1ull << VU_PROTOCOL_F_REPLY_ACK) |
						   (1ull << VU_PROTOCOL_F_CONFIG));
	if (!err)
		err = vu_set_features(&b->vu, want);
	if (err)
		return say(err, "vhost-user handshake", b->vu.err);
	err = read_config(b, &queues);
	if (err)
		return err;
	b->request_queues = queues;
	if (queues < b->jobs) {
		fprintf(stderr, "device bench: the peer offers %u %squeue(s), the run has %u jobs\n",
			queues, b->target == TARGET_FS ? "request " : "", b->jobs);
		return -EOPNOTSUPP;
	}
	err = vu_set_mem_table(&b->vu, &b->mem);
	if (err)
		return say(err, "SET_MEM_TABLE", b->vu.err);
	first = 0;
	if (b->target == TARGET_FS) {
		err = dvq_init(&hiprio, &b->mem, HIPRIO_SIZE, 1, true, false);
		if (!err)
			err = vu_start_queue(&b->vu, 0, &hiprio);
		if (err)
			return say(err, "hiprio queue", b->vu.err);
		first = 1;
	}
	for (unsigned int i = 0; i < b->jobs; i++) {
		b->jobv[i].queue = first + i;
		err = target_job_init(b, &b->jobv[i]);
		if (err)
			return say(err, "queue setup", b->vu.err);
	}
	return b->target == TARGET_FS ? fs_requests(b) : 0;
}

int teardown_peer(struct bench *b)
{
	int err = 0;
	uint32_t base;

	if (b->workload == WL_RANDWRITE && b->target != TARGET_FS) {
		struct op op = { .kind = OP_FLUSH };
		struct op_result r;

		err = target_sync(&b->jobv[0], &op, &r);
		if (err || r.err)
			return say(err ? err : r.err, "FLUSH", err ? b->jobv[0].errmsg : NULL);
	}
	if (b->target == TARGET_HOST)
		return 0;
	for (unsigned int i = 0; i < b->jobs; i++) {
		err = vu_stop_queue(&b->vu, b->jobv[i].queue, &base);
		if (err)
			return say(err, "GET_VRING_BASE", b->vu.err);
		if ((uint16_t)base != b->jobv[i].vr.avail_idx) {
			fprintf(stderr, "device bench: queue %u stopped at %u, %u were made available\n",
				b->jobv[i].queue, base, b->jobv[i].vr.avail_idx);
			return -EPROTO;
		}
	}
	return 0;
}

void setup_free(struct bench *b)
{
	for (unsigned int i = 0; b->jobv && i < b->jobs; i++)
		target_job_destroy(&b->jobv[i]);
	free(b->jobv);
	b->jobv = NULL;
	free(b->dir_nodeids);
	b->dir_nodeids = NULL;
	dvq_destroy(&hiprio);
	vu_close(&b->vu);
	if (b->host_fd >= 0)
		close(b->host_fd);
	b->host_fd = -1;
}
