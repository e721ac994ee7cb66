/* fuse_client.c: FUSE requests as a virtio-fs driver sends them, and the checks on each reply. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include <linux/fuse.h>

#include "tests/bench/device/proto.h"

/*
 * Chain shape (virtio-fs spec 5.11.6): device-readable "in" part (fuse_in_header, the op's struct,
 * a name or the WRITE payload), then device-writable "out" part (fuse_out_header, the op's reply
 * struct, or the READ payload straight into the slot's data buffer).
 */

/* Reply struct size of each op (after fuse_out_header); READ's payload is variable. */
static uint32_t reply_size(enum op_kind k)
{
	switch (k) {
	case OP_INIT:
		return sizeof(struct fuse_init_out);
	case OP_LOOKUP:
		return sizeof(struct fuse_entry_out);
	case OP_GETATTR:
	case OP_SETATTR:
		return sizeof(struct fuse_attr_out);
	case OP_OPEN:
		return sizeof(struct fuse_open_out);
	case OP_CREATE:
		return sizeof(struct fuse_entry_out) + sizeof(struct fuse_open_out);
	case OP_WRITE:
		return sizeof(struct fuse_write_out);
	default:
		return 0;
	}
}

static int encode(struct job *j, struct slot *s, struct dvq_seg *segs, unsigned int *n)
{
	const struct op *op = &s->op;
	struct fuse_in_header *ih = (struct fuse_in_header *)s->hdr;
	uint8_t *arg = s->hdr + sizeof(*ih);
	uint32_t arglen = 0, namelen = 0;
	unsigned int k = 0;

	memset(s->hdr, 0, SLOT_HDR_BYTES);
	if (op->kind == OP_LOOKUP || op->kind == OP_CREATE)
		namelen = (uint32_t)strnlen(op->name, OP_NAME_MAX - 1) + 1;
	switch (op->kind) {
	case OP_INIT: {
		struct fuse_init_in *in = (void *)arg;

		ih->opcode = FUSE_INIT;
		in->major = FUSE_KERNEL_VERSION;
		in->minor = FUSE_KERNEL_MINOR_VERSION;
		in->max_readahead = 128 * 1024;
		in->flags = FUSE_ASYNC_READ | FUSE_BIG_WRITES | FUSE_MAX_PAGES;
		/* Linux asks for it too: a write by a caller without CAP_FSETID then leaves the
		   setuid/setgid kill to the server (FUSE_WRITE_KILL_SUIDGID), instead of a SETATTR. */
		if (j->b->has_writer_uid)
			in->flags |= FUSE_HANDLE_KILLPRIV_V2;
		arglen = sizeof(*in);
		break;
	}
	case OP_LOOKUP:
		ih->opcode = FUSE_LOOKUP;
		memcpy(arg, op->name, namelen - 1);
		arglen = namelen;
		break;
	case OP_GETATTR:
		ih->opcode = FUSE_GETATTR;
		arglen = sizeof(struct fuse_getattr_in);
		break;
	case OP_OPEN: {
		struct fuse_open_in *in = (void *)arg;

		ih->opcode = FUSE_OPEN;
		in->flags = op->flags;
		arglen = sizeof(*in);
		break;
	}
	case OP_READ: {
		struct fuse_read_in *in = (void *)arg;

		ih->opcode = FUSE_READ;
		*in = (struct fuse_read_in){ .fh = op->fh, .offset = op->offset, .size = op->len,
					     .flags = op->flags };
		arglen = sizeof(*in);
		break;
	}
	case OP_WRITE: {
		struct fuse_write_in *in = (void *)arg;

		ih->opcode = FUSE_WRITE;
		*in = (struct fuse_write_in){ .fh = op->fh, .offset = op->offset, .size = op->len,
					      .flags = op->flags };
		/* What Linux sends for a writer without CAP_FSETID (fuse_perform_write). */
		if (j->b->has_writer_uid) {
			ih->uid = ih->gid = j->b->writer_uid;
			if (j->b->killpriv_v2)
				in->write_flags = FUSE_WRITE_KILL_SUIDGID;
		}
		arglen = sizeof(*in);
		break;
	}
	case OP_RELEASE: {
		struct fuse_release_in *in = (void *)arg;

		ih->opcode = FUSE_RELEASE;
		in->fh = op->fh;
		in->flags = op->flags;
		arglen = sizeof(*in);
		break;
	}
	case OP_CREATE: {
		struct fuse_create_in *in = (void *)arg;

		ih->opcode = FUSE_CREATE;
		*in = (struct fuse_create_in){ .flags = op->flags, .mode = op->mode, .umask = 0 };
		memcpy(arg + sizeof(*in), op->name, namelen - 1);
		arglen = (uint32_t)sizeof(*in) + namelen;
		break;
	}
	case OP_FORGET: {
		struct fuse_forget_in *in = (void *)arg;

		ih->opcode = FUSE_FORGET;
		in->nlookup = 1;
		arglen = sizeof(*in);
		break;
	}
	case OP_SETATTR: {
		struct fuse_setattr_in *in = (void *)arg;

		ih->opcode = FUSE_SETATTR;
		/* What tar does after writing a member: mode and mtime. */
		*in = (struct fuse_setattr_in){ .valid = FATTR_MODE | FATTR_MTIME, .mode = op->mode,
						.mtime = 1000000000ull };
		arglen = sizeof(*in);
		break;
	}
	default:
		return -EOPNOTSUPP;
	}
	s->unique = ((uint64_t)(j->id + 1) << 48) | ++j->next_unique;
	ih->unique = s->unique;
	ih->nodeid = op->kind == OP_INIT ? 0 : op->nodeid;
	ih->len = (uint32_t)sizeof(*ih) + arglen + (op->kind == OP_WRITE ? op->len : 0);
	segs[k++] = (struct dvq_seg){ s->hdr_gpa, (uint32_t)sizeof(*ih) + arglen, false };
	if (op->kind == OP_WRITE)
		segs[k++] = (struct dvq_seg){ s->data_gpa, op->len, false };
	if (op->kind == OP_FORGET) { /* no reply at all (FUSE: "no reply" requests) */
		*n = k;
		return 0;
	}
	/* Poison the reply header, so a reply the device never wrote cannot pass for one. */
	memset(s->resp, 0xa5, sizeof(struct fuse_out_header));
	segs[k++] = (struct dvq_seg){ s->resp_gpa,
					(uint32_t)sizeof(struct fuse_out_header) + reply_size(op->kind),
					true };
	if (op->kind == OP_READ)
		segs[k++] = (struct dvq_seg){ s->data_gpa, op->len, true };
	*n = k;
	return 0;
}

static int decode(struct job *j, struct slot *s, uint32_t used_len)
{
	const struct fuse_out_header *oh = (const struct fuse_out_header *)s->resp;
	const uint8_t *body = s->resp + sizeof(*oh);
	uint32_t want = reply_size(s->op.kind), got;
	struct op_result *r = &s->res;

	memset(r, 0, sizeof(*r));
	if (s->op.kind == OP_FORGET) {
		if (used_len)
			return job_fail(j, -EPROTO, "FORGET completed with %u bytes written", used_len);
		return 0;
	}
	if (oh->unique != s->unique)
		return job_fail(j, -EPROTO, "FUSE reply unique %#llx, request had %#llx",
				(unsigned long long)oh->unique, (unsigned long long)s->unique);
	if (oh->len < sizeof(*oh) || oh->len != used_len)
		return job_fail(j, -EPROTO, "FUSE reply len %u, used length %u (opcode of op %d)",
				oh->len, used_len, s->op.kind);
	if (oh->error > 0 || oh->error < -4095)
		return job_fail(j, -EPROTO, "FUSE reply error %d is not a negative errno", oh->error);
	got = oh->len - (uint32_t)sizeof(*oh);
	if (oh->error) {
		if (got)
			return job_fail(j, -EPROTO, "FUSE error reply carries %u bytes", got);
		r->err = oh->error;
		return 0;
	}
	if (s->op.kind == OP_READ) {
		if (got > s->op.len)
			return job_fail(j, -EPROTO, "READ returned %u bytes, asked %u", got, s->op.len);
		r->bytes = got;
		return 0;
	}
	/* INIT replies of older minors are shorter; every other reply has exactly its struct. */
	if (s->op.kind == OP_INIT ? got < 24 : got != want)
		return job_fail(j, -EPROTO, "FUSE reply of op %d has %u bytes, expected %u", s->op.kind,
				got, want);
	switch (s->op.kind) {
	case OP_INIT: {
		const struct fuse_init_out *o = (const void *)body;

		if (o->major != FUSE_KERNEL_VERSION)
			return job_fail(j, -EPROTO, "FUSE INIT major %u", o->major);
		r->size = o->max_write;
		r->mode = o->minor;
		r->flags = o->flags;
		break;
	}
	case OP_LOOKUP:
	case OP_CREATE: {
		const struct fuse_entry_out *o = (const void *)body;

		r->nodeid = o->nodeid;
		r->size = o->attr.size;
		r->mode = o->attr.mode;
		if (s->op.kind == OP_CREATE)
			r->fh = ((const struct fuse_open_out *)(body + sizeof(*o)))->fh;
		break;
	}
	case OP_GETATTR:
	case OP_SETATTR: {
		const struct fuse_attr_out *o = (const void *)body;

		r->size = o->attr.size;
		r->mode = o->attr.mode;
		break;
	}
	case OP_OPEN:
		r->fh = ((const struct fuse_open_out *)body)->fh;
		break;
	case OP_WRITE:
		r->bytes = ((const struct fuse_write_out *)body)->size;
		break;
	default:
		break;
	}
	return 0;
}

const struct proto_ops fuse_proto = { "virtio-fs", encode, decode };
