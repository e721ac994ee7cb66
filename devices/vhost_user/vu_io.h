/* vu_io.h: one vhost-user message off a Unix stream socket (with its fds), and replies onto it. */
#ifndef RINGVM_VU_IO_H
#define RINGVM_VU_IO_H

#include <stdint.h>

#include "devices/vhost_user/vu_decode.h"

/* How long a front-end may take to send the rest of a message it started (then it is dropped). */
#define VU_IO_TIMEOUT_MS 10000

/*
 * Read one message into *m: the header, checked by vu_check_header() before anything else, then
 * exactly hdr.size payload bytes. File descriptors (SCM_RIGHTS, received close-on-exec) are
 * collected from every part of the message, up to VU_MAX_FDS; more set m->fds_lost (the kernel
 * drops the rest). Waits for the rest of a started message at most VU_IO_TIMEOUT_MS, and gives up
 * when stop_fd (-1: none) becomes readable.
 * Returns 1 (a message), 0 (orderly end of stream before a header), or -errno with *why set
 * (-EPROTO bad header, -ETIMEDOUT, -EINTR stopped, -ECONNRESET cut inside a message, other errors
 * of recvmsg); on any error every fd received is closed and m->nr_fds is 0.
 * The payload bytes beyond hdr.size are zeroed. Caller: the connection thread.
 */
__attribute__((warn_unused_result)) int vu_recv(int sock, int stop_fd, struct vu_msg *m,
						const char **why);

/* Close every fd still in m (those a handler kept were set to -1) and forget them. */
void vu_close_fds(struct vu_msg *m);

/* Send a reply to `request`: header (version 1, REPLY flag) and size bytes of payload, in one
   non-blocking sendmsg without SIGPIPE. 0, or -errno when the front-end is gone or not reading
   (-EAGAIN: its socket buffer is full of unread replies). */
__attribute__((warn_unused_result)) int vu_send_reply(int sock, uint32_t request,
						      const void *payload, uint32_t size);

#endif
