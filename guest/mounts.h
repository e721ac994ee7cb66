/* mounts.h: parse ringvm.mount= and ringvm.root= (guest/protocol.h) into what PID 1 must mount. */
#ifndef RINGVM_GUEST_MOUNTS_H
#define RINGVM_GUEST_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>

/* More shares than fit on a 2048-byte kernel command line in any useful form. */
#define MNT_MAX_SHARES 64

/* One virtio-fs share: mount -t virtiofs tag path (read-only when read_only). */
struct mnt_share {
	const char *tag;
	const char *path; /* absolute, never "/" itself */
	bool read_only;
};

/* The virtio-fs share that becomes "/": read_only puts a tmpfs overlay on top of it. */
struct mnt_root {
	const char *tag;
	bool read_only;
};

/*
 * Both parsers are pure (no I/O, no allocation) and safe on any input. They decode value, the text
 * after "ringvm.mount=" or "ringvm.root=", in place (guest/cmdline.h wire form): the strings they hand
 * back point into value. On failure they return a negative errno and set *why to a fixed sentence
 * that says what is wrong, for PID 1 to print; value then holds garbage.
 */

/*
 * TAG,PATH,MODE triples -> shares[0..n-1], in order. maxshares is the room in shares (at most
 * MNT_MAX_SHARES are ever accepted). Returns n (>= 1), -EINVAL for a malformed value (bad wire form,
 * fields not in triples, empty TAG, PATH not absolute or "/", MODE neither "ro" nor "rw"), -E2BIG for
 * more shares than fit.
 */
int mnt_parse_shares(char *value, struct mnt_share *shares, size_t maxshares, const char **why)
	__attribute__((warn_unused_result));

/* TAG,MODE -> *root. Returns 0, or -EINVAL for a malformed value (as above, exactly two fields). */
int mnt_parse_root(char *value, struct mnt_root *root, const char **why) __attribute__((warn_unused_result));

#endif
