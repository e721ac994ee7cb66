/* fs_budget.c: the process-wide counters behind fs_budget.h (a process has one fd table). */
#include "devices/fs/fs_budget.h"

#include <errno.h>
#include <stdint.h>

static size_t fb_max_fds = SIZE_MAX;
static size_t fb_max_dirbufs = FS_DEFAULT_DIR_BUFFERS;
static size_t fb_fds, fb_dirbufs; /* atomic */

void fs_budget_configure(const struct fs_limits *l)
{
	if (l->max_fds)
		__atomic_store_n(&fb_max_fds, l->max_fds, __ATOMIC_RELAXED);
	if (l->max_dir_buffers)
		__atomic_store_n(&fb_max_dirbufs, l->max_dir_buffers, __ATOMIC_RELAXED);
}

void fs_budget_limits(struct fs_limits *l)
{
	l->max_fds = __atomic_load_n(&fb_max_fds, __ATOMIC_RELAXED);
	l->max_dir_buffers = __atomic_load_n(&fb_max_dirbufs, __ATOMIC_RELAXED);
}

/* Add one to *count unless it reached max. */
static bool fb_take(size_t *count, const size_t *max)
{
	size_t cur = __atomic_load_n(count, __ATOMIC_RELAXED);

	do {
		if (cur >= __atomic_load_n(max, __ATOMIC_RELAXED))
			return false;
	} while (!__atomic_compare_exchange_n(count, &cur, cur + 1, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return true;
}

int fs_budget_take_fd(void)
{
	return fb_take(&fb_fds, &fb_max_fds) ? 0 : -ENFILE;
}

void fs_budget_put_fd(void)
{
	__atomic_fetch_sub(&fb_fds, 1, __ATOMIC_RELAXED);
}

bool fs_budget_may_park(void)
{
	return __atomic_load_n(&fb_fds, __ATOMIC_RELAXED) <
	       __atomic_load_n(&fb_max_fds, __ATOMIC_RELAXED) / 2;
}

bool fs_budget_take_dir_buffer(void)
{
	return fb_take(&fb_dirbufs, &fb_max_dirbufs);
}

void fs_budget_put_dir_buffer(void)
{
	__atomic_fetch_sub(&fb_dirbufs, 1, __ATOMIC_RELAXED);
}

size_t fs_budget_fds_used(void)
{
	return __atomic_load_n(&fb_fds, __ATOMIC_RELAXED);
}

size_t fs_budget_dir_buffers_used(void)
{
	return __atomic_load_n(&fb_dirbufs, __ATOMIC_RELAXED);
}
