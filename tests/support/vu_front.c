/* vu_front.c: the test front-end: QEMU's half of vhost-user over a socketpair, rings in a memfd. */
#define _GNU_SOURCE
#include "tests/support/vu_front.h"
#include "tests/support/open_fds.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <endian.h>

#include <linux/fuse.h>
#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "devices/vhost_user/vu_decode.h"
#include "tests/support/fuse_req.h"

static void *vuf_serve(void *arg)
{
	struct vu_front *f = arg;
	f->result = vu_backend_serve(f->backend, f->sock_backend, -1);
	return NULL;
}

/* Guest memory and the eventfds; the socket is the caller's business. */
static int vuf_init(struct vu_front *f, uint64_t ram_size, bool seal)
{
	memset(f, 0, sizeof(*f));
	f->sock = f->sock_backend = f->memfd = -1;
	for (unsigned int i = 0; i < VUF_MAX_QUEUES; i++)
		f->kick[i] = f->call[i] = f->err[i] = -1;
	f->ram_size = ram_size;
	f->memfd = memfd_create("vuf-ram", MFD_CLOEXEC | (seal ? MFD_ALLOW_SEALING : 0));
	if (f->memfd < 0 || ftruncate(f->memfd, (off_t)ram_size) < 0)
		return -EIO;
	if (seal && fcntl(f->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0)
		return -EIO;
	f->ram = mmap(NULL, ram_size, PROT_READ | PROT_WRITE, MAP_SHARED, f->memfd, 0);
	if (f->ram == MAP_FAILED) {
		f->ram = NULL;
		return -EIO;
	}
	for (unsigned int i = 0; i < VUF_MAX_QUEUES; i++) {
		f->kick[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); /* as QEMU makes them */
		f->call[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		f->err[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (f->kick[i] < 0 || f->call[i] < 0 || f->err[i] < 0)
			return -EIO;
	}
	return 0;
}

int vuf_open(struct vu_front *f, struct vu_backend *b, uint64_t ram_size, bool seal)
{
	int sv[2];
	if (vuf_init(f, ram_size, seal) || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		goto fail;
	f->backend = b;
	f->sock = sv[0];
	f->sock_backend = sv[1];
	if (pthread_create(&f->thread, NULL, vuf_serve, f) != 0) {
		close(f->sock_backend);
		goto fail;
	}
	f->running = true;
	return 0;
fail:
	vuf_close(f);
	return -EIO;
}

int vuf_connect(struct vu_front *f, const char *path, uint64_t ram_size, bool seal)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (vuf_init(f, ram_size, seal) || strlen(path) >= sizeof(a.sun_path))
		goto fail;
	memcpy(a.sun_path, path, strlen(path) + 1);
	f->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (f->sock < 0 || connect(f->sock, (struct sockaddr *)&a, sizeof(a)) < 0)
		goto fail;
	return 0;
fail:
	vuf_close(f);
	return -EIO;
}

int vuf_join(struct vu_front *f)
{
	if (f->running) {
		pthread_join(f->thread, NULL);
		f->running = false;
	}
	return f->result;
}

void vuf_close(struct vu_front *f)
{
	if (f->sock >= 0)
		close(f->sock);
	f->sock = -1;
	(void)vuf_join(f);
	for (unsigned int i = 0; i < VUF_MAX_QUEUES; i++) {
		int *fds[3] = { &f->kick[i], &f->call[i], &f->err[i] };
		for (unsigned int k = 0; k < 3; k++) {
			if (*fds[k] >= 0)
				close(*fds[k]);
			*fds[k] = -1;
		}
	}
	if (f->ram)
		munmap(f->ram, f->ram_size);
	f->ram = NULL;
	if (f->memfd >= 0)
		close(f->memfd);
	f->memfd = -1;
}

int vuf_send(struct vu_front *f, uint32_t request, uint32_t flags, const void *payload,
	     uint32_t size, const int *fds, unsigned int nr_fds)
{
	struct vu_header h = { request, flags ? flags : VU_VERSION, size };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)(uintptr_t)payload, size } };
	union {
		char buf[CMSG_SPACE(sizeof(int) * 16)];
		struct cmsghdr align;
	} ctl;
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = size ? 2 : 1 };
	if (nr_fds) {
		if (nr_fds > 16)
			return -E2BIG;
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nr_fds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nr_fds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nr_fds);
	}
	ssize_t n = sendmsg(f->sock, &mh, MSG_NOSIGNAL);
	if (n < 0)
		return -errno;
	return (size_t)n == sizeof(h) + size ? 0 : -EIO;
}

static int64_t vuf_now_ms(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static int vuf_read(struct vu_front *f, void *buf, size_t len)
{
	size_t done = 0;
	int64_t deadline_ms = vuf_now_ms() + (f->reply_ms ? f->reply_ms : 2000);
	while (done < len) {
		struct pollfd p = { f->sock, POLLIN, 0 };
		int64_t left = deadline_ms - vuf_now_ms();
		int n = left > 0 ? poll(&p, 1, (int)left) : 0;
		if (n < 0 && errno == EINTR)
			continue; /* a signal (libFuzzer's timer), not the back-end's silence */
		if (n <= 0)
			return -ETIMEDOUT;
		ssize_t got = recv(f->sock, (char *)buf + done, len - done, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			return -ECONNRESET;
		done += (size_t)got;
	}
	return 0;
}

int vuf_recv(struct vu_front *f, uint32_t request, void *payload, uint32_t cap)
{
	struct vu_header h;
	int err = vuf_read(f, &h, sizeof(h));
	if (err)
		return err;
	if (h.request != request || h.flags != (VU_VERSION | VU_FLAG_REPLY) || h.size > cap)
		return -EBADMSG;
	err = vuf_read(f, payload, h.size);
	return err ? err : (int)h.size;
}

int vuf_request(struct vu_front *f, uint32_t request, const void *payload, uint32_t size,
		const int *fds, unsigned int nr_fds)
{
	bool want = f->ack && !vu_has_reply(request);
	int err = vuf_send(f, request, VU_VERSION | (want ? VU_FLAG_NEED_REPLY : 0), payload, size,
			   fds, nr_fds);
	if (err || !want)
		return err;
	uint64_t v;
	int n = vuf_recv(f, request, &v, sizeof(v));
	if (n < 0)
		return n;
	if (n != sizeof(v))
		return -EBADMSG;
	return v ? 1 : 0;
}

int vuf_get_u64(struct vu_front *f, uint32_t request, uint64_t *v)
{
	int err = vuf_send(f, request, 0, NULL, 0, NULL, 0);
	if (err)
		return err;
	int n = vuf_recv(f, request, v, sizeof(*v));
	return n < 0 ? n : n == sizeof(*v) ? 0 : -EBADMSG;
}

int vuf_mem_table(struct vu_front *f)
{
	struct vu_memory m = { .nregions = 1 };
	m.regions[0] = (struct vu_mem_region){
		.guest_phys_addr = 0,
		.memory_size = f->ram_size,
		.userspace_addr = (uint64_t)(uintptr_t)f->ram,
		.mmap_offset = 0,
	};
	return vuf_request(f, VU_SET_MEM_TABLE, &m, 8 + sizeof(m.regions[0]), &f->memfd, 1);
}

int vuf_negotiate(struct vu_front *f, bool ack)
{
	uint64_t feat, proto;
	int err = vuf_get_u64(f, VU_GET_FEATURES, &feat);
	if (!err)
		err = vuf_get_u64(f, VU_GET_PROTOCOL_FEATURES, &proto);
	if (err)
		return err;
	uint64_t want = (1ULL << VU_PROTOCOL_F_MQ) | (1ULL << VU_PROTOCOL_F_CONFIG) |
			(ack ? 1ULL << VU_PROTOCOL_F_REPLY_ACK : 0);
	if ((proto & want) != want)
		return -ENOTSUP;
	f->ack = false;
	err = vuf_request(f, VU_SET_PROTOCOL_FEATURES, &want, sizeof(want), NULL, 0);
	if (err)
		return err;
	f->ack = ack;
	if ((err = vuf_request(f, VU_SET_OWNER, NULL, 0, NULL, 0)))
		return err;
	uint64_t use = feat & ((1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_RING_F_INDIRECT_DESC) |
			       (1ULL << VU_F_PROTOCOL_FEATURES));
	if ((err = vuf_request(f, VU_SET_FEATURES, &use, sizeof(use), NULL, 0)))
		return err;
	return vuf_mem_table(f);
}

int vuf_ring(struct vu_front *f, unsigned int q, uint16_t size, uint16_t start)
{
	struct fake_ring *r = &f->ring[q];
	fake_ring_init(r, f->ram, f->ram_size, size, 0x10000ULL * (VUF_MAX_QUEUES - q));
	fake_ring_set_avail_idx(r, start);
	r->used_seen = start;
	uint16_t s16 = start;
	memcpy(f->ram + r->used + 2, &s16, 2); /* used->idx as the previous back-end left it */
	struct vu_vring_state num = { q, size }, base = { q, start }, en = { q, 1 };
	struct vu_vring_addr a = {
		.index = q,
		.desc_user_addr = (uint64_t)(uintptr_t)(f->ram + r->desc),
		.avail_user_addr = (uint64_t)(uintptr_t)(f->ram + r->avail),
		.used_user_addr = (uint64_t)(uintptr_t)(f->ram + r->used),
	};
	uint64_t idx = q;
	int err;
	if ((err = vuf_request(f, VU_SET_VRING_NUM, &num, sizeof(num), NULL, 0)) ||
	    (err = vuf_request(f, VU_SET_VRING_BASE, &base, sizeof(base), NULL, 0)) ||
	    (err = vuf_request(f, VU_SET_VRING_ADDR, &a, sizeof(a), NULL, 0)) ||
	    (err = vuf_request(f, VU_SET_VRING_KICK, &idx, sizeof(idx), &f->kick[q], 1)) ||
	    (err = vuf_request(f, VU_SET_VRING_CALL, &idx, sizeof(idx), &f->call[q], 1)) ||
	    (err = vuf_request(f, VU_SET_VRING_ERR, &idx, sizeof(idx), &f->err[q], 1)) ||
	    (err = vuf_request(f, VU_SET_VRING_ENABLE, &en, sizeof(en), NULL, 0)))
		return err;
	return 0;
}

void vuf_kick(struct vu_front *f, unsigned int q)
{
	uint64_t one = 1;
	if (write(f->kick[q], &one, sizeof(one)) < 0) {
		/* saturated: a kick is pending */
	}
}

bool vuf_wait_used(struct vu_front *f, unsigned int q, uint16_t n)
{
	for (int i = 0; i < 4000; i++) {
		if (fake_ring_used_idx(&f->ring[q]) == n)
			return true;
		usleep(500);
	}
	return false;
}

uint64_t vuf_wait_fd(int fd, int timeout_ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	uint64_t v = 0;
	if (poll(&p, 1, timeout_ms) <= 0 || read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

uint64_t vuf_wait_call(struct vu_front *f, unsigned int q, int timeout_ms)
{
	return vuf_wait_fd(f->call[q], timeout_ms);
}

uint64_t vuf_wait_err(struct vu_front *f, unsigned int q, int timeout_ms)
{
	return vuf_wait_fd(f->err[q], timeout_ms);
}

int vuf_count_fds(void)
{
	return open_fds();
}

void vuf_blk_put(struct vu_front *f, unsigned int q, struct vuf_blk_req *io, uint32_t type,
		 uint64_t sector, uint32_t len, const void *payload)
{
	struct fake_ring *heap = &f->ring[0], *r = &f->ring[q];
	io->hdr = fake_ring_alloc(heap, 16);
	io->data = fake_ring_alloc(heap, len);
	io->status = fake_ring_alloc(heap, 1);
	struct virtio_blk_outhdr h = { .type = htole32(type), .sector = htole64(sector) };
	memcpy(f->ram + io->hdr, &h, sizeof(h));
	f->ram[io->status] = 0xff;
	if (payload)
		memcpy(f->ram + io->data, payload, len);
	struct fake_buf b[3] = { { io->hdr, 16, false },
				 { io->data, len, type == VIRTIO_BLK_T_IN },
				 { io->status, 1, true } };
	io->head = fake_ring_add_chain(r, b, 3);
	fake_ring_publish(r, io->head);
}

int vuf_blk(struct vu_front *f, unsigned int q, struct vuf_blk_req *io, uint32_t type,
	    uint64_t sector, uint32_t len, const void *payload)
{
	vuf_blk_put(f, q, io, type, sector, len, payload);
	vuf_kick(f, q);
	if (!vuf_wait_used(f, q, f->ring[q].avail_idx))
		return -1;
	uint32_t id, used;
	if (!fake_ring_used(&f->ring[q], &id, &used) || id != io->head)
		return -1;
	return f->ram[io->status];
}

uint64_t vuf_fuse_post(struct vu_front *f, unsigned int q, const void *req, uint32_t len,
		       uint32_t wcap)
{
	struct fake_ring *heap = &f->ring[0];
	uint64_t in = fake_ring_alloc(heap, len), rep = fake_ring_alloc(heap, wcap);
	memcpy(f->ram + in, req, len);
	struct fake_buf b[2] = { { in, len, false }, { rep, wcap, true } };
	fake_ring_publish(&f->ring[q], fake_ring_add_chain(&f->ring[q], b, 2));
	vuf_kick(f, q);
	return rep;
}

int64_t vuf_fuse_wait(struct vu_front *f, unsigned int q, uint64_t rep, uint32_t wcap, void *out)
{
	uint32_t id, used;
	if (!vuf_wait_used(f, q, f->ring[q].avail_idx) ||
	    !fake_ring_used(&f->ring[q], &id, &used))
		return -1;
	memcpy(out, f->ram + rep, wcap);
	return used;
}

int64_t vuf_fuse(struct vu_front *f, unsigned int q, const void *req, uint32_t len, uint32_t wcap,
		 void *out)
{
	return vuf_fuse_wait(f, q, vuf_fuse_post(f, q, req, len, wcap), wcap, out);
}

int64_t vuf_fuse_init(struct vu_front *f, unsigned int q, void *rep)
{
	unsigned char req[256];
	struct fuse_init_in in = { .major = 7, .minor = 38, .max_readahead = 131072,
				   .flags = FUSE_MAX_PAGES | FUSE_INIT_EXT };
	uint32_t len = fuse_mkreq(req, FUSE_INIT, 0, &in, sizeof(in));
	return vuf_fuse(f, q, req, len, 4096, rep);
}
