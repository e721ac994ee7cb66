/* blk_req.h: the virtio-blk request parser: a pure function from a chain to what the device must do. */
#ifndef RINGVM_BLK_REQ_H
#define RINGVM_BLK_REQ_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/virtio_blk.h>

#include "devices/virtio/virtq.h"

#define BLK_SECTOR_SIZE 512ULL /* virtio-blk sectors are 512 bytes whatever blk_size says (5.2.4) */

/* What the disk allows; fixed at creation. */
struct blk_limits {
	uint64_t capacity;           /* in 512-byte sectors */
	bool readonly;
	uint32_t max_discard_sectors; /* per segment */
	uint32_t max_zeroes_sectors;  /* per segment */
};

enum blk_action {
	BLK_ACT_NO_STATUS,   /* no writable byte for the status: cannot be answered (see blk_req_parse) */
	BLK_ACT_STATUS,      /* finish now with `status` */
	BLK_ACT_READ,        /* file [offset, offset+len) -> writer */
	BLK_ACT_WRITE,       /* reader -> file [offset, offset+len) */
	BLK_ACT_FLUSH,       /* make every completed write durable */
	BLK_ACT_GET_ID,      /* id string -> writer */
	BLK_ACT_DISCARD,     /* deallocate [offset, offset+len) */
	BLK_ACT_WRITE_ZEROES /* zero [offset, offset+len); unmap allowed when `unmap` */
};

/*
 * A parsed request. The Reader is positioned at the data of a write, the Writer at the data of a
 * read or GET_ID; the status byte is always the last writable byte (5.2.6: "the final byte of the
 * write scatter-gather list"): after the data, finish with blk_req_status().
 */
struct blk_req {
	enum blk_action action;
	uint32_t type;   /* VIRTIO_BLK_T_* as the guest sent it (diagnostics) */
	uint8_t status;  /* BLK_ACT_STATUS: VIRTIO_BLK_S_IOERR or VIRTIO_BLK_S_UNSUPP */
	uint64_t offset; /* bytes into the disk */
	uint64_t len;    /* bytes of data (READ/WRITE) or of the range (DISCARD/WRITE_ZEROES) */
	bool unmap;
	struct vq_reader rd;
	struct vq_writer wr;
};

/*
 * Decide what a chain asks (virtio 1.x 5.2.6). The header and discard segments are copied out of
 * guest memory once and validated as locals. Rules:
 *   - no writable byte at all: BLK_ACT_NO_STATUS. There is nowhere to report an error, so the device
 *     gives the buffers back with used length 0 and marks itself NEEDS_RESET (the driver broke 5.2.6.1
 *     "MUST ... include a status byte"); it never guesses a status location;
 *   - header shorter than 16 bytes: IOERR;
 *   - IN/OUT: data length not a multiple of 512, a range outside the disk (checked as
 *     sector <= capacity && sectors <= capacity - sector, which cannot overflow), data in the wrong
 *     direction (readable data for IN, writable data beyond the status for OUT): IOERR; OUT, DISCARD
 *     or WRITE_ZEROES on a read-only disk: IOERR (5.2.6.2);
 *   - DISCARD/WRITE_ZEROES: exactly one 16-byte segment (max_*_seg is 1), in range, num_sectors <= the
 *     advertised maximum; reserved flags, or UNMAP on DISCARD: UNSUPP (5.2.6.2);
 *   - FLUSH, GET_ID: header only; GET_ID writes up to 20 bytes of id;
 *   - any other type: UNSUPP.
 */
void blk_req_parse(const struct vq_chain *chain, const struct blk_limits *lim, struct blk_req *out);

/*
 * Write the status as the chain's final byte (skipping any writable bytes the device did not fill)
 * and return the used length to report: data bytes the device wrote + 1. Requires an action other
 * than BLK_ACT_NO_STATUS.
 */
uint32_t blk_req_status(struct blk_req *req, uint8_t status, uint32_t data_written);

#endif
