/* relay.c: one stream between a pipe and a virtio-console port, non-blocking, bounded (relay.h). */
#define _GNU_SOURCE
#include "guest/relay.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

void relay_init(struct relay_stream *s, int src, int dst)
{
	s->src = src;
	s->dst = dst;
	s->off = s->len = 0;
	s->src_done = false;
	s->finishing = false;
	s->left = 0;
	s->splice = false;
}

void relay_use_splice(struct relay_stream *s)
{
	s->splice = true;
}

static void relay_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* dst is gone: nothing held can be delivered; closing src passes that on. */
static void relay_dst_gone(struct relay_stream *s)
{
	relay_close(&s->dst);
	relay_close(&s->src);
	s->off = s->len = 0;
}

void relay_events(const struct relay_stream *s, struct pollfd p[2])
{
	bool held = s->len > s->off;

	/* Read only into an empty buffer; a closed fd (-1) is skipped by poll. */
	p[0].fd = !held && !s->src_done && s->dst >= 0 ? s->src : -1;
	p[0].events = POLLIN;
	p[0].revents = 0;
	/* Always watched while open: POLLHUP/POLLERR say the other side went away. */
	p[1].fd = s->dst;
	p[1].events = held ? POLLOUT : 0;
	p[1].revents = 0;
}

/* Write what is held; false when dst went away. */
static bool relay_write(struct relay_stream *s)
{
	while (s->len > s->off) {
		ssize_t n = write(s->dst, s->buf + s->off, s->len - s->off);

		if (n > 0) {
			s->off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		return false; /* EPIPE, or an error: the same for the command */
	}
	s->off = s->len = 0;
	return true;
}

/* How much src may still give now: buf's room, or less once finishing. */
static size_t relay_want(const struct relay_stream *s, size_t room)
{
	return s->finishing && s->left < room ? s->left : room;
}

/* Fill buf from src until it is full, src has nothing more for now, or src ended. */
static void relay_read(struct relay_stream *s)
{
	s->off = s->len = 0;
	while (s->len < sizeof(s->buf)) {
		size_t want = relay_want(s, sizeof(s->buf) - s->len);

		if (want == 0) {
			s->src_done = s->finishing; /* finishing: everything counted was read */
			return;
		}
		ssize_t n = read(s->src, s->buf + s->len, want);
		if (n > 0) {
			s->len += (size_t)n;
			if (s->finishing)
				s->left -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		/* EAGAIN while finishing: the pipe holds nothing more than what was counted. */
		if (n < 0 && errno == EAGAIN && !s->finishing)
			return;
		s->src_done = true; /* EOF or an error; what was read is still written */
		return;
	}
}

/*
 * One splice from src to dst: true when it moved bytes (poll again), false when the ordinary read
 * should run (nothing moved, or splice is not for these fds). Sets dst_gone when dst failed.
 */
static bool relay_splice(struct relay_stream *s, bool *dst_gone)
{
	size_t want = relay_want(s, (size_t)1 << 20);

	if (!s->splice || want == 0)
		return false;
	ssize_t n;
	do
		n = splice(s->src, NULL, s->dst, NULL, want, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
	while (n < 0 && errno == EINTR);
	if (n > 0) {
		if (s->finishing)
			s->left -= (size_t)n;
		return true;
	}
	if (n < 0 && (errno == EINVAL || errno == ENOSYS))
		s->splice = false; /* not for these fds: read and write from now on */
	else if (n < 0 && errno != EAGAIN)
		*dst_gone = true; /* EPIPE, or the port failed: as a failed write */
	return false;
}

/* Everything src was going to give has been written: close both ends. */
static void relay_maybe_end(struct relay_stream *s)
{
	if (s->finishing && s->left == 0)
		s->src_done = true;
	if (s->src_done && s->len == 0) {
		relay_close(&s->dst);
		relay_close(&s->src);
	}
}

void relay_step(struct relay_stream *s, const struct pollfd p[2])
{
	if (s->dst < 0)
		return;
	if (p[1].revents & (POLLHUP | POLLERR)) {
		relay_dst_gone(s);
		return;
	}
	if (!relay_write(s)) {
		relay_dst_gone(s);
		return;
	}
	if (s->len == 0 && !s->src_done && (s->finishing || (p[0].revents & (POLLIN | POLLHUP | POLLERR)))) {
		bool dst_gone = false;

		if (relay_splice(s, &dst_gone)) {
			relay_maybe_end(s);
			return;
		}
		if (dst_gone) {
			relay_dst_gone(s);
			return;
		}
		relay_read(s);
	}
	if (!relay_write(s)) {
		relay_dst_gone(s);
		return;
	}
	relay_maybe_end(s);
}

void relay_finish(struct relay_stream *s, bool output)
{
	int n = 0;

	if (!output || s->src < 0 || ioctl(s->src, FIONREAD, &n) < 0 || n < 0)
		n = 0;
	if (!output) {
		relay_close(&s->src);
		relay_close(&s->dst);
		s->off = s->len = 0;
		return;
	}
	s->finishing = true;
	s->left = (size_t)n;
	relay_maybe_end(s); /* nothing left to wait for: poll would not wake up for it */
}
