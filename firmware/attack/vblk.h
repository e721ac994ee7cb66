/* vblk.h: virtio-blk requests from the attack payloads, and the test image they read. */
#ifndef ATTACK_VBLK_H
#define ATTACK_VBLK_H

#include <stdint.h>

#include <linux/virtio_blk.h>

#include "firmware/attack/vio.h"

/*
 * The image tests/boot/attack.sh gives the payloads: IMG_SECTORS sectors, byte at offset o is
 * img_byte(o). Only the scratch sectors [IMG_SCRATCH, IMG_SCRATCH + IMG_SCRATCH_N) may ever be
 * written; the host checks every other region is unchanged after each case.
 */
#define IMG_SECTORS 2048
#define IMG_SCRATCH 128
#define IMG_SCRATCH_N 128
static inline uint8_t img_byte(uint64_t off)
{
	return (uint8_t)(off * 7 + (off >> 9) * 13 + 1);
}

/* A sentinel the device never writes as a status (OK 0, IOERR 1, UNSUPP 2). */
#define VBLK_NO_STATUS 0xee

struct vblk {
	struct vdev d;
	struct dq q;
	uint64_t capacity;
	bool ro;
};

/* The nth blk device, started with one queue of `size` entries (INDIRECT_DESC and every request
   feature negotiated when offered). */
void vblk_open(struct vblk *b, unsigned int nth, uint16_t size);
/* Start again (after a reset or NEEDS_RESET), same device. */
void vblk_restart(struct vblk *b, uint16_t size);

/* One request as Linux sends it: header, data (direction by type), status. Returns the status
   byte (VBLK_NO_STATUS when the device did not write it); *used gets the used length. */
uint8_t vblk_req(struct vblk *b, uint32_t type, uint64_t sector, void *data, uint32_t len,
		 uint32_t *used);

/* Read n sectors at sector and check they hold the image's bytes: proof the device reads. */
void vblk_expect_image(struct vblk *b, uint64_t sector, unsigned int n);

/* A discard / write-zeroes with one segment. Returns the status. */
uint8_t vblk_range(struct vblk *b, uint32_t type, uint64_t sector, uint32_t n, uint32_t flags);

/* The case's closing proof: a read still returns the image's bytes. */
void vblk_still_works(struct vblk *b);

/* After a driver bug: NEEDS_RESET is set within 5 s, then a reset and restart make it work again. */
void vblk_expect_needs_reset(struct vblk *b, uint16_t size);

#endif
