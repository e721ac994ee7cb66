/* fs_close.h: how the FUSE server closes the fds its tables drop, per thread. */
#ifndef RINGVM_FS_CLOSE_H
#define RINGVM_FS_CLOSE_H

/*
 * A FORGET or RELEASE ends with a close(2) of the inode's or handle's fd: on this project's PVM host
 * a system call costs ~1.1 us, and a lookup-open-read-release cycle makes about sixteen. A queue's
 * thread that submits to an io_uring anyway can carry the close on its next submission instead
 * (devices/virtio/worker.h, vq_worker_close_fd). The server itself knows nothing of queues: each
 * thread may name its closer; fs_close() uses the calling thread's, or close(2).
 */
typedef void (*fs_closer_fn)(void *ctx, int fd);

/* The calling thread's closer from now on (fn NULL: close(2)). */
void fs_close_on(fs_closer_fn fn, void *ctx);

/* Close fd, which nobody may use afterwards, through the calling thread's closer. */
void fs_close(int fd);

#endif
