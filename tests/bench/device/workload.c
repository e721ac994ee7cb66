/* workload.c: the workloads (random/sequential I/O, metadata and untar chains) and their checks. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/bench/device/workload.h"

/* The pattern of the files the untar workload creates (never read back by the run). */
#define UNTAR_FILE_ID 0xfffffu

void pattern_fill(void *buf, uint32_t file, uint64_t off, uint32_t len)
{
	uint64_t *w = buf;

	for (uint32_t i = 0; i < len / 8; i++)
		w[i] = pattern_word(file, off + 8ull * i);
}

uint64_t pattern_check(const void *buf, uint32_t file, uint64_t off, uint32_t len)
{
	const uint64_t *w = buf;
	uint64_t bad = 0;

	/* No early exit in the loop: it vectorizes, and a mismatch is the rare case. */
	for (uint32_t i = 0; i < len / 8; i++)
		bad |= w[i] ^ pattern_word(file, off + 8ull * i);
	if (!bad)
		return 0;
	for (uint32_t i = 0; i < len / 8; i++)
		if (w[i] != pattern_word(file, off + 8ull * i))
			return 8ull * i + 1;
	return 1;
}

int job_fail(struct job *j, int err, const char *fmt, ...)
{
	va_list ap;

	if (!j->err) {
		j->err = err;
		va_start(ap, fmt);
		vsnprintf(j->errmsg, sizeof(j->errmsg), fmt, ap);
		va_end(ap);
	}
	j->b->stop = 1;
	return err;
}

static uint64_t rnd(struct job *j)
{
	/* xorshift64*: the offsets only need to be spread, not unpredictable. */
	j->rng ^= j->rng >> 12;
	j->rng ^= j->rng << 25;
	j->rng ^= j->rng >> 27;
	return j->rng * 2685821657736338717ull;
}

void wl_tree_name(char *buf, uint32_t i)
{
	snprintf(buf, OP_NAME_MAX, "f%05u", i);
}

uint32_t wl_tree_dir(uint32_t i)
{
	return i / TREE_DIR_FILES;
}

void wl_tree_dir_name(char *buf, uint32_t d)
{
	snprintf(buf, OP_NAME_MAX, "d%03u", d);
}

static uint32_t open_flags(const struct bench *b)
{
	return O_RDWR | (b->direct ? O_DIRECT : 0);
}

/* Poison the first word of each 512-byte block, so data the device never wrote fails the check. */
static void poison(struct slot *s, uint32_t len)
{
	for (uint32_t o = 0; o < len; o += 512)
		*(uint64_t *)(s->data + o) = ~0ull;
}

static void data_op(struct job *j, struct slot *s, enum op_kind kind, uint64_t offset)
{
	const struct bench *b = j->b;

	s->op = (struct op){ .kind = kind, .nodeid = b->data_nodeid, .fh = b->data_fh,
			     .offset = offset, .len = b->bs, .flags = open_flags(b) };
	if (kind == OP_READ)
		poison(s, b->bs);
	else
		pattern_fill(s->data, 0, offset, b->bs);
}

static void meta_next(struct job *j, struct slot *s)
{
	const struct bench *b = j->b;
	struct op *op = &s->op;

	memset(op, 0, sizeof(*op));
	switch (s->step) {
	case 0:
		s->file = (uint32_t)(rnd(j) % b->tree_files);
		op->kind = OP_LOOKUP;
		op->nodeid = b->dir_nodeids[wl_tree_dir(s->file)];
		wl_tree_name(op->name, s->file);
		break;
	case 1:
		op->kind = OP_GETATTR;
		op->nodeid = s->nodeid;
		break;
	case 2:
		op->kind = OP_OPEN;
		op->nodeid = s->nodeid;
		op->flags = O_RDONLY;
		break;
	case 3:
		op->kind = OP_READ;
		op->nodeid = s->nodeid;
		op->fh = s->fh;
		op->len = TREE_FILE_BYTES;
		op->flags = O_RDONLY;
		poison(s, TREE_FILE_BYTES);
		break;
	default:
		op->kind = OP_RELEASE;
		op->nodeid = s->nodeid;
		op->fh = s->fh;
		op->flags = O_RDONLY;
		break;
	}
}

static void untar_next(struct job *j, struct slot *s)
{
	const struct bench *b = j->b;
	struct op *op = &s->op;

	memset(op, 0, sizeof(*op));
	switch (s->step) {
	case 0:
		op->kind = OP_CREATE;
		op->nodeid = j->dir_nodeid;
		op->flags = O_WRONLY | O_CREAT | O_EXCL;
		op->mode = S_IFREG | 0600;
		snprintf(op->name, OP_NAME_MAX, "f%08llu", (unsigned long long)j->created++);
		break;
	case 1:
		op->kind = OP_WRITE;
		op->nodeid = s->nodeid;
		op->fh = s->fh;
		op->len = b->bs;
		op->flags = O_WRONLY;
		pattern_fill(s->data, UNTAR_FILE_ID, 0, b->bs);
		break;
	case 2:
		op->kind = OP_SETATTR;
		op->nodeid = s->nodeid;
		op->mode = 0644;
		break;
	case 3:
		op->kind = OP_RELEASE;
		op->nodeid = s->nodeid;
		op->fh = s->fh;
		op->flags = O_WRONLY;
		break;
	default:
		/* The guest kernel forgets inodes it evicts; without it every back-end keeps a host
		   fd per created file and runs out. */
		op->kind = OP_FORGET;
		op->nodeid = s->nodeid;
		break;
	}
}

void wl_next(struct job *j, struct slot *s)
{
	const struct bench *b = j->b;
	uint64_t blocks = b->file_size / b->bs;

	switch (b->workload) {
	case WL_RANDREAD:
		data_op(j, s, OP_READ, (rnd(j) % blocks) * b->bs);
		break;
	case WL_RANDWRITE:
		data_op(j, s, OP_WRITE, (rnd(j) % blocks) * b->bs);
		break;
	case WL_SEQREAD:
		if (j->seq_next + b->bs > j->seq_hi)
			j->seq_next = j->seq_lo;
		data_op(j, s, OP_READ, j->seq_next);
		j->seq_next += b->bs;
		break;
	case WL_META:
		meta_next(j, s);
		break;
	case WL_UNTAR:
		untar_next(j, s);
		break;
	}
}

static const char *op_name(enum op_kind k)
{
	static const char *const names[] = { "READ",   "WRITE",	  "FLUSH",   "INIT",	"LOOKUP",
					     "GETATTR", "OPEN", "RELEASE", "CREATE", "SETATTR", "FORGET" };

	return (unsigned int)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

static int check_data(struct job *j, struct slot *s, uint32_t file)
{
	const struct op *op = &s->op;
	uint64_t bad;

	if (s->res.bytes != op->len)
		return job_fail(j, -EIO, "%s at %llu: %u bytes of %u", op_name(op->kind),
				(unsigned long long)op->offset, s->res.bytes, op->len);
	if (op->kind != OP_READ)
		return 0;
	bad = pattern_check(s->data, file, op->offset, op->len);
	if (bad)
		return job_fail(j, -EIO, "READ at %llu (file %u): wrong data at byte %llu",
				(unsigned long long)op->offset, file, (unsigned long long)(bad - 1));
	return 0;
}

static int check_attr(struct job *j, struct slot *s, uint64_t size)
{
	if (!S_ISREG(s->res.mode) || s->res.size != size)
		return job_fail(j, -EIO, "%s of %s: mode %#o size %llu, expected a %llu-byte file",
				op_name(s->op.kind), s->op.name, s->res.mode,
				(unsigned long long)s->res.size, (unsigned long long)size);
	return 0;
}

static int meta_done(struct job *j, struct slot *s)
{
	int err = 0;

	switch (s->step) {
	case 0:
		err = check_attr(j, s, TREE_FILE_BYTES);
		if (!err && !s->res.nodeid)
			err = job_fail(j, -EIO, "LOOKUP of %s gave node id 0", s->op.name);
		s->nodeid = s->res.nodeid;
		break;
	case 1:
		err = check_attr(j, s, TREE_FILE_BYTES);
		break;
	case 2:
		s->fh = s->res.fh;
		break;
	case 3:
		err = check_data(j, s, s->file + 1);
		break;
	default:
		break;
	}
	s->step = (s->step + 1) % 5;
	return err;
}

static int untar_done(struct job *j, struct slot *s)
{
	int err = 0;

	switch (s->step) {
	case 0:
		err = check_attr(j, s, 0);
		s->nodeid = s->res.nodeid;
		s->fh = s->res.fh;
		break;
	case 1:
		err = check_data(j, s, UNTAR_FILE_ID);
		break;
	case 2:
		if ((s->res.mode & 07777) != 0644 || !S_ISREG(s->res.mode))
			err = job_fail(j, -EIO, "SETATTR mode 0644 answered mode %#o", s->res.mode);
		break;
	default:
		break;
	}
	s->step = (s->step + 1) % 5;
	return err;
}

int wl_done(struct job *j, struct slot *s)
{
	if (s->res.err)
		return job_fail(j, s->res.err, "%s %s%s(offset %llu, %u bytes): %s", op_name(s->op.kind),
				s->op.name, s->op.name[0] ? " " : "", (unsigned long long)s->op.offset,
				s->op.len, strerror(-s->res.err));
	switch (j->b->workload) {
	case WL_META:
		return meta_done(j, s);
	case WL_UNTAR:
		return untar_done(j, s);
	default:
		return check_data(j, s, 0);
	}
}
