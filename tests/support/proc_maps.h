/* proc_maps.h: the tests' view of this process's own mappings (/proc/self/smaps). */
#ifndef RINGVM_PROC_MAPS_H
#define RINGVM_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One mapping as smaps shows it. */
struct pm_map {
	uintptr_t start, end;
	char perms[5];         /* "rw-p", "---p", ... */
	unsigned long inode;   /* 0: anonymous */
	long rss_kb;           /* resident, kB */
	char vm_flags[256];    /* the VmFlags line's flags (" rd wr mr ... hg dd") */
};

/* The first mapping for which want(map, arg) holds: true and *out, or false. */
bool pm_find(bool (*want)(const struct pm_map *map, const void *arg), const void *arg,
	     struct pm_map *out);

/* The mapping that holds addr: true and *out, or false. */
bool pm_at(const void *addr, struct pm_map *out);

/* Nothing is mapped in [start, start + len): a mapping placed there without replacing one
   succeeds (and is removed again). */
bool pm_range_free(uintptr_t start, size_t len);

#endif
