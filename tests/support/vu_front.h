/* vu_front.h: a minimal vhost-user front-end for unit tests: guest memory in a memfd, fake rings, eventfds. */
#ifndef RINGVM_VU_FRONT_H
#define RINGVM_VU_FRONT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "devices/vhost_user/vu_backend.h"
#include "devices/vhost_user/vu_msg.h"
#include "tests/support/fake_ring.h"

/*
 * Plays QEMU's side of the socket against a back-end served on a thread of the test (a socketpair,
 * vu_backend_serve on the other end). Guest memory is a memfd mapped in the test: guest-physical
 * address == offset in it, and the front-end's user address of gpa is ram + gpa, so the ring
 * builder (tests/support/fake_ring.c) writes rings exactly where the back-end reads them. Data
 * buffers come from queue 0's heap (queue 0's ring sits highest). Not thread-safe.
 */
#define VUF_MAX_QUEUES 4

struct vu_front {
	int sock;	  /* our end */
	int sock_backend; /* the back-end's end (closed by vu_backend_serve) */
	int memfd;
	uint8_t *ram;
	uint64_t ram_size;
	bool ack; /* REPLY_ACK negotiated: every request without a reply of its own asks for one */
	int reply_ms; /* how long a reply may take; 0: 2 s (a back-end that stops a ring may need more) */
	struct fake_ring ring[VUF_MAX_QUEUES];
	int kick[VUF_MAX_QUEUES], call[VUF_MAX_QUEUES], err[VUF_MAX_QUEUES];

	pthread_t thread; /* the back-end's connection thread */
	struct vu_backend *backend;
	int result; /* vu_backend_serve()'s return value, once joined */
	bool running;
};

/*
 * Guest memory of ram_size bytes (a memfd, sealed against shrinking when seal) and a socketpair
 * whose other end the back-end serves on a new thread. Returns 0 or -errno.
 */
int vuf_open(struct vu_front *f, struct vu_backend *b, uint64_t ram_size, bool seal);

/* The same front-end connected to a back-end listening at path (another process: ringvm serve). */
int vuf_connect(struct vu_front *f, const char *path, uint64_t ram_size, bool seal);

/* Close our end (the back-end sees a disconnect), join the back-end thread, unmap and close all. */
void vuf_close(struct vu_front *f);

/* Join the back-end thread (it ends by itself after dropping the connection); its result. */
int vuf_join(struct vu_front *f);

/* Send one message with fds; 0 or -errno. flags 0 means VU_VERSION. */
int vuf_send(struct vu_front *f, uint32_t request, uint32_t flags, const void *payload,
	     uint32_t size, const int *fds, unsigned int nr_fds);

/* Receive one reply (2 s at most): payload size, or -errno (-ECONNRESET when the peer closed). */
int vuf_recv(struct vu_front *f, uint32_t request, void *payload, uint32_t cap);

/*
 * A request as QEMU sends it: with NEED_REPLY when f->ack and the request has no reply of its own,
 * then waits for the acknowledgement. Returns 0 (accepted), 1 (the back-end said failure), or
 * -errno (no answer: the connection was closed).
 */
int vuf_request(struct vu_front *f, uint32_t request, const void *payload, uint32_t size,
		const int *fds, unsigned int nr_fds);

/* GET_* returning a u64: 0 and *v, or -errno. */
int vuf_get_u64(struct vu_front *f, uint32_t request, uint64_t *v);

/*
 * QEMU's bring-up: features (VERSION_1, INDIRECT_DESC, PROTOCOL_FEATURES), protocol features (MQ,
 * CONFIG, and REPLY_ACK when ack), SET_OWNER, SET_MEM_TABLE of the whole memfd. 0 or a failure.
 */
int vuf_negotiate(struct vu_front *f, bool ack);

/* SET_MEM_TABLE with one region: the whole memfd at gpa 0. As vuf_request. */
int vuf_mem_table(struct vu_front *f);

/*
 * Ring q (size entries, rings placed below 1 MiB, queue 0 highest): NUM, BASE (start), ADDR, KICK,
 * CALL, ERR, then ENABLE 1. The fake ring's indices start at `start` too. 0 or the first failure.
 */
int vuf_ring(struct vu_front *f, unsigned int q, uint16_t size, uint16_t start);

/* Kick ring q (write its kick eventfd). */
void vuf_kick(struct vu_front *f, unsigned int q);

/* Wait until ring q's used idx reaches n (2 s at most). */
bool vuf_wait_used(struct vu_front *f, unsigned int q, uint16_t n);

/* Wait up to timeout_ms for an eventfd to be signalled: the count read, 0 on timeout. */
uint64_t vuf_wait_fd(int fd, int timeout_ms);
/* Wait up to timeout_ms for ring q's call (or err) eventfd; the count read, 0 on timeout. */
uint64_t vuf_wait_call(struct vu_front *f, unsigned int q, int timeout_ms);
uint64_t vuf_wait_err(struct vu_front *f, unsigned int q, int timeout_ms);

/* One virtio-blk request (header, data, status byte) on ring q; buffers from queue 0's heap. */
struct vuf_blk_req {
	uint64_t hdr, data, status; /* guest-physical */
	uint16_t head;
};

/* Publish it (payload copied in for writes), without kicking. */
void vuf_blk_put(struct vu_front *f, unsigned int q, struct vuf_blk_req *io, uint32_t type,
		 uint64_t sector, uint32_t len, const void *payload);

/* Publish, kick, wait: the status byte, or -1 when it never completed (as the next used entry). */
int vuf_blk(struct vu_front *f, unsigned int q, struct vuf_blk_req *io, uint32_t type,
	    uint64_t sector, uint32_t len, const void *payload);

/* Send a FUSE request (tests/support/fuse_req.h builds them) on ring q with wcap writable bytes, wait: the used length (reply copied to
   out), or -1. */
int64_t vuf_fuse(struct vu_front *f, unsigned int q, const void *req, uint32_t len, uint32_t wcap,
		 void *out);

/* vuf_fuse in two halves: post the request and kick (returns the reply buffer's guest address),
   then wait until ring q answered everything posted, and copy wcap bytes of the oldest reply not
   yet taken from rep. */
uint64_t vuf_fuse_post(struct vu_front *f, unsigned int q, const void *req, uint32_t len,
		       uint32_t wcap);
int64_t vuf_fuse_wait(struct vu_front *f, unsigned int q, uint64_t rep, uint32_t wcap, void *out);

/* FUSE INIT 7.38 on ring q; as vuf_fuse, with a 4096-byte reply buffer. */
int64_t vuf_fuse_init(struct vu_front *f, unsigned int q, void *rep);

/* Open file descriptors of this process (/proc/self/fd), for leak checks. */
int vuf_count_fds(void);

#endif
