/* vu_client.h: the vhost-user front-end: connect, negotiate, share memory, hand over queues. */
#ifndef BENCH_VU_CLIENT_H
#define BENCH_VU_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "devices/vhost_user/vu_msg.h"
#include "tests/bench/device/dmem.h"
#include "tests/bench/device/dvq.h"

/*
 * The part of QEMU's vhost-user front-end a benchmark needs (QEMU docs/interop/vhost-user.rst):
 *   vu_connect -> vu_negotiate (GET_FEATURES, GET/SET_PROTOCOL_FEATURES, GET_QUEUE_NUM, SET_OWNER)
 *   -> vu_get_config (if CONFIG) -> vu_set_features -> vu_set_mem_table -> vu_start_queue per queue
 *   -> ... requests ... -> vu_stop_queue per queue -> vu_close.
 * Every message that may carry REPLY_ACK asks for it when negotiated, so a refusal is seen at the
 * step that caused it. Replies are checked (request number, reply flag, size); a back-end that
 * closes the socket or answers garbage gives -EPROTO / -ECONNRESET, never a hang (the socket has a
 * receive timeout). Called from the setup thread only.
 */
struct vu_client {
	int sock;
	uint64_t features;	 /* the back-end's virtio features (GET_FEATURES) */
	uint64_t protocol;	 /* protocol features both sides speak */
	uint64_t acked;		 /* features we set */
	uint32_t max_queues;	 /* GET_QUEUE_NUM, or 0 when MQ is not offered */
	char err[160];		 /* what failed, for the one-line error */
};

/* Connect to the back-end's socket (retrying for up to wait_ms while it is not there yet). */
__attribute__((warn_unused_result)) int vu_connect(struct vu_client *c, const char *path, int wait_ms);
void vu_close(struct vu_client *c);

/* Feature handshake up to SET_OWNER. want_protocol: the protocol features we would use. */
__attribute__((warn_unused_result)) int vu_negotiate(struct vu_client *c, uint64_t want_protocol);

/* GET_CONFIG: len bytes of device config space from offset 0. -EOPNOTSUPP without CONFIG. */
__attribute__((warn_unused_result)) int vu_get_config(struct vu_client *c, void *buf, uint32_t len);

/* SET_FEATURES with want & offered (plus PROTOCOL_FEATURES when offered); the result in c->acked. */
__attribute__((warn_unused_result)) int vu_set_features(struct vu_client *c, uint64_t want);

/* SET_MEM_TABLE: all of mem as one region at guest-physical 0. */
__attribute__((warn_unused_result)) int vu_set_mem_table(struct vu_client *c, const struct dmem *mem);

/* SET_VRING_NUM/BASE/ADDR/CALL/KICK and ENABLE for queue idx laid out in vr. */
__attribute__((warn_unused_result)) int vu_start_queue(struct vu_client *c, unsigned int idx,
						       const struct dvq *vr);

/* GET_VRING_BASE: the back-end stops the queue and says where it stopped. */
__attribute__((warn_unused_result)) int vu_stop_queue(struct vu_client *c, unsigned int idx,
						      uint32_t *base);

#endif
