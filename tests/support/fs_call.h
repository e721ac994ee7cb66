/* fs_call.h: unit tests' side of the FUSE server: send one request to fs_dispatch, read the reply. */
#ifndef RINGVM_FS_CALL_H
#define RINGVM_FS_CALL_H

#include <stddef.h>
#include <stdint.h>

#include "devices/fs/fs_server.h"

/*
 * A test's connection to one server, as the guest kernel would drive it, synchronously, on the
 * calling thread. Requests carry uid/gid (change them between calls). The reply of the last call
 * stays in rep until the next one.
 */
struct fsc {
	struct fs_server *srv;
	uint32_t uid, gid;
	unsigned char *req, *rep; /* FSC_BUF bytes each */
	size_t rep_len;
};
#define FSC_BUF (256 * 1024)

/* Allocate the buffers; -ENOMEM. */
__attribute__((warn_unused_result)) int fsc_open(struct fsc *c, struct fs_server *srv);
void fsc_close(struct fsc *c);

/* INIT with the flags a Linux virtio-fs guest offers (extra_flags added). Returns the reply's error. */
int fsc_init(struct fsc *c, uint64_t extra_flags);

/* One request (fixed body, then up to two NUL-terminated names); the reply's error (0, -errno),
   1 when the opcode takes no reply, -1000 for a malformed reply. */
int fsc_call(struct fsc *c, uint32_t op, uint64_t nodeid, const void *body, size_t blen,
	     const char *n1, const char *n2);
/* The reply body of the last call. */
void *fsc_body(struct fsc *c);

/* Shorthands: a nodeid / fh (>= 0) or -errno. */
int64_t fsc_lookup(struct fsc *c, uint64_t parent, const char *name);
int64_t fsc_create(struct fsc *c, uint64_t parent, const char *name, uint32_t flags, uint32_t mode);
int64_t fsc_open_(struct fsc *c, uint64_t nodeid, uint32_t flags);
int64_t fsc_opendir(struct fsc *c, uint64_t nodeid);
int64_t fsc_mknod(struct fsc *c, uint64_t parent, const char *name, uint32_t mode, uint32_t rdev);
/* WRITE of a string; the count written or -errno. */
int fsc_write(struct fsc *c, uint64_t nodeid, uint64_t fh, uint64_t off, const char *data,
	      uint32_t write_flags);
int fsc_setxattr(struct fsc *c, uint64_t nodeid, const char *name, const char *value);
int fsc_removexattr(struct fsc *c, uint64_t nodeid, const char *name);
/* GETATTR into *a; the error. */
int fsc_getattr(struct fsc *c, uint64_t nodeid, struct fuse_attr *a);

/* root/rel in one of 4 rotating static buffers (so a check may name a few paths at once). */
const char *fsc_path(const char *root, const char *rel);

#endif
