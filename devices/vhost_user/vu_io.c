/* vu_io.c: receiving a vhost-user message and its fds, bounded in size, count and time; sending replies. */
#define _GNU_SOURCE
#include "devices/vhost_user/vu_io.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void vu_close_fds(struct vu_msg *m)
{
	for (unsigned int i = 0; i < m->nr_fds && i < VU_MAX_FDS; i++) {
		if (m->fds[i] >= 0)
			close(m->fds[i]);
		m->fds[i] = -1;
	}
	m->nr_fds = 0;
}

/* Take every SCM_RIGHTS fd of mh into m; those beyond VU_MAX_FDS are closed and noted. */
static void vu_take_fds(struct msghdr *mh, struct vu_msg *m)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		const unsigned char *data = CMSG_DATA(c);
		for (size_t i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, data + i * sizeof(int), sizeof(int));
			if (m->nr_fds < VU_MAX_FDS) {
				m->fds[m->nr_fds++] = fd;
			} else {
				close(fd);
				m->fds_lost = true;
			}
		}
	}
	/* The control buffer was too small: the kernel dropped the fds that did not fit. */
	if (mh->msg_flags & MSG_CTRUNC)
		m->fds_lost = true;
}

/* Wait until sock is readable: 0, or -ETIMEDOUT / -EINTR (stop_fd) / -errno. */
static int vu_wait(int sock, int stop_fd, int timeout_ms)
{
	for (;;) {
		struct pollfd p[2] = { { sock, POLLIN, 0 }, { stop_fd, POLLIN, 0 } };
		int n = poll(p, stop_fd >= 0 ? 2 : 1, timeout_ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ETIMEDOUT;
		if (stop_fd >= 0 && (p[1].revents & POLLIN))
			return -EINTR;
		return 0;
	}
}

/*
 * Read exactly len bytes into buf (collecting fds). *got counts bytes of the whole message so far,
 * so that EOF before the first byte is an orderly close and EOF later a cut message.
 */
static int vu_read_full(int sock, int stop_fd, void *buf, size_t len, struct vu_msg *m,
			size_t *got, const char **why)
{
	size_t done = 0;
	while (done < len) {
		/* The first byte of a message may take forever (an idle front-end); the rest may not. */
		int err = vu_wait(sock, stop_fd, *got ? VU_IO_TIMEOUT_MS : -1);
		if (err) {
			*why = err == -ETIMEDOUT ? "the front-end stalled in the middle of a message"
			       : err == -EINTR	  ? "stopped"
						  : "poll on the socket failed";
			return err;
		}
		union {
			char buf[CMSG_SPACE(sizeof(int) * VU_MAX_FDS)];
			struct cmsghdr align;
		} ctl;
		struct iovec iov = { (char *)buf + done, len - done };
		struct msghdr mh = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = ctl.buf,
			.msg_controllen = sizeof(ctl.buf),
		};
		ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			*why = "recvmsg failed";
			return -errno;
		}
		vu_take_fds(&mh, m);
		if (n == 0) {
			*why = "the front-end closed the connection in the middle of a message";
			return *got ? -ECONNRESET : 0;
		}
		done += (size_t)n;
		*got += (size_t)n;
	}
	return 1;
}

int vu_recv(int sock, int stop_fd, struct vu_msg *m, const char **why)
{
	memset(m, 0, sizeof(*m));
	size_t got = 0;
	int r = vu_read_full(sock, stop_fd, &m->hdr, sizeof(m->hdr), m, &got, why);
	if (r <= 0)
		goto fail;
	r = vu_check_header(&m->hdr, why);
	if (r)
		goto fail;
	if (m->hdr.size) {
		r = vu_read_full(sock, stop_fd, m->payload.raw, m->hdr.size, m, &got, why);
		if (r <= 0) {
			if (r == 0)
				r = -ECONNRESET;
			goto fail;
		}
	}
	return 1;
fail:
	vu_close_fds(m);
	return r;
}

int vu_send_reply(int sock, uint32_t request, const void *payload, uint32_t size)
{
	struct vu_header h = {
		.request = request,
		.flags = VU_VERSION | VU_FLAG_REPLY,
		.size = size,
	};
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)(uintptr_t)payload, size } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = size ? 2 : 1 };
	size_t want = sizeof(h) + size;
	ssize_t n;
	/* Never blocks: a front-end that lets its socket buffer fill with unread replies is not
	   waited for (the connection is dropped), so it cannot wedge the connection thread. */
	do {
		n = sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	/* A reply is at most a few hundred bytes: a short send means the peer is not reading. */
	return (size_t)n == want ? 0 : -EPIPE;
}
