/* relay.h: PID 1's copy between the command's pipes and the virtio-console ports, one stream each. */
#ifndef RINGVM_GUEST_RELAY_H
#define RINGVM_GUEST_RELAY_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * With ringvm.stdio=virtio (guest/protocol.h) the command gets three pipes, and PID 1 moves bytes
 * between them and the ports, so that the command sees what a local process in a pipeline sees:
 *
 *   stdin:   port ringvm.stdin  --read-->  buf  --write-->  pipe  --> command's fd 0
 *   stdout:  command's fd 1 --> pipe  --read-->  buf  --write-->  port ringvm.stdout
 *   stderr:  likewise, port ringvm.stderr
 *
 * One stream, src -> dst, both non-blocking, at most RELAY_BUF bytes held (read only into an empty
 * buffer: each side's own flow control reaches the other):
 *   - src ends (read returns 0, or fails): what is held is written, then dst and src are closed.
 *     stdin: the host's EOF (an empty port buffer) becomes EOF on the command's pipe; stdout: the
 *     command's EOF closes the port, and the host's reader sees EOF.
 *   - dst goes away (POLLHUP/POLLERR, or EPIPE on write): src and dst are closed, what is held is
 *     dropped. stdout: the host's reader went away (the port reports POLLHUP), closing the pipe's
 *     read end gives the command EPIPE/SIGPIPE on its next write; stdin: the command closed its
 *     stdin, the port is closed.
 *   - relay_finish (the command ended): an output stream hands over only what src holds at that
 *     moment (a daemon the command left behind may keep the pipe open for ever), an input stream
 *     closes at once.
 * PID 1 polls every stream's two fds (relay_events), then relay_step()s each; errors are never
 * fatal to PID 1. Pure fd logic: unit-tested with pipes on the host (tests/unit/test_guest_relay.c).
 *
 * Bytes per system call decide the speed (each wake-up, copy and kick is dear in a guest):
 *   - an output stream may splice (relay_use_splice): splice(2) from the command's pipe to the port
 *     hands the pipe's pages to the port as one buffer chain (Linux's virtio_console has
 *     splice_write; it steals the pages or copies them once), instead of two copies through buf
 *     in at most 32 KiB writes. A splice that moves nothing (an empty pipe, a port that would
 *     block, the pipe's EOF: virtio_console answers 0 or EAGAIN for the first two alike) falls
 *     back to read(): the ordinary path then tells EOF, an empty pipe and a full port apart, so
 *     poll waits for the right fd;
 *   - a read fills buf with as many reads as the source gives (a port hands over one receive
 *     buffer, a page, per read()), so the command's pipe gets RELAY_BUF at a time, not a page.
 */

#define RELAY_BUF 65536 /* what one pass reads before writing; virtio_console writes take <= 32 KiB */

struct relay_stream {
	int src, dst; /* non-blocking; -1 once closed */
	char buf[RELAY_BUF];
	size_t off, len;   /* bytes buf[off .. len) still to write */
	bool src_done;     /* src ended: flush, then close dst */
	bool finishing;	   /* relay_finish was called: read at most `left` more bytes */
	size_t left;
	bool splice; /* try splice(src -> dst) before read (relay_use_splice) */
};

/* Start a stream; both fds must already be non-blocking. */
void relay_init(struct relay_stream *s, int src, int dst);

/* src is a pipe: move its bytes to dst with splice(2) where dst supports it (see above). */
void relay_use_splice(struct relay_stream *s);

/* The two pollfds to wait on for s (fd -1 when closed: poll ignores them). */
void relay_events(const struct relay_stream *s, struct pollfd p[2]);

/* After poll(), with the same two entries: move what can move, close what ended. */
void relay_step(struct relay_stream *s, const struct pollfd p[2]);

/*
 * The command ended: an output stream (output = true) still passes what src holds now (FIONREAD)
 * and then closes; an input stream closes now.
 */
void relay_finish(struct relay_stream *s, bool output);

/* Both ends are closed. */
static inline bool relay_done(const struct relay_stream *s)
{
	return s->src < 0 && s->dst < 0;
}

#endif
