/* fuzz_ring.h: turn fuzz bytes into a split ring in fake guest RAM, for the libFuzzer targets. */
#ifndef RINGVM_FUZZ_RING_H
#define RINGVM_FUZZ_RING_H

#include <stddef.h>
#include <stdint.h>

#include "devices/virtio/virtq.h"

#define FZ_QSIZE 8
#define FZ_RAM 16384u

struct fuzz_ring {
	uint8_t ram[2 * FZ_RAM];
	struct guest_mem gm;
	struct virtq vq;
};

/*
 * Input layout (missing bytes read as 0):
 *   [0]        avail idx the driver publishes (checked against the queue size like any other)
 *   [1..8]     avail ring entries (head indices, raw)
 *   [9..56]    8 main-table descriptors, 6 bytes each: off16 len16 flags8 next8
 *   [57..104]  8 descriptors of an indirect table at gpa 0x1000, same encoding
 *   [105..]    raw bytes: the data area at gpa 0x2000, then RAM region 2 at gpa 1 MiB
 * A descriptor's address is 0x2000 + off (data area) or, when next has bit 7, 1 MiB + off (the
 * second region) or, with bits 6 and 7, a wrapping address; an INDIRECT one points at the table.
 * Most fuzz inputs thus reach the walk's logic instead of dying on a wild address.
 * Returns the number of input bytes used, or -1 when the ring cannot be set up.
 */
int fuzz_ring_setup(struct fuzz_ring *f, const uint8_t *data, size_t size, uint64_t features,
		    unsigned int max_segs);

#endif
