/* blk_client.c: virtio-blk requests (IN, OUT, FLUSH) and the checks on each reply. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include <linux/virtio_blk.h>

#include "tests/bench/device/proto.h"

/*
 * Chain shape (virtio 1.x 5.2.6): the request header (device-readable), the data (readable for OUT,
 * writable for IN, absent for FLUSH), then one status byte (device-writable).
 */

/* A status the device never writes, so a missing completion cannot read as VIRTIO_BLK_S_OK. */
#define BLK_STATUS_POISON 0xa5

static int encode(struct job *j, struct slot *s, struct dvq_seg *segs, unsigned int *n)
{
	struct virtio_blk_outhdr *h = (struct virtio_blk_outhdr *)s->hdr;
	unsigned int k = 0;

	switch (s->op.kind) {
	case OP_READ:
		h->type = VIRTIO_BLK_T_IN;
		break;
	case OP_WRITE:
		h->type = VIRTIO_BLK_T_OUT;
		break;
	case OP_FLUSH:
		h->type = VIRTIO_BLK_T_FLUSH;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (s->op.kind != OP_FLUSH && (s->op.offset % 512 || s->op.len % 512))
		return -EINVAL;
	h->ioprio = 0;
	h->sector = s->op.kind == OP_FLUSH ? 0 : s->op.offset / 512;
	segs[k++] = (struct dvq_seg){ s->hdr_gpa, sizeof(*h), false };
	if (s->op.kind != OP_FLUSH)
		segs[k++] = (struct dvq_seg){ s->data_gpa, s->op.len, s->op.kind == OP_READ };
	s->resp[0] = BLK_STATUS_POISON;
	segs[k++] = (struct dvq_seg){ s->resp_gpa, 1, true };
	*n = k;
	return 0;
}

static int decode(struct job *j, struct slot *s, uint32_t used_len)
{
	uint8_t status = s->resp[0];

	memset(&s->res, 0, sizeof(s->res));
	switch (status) {
	case VIRTIO_BLK_S_OK:
		break;
	case VIRTIO_BLK_S_IOERR:
		s->res.err = -EIO;
		return 0;
	case VIRTIO_BLK_S_UNSUPP:
		s->res.err = -EOPNOTSUPP;
		return 0;
	default:
		return job_fail(j, -EPROTO, "virtio-blk status byte %#x", status);
	}
	/* used length: the bytes written into writable buffers, i.e. the data of an IN plus status. */
	if (s->op.kind == OP_READ ? used_len != s->op.len + 1 : used_len < 1)
		return job_fail(j, -EPROTO, "virtio-blk used length %u for a %u-byte %s", used_len,
				s->op.len, s->op.kind == OP_READ ? "read" : "write");
	s->res.bytes = s->op.kind == OP_FLUSH ? 0 : s->op.len;
	return 0;
}

const struct proto_ops blk_proto = { "virtio-blk", encode, decode };
