/* fuse_req.h: build FUSE requests and read replies in unit tests (the guest kernel's side). */
#ifndef RINGVM_FUSE_REQ_H
#define RINGVM_FUSE_REQ_H

#include <stdint.h>
#include <string.h>

#include <linux/fuse.h>

/* Header + body into buf (room for both); unique = op * 100 + 1. Returns the request's length. */
static inline uint32_t fuse_mkreq(void *buf, uint32_t op, uint64_t nodeid, const void *body,
				  uint32_t blen)
{
	struct fuse_in_header h = { .len = (uint32_t)sizeof(h) + blen, .opcode = op,
				    .unique = op * 100 + 1, .nodeid = nodeid };

	memcpy(buf, &h, sizeof(h));
	if (blen)
		memcpy((char *)buf + sizeof(h), body, blen);
	return h.len;
}

/* The error field of a reply. */
static inline int fuse_reply_error(const void *rep)
{
	struct fuse_out_header h;

	memcpy(&h, rep, sizeof(h));
	return h.error;
}

#endif
