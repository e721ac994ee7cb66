/* vu_client.c: vhost-user front-end messages over the Unix socket, each reply checked. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <linux/virtio_config.h>

#include "tests/bench/device/vu_client.h"

/* How long a back-end may take to answer one message. */
#define VU_REPLY_TIMEOUT_S 10

static int fail(struct vu_client *c, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return err;
}

int vu_connect(struct vu_client *c, const char *path, int wait_ms)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = VU_REPLY_TIMEOUT_S };
	struct timespec nap = { 0, 10 * 1000 * 1000 };
	int waited = 0;

	memset(c, 0, sizeof(*c));
	c->sock = -1;
	if (strlen(path) >= sizeof(a.sun_path))
		return fail(c, -ENAMETOOLONG, "socket path too long: %s", path);
	memcpy(a.sun_path, path, strlen(path) + 1);
	for (;;) {
		c->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (c->sock < 0)
			return fail(c, -errno, "socket: %s", strerror(errno));
		if (connect(c->sock, (struct sockaddr *)&a, sizeof(a)) == 0)
			break;
		int err = errno;

		close(c->sock);
		c->sock = -1;
		if ((err != ENOENT && err != ECONNREFUSED) || waited >= wait_ms)
			return fail(c, -err, "connect %s: %s", path, strerror(err));
		nanosleep(&nap, NULL);
		waited += 10;
	}
	if (setsockopt(c->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		return fail(c, -errno, "SO_RCVTIMEO: %s", strerror(errno));
	return 0;
}

void vu_close(struct vu_client *c)
{
	if (c->sock >= 0)
		close(c->sock);
	c->sock = -1;
}

static int send_msg(struct vu_client *c, uint32_t req, uint32_t flags, const void *payload,
		    uint32_t size, const int *fds, unsigned int nfds)
{
	struct vu_header h = { .request = req, .flags = VU_VERSION | flags, .size = size };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)(uintptr_t)payload, size } };
	union {
		char buf[CMSG_SPACE(sizeof(int) * VU_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = size ? 2 : 1 };
	ssize_t n;

	if (nfds > VU_MAX_FDS)
		return -EINVAL;
	if (nfds) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		m.msg_control = u.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	do
		n = sendmsg(c->sock, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return fail(c, -errno, "send request %u: %s", req, strerror(errno));
	if ((size_t)n != sizeof(h) + size)
		return fail(c, -EIO, "short send of request %u", req);
	return 0;
}

static int recv_all(struct vu_client *c, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(c->sock, (char *)buf + got, len - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (n == 0)
			return -ECONNRESET;
		got += (size_t)n;
	}
	return 0;
}

/*
 * Read the reply to req: exactly `size` payload bytes (a back-end's differing size is an error), or
 * with may_refuse an empty payload, the spec's way of refusing GET_CONFIG (-EREMOTEIO).
 */
static int recv_reply_or_refusal(struct vu_client *c, uint32_t req, void *payload, uint32_t size,
				 bool may_refuse)
{
	struct vu_header h;
	int err = recv_all(c, &h, sizeof(h));

	if (err)
		return fail(c, err, "reply to request %u: %s", req, strerror(-err));
	if (may_refuse && h.request == req && (h.flags & VU_FLAG_REPLY) && h.size == 0)
		return fail(c, -EREMOTEIO, "back-end refused request %u", req);
	if (h.request != req || !(h.flags & VU_FLAG_REPLY) ||
	    (h.flags & VU_FLAG_VERSION_MASK) != VU_VERSION || h.size != size)
		return fail(c, -EPROTO, "bad reply to request %u (request %u flags %#x size %u)", req,
			    h.request, h.flags, h.size);
	err = recv_all(c, payload, size);
	if (err)
		return fail(c, err, "reply payload of request %u: %s", req, strerror(-err));
	return 0;
}

static int recv_reply(struct vu_client *c, uint32_t req, void *payload, uint32_t size)
{
	return recv_reply_or_refusal(c, req, payload, size, false);
}

/* A request without a reply of its own; with REPLY_ACK negotiated, wait for the ack. */
static int send_acked(struct vu_client *c, uint32_t req, const void *payload, uint32_t size,
		      const int *fds, unsigned int nfds)
{
	bool ack = c->protocol & (1ull << VU_PROTOCOL_F_REPLY_ACK);
	uint64_t status;
	int err = send_msg(c, req, ack ? VU_FLAG_NEED_REPLY : 0, payload, size, fds, nfds);

	if (err || !ack)
		return err;
	err = recv_reply(c, req, &status, sizeof(status));
	if (err)
		return err;
	if (status)
		return fail(c, -EREMOTEIO, "back-end refused request %u (status %llu)", req,
			    (unsigned long long)status);
	return 0;
}

static int get_u64(struct vu_client *c, uint32_t req, uint64_t *v)
{
	int err = send_msg(c, req, 0, NULL, 0, NULL, 0);

	return err ? err : recv_reply(c, req, v, sizeof(*v));
}

int vu_negotiate(struct vu_client *c, uint64_t want_protocol)
{
	uint64_t offered, n;
	int err;

	err = get_u64(c, VU_GET_FEATURES, &c->features);
	if (err)
		return err;
	if (c->features & (1ull << VU_F_PROTOCOL_FEATURES)) {
		err = get_u64(c, VU_GET_PROTOCOL_FEATURES, &offered);
		if (err)
			return err;
		c->protocol = offered & want_protocol;
		err = send_msg(c, VU_SET_PROTOCOL_FEATURES, 0, &c->protocol, sizeof(c->protocol), NULL,
			       0);
		if (err)
			return err;
	}
	if (c->protocol & (1ull << VU_PROTOCOL_F_MQ)) {
		err = get_u64(c, VU_GET_QUEUE_NUM, &n);
		if (err)
			return err;
		c->max_queues = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
	}
	return send_acked(c, VU_SET_OWNER, NULL, 0, NULL, 0);
}

int vu_get_config(struct vu_client *c, void *buf, uint32_t len)
{
	struct vu_config cfg = { .offset = 0, .size = len };
	uint32_t size = VU_CONFIG_HDR_SIZE + len;
	int err;

	if (!(c->protocol & (1ull << VU_PROTOCOL_F_CONFIG)))
		return -EOPNOTSUPP;
	if (len > VU_MAX_CONFIG_SIZE)
		return -EINVAL;
	err = send_msg(c, VU_GET_CONFIG, 0, &cfg, size, NULL, 0);
	if (!err)
		err = recv_reply_or_refusal(c, VU_GET_CONFIG, &cfg, size, true);
	if (err)
		return err;
	if (cfg.size != len)
		return fail(c, -EPROTO, "GET_CONFIG answered %u bytes, asked %u", cfg.size, len);
	memcpy(buf, cfg.region, len);
	return 0;
}

int vu_set_features(struct vu_client *c, uint64_t want)
{
	c->acked = (want & c->features) | (c->features & (1ull << VU_F_PROTOCOL_FEATURES));
	if (!(c->acked & (1ull << VIRTIO_F_VERSION_1)))
		return fail(c, -EOPNOTSUPP, "back-end does not offer VIRTIO_F_VERSION_1");
	return send_acked(c, VU_SET_FEATURES, &c->acked, sizeof(c->acked), NULL, 0);
}

int vu_set_mem_table(struct vu_client *c, const struct dmem *mem)
{
	struct vu_memory m = { .nregions = 1 };
	uint32_t size = (uint32_t)(8 + sizeof(struct vu_mem_region));

	m.regions[0] = (struct vu_mem_region){ .guest_phys_addr = 0,
					       .memory_size = mem->size,
					       .userspace_addr = dmem_uaddr(mem, 0),
					       .mmap_offset = 0 };
	return send_acked(c, VU_SET_MEM_TABLE, &m, size, &mem->fd, 1);
}

int vu_start_queue(struct vu_client *c, unsigned int idx, const struct dvq *vr)
{
	struct vu_vring_state num = { idx, vr->size }, base = { idx, 0 }, on = { idx, 1 };
	struct vu_vring_addr addr = { .index = idx,
				      .desc_user_addr = dmem_uaddr(vr->mem, vr->desc_gpa),
				      .used_user_addr = dmem_uaddr(vr->mem, vr->used_gpa),
				      .avail_user_addr = dmem_uaddr(vr->mem, vr->avail_gpa) };
	uint64_t index = idx;
	int err;

	err = send_acked(c, VU_SET_VRING_NUM, &num, sizeof(num), NULL, 0);
	if (!err)
		err = send_acked(c, VU_SET_VRING_BASE, &base, sizeof(base), NULL, 0);
	if (!err)
		err = send_acked(c, VU_SET_VRING_ADDR, &addr, sizeof(addr), NULL, 0);
	if (!err)
		err = send_acked(c, VU_SET_VRING_CALL, &index, sizeof(index), &vr->call_fd, 1);
	if (!err)
		err = send_acked(c, VU_SET_VRING_KICK, &index, sizeof(index), &vr->kick_fd, 1);
	/* Rings start disabled once PROTOCOL_FEATURES is negotiated (spec: "Ring states"). */
	if (!err && (c->acked & (1ull << VU_F_PROTOCOL_FEATURES)))
		err = send_acked(c, VU_SET_VRING_ENABLE, &on, sizeof(on), NULL, 0);
	return err;
}

int vu_stop_queue(struct vu_client *c, unsigned int idx, uint32_t *base)
{
	struct vu_vring_state s = { idx, 0 };
	int err = send_msg(c, VU_GET_VRING_BASE, 0, &s, sizeof(s), NULL, 0);

	if (!err)
		err = recv_reply(c, VU_GET_VRING_BASE, &s, sizeof(s));
	if (err)
		return err;
	if (s.index != idx)
		return fail(c, -EPROTO, "GET_VRING_BASE answered queue %u, asked %u", s.index, idx);
	*base = s.num;
	return 0;
}
