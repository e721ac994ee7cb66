/* fuse_decode.h: a pure decoder from the bytes of one FUSE request to a checked struct. */
#ifndef RINGVM_FUSE_DECODE_H
#define RINGVM_FUSE_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include <linux/fuse.h>

/*
 * What the decoder needs from the session: the negotiated minor version (struct sizes changed with
 * it: fuse_write_in, fuse_read_in, fuse_getattr_in grew in 7.9, fuse_mknod_in and fuse_create_in in
 * 7.12, fuse_init_in in 7.36 with FUSE_INIT_EXT) and whether FUSE_SETXATTR_EXT was agreed (the
 * 16-byte fuse_setxattr_in). Before INIT, minor is FUSE_KERNEL_MINOR_VERSION.
 */
struct fuse_decode_ctx {
	uint32_t minor;
	int setxattr_ext;
};

/*
 * One decoded request. Fixed-size bodies are copied into `in` (bytes beyond the size the negotiated
 * minor version sends are zero); names and variable data point into the caller's buffer and are
 * bounded by it. `name`/`name2` are NUL-terminated inside the buffer, non-empty, without '/', and at
 * most NAME_MAX bytes (SYMLINK's target, name2, may contain '/' and be up to PATH_MAX-1 bytes;
 * TMPFILE's name, "/" from Linux, is not an entry name and is never used).
 */
struct fuse_req {
	struct fuse_in_header hdr;
	union {
		struct fuse_init_in init;
		struct fuse_forget_in forget;
		struct fuse_batch_forget_in batch_forget;
		struct fuse_getattr_in getattr;
		struct fuse_setattr_in setattr;
		struct fuse_mknod_in mknod;
		struct fuse_mkdir_in mkdir;
		struct fuse_rename2_in rename2; /* RENAME too, with flags 0 */
		struct fuse_link_in link;
		struct fuse_open_in open;       /* OPEN and OPENDIR */
		struct fuse_create_in create;
		struct fuse_read_in read;       /* READ, READDIR, READDIRPLUS */
		struct fuse_write_in write;
		struct fuse_release_in release; /* RELEASE and RELEASEDIR */
		struct fuse_flush_in flush;
		struct fuse_fsync_in fsync;     /* FSYNC and FSYNCDIR */
		struct fuse_setxattr_in setxattr;
		struct fuse_getxattr_in getxattr; /* GETXATTR and LISTXATTR */
		struct fuse_lk_in lk;
		struct fuse_access_in access;
		struct fuse_interrupt_in interrupt;
		struct fuse_fallocate_in fallocate;
		struct fuse_lseek_in lseek;
		struct fuse_copy_file_range_in copy_file_range;
	} in;
	const char *name;  /* LOOKUP, MKNOD, MKDIR, UNLINK, RMDIR, CREATE, TMPFILE (unused), RENAME(2) old, LINK new,
			      SYMLINK new entry, GETXATTR/SETXATTR/REMOVEXATTR attribute name */
	const char *name2; /* RENAME(2) new name, SYMLINK target */
	const void *data;  /* SETXATTR value, BATCH_FORGET's fuse_forget_one array (unaligned) */
	size_t data_len;
	/* WRITE: the payload is write.size bytes at this offset from the request start; it may lie
	   beyond the bytes the caller gathered (the device writes it from guest memory directly). */
	size_t write_off;
};

/* Attribute names are bounded like the kernel's (XATTR_NAME_MAX) and values by XATTR_SIZE_MAX. */

/*
 * Decode the request whose first `have` bytes are in buf, out of `total` readable bytes in the
 * chain (have <= total; have < total only when the tail is a WRITE payload the caller left in guest
 * memory). Checks, in order: a whole fuse_in_header; hdr.len == total (a length that lies is
 * refused); total_extlen (no extensions are negotiated, so it must be 0); the opcode is one we serve
 * (else -ENOSYS, with hdr valid so the caller can answer); the body holds the opcode's struct at
 * the minor version's size; names NUL-terminated within the body; WRITE: header + body + size ==
 * total; BATCH_FORGET: count entries fit; SETXATTR: size bytes of value follow the name.
 * Returns 0, -ENOSYS (unknown opcode; hdr filled), -EINVAL (malformed; hdr filled when at least a
 * header was present, which fuse_decode_has_header() tells), -ENAMETOOLONG, -E2BIG (a non-WRITE
 * request larger than what was gathered). Pure: no I/O, no global state; any thread.
 */
__attribute__((warn_unused_result)) int fuse_decode(const void *buf, size_t have, size_t total,
						    const struct fuse_decode_ctx *ctx,
						    struct fuse_req *out);

/* Whether a buffer of `have` bytes holds a whole header (so an error reply can carry hdr.unique). */
static inline int fuse_decode_has_header(size_t have)
{
	return have >= sizeof(struct fuse_in_header);
}

/* Whether the opcode expects no reply at all (FORGET, BATCH_FORGET, INTERRUPT). */
int fuse_opcode_no_reply(uint32_t opcode);

#endif
