/* vu_mem.h: a vhost-user front-end's memory table, mapped from its fds into one struct guest_mem. */
#ifndef RINGVM_VU_MEM_H
#define RINGVM_VU_MEM_H

#include <stdbool.h>
#include <stddef.h>

#include "devices/vhost_user/vu_msg.h"
#include "vmm/guest_mem.h"

/*
 * SET_MEM_TABLE gives one fd per region; each is mapped MAP_SHARED and the regions become a
 * struct guest_mem whose regions also carry the front-end's user addresses, so that ring addresses
 * (user addresses) and descriptor addresses (guest-physical) both go through vmm/guest_mem.c's
 * checked translations. Nothing else computes a host pointer.
 *
 * A front-end that shrinks a file under a mapping would make our next access to the lost pages
 * raise SIGBUS. The defence, in layers:
 *   1. each fd must be a regular file (memfd, tmpfs, hugetlbfs) at least mmap_offset + size long
 *      when the table arrives (fstat);
 *   2. a memfd carrying F_SEAL_SHRINK cannot shrink at all (QEMU's memory-backend-memfd seals by
 *      default): nothing more is needed for it;
 *   3. for anything else (memory-backend-file on /dev/shm, an unsealed memfd) the process has a
 *      SIGBUS handler (vu_mem_guard_install): a fault inside a guest mapping gets an anonymous
 *      zero page mapped over it, the access is retried and sees zeros, and the connection is
 *      marked poisoned so the back-end drops it. A fault anywhere else is a real crash and is
 *      re-raised with the default action.
 * Residual risk: between the truncation and the disconnect, requests may read zeros instead of the
 * guest's data and their writes land in the private zero pages (lost): only the guest of the
 * front-end that broke its own memory is affected, and the back-end stays up.
 */

struct vu_mem {
	struct guest_mem gm; /* regions with .uva set; gm.memfd -1, gm.map NULL (we own the maps) */
	void *map[VU_MAX_MEM_REGIONS];
	size_t map_len[VU_MAX_MEM_REGIONS];
	unsigned int nr;
	uint64_t abandon_mark; /* gm_abandon_mark() when mapped: gm_unmap decides what unmapping means */
};

/*
 * Map the regions of a table vu_decode() accepted (count, sizes, overlaps), one fd each (fds[i]
 * stays the caller's: close it afterwards, the mapping keeps the file). On success *m holds the
 * new table; on failure nothing is mapped and *why says why (-EINVAL for an fd that is not a
 * regular file or is too short, -errno of mmap). m must be empty (zeroed or vu_mem_unmap'ed).
 */
__attribute__((warn_unused_result)) int vu_mem_map(struct vu_mem *m, const struct vu_memory *tbl,
						   const int *fds, const char **why);

/* Unmap every region and empty m. Nothing may use m->gm any more (every queue worker stopped). */
void vu_mem_unmap(struct vu_mem *m);

/*
 * Install the process-wide SIGBUS guard (point 3 above). poison_fd is an eventfd the guard writes
 * when it caught a fault (the connection loop polls it). Call once, before any table is mapped;
 * later calls only replace poison_fd. 0 or -errno.
 */
__attribute__((warn_unused_result)) int vu_mem_guard_install(int poison_fd);

#endif
