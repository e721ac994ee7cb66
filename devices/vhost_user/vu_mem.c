/* vu_mem.c: mapping a front-end's memory regions, and the SIGBUS guard for files that shrink under us. */
#define _GNU_SOURCE
#include "devices/vhost_user/vu_mem.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Every guest mapping of the process, for the SIGBUS handler. Written by connection threads (a slot
 * is claimed with a compare-and-swap on `busy`), read by the handler with atomic loads. A slot is
 * filled (len, align, then start with release) before its mapping can be touched by a worker and
 * cleared (start = 0) only after every worker stopped, so the handler never sees a half slot of a
 * mapping in use.
 */
#define VU_GUARD_SLOTS 64
static struct {
	bool busy;
	uintptr_t start; /* 0: slot empty for the handler */
	size_t len;
	size_t align; /* the mapping's page size: 4 KiB, or a hugetlbfs page */
} vu_guard[VU_GUARD_SLOTS];
static int vu_guard_poison_fd = -1;
static bool vu_guard_installed;

static void vu_guard_add(void *map, size_t len, size_t align)
{
	for (unsigned int i = 0; i < VU_GUARD_SLOTS; i++) {
		bool free_slot = false;
		if (!__atomic_compare_exchange_n(&vu_guard[i].busy, &free_slot, true, false,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(&vu_guard[i].len, len, __ATOMIC_RELAXED);
		__atomic_store_n(&vu_guard[i].align, align, __ATOMIC_RELAXED);
		/* Release: len and align are visible before the handler can match start. */
		__atomic_store_n(&vu_guard[i].start, (uintptr_t)map, __ATOMIC_RELEASE);
		return;
	}
	/* More than 64 live regions in one process: this one is unguarded (its fstat check
	   still holds; a later shrink would crash us). Not reachable with one back-end. */
}

static void vu_guard_remove(void *map)
{
	for (unsigned int i = 0; i < VU_GUARD_SLOTS; i++) {
		if (__atomic_load_n(&vu_guard[i].busy, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&vu_guard[i].start, __ATOMIC_ACQUIRE) == (uintptr_t)map) {
			__atomic_store_n(&vu_guard[i].start, 0, __ATOMIC_RELEASE);
			__atomic_store_n(&vu_guard[i].busy, false, __ATOMIC_RELEASE);
		}
	}
}

/*
 * SIGBUS: inside a guest mapping, replace the lost page by a private zero page and poison the
 * connection; elsewhere, fall back to the default action (the retried access kills us as it
 * should). Only async-signal-safe calls: mmap, write, sigaction.
 */
static void vu_guard_handler(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	uintptr_t a = (uintptr_t)si->si_addr;
	for (unsigned int i = 0; i < VU_GUARD_SLOTS; i++) {
		uintptr_t start = __atomic_load_n(&vu_guard[i].start, __ATOMIC_ACQUIRE);
		size_t len = __atomic_load_n(&vu_guard[i].len, __ATOMIC_RELAXED);
		size_t align = __atomic_load_n(&vu_guard[i].align, __ATOMIC_RELAXED);
		if (!start || a < start || a - start >= len)
			continue;
		uintptr_t page = a & ~(uintptr_t)(align - 1);
		void *p = mmap((void *)page, align, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (p == MAP_FAILED)
			break;
		int fd = __atomic_load_n(&vu_guard_poison_fd, __ATOMIC_RELAXED);
		uint64_t one = 1;
		if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
			/* counter saturated: the connection is being dropped anyway */
		}
		return;
	}
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
}

int vu_mem_guard_install(int poison_fd)
{
	__atomic_store_n(&vu_guard_poison_fd, poison_fd, __ATOMIC_RELAXED);
	if (vu_guard_installed)
		return 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = vu_guard_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) < 0)
		return -errno;
	vu_guard_installed = true;
	return 0;
}

/* The page size of a mapping of this file: st_blksize on hugetlbfs, the base page elsewhere. */
static size_t vu_map_align(const struct stat *st)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t b = (size_t)st->st_blksize;
	if (b > page && !(b & (b - 1)))
		return b;
	return page;
}

int vu_mem_map(struct vu_mem *m, const struct vu_memory *tbl, const int *fds, const char **why)
{
	struct gm_region regions[VU_MAX_MEM_REGIONS];
	size_t align[VU_MAX_MEM_REGIONS];
	memset(m, 0, sizeof(*m));
	m->gm.memfd = -1;
	m->abandon_mark = gm_abandon_mark();
	int err = 0;
	for (uint32_t i = 0; i < tbl->nregions; i++) {
		const struct vu_mem_region *r = &tbl->regions[i];
		struct stat st;
		if (fstat(fds[i], &st) < 0) {
			err = -errno;
			*why = "fstat on a region's fd failed";
			goto err_unmap;
		}
		if (!S_ISREG(st.st_mode)) {
			err = -EINVAL;
			*why = "a region's fd is not a regular file (memfd, tmpfs or hugetlbfs)";
			goto err_unmap;
		}
		/* mmap_offset + memory_size does not wrap (vu_decode). */
		if (st.st_size < 0 || (uint64_t)st.st_size < r->mmap_offset + r->memory_size) {
			err = -EINVAL;
			*why = "a region reaches beyond the end of its file";
			goto err_unmap;
		}
		align[i] = vu_map_align(&st);
		uint64_t off = r->mmap_offset & ~(uint64_t)(align[i] - 1);
		uint64_t delta = r->mmap_offset - off;
		uint64_t len = (delta + r->memory_size + align[i] - 1) & ~(uint64_t)(align[i] - 1);
		if (len < r->memory_size || len > SIZE_MAX) {
			err = -EINVAL;
			*why = "a region too large to map";
			goto err_unmap;
		}
		void *p = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
			       fds[i], (off_t)off);
		if (p == MAP_FAILED) {
			err = -errno;
			*why = "mmap of a region failed";
			goto err_unmap;
		}
		/* Guest memory in a core dump would be the guest's data: leave it out. */
		(void)madvise(p, (size_t)len, MADV_DONTDUMP);
		m->map[i] = p;
		m->map_len[i] = (size_t)len;
		m->nr = i + 1;
		regions[i] = (struct gm_region){
			.gpa = r->guest_phys_addr,
			.size = r->memory_size,
			.host = (uint8_t *)p + delta,
			.offset = r->mmap_offset,
			.uva = r->userspace_addr,
		};
	}
	err = gm_init_from(&m->gm, regions, tbl->nregions);
	if (err) {
		*why = "the regions overlap or wrap";
		goto err_unmap;
	}
	for (unsigned int i = 0; i < m->nr; i++)
		vu_guard_add(m->map[i], m->map_len[i], align[i]);
	return 0;

err_unmap:
	for (unsigned int i = 0; i < m->nr; i++)
		munmap(m->map[i], m->map_len[i]);
	memset(m, 0, sizeof(*m));
	m->gm.memfd = -1;
	return err;
}

void vu_mem_unmap(struct vu_mem *m)
{
	for (unsigned int i = 0; i < m->nr; i++) {
		vu_guard_remove(m->map[i]);
		/* A ring's abandoned request may still copy into it (guest_mem.h: gm_unmap). */
		gm_unmap(m->map[i], m->map_len[i], m->abandon_mark);
	}
	memset(m, 0, sizeof(*m));
	m->gm.memfd = -1;
}
