/* blk.h: virtio-blk over a host file, as the machine sees it: its config, open, create, destroy. */
#ifndef RINGVM_BLK_H
#define RINGVM_BLK_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/virtio_blk.h>

#include "devices/virtio/uring.h"

#define BLK_ID_MAX VIRTIO_BLK_ID_BYTES /* GET_ID returns at most 20 bytes, no NUL when full */
#define BLK_MAX_QUEUES 16
#define BLK_MAX_POLL_US 1000 /* a worker spinning longer than this costs more than a wakeup */

/* One disk, as the device keeps it: a checked copy of a struct ringvm_disk (include/ringvm.h). */
struct blk_config {
	char path[4096];
	bool readonly;
	bool direct;             /* O_DIRECT, with a buffered fallback for unaligned requests */
	unsigned int queues;     /* 0 = the default passed to blk_create (one per vCPU) */
	char id[BLK_ID_MAX + 1]; /* "" = derived from the path */
	unsigned int poll_us;    /* queue workers busy-poll up to this long before sleeping (the window
				    adapts below it, devices/virtio/pace.h); 0 = off */
};

struct ringvm_disk;
/*
 * Check a public disk description (ranges, id characters; no file access) and copy it into *out.
 * 0, or -EINVAL with *why a static one-line reason ("queues must be 1..16 ...").
 */
__attribute__((warn_unused_result)) int blk_config_from(const struct ringvm_disk *d,
							struct blk_config *out, const char **why);

/*
 * The busy-poll ceiling d asks for: its poll_us when it made a choice (poll_us_set, or a non-zero
 * poll_us), else fallback (ringvm_serve's --poll-us; 0 for ringvm_run). Range checks are
 * blk_config_from's.
 */
unsigned int blk_disk_poll_us(const struct ringvm_disk *d, unsigned int fallback);

/*
 * Check and open the backing file before boot: a regular file or a block device, readable, and
 * writable unless readonly. Returns an fd (O_CLOEXEC; O_DIRECT when cfg->direct), or -errno:
 * -ENOENT missing, -EISDIR a directory, -EACCES/-EROFS/-EPERM not writable, -EINVAL not a regular
 * file or block device. blk_strerror() turns these into the CLI's one-line reason.
 */
__attribute__((warn_unused_result)) int blk_open(const struct blk_config *cfg);

/* A one-line reason for an error from blk_open()/blk_create() ("is a directory", ...), or from the
   transport that attaches the disk (-ENOSPC: "too many virtio devices"). */
const char *blk_strerror(int err);

struct blk_dev;
struct virtio_dev;

/* What a blk queue's io_uring may do (blk.c lists the opcodes and why); set on every blk device. */
extern const struct uring_rules blk_ring_rules;

/*
 * Open the file (blk_open) and create the virtio-blk device with cfg->queues queues (or
 * default_queues when 0, clamped to 1..BLK_MAX_QUEUES). The device is not on any bus yet: whoever
 * builds the machine hands blk_virtio_dev() to a transport (vmm/devices.c: virtio-mmio, so disks
 * become vda, vdb, ... in the order their transports are created). Setup time only. Returns 0 or
 * -errno (see blk_strerror).
 */
__attribute__((warn_unused_result)) int blk_create(const struct blk_config *cfg,
						   unsigned int default_queues, struct blk_dev **out);

/* The device's virtio side, for a transport; valid until blk_destroy(). */
struct virtio_dev *blk_virtio_dev(struct blk_dev *blk);

/*
 * Close the file, free. Only the backend: the transport that carried the device must already be
 * destroyed (virtio_mmio_destroy() stops the queue workers and drains in-flight I/O), or never
 * have been attached. NULL ok.
 */
void blk_destroy(struct blk_dev *blk);

#endif
