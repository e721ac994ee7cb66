/* proc_maps.c: the tests' view of this process's own mappings; see proc_maps.h. */
#define _GNU_SOURCE
#include "tests/support/proc_maps.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* A mapping's first smaps line ("start-end perms offset dev inode [name]") starts *m afresh. */
static bool pm_head(const char *line, struct pm_map *m)
{
	struct pm_map h;

	memset(&h, 0, sizeof(h));
	if (sscanf(line, "%lx-%lx %4s %*s %*s %lu", &h.start, &h.end, h.perms, &h.inode) != 4)
		return false;
	*m = h;
	return true;
}

bool pm_find(bool (*want)(const struct pm_map *map, const void *arg), const void *arg,
	     struct pm_map *out)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[512];
	struct pm_map m;
	bool have = false, found = false;

	if (!f)
		return false;
	/* A mapping is judged once its last field (VmFlags) is read. */
	while (!found && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "VmFlags:", 8)) {
			snprintf(m.vm_flags, sizeof(m.vm_flags), "%.255s", line + 8);
			found = have && want(&m, arg);
		} else if (sscanf(line, "Rss: %ld kB", &m.rss_kb) != 1) {
			have = pm_head(line, &m) || have;
		}
	}
	fclose(f);
	if (found)
		*out = m;
	return found;
}

static bool pm_holds(const struct pm_map *m, const void *addr)
{
	return m->start <= (uintptr_t)addr && (uintptr_t)addr < m->end;
}

bool pm_at(const void *addr, struct pm_map *out)
{
	return pm_find(pm_holds, addr, out);
}

bool pm_range_free(uintptr_t start, size_t len)
{
	void *want = (void *)start;
	void *p = mmap(want, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return false;
	munmap(p, len);
	return p == want;
}
