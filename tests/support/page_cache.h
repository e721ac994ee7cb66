/* page_cache.h: whether a file's page is in the page cache, for tests of what is read from it. */
#ifndef RINGVM_TESTS_PAGE_CACHE_H
#define RINGVM_TESTS_PAGE_CACHE_H

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

#endif
