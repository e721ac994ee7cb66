/* page_cache.h: whether a file's page is in the page cache, for tests of what is read from it. */
#ifndef RINGVM_TESTS_PAGE_CACHE_H
#define RINGVM_TESTS_PAGE_CACHE_H

#include <fcntl.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

/* Is the page at off (page-aligned) of fd in the page cache? mincore on a mapping: a read, even
   with RWF_NOWAIT, starts readahead for a page that is missing and so brings it back. Unknown
   (the mapping or mincore failed) counts as cached, so a check that needs a page gone skips. */
static inline bool page_cached(int fd, off_t off)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char vec = 1;
	void *map = mmap(NULL, (size_t)pg, PROT_READ, MAP_SHARED, fd, off);

	if (map == MAP_FAILED)
		return true;
	if (mincore(map, (size_t)pg, &vec))
		vec = 1;
	munmap(map, (size_t)pg);
	return vec & 1;
}

/* Drop the first len bytes of fd's file from the page cache (written back first): true when none
   of its pages is left there (a tmpfs keeps them: false). */
static inline bool page_cache_drop(int fd, off_t len)
{
	long pg = sysconf(_SC_PAGESIZE);

	if (fdatasync(fd) || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		return false;
	for (off_t off = 0; off < len; off += pg)
		if (page_cached(fd, off))
			return false;
	return true;
}

/*
 * Leave only a first part of the file's first len bytes in the page cache: drop them all, then
 * read byte 0 through fd (give fd POSIX_FADV_RANDOM first, or readahead brings more), which brings
 * back its folio, maybe larger than a page. Returns where the uncached part begins, or 0 when it
 * did not come out so (nothing dropped, or everything back).
 */
static inline off_t page_cache_prefix(int fd, off_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	off_t off = pg;
	char c;

	if (!page_cache_drop(fd, len) || pread(fd, &c, 1, 0) != 1)
		return 0;
	while (off < len && page_cached(fd, off))
		off += pg;
	return off < len ? off : 0;
}

/* The states a read test puts a file's first bytes in, one after the other. */
enum page_cache_case { PAGE_CACHE_ALL, PAGE_CACHE_NONE, PAGE_CACHE_PREFIX, PAGE_CACHE_CASES };

static inline const char *page_cache_case_name(enum page_cache_case c)
{
	static const char *const names[PAGE_CACHE_CASES] = { "all cached", "nothing cached",
							     "a first part cached" };
	return c < PAGE_CACHE_CASES ? names[c] : "?";
}

/* Put the first len bytes of fd's file in state c (all: leave them as they are after a write,
   none: page_cache_drop, a first part: page_cache_prefix). False when they did not come out so:
   the caller reports its check as skipped. */
static inline bool page_cache_arrange(int fd, off_t len, enum page_cache_case c)
{
	switch (c) {
	case PAGE_CACHE_ALL:
		return true;
	case PAGE_CACHE_NONE:
		return page_cache_drop(fd, len);
	case PAGE_CACHE_PREFIX:
		return page_cache_prefix(fd, len) != 0;
	default:
		return false;
	}
}

#endif
