/* vfuse.h: FUSE requests over virtio-fs from the attack payloads, and the share they expect. */
#ifndef ATTACK_VFUSE_H
#define ATTACK_VFUSE_H

#include <stdint.h>

#include <linux/fuse.h>

#include "firmware/attack/vio.h"

/*
 * The share tests/boot/attack.sh gives the payloads: hello.txt holds SHARE_HELLO; dir/inner.txt;
 * an empty scratch/ (the only place a case may create or write); link_out, a symlink to
 * ../outside/canary.txt (outside the share: must never be opened).
 */
#define SHARE_HELLO "hello from the share\n"

struct vfs {
	struct vdev d;
	struct dq hiprio, rq; /* queue 0 (FORGET and friends), queue 1 (requests) */
	uint64_t unique;
};

/* The virtio-fs device started with its hiprio queue and one request queue (no INIT yet). */
void vfs_open(struct vfs *f);

/*
 * Send one request on the request queue: header (len = 40 + blen + elen, or hdr_len when not 0),
 * body, extra (a name...), as one readable buffer; a writable reply buffer of ocap bytes (none when
 * ocap is 0). Returns the used length; the reply is in out.
 */
uint32_t vfs_send(struct vfs *f, uint32_t opcode, uint64_t nodeid, const void *body, uint32_t blen,
		  const void *extra, uint32_t elen, void *out, uint32_t ocap, uint32_t hdr_len);

/* vfs_send with a reply buffer of `cap` bytes; returns the reply's error (0 or -errno) after
   checking the reply header (len == used length, unique matches). */
int vfs_call(struct vfs *f, uint32_t opcode, uint64_t nodeid, const void *body, uint32_t blen,
	     const void *extra, uint32_t elen, void *out, uint32_t cap);

/* INIT as Linux 6.1 sends it (7.36 with INIT_EXT); checks the reply. */
void vfs_init(struct vfs *f);
/* LOOKUP name in parent; 0 or -errno, entry filled on success. */
int vfs_lookup(struct vfs *f, uint64_t parent, const char *name, struct fuse_entry_out *e);
/* OPEN (or OPENDIR when dir) nodeid read-only; returns fh, fails the case on error. */
uint64_t vfs_open_fh(struct vfs *f, uint64_t nodeid, bool dir);
/* READ size bytes at off into buf; returns bytes or -errno. */
int vfs_read(struct vfs *f, uint64_t nodeid, uint64_t fh, uint64_t off, uint32_t size, void *buf);

/* The opening proof: INIT, LOOKUP hello.txt, OPEN, READ returns SHARE_HELLO. Returns its nodeid. */
uint64_t vfs_prove_hello(struct vfs *f);
/* The closing proof: the device is not NEEDS_RESET and LOOKUP + GETATTR of hello.txt answer. */
void vfs_still_works(struct vfs *f);

#endif
