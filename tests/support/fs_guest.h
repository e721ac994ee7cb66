/* fs_guest.h: a virtio-fs driver's first steps over mmio_driver: INIT, LOOKUP and OPEN of a file. */
#ifndef RINGVM_FS_GUEST_H
#define RINGVM_FS_GUEST_H

#include <stdint.h>

#include "tests/support/mmio_driver.h"

/*
 * On request queue q: INIT (7.38, MAX_PAGES), LOOKUP name under the root, OPEN it with open_flags.
 * Returns 0 with *nodeid and *fh, or -1 / -2 / -3 for the step (INIT, LOOKUP, OPEN) that failed.
 */
int fsg_open_file(struct mmio_driver *d, unsigned int q, const char *name, uint32_t open_flags,
		  uint64_t *nodeid, uint64_t *fh);

#endif
