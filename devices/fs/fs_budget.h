/* fs_budget.h: what all shares together may hold on the host: file descriptors and directory buffers. */
#ifndef RINGVM_FS_BUDGET_H
#define RINGVM_FS_BUDGET_H

#include <stdbool.h>
#include <stddef.h>

/*
 * A guest must not make ringvm hold host resources far beyond its own RAM, and two shares must not
 * each get the whole fd limit. So one process-wide budget, drawn on by every share's server:
 *   fds          each inode the guest holds (an O_PATH fd) and each open file or directory handle;
 *                past it, LOOKUP/OPEN/OPENDIR/CREATE answer ENFILE. The guest kernel forgets
 *                inodes under memory pressure, so a well-behaved guest stays far below.
 *   dir_buffers  the 8 KiB read-ahead buffers of open directory streams (kept only while a stream
 *                has entries read from the host but not yet given to the guest); past it, a READDIR
 *                uses a per-thread buffer and the stream continues by seeking to its cookie.
 * Each server keeps its own cap too (fs_server_create's max_fds). Counters are atomic: any thread.
 */
struct fs_limits {
	size_t max_fds;         /* 0: leave as is */
	size_t max_dir_buffers; /* 0: leave as is */
};

#define FS_DEFAULT_DIR_BUFFERS 2048 /* 16 MiB of directory buffers across all shares */

/* Set the limits (setup time, before any share serves). Unset limits: no fd cap, 2048 buffers. */
void fs_budget_configure(const struct fs_limits *l);
/* The limits in force. */
void fs_budget_limits(struct fs_limits *l);

/* Take one fd from the budget: 0, or -ENFILE when it is spent. fs_budget_put_fd gives it back. */
__attribute__((warn_unused_result)) int fs_budget_take_fd(void);
void fs_budget_put_fd(void);

/*
 * A parked fd (inode.h, fsi_park) keeps the fd token of the handle it came from. Parking is a
 * cache: a fd is parked only while fewer than half the budget's fds are in use (true here), and a
 * take that finds the budget spent closes the oldest parked fd first (fsi_evict_parked).
 */
bool fs_budget_may_park(void);

/* Take one directory buffer: true, or false when they are all in use. */
bool fs_budget_take_dir_buffer(void);
void fs_budget_put_dir_buffer(void);

/* In use now (tests, statistics). */
size_t fs_budget_fds_used(void);
size_t fs_budget_dir_buffers_used(void);

#endif
