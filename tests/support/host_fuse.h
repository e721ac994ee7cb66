/* host_fuse.h: ringvm's FUSE server mounted on the host, with scriptable READ/WRITE answers. */
#ifndef RINGVM_HOST_FUSE_H
#define RINGVM_HOST_FUSE_H

#include <stdbool.h>
#include <stdint.h>

#include "devices/fs/fs_server.h"

/*
 * The passthrough server of devices/fs (the code virtio-fs runs) serving a host directory at a host
 * mount point, so the host kernel's own FUSE client - and anything on the host, io_uring included -
 * exercises it. The messages are those of virtio-fs; only the carrier differs (read()/write() on
 * /dev/fuse), so READ and WRITE take the server's synchronous path. The server runs in a child
 * process (host_fuse.c says why). Root only (mount(2)).
 *
 * A script can shape the next READ or WRITE answers, to give a file system that returns short reads,
 * short writes, EOF or errors on demand (what 9p, NFS and FUSE file systems do by themselves):
 * each step applies to one READ (or WRITE) request, in order; when the steps run out, requests are
 * served normally. Use cache=never so the host kernel passes the answers through unchanged
 * (FOPEN_DIRECT_IO: no page cache, no read-ahead).
 */
struct host_fuse;

enum hf_step_kind {
	HF_PASS,  /* serve the request as asked */
	HF_SHORT, /* serve at most n bytes of it (a READ reply or a WRITE's effect and reply) */
	HF_ERROR, /* answer err (negative errno) without touching the file */
	HF_HANG,  /* never answer (nor its INTERRUPT): the caller waits until the mount goes away */
	HF_HOLD,  /* answer as HF_PASS, but only once hf_release() is called (or the mount goes) */
};

struct hf_step {
	enum hf_step_kind kind;
	uint32_t n;     /* HF_SHORT: bytes */
	int err;        /* HF_ERROR: -errno */
	uint32_t times; /* requests this step answers before the next one applies (0 counts as 1) */
};

#define HF_MAX_STEPS 128

struct hf_options {
	bool readonly;
	enum fs_cache cache;
	unsigned int threads; /* server threads reading /dev/fuse, 1..64 */
	/*
	 * Hide FUSE_ASYNC_DIO from the host kernel. With it, direct I/O from an asynchronous caller
	 * (io_uring) is sent as async requests, and Linux turns a short WRITE answer into EIO for the
	 * whole call; without it, a short answer comes back as a short count, as from 9p or NFS.
	 */
	bool no_async_dio;
	/* The share policy of --share's ,dev ,suid and ,xattr=all (fs_server.h); off/user by default. */
	bool allow_dev;
	bool allow_suid;
	bool xattr_all;
};

/* Mount host_dir at mountpoint and start serving. Returns 0 or -errno. */
__attribute__((warn_unused_result)) int hf_mount(const char *host_dir, const char *mountpoint,
						 const struct hf_options *opt, struct host_fuse **out);

/* Wait until the mount goes away (someone ran umount) and the server process ended, then free. */
void hf_wait(struct host_fuse *hf);

/* Unmount (lazily, so busy files do not block it), end the server process, free. NULL ok. */
void hf_unmount(struct host_fuse *hf);

/* Replace the script for `opcode` (FUSE_READ, FUSE_WRITE, FUSE_FSYNC or FUSE_FALLOCATE; the last
   two take HF_PASS and HF_ERROR) with steps[0 .. n), n <= HF_MAX_STEPS. */
void hf_script(struct host_fuse *hf, uint32_t opcode, const struct hf_step *steps, unsigned int n);

/* Let every request an HF_HOLD step holds be answered now. */
void hf_release(struct host_fuse *hf);

/* Steps of opcode's script not consumed yet, and requests of opcode served since the last hf_script. */
unsigned int hf_steps_left(struct host_fuse *hf, uint32_t opcode);
unsigned int hf_served(struct host_fuse *hf, uint32_t opcode);

/*
 * A test's scratch tree: top, a new directory under /tmp named after the test, holding back (the
 * host directory to share) and mnt (its mount point). hf_scratch_make returns 0 when both are made;
 * 1 when the test cannot mount here (not root, or no /dev/fuse), after printing a TAP plan that
 * skips it whole (the test then exits 0); or -errno.
 */
struct hf_scratch {
	char top[64];
	char back[96];
	char mnt[96];
};

__attribute__((warn_unused_result)) int hf_scratch_make(struct hf_scratch *s, const char *test);

/* Remove the tree, after hf_unmount; never across a mount (a comment line says when it fails). */
void hf_scratch_remove(const struct hf_scratch *s);

#endif
