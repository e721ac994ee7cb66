/* fs_close.c: the calling thread's way to close the server's fds (fs_close.h). */
#include "devices/fs/fs_close.h"

#include <stddef.h>
#include <unistd.h>

static __thread fs_closer_fn fs_thread_closer;
static __thread void *fs_thread_closer_ctx;

void fs_close_on(fs_closer_fn fn, void *ctx)
{
	fs_thread_closer = fn;
	fs_thread_closer_ctx = ctx;
}

void fs_close(int fd)
{
	if (fs_thread_closer)
		fs_thread_closer(fs_thread_closer_ctx, fd);
	else
		close(fd);
}
