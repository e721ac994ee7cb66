/* fs_call.c: build FUSE requests for fs_dispatch and check the replies' framing. */
#include "tests/support/fs_call.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fsc_open(struct fsc *c, struct fs_server *srv)
{
	memset(c, 0, sizeof(*c));
	c->srv = srv;
	c->req = malloc(FSC_BUF);
	c->rep = malloc(FSC_BUF);
	if (!c->req || !c->rep) {
		fsc_close(c);
		return -ENOMEM;
	}
	return 0;
}

void fsc_close(struct fsc *c)
{
	free(c->req);
	free(c->rep);
	c->req = c->rep = NULL;
}

int fsc_call(struct fsc *c, uint32_t op, uint64_t nodeid, const void *body, size_t blen,
	     const char *n1, const char *n2)
{
	struct fuse_in_header h = { .opcode = op, .unique = 7, .nodeid = nodeid, .uid = c->uid,
				    .gid = c->gid };
	size_t len = sizeof(h);
	struct fuse_decode_ctx ctx;
	struct fuse_out_header oh;
	struct fuse_req r;
	const char *names[2] = { n1, n2 };
	int err;

	if (blen)
		memcpy(c->req + len, body, blen);
	len += blen;
	for (int i = 0; i < 2; i++) {
		if (names[i]) {
			memcpy(c->req + len, names[i], strlen(names[i]) + 1);
			len += strlen(names[i]) + 1;
		}
	}
	h.len = (uint32_t)len;
	memcpy(c->req, &h, sizeof(h));
	fs_server_decode_ctx(c->srv, &ctx);
	err = fuse_decode(c->req, len, len, &ctx, &r);
	if (err)
		return err;
	c->rep_len = fs_dispatch(c->srv, &r, c->req, len, c->rep, FSC_BUF);
	if (c->rep_len == 0)
		return 1;
	memcpy(&oh, c->rep, sizeof(oh));
	if (oh.len != c->rep_len || oh.unique != 7)
		return -1000;
	return oh.error;
}

void *fsc_body(struct fsc *c)
{
	return c->rep + sizeof(struct fuse_out_header);
}

int fsc_init(struct fsc *c, uint64_t extra_flags)
{
	uint64_t flags = FUSE_HANDLE_KILLPRIV_V2 | FUSE_MAX_PAGES | FUSE_DO_READDIRPLUS |
			 FUSE_INIT_EXT | FUSE_SETXATTR_EXT | extra_flags;
	struct fuse_init_in in = { .major = 7, .minor = 38, .max_readahead = 65536,
				   .flags = (uint32_t)flags, .flags2 = (uint32_t)(flags >> 32) };

	return fsc_call(c, FUSE_INIT, 0, &in, sizeof(in), NULL, NULL);
}

static int64_t fsc_entry(struct fsc *c, int err)
{
	return err ? err : (int64_t)((struct fuse_entry_out *)fsc_body(c))->nodeid;
}

int64_t fsc_lookup(struct fsc *c, uint64_t parent, const char *name)
{
	return fsc_entry(c, fsc_call(c, FUSE_LOOKUP, parent, NULL, 0, name, NULL));
}

int64_t fsc_mknod(struct fsc *c, uint64_t parent, const char *name, uint32_t mode, uint32_t rdev)
{
	struct fuse_mknod_in in = { .mode = mode, .rdev = rdev };

	return fsc_entry(c, fsc_call(c, FUSE_MKNOD, parent, &in, sizeof(in), name, NULL));
}

int64_t fsc_create(struct fsc *c, uint64_t parent, const char *name, uint32_t flags, uint32_t mode)
{
	struct fuse_create_in in = { .flags = flags, .mode = mode };
	int err = fsc_call(c, FUSE_CREATE, parent, &in, sizeof(in), name, NULL);

	if (err)
		return err;
	return (int64_t)((struct fuse_open_out *)((char *)fsc_body(c) +
						  sizeof(struct fuse_entry_out)))->fh;
}

static int64_t fsc_fh(struct fsc *c, int err)
{
	return err ? err : (int64_t)((struct fuse_open_out *)fsc_body(c))->fh;
}

int64_t fsc_open_(struct fsc *c, uint64_t nodeid, uint32_t flags)
{
	struct fuse_open_in in = { .flags = flags };

	return fsc_fh(c, fsc_call(c, FUSE_OPEN, nodeid, &in, sizeof(in), NULL, NULL));
}

int64_t fsc_opendir(struct fsc *c, uint64_t nodeid)
{
	struct fuse_open_in in = { .flags = 0 };

	return fsc_fh(c, fsc_call(c, FUSE_OPENDIR, nodeid, &in, sizeof(in), NULL, NULL));
}

int fsc_write(struct fsc *c, uint64_t nodeid, uint64_t fh, uint64_t off, const char *data,
	      uint32_t write_flags)
{
	unsigned char b[4096];
	struct fuse_write_in in = { .fh = fh, .offset = off, .size = (uint32_t)strlen(data),
				    .write_flags = write_flags };
	int err;

	if (in.size > sizeof(b) - sizeof(in))
		return -E2BIG;
	memcpy(b, &in, sizeof(in));
	memcpy(b + sizeof(in), data, in.size);
	err = fsc_call(c, FUSE_WRITE, nodeid, b, sizeof(in) + in.size, NULL, NULL);
	return err ? err : (int)((struct fuse_write_out *)fsc_body(c))->size;
}

int fsc_setxattr(struct fsc *c, uint64_t nodeid, const char *name, const char *value)
{
	unsigned char b[4096];
	struct fuse_setxattr_in in = { .size = (uint32_t)strlen(value) };
	size_t nl = strlen(name) + 1;

	if (sizeof(in) + nl + in.size > sizeof(b))
		return -E2BIG;
	/* fuse_setxattr_in, name, value (not NUL-terminated) */
	memcpy(b, &in, sizeof(in));
	memcpy(b + sizeof(in), name, nl);
	memcpy(b + sizeof(in) + nl, value, in.size);
	return fsc_call(c, FUSE_SETXATTR, nodeid, b, sizeof(in) + nl + in.size, NULL, NULL);
}

int fsc_removexattr(struct fsc *c, uint64_t nodeid, const char *name)
{
	return fsc_call(c, FUSE_REMOVEXATTR, nodeid, NULL, 0, name, NULL);
}

int fsc_getattr(struct fsc *c, uint64_t nodeid, struct fuse_attr *a)
{
	struct fuse_getattr_in in = { 0 };
	int err = fsc_call(c, FUSE_GETATTR, nodeid, &in, sizeof(in), NULL, NULL);

	if (!err)
		memcpy(a, &((struct fuse_attr_out *)fsc_body(c))->attr, sizeof(*a));
	return err;
}

const char *fsc_path(const char *root, const char *rel)
{
	static char p[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", root, rel);
	return p[i];
}
