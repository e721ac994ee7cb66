/* target.c: the job loop, over a vhost-user virtqueue or over the host's own io_uring. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "tests/bench/device/proto.h"
#include "tests/bench/device/target.h"
#include "tests/bench/device/workload.h"

static const struct proto_ops *proto_of(const struct bench *b)
{
	return b->target == TARGET_FS ? &fuse_proto : &blk_proto;
}

int target_job_init(struct bench *b, struct job *j)
{
	uint32_t data_len = (b->bs + 4095) & ~4095u;
	int err;

	j->b = b;
	j->rng = 0x9e3779b97f4a7c15ull * (j->id + 1) + 1;
	j->slots = calloc(b->depth, sizeof(*j->slots));
	if (!j->slots)
		return -ENOMEM;
	if (data_len < TREE_FILE_BYTES)
		data_len = TREE_FILE_BYTES;
	for (unsigned int i = 0; i < b->depth; i++) {
		struct slot *s = &j->slots[i];

		s->data_gpa = dmem_alloc(&b->mem, data_len, 4096);
		s->hdr_gpa = dmem_alloc(&b->mem, SLOT_HDR_BYTES, 64);
		s->resp_gpa = dmem_alloc(&b->mem, SLOT_RESP_BYTES, 64);
		if (s->data_gpa == UINT64_MAX || s->hdr_gpa == UINT64_MAX || s->resp_gpa == UINT64_MAX)
			return -ENOMEM;
		s->data = dmem_ptr(&b->mem, s->data_gpa, data_len);
		s->hdr = dmem_ptr(&b->mem, s->hdr_gpa, SLOT_HDR_BYTES);
		s->resp = dmem_ptr(&b->mem, s->resp_gpa, SLOT_RESP_BYTES);
	}
	if (b->target == TARGET_HOST) {
		err = io_uring_queue_init(b->depth, &j->ring, 0);
		if (err)
			return err;
		j->ring_ok = true;
		return 0;
	}
	err = dvq_init(&j->vr, &b->mem, (uint16_t)b->queue_size, b->depth, true, b->indirect);
	if (err)
		return err;
	j->vr.halt_poll_us = b->halt_poll_us;
	j->vr.halt_poll_yield = b->jobs > 1; /* every job thread is on the driver's CPU(s) */
	return vu_start_queue(&b->vu, j->queue, &j->vr);
}

void target_job_destroy(struct job *j)
{
	if (j->ring_ok)
		io_uring_queue_exit(&j->ring);
	j->ring_ok = false;
	dvq_destroy(&j->vr);
	free(j->slots);
	j->slots = NULL;
}

/* Queue slot s (not yet visible to the peer until flush). */
static int submit(struct job *j, struct slot *s)
{
	struct dvq_seg segs[DVQ_SLOT_DESCS];
	unsigned int n = 0;
	int err;

	s->busy = true;
	j->inflight++;
	s->t_submit = now_ns();
	if (j->b->target == TARGET_HOST) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&j->ring);

		if (!sqe)
			return job_fail(j, -EBUSY, "io_uring full");
		if (s->op.kind == OP_READ)
			io_uring_prep_read(sqe, j->b->host_fd, s->data, s->op.len, s->op.offset);
		else if (s->op.kind == OP_WRITE)
			io_uring_prep_write(sqe, j->b->host_fd, s->data, s->op.len, s->op.offset);
		else if (s->op.kind == OP_FLUSH)
			io_uring_prep_fsync(sqe, j->b->host_fd, IORING_FSYNC_DATASYNC);
		else
			return job_fail(j, -EOPNOTSUPP, "the host peer has no metadata requests");
		io_uring_sqe_set_data64(sqe, (uint64_t)(s - j->slots));
		return 0;
	}
	err = proto_of(j->b)->encode(j, s, segs, &n);
	if (err)
		return job_fail(j, err, "cannot encode op %d for %s", s->op.kind, proto_of(j->b)->name);
	dvq_add(&j->vr, (unsigned int)(s - j->slots), segs, n);
	return 0;
}

static int flush(struct job *j)
{
	int err;

	if (j->b->target == TARGET_HOST) {
		err = io_uring_submit(&j->ring);
		return err < 0 ? job_fail(j, err, "io_uring_submit: %s", strerror(-err)) : 0;
	}
	err = dvq_kick(&j->vr);
	return err ? job_fail(j, err, "kick: %s", strerror(-err)) : 0;
}

/* A reply for slot index i: bookkeeping shared by both transports. */
static struct slot *landed(struct job *j, unsigned int i)
{
	struct slot *s = &j->slots[i];

	if (!s->busy) {
		job_fail(j, -EPROTO, "reply for slot %u, which has no request outstanding", i);
		return NULL;
	}
	s->busy = false;
	j->inflight--;
	return s;
}

/* Collect at least one reply (waiting for it) into done[]; returns how many, or negative errno. */
static int reap(struct job *j, struct slot **done)
{
	unsigned int n = 0;
	int err;

	if (j->b->target == TARGET_HOST) {
		struct io_uring_cqe *cqe;
		unsigned int head;

		/* The same wait as a virtqueue's (dvq_wait): a look for up to halt_poll_us first. */
		err = io_uring_peek_cqe(&j->ring, &cqe);
		for (uint64_t end = now_ns() + j->b->halt_poll_us * 1000ull; err == -EAGAIN && now_ns() < end;) {
			if (j->b->jobs > 1)
				sched_yield();
			err = io_uring_peek_cqe(&j->ring, &cqe);
		}
		if (err == -EAGAIN)
			err = io_uring_wait_cqe(&j->ring, &cqe);
		if (err)
			return job_fail(j, err, "io_uring_wait_cqe: %s", strerror(-err));
		io_uring_for_each_cqe(&j->ring, head, cqe) {
			uint64_t i = io_uring_cqe_get_data64(cqe);
			struct slot *s = i < j->b->depth ? landed(j, (unsigned int)i) : NULL;

			if (!s)
				return job_fail(j, -EPROTO, "io_uring completion for slot %llu",
						(unsigned long long)i);
			memset(&s->res, 0, sizeof(s->res));
			if (cqe->res < 0)
				s->res.err = cqe->res;
			else
				s->res.bytes = (uint32_t)cqe->res;
			done[n++] = s;
			if (n == j->b->depth)
				break;
		}
		io_uring_cq_advance(&j->ring, n);
		return (int)n;
	}
	for (;;) {
		unsigned int i;
		uint32_t len;

		while (n < j->b->depth && (err = dvq_get_used(&j->vr, j->b->depth, &i, &len)) == 1) {
			struct slot *s = landed(j, i);

			if (!s)
				return j->err;
			err = proto_of(j->b)->decode(j, s, len);
			if (err)
				return err;
			done[n++] = s;
		}
		if (err < 0)
			return job_fail(j, err, "used ring: element for no outstanding request");
		if (n)
			return (int)n;
		err = dvq_wait(&j->vr, TARGET_TIMEOUT_MS);
		if (err)
			return job_fail(j, err, "no reply from the back-end in %d ms (%u outstanding): %s",
					TARGET_TIMEOUT_MS, j->inflight, strerror(-err));
	}
}

int target_sync(struct job *j, const struct op *op, struct op_result *res)
{
	struct slot *s = &j->slots[0], *done[1];
	int n;

	s->op = *op;
	if (submit(j, s) || flush(j))
		return j->err;
	n = reap(j, done);
	if (n < 0)
		return n;
	*res = s->res;
	return 0;
}

int target_job_run(struct job *j)
{
	struct bench *b = j->b;
	struct slot **done = calloc(b->depth, sizeof(*done));
	int n;

	if (!done)
		return job_fail(j, -ENOMEM, "out of memory");
	while (!b->stop) {
		for (unsigned int i = 0; i < b->depth; i++) {
			if (j->slots[i].busy)
				continue;
			wl_next(j, &j->slots[i]);
			if (submit(j, &j->slots[i]))
				goto out;
		}
		if (flush(j))
			goto out;
		n = reap(j, done);
		if (n < 0)
			goto out;
		uint64_t t = now_ns();
		bool counted = t >= b->t_start && t < b->t_end;

		for (int k = 0; k < n; k++) {
			if (wl_done(j, done[k]))
				goto out;
			if (!counted || done[k]->op.kind == OP_FORGET)
				continue;
			hist_add(&j->hist, t - done[k]->t_submit);
			j->requests++;
			j->bytes += done[k]->res.bytes;
		}
	}
	/* The last replies are still checked, just not counted. */
	while (j->inflight && !j->err) {
		n = reap(j, done);
		for (int k = 0; k < n; k++)
			if (wl_done(j, done[k]))
				break;
	}
out:
	free(done);
	return j->err;
}
