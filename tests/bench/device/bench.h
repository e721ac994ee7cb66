/* bench.h: what the driver's parts share: a request (op), its slot, a job, the run's settings. */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>

#include "tests/bench/device/dmem.h"
#include "tests/bench/device/stats.h"
#include "tests/bench/device/dvq.h"
#include "tests/bench/device/vu_client.h"

/*
 * A run: `jobs` threads, each owning one queue (a virtqueue of the back-end, or an io_uring of its
 * own for the host peer) and `depth` request slots. A slot holds one request at a time; the workload
 * (workload.c) says what the next request of a slot is (an op), the protocol (fuse_client.c,
 * blk_client.c) turns the op into buffers in guest memory and the reply back into a result, the
 * transport (target.c) moves it. The workload then checks the result against what it must be.
 */

enum op_kind {
	OP_READ,
	OP_WRITE,
	OP_FLUSH,
	OP_INIT,
	OP_LOOKUP,
	OP_GETATTR,
	OP_OPEN,
	OP_RELEASE,
	OP_CREATE,
	OP_SETATTR,
	OP_FORGET, /* no reply: not counted as a request */
};

#define OP_NAME_MAX 32

struct op {
	enum op_kind kind;
	uint64_t nodeid; /* FUSE: the inode (the parent for LOOKUP/CREATE) */
	uint64_t fh;
	uint64_t offset;
	uint32_t len;
	uint32_t flags; /* OPEN/CREATE open flags */
	uint32_t mode;	/* CREATE/SETATTR mode */
	char name[OP_NAME_MAX];
};

struct op_result {
	int err; /* 0 or the negative errno the device answered */
	uint32_t bytes; /* READ/WRITE: bytes moved */
	uint64_t nodeid, fh;
	uint64_t size; /* attributes, where the reply has them */
	uint32_t mode;
	uint32_t flags; /* INIT: the flags the server agreed */
};

/* Per-slot buffers in guest memory. */
#define SLOT_HDR_BYTES 512 /* request headers and names */
#define SLOT_RESP_BYTES 512 /* reply headers and attributes */

struct slot {
	struct op op;
	struct op_result res;
	uint64_t t_submit;
	uint64_t unique;
	bool busy;
	uint8_t *hdr, *resp, *data;
	uint64_t hdr_gpa, resp_gpa, data_gpa;
	/* the workload's state for this slot (metadata chains) */
	int step;
	uint32_t file;
	uint64_t nodeid, fh;
};

enum target_kind { TARGET_FS, TARGET_BLK, TARGET_HOST };
enum workload_kind { WL_RANDREAD, WL_RANDWRITE, WL_SEQREAD, WL_META, WL_UNTAR };

struct bench;

struct job {
	unsigned int id;
	struct bench *b;
	struct slot *slots;
	unsigned int inflight;
	struct dvq vr;	/* vhost-user peers */
	unsigned int queue;	/* the back-end's queue index */
	struct io_uring ring;	/* host peer */
	bool ring_ok;
	uint64_t rng;
	uint64_t seq_next, seq_lo, seq_hi; /* sequential workloads */
	uint64_t created;	/* untar: files created by this job */
	uint64_t next_unique;	/* FUSE request ids of this job */
	uint64_t dir_nodeid;	/* untar: this job's directory */
	struct hist hist;
	uint64_t requests, bytes;
	int err;
	char errmsg[200];
};

struct bench {
	enum target_kind target;
	enum workload_kind workload;
	const char *socket, *file, *dir, *peer;
	unsigned int jobs, depth, bs, queue_size, tree_files;
	unsigned int halt_poll_us; /* the driver's wait for a reply polls this long first (dvq.h) */
	bool direct, indirect;
	double seconds, warmup;
	uint64_t file_size;
	int host_fd;
	struct dmem mem;
	struct vu_client vu;
	/* virtio-fs */
	uint64_t data_nodeid, data_fh;
	uint64_t *dir_nodeids; /* tree/dNN */
	uint32_t fuse_minor, max_write;
	/* --writer-uid: WRITEs come from this uid (and gid) without CAP_FSETID (has_writer_uid) */
	uint32_t writer_uid;
	bool has_writer_uid;
	bool killpriv_v2; /* INIT agreed FUSE_HANDLE_KILLPRIV_V2 (asked only with a writer uid) */
	char tag[40];
	unsigned int request_queues; /* offered by the back-end */
	/* virtio-blk */
	uint64_t capacity_sectors;
	struct job *jobv;
	/* set by the main thread: measurement window and stop */
	uint64_t t_start, t_end;
	volatile int stop;
};

/* Files the harness's `prepare` writes and every run reads (device.c and workload.c agree here). */
#define TREE_DIR_FILES 100u
#define TREE_FILE_BYTES 4096u
#define DATA_NAME "data"
#define TREE_NAME "tree"
#define UNTAR_NAME "untar"

/* The known pattern: the 8-byte word at byte offset `off` (a multiple of 8) of file `file`. */
static inline uint64_t pattern_word(uint32_t file, uint64_t off)
{
	return (off | ((uint64_t)file << 40)) ^ 0x9e3779b97f4a7c15ull;
}

/* Fill len bytes (a multiple of 8) as file `file` holds them at offset off. */
void pattern_fill(void *buf, uint32_t file, uint64_t off, uint32_t len);
/* 0 when buf holds file's pattern at off, else the byte offset (+1) of the first wrong word. */
uint64_t pattern_check(const void *buf, uint32_t file, uint64_t off, uint32_t len);

/* Record the job's first error (later ones are dropped) and make every job stop. Returns err. */
int job_fail(struct job *j, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
