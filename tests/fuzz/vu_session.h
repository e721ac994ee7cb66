/* vu_session.h: the vhost-user session fuzzers' front-end, shared by one target per device. */
#ifndef RINGVM_FUZZ_VU_SESSION_H
#define RINGVM_FUZZ_VU_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "devices/vhost_user/vu_backend.h"
#include "tests/support/vu_front.h"

#define VS_RAM (1u << 20)
#define VS_QUEUES 2 /* the device's queues; the input may name others */

/* The input, read front to back; past its end every read is 0. Every read is its own statement
   (or declarator), so an input means the same whatever order a compiler evaluates arguments in. */
struct vs_cursor {
	const uint8_t *p;
	size_t n;
};

/* The next `bytes` bytes of the input, little-endian (0 past its end). */
uint64_t vs_take(struct vs_cursor *c, unsigned int bytes);

/* What a correct front-end sends (good), a chosen wrong value (other), good plus up to 255, or any
   value at all: the input decides. */
uint64_t vs_pick(struct vs_cursor *c, uint64_t good, uint64_t other);

/* An operation of a session: 1 when the connection is gone (or the session must end), else 0. */
typedef int (*vs_op)(struct vs_cursor *c, struct vu_front *f);

/*
 * One session of the input against backend: messages, rings, chains, and device_op (a well-formed
 * request of the device's own kind, posted and kicked) among them; then the hang-up. Traps (so
 * libFuzzer reports it) on a reply that never came, a connection thread that ended other than with
 * 0 or -EPROTO, or an fd the session left behind.
 */
void vs_run(struct vu_backend *backend, const uint8_t *data, size_t size, vs_op device_op);

#endif
