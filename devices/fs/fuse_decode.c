/* fuse_decode.c: checks the length, body size and names of one FUSE request before anyone uses it. */
#include "devices/fs/fuse_decode.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include <linux/limits.h>

/* Cursor over the body: everything after the header, up to what the header says (and we hold). */
struct fd_body {
	const unsigned char *p;
	size_t left;
};

/* Copy a struct whose size the protocol fixes at `want` bytes (<= dst_size); the rest stays 0. */
static int fd_take(struct fd_body *b, void *dst, size_t dst_size, size_t want)
{
	if (want > dst_size || b->left < want)
		return -EINVAL;
	memset(dst, 0, dst_size);
	memcpy(dst, b->p, want);
	b->p += want;
	b->left -= want;
	return 0;
}

/*
 * Take a NUL-terminated string from the body. Entry names (is_entry) must be non-empty, at most
 * NAME_MAX and free of '/': the server resolves every name as one component under its parent.
 */
static int fd_name(struct fd_body *b, const char **out, size_t max, int is_entry)
{
	const unsigned char *nul = memchr(b->p, '\0', b->left);
	size_t len;

	if (!nul)
		return -EINVAL;
	len = (size_t)(nul - b->p);
	if (len == 0)
		return -EINVAL;
	if (len > max)
		return -ENAMETOOLONG;
	if (is_entry && memchr(b->p, '/', len))
		return -EINVAL;
	*out = (const char *)b->p;
	b->p += len + 1;
	b->left -= len + 1;
	return 0;
}

int fuse_opcode_no_reply(uint32_t opcode)
{
	return opcode == FUSE_FORGET || opcode == FUSE_BATCH_FORGET || opcode == FUSE_INTERRUPT;
}

/* Body sizes that changed with the minor version (see the history at the top of <linux/fuse.h>). */
static size_t fd_write_in_size(uint32_t minor)
{
	return minor < 9 ? FUSE_COMPAT_WRITE_IN_SIZE : sizeof(struct fuse_write_in);
}

/* 7.9 added lock_owner, flags and padding to fuse_read_in (24 bytes before). */
static size_t fd_read_in_size(uint32_t minor)
{
	return minor < 9 ? offsetof(struct fuse_read_in, lock_owner) : sizeof(struct fuse_read_in);
}

#define TAKE(b, field, size) fd_take((b), &(field), sizeof(field), (size))

static int fd_body(uint32_t opcode, struct fd_body *b, const struct fuse_decode_ctx *ctx,
		   struct fuse_req *r, size_t header_and_body, size_t total)
{
	int err;

	switch (opcode) {
	case FUSE_INIT:
		/* 7.36 grew fuse_init_in to 64 bytes; older kernels send 16 (the first four fields). */
		if (b->left >= sizeof(r->in.init))
			return TAKE(b, r->in.init, sizeof(r->in.init));
		return TAKE(b, r->in.init, offsetof(struct fuse_init_in, flags2));
	case FUSE_LOOKUP:
	case FUSE_UNLINK:
	case FUSE_RMDIR:
	case FUSE_REMOVEXATTR:
		return fd_name(b, &r->name, opcode == FUSE_REMOVEXATTR ? XATTR_NAME_MAX : NAME_MAX,
			       opcode != FUSE_REMOVEXATTR);
	case FUSE_FORGET:
		return TAKE(b, r->in.forget, sizeof(r->in.forget));
	case FUSE_BATCH_FORGET:
		err = TAKE(b, r->in.batch_forget, sizeof(r->in.batch_forget));
		if (err)
			return err;
		if (r->in.batch_forget.count > b->left / sizeof(struct fuse_forget_one))
			return -EINVAL;
		r->data = b->p;
		r->data_len = (size_t)r->in.batch_forget.count * sizeof(struct fuse_forget_one);
		return 0;
	case FUSE_GETATTR:
		/* 7.9 added fuse_getattr_in; before it GETATTR had no body. */
		if (ctx->minor < 9)
			return 0;
		return TAKE(b, r->in.getattr, sizeof(r->in.getattr));
	case FUSE_SETATTR:
		return TAKE(b, r->in.setattr, sizeof(r->in.setattr));
	case FUSE_READLINK:
	case FUSE_STATFS:
	case FUSE_DESTROY:
	case FUSE_SYNCFS: /* fuse_syncfs_in is padding only: accept it or nothing */
		return 0;
	case FUSE_SYMLINK:
		/* The new entry's name, then the link target (fuse_symlink() in fs/fuse/dir.c). */
		err = fd_name(b, &r->name, NAME_MAX, 1);
		if (err)
			return err;
		return fd_name(b, &r->name2, PATH_MAX - 1, 0);
	case FUSE_MKNOD:
		err = TAKE(b, r->in.mknod,
			   ctx->minor < 12 ? FUSE_COMPAT_MKNOD_IN_SIZE : sizeof(r->in.mknod));
		return err ? err : fd_name(b, &r->name, NAME_MAX, 1);
	case FUSE_MKDIR:
		err = TAKE(b, r->in.mkdir, sizeof(r->in.mkdir));
		return err ? err : fd_name(b, &r->name, NAME_MAX, 1);
	case FUSE_RENAME:
		err = TAKE(b, r->in.rename2, sizeof(struct fuse_rename_in));
		if (err)
			return err;
		goto two_names;
	case FUSE_RENAME2:
		err = TAKE(b, r->in.rename2, sizeof(r->in.rename2));
		if (err)
			return err;
two_names:
		err = fd_name(b, &r->name, NAME_MAX, 1);
		return err ? err : fd_name(b, &r->name2, NAME_MAX, 1);
	case FUSE_LINK:
		err = TAKE(b, r->in.link, sizeof(r->in.link));
		return err ? err : fd_name(b, &r->name, NAME_MAX, 1);
	case FUSE_OPEN:
	case FUSE_OPENDIR:
		return TAKE(b, r->in.open, sizeof(r->in.open));
	case FUSE_CREATE:
		/* Before 7.12 CREATE sent a fuse_open_in (flags, mode) */
		err = TAKE(b, r->in.create,
			   ctx->minor < 12 ? sizeof(struct fuse_open_in) : sizeof(r->in.create));
		return err ? err : fd_name(b, &r->name, NAME_MAX, 1);
	case FUSE_TMPFILE:
		/* Like CREATE (7.37, fuse_tmpfile() in fs/fuse/dir.c); the name is the unnamed dentry's
		   "/", taken and never used: the file is made in the directory nodeid names. */
		err = TAKE(b, r->in.create, sizeof(r->in.create));
		return err ? err : fd_name(b, &r->name, NAME_MAX, 0);
	case FUSE_READ:
	case FUSE_READDIR:
	case FUSE_READDIRPLUS:
		return TAKE(b, r->in.read, fd_read_in_size(ctx->minor));
	case FUSE_WRITE:
		err = TAKE(b, r->in.write, fd_write_in_size(ctx->minor));
		if (err)
			return err;
		/* The payload is all that follows, exactly write.size bytes of it. */
		if (header_and_body + fd_write_in_size(ctx->minor) + r->in.write.size != total)
			return -EINVAL;
		r->write_off = header_and_body + fd_write_in_size(ctx->minor);
		b->left = 0;
		return 0;
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
		return TAKE(b, r->in.release, sizeof(r->in.release));
	case FUSE_FLUSH:
		return TAKE(b, r->in.flush, sizeof(r->in.flush));
	case FUSE_FSYNC:
	case FUSE_FSYNCDIR:
		return TAKE(b, r->in.fsync, sizeof(r->in.fsync));
	case FUSE_SETXATTR:
		err = TAKE(b, r->in.setxattr,
			   ctx->setxattr_ext ? sizeof(r->in.setxattr) : FUSE_COMPAT_SETXATTR_IN_SIZE);
		if (err)
			return err;
		err = fd_name(b, &r->name, XATTR_NAME_MAX, 0);
		if (err)
			return err;
		if (r->in.setxattr.size > XATTR_SIZE_MAX)
			return -E2BIG;
		if (b->left < r->in.setxattr.size)
			return -EINVAL;
		r->data = b->p;
		r->data_len = r->in.setxattr.size;
		b->p += r->data_len;
		b->left -= r->data_len;
		return 0;
	case FUSE_GETXATTR:
		err = TAKE(b, r->in.getxattr, sizeof(r->in.getxattr));
		return err ? err : fd_name(b, &r->name, XATTR_NAME_MAX, 0);
	case FUSE_LISTXATTR:
		return TAKE(b, r->in.getxattr, sizeof(r->in.getxattr));
	case FUSE_GETLK:
	case FUSE_SETLK:
	case FUSE_SETLKW:
		return TAKE(b, r->in.lk, sizeof(r->in.lk));
	case FUSE_ACCESS:
		return TAKE(b, r->in.access, sizeof(r->in.access));
	case FUSE_INTERRUPT:
		return TAKE(b, r->in.interrupt, sizeof(r->in.interrupt));
	case FUSE_FALLOCATE:
		return TAKE(b, r->in.fallocate, sizeof(r->in.fallocate));
	case FUSE_LSEEK:
		return TAKE(b, r->in.lseek, sizeof(r->in.lseek));
	case FUSE_COPY_FILE_RANGE:
		return TAKE(b, r->in.copy_file_range, sizeof(r->in.copy_file_range));
	default:
		return -ENOSYS;
	}
}

int fuse_decode(const void *buf, size_t have, size_t total, const struct fuse_decode_ctx *ctx,
		struct fuse_req *out)
{
	const size_t hlen = sizeof(struct fuse_in_header);
	struct fd_body b;
	size_t ext;
	int err;

	memset(out, 0, sizeof(*out));
	if (have > total || have < hlen)
		return -EINVAL;
	memcpy(&out->hdr, buf, hlen);
	if (out->hdr.len != total)
		return -EINVAL;
	/* Extensions (security contexts) are only sent when FUSE_SECURITY_CTX was agreed; it is not. */
	ext = (size_t)out->hdr.total_extlen * 8;
	if (ext)
		return -EINVAL;
	b.p = (const unsigned char *)buf + hlen;
	b.left = have - hlen;
	err = fd_body(out->hdr.opcode, &b, ctx, out, hlen, total);
	if (err == -EINVAL && out->hdr.opcode != FUSE_WRITE && have < total)
		return -E2BIG; /* the request did not fit what the caller gathered */
	if (err)
		return err;
	if (out->hdr.opcode != FUSE_WRITE && have < total)
		return -E2BIG;
	return 0;
}
