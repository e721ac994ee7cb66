/* vu_decode.h: validation of one received vhost-user message, pure (no sockets, no state). */
#ifndef RINGVM_VU_DECODE_H
#define RINGVM_VU_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include "devices/vhost_user/vu_msg.h"

/*
 * A message as it came off the socket: the header, `hdr.size` payload bytes and the file descriptors
 * that rode with it. The payload union is only meaningful for the request vu_decode() accepted it
 * as. The fds belong to whoever received them: on any error they are all closed by the caller.
 */
struct vu_msg {
	struct vu_header hdr;
	union {
		uint64_t u64;			 /* features, KICK/CALL/ERR index + NOFD flag */
		struct vu_vring_state state;	 /* VRING_NUM/BASE/ENABLE, GET_VRING_BASE */
		struct vu_vring_addr addr;	 /* SET_VRING_ADDR */
		struct vu_memory memory;	 /* SET_MEM_TABLE (nregions regions) */
		struct vu_config config;	 /* GET/SET_CONFIG (VU_CONFIG_HDR_SIZE + size bytes) */
		uint8_t raw[VU_MAX_PAYLOAD];
	} payload;
	int fds[VU_MAX_FDS];
	unsigned int nr_fds;
	bool fds_lost; /* the front-end sent more fds than VU_MAX_FDS: the extra ones were dropped */
};

/* What the receiving device allows; indices and config accesses are checked against it. */
struct vu_limits {
	unsigned int nr_queues;	  /* queue indices must be below this */
	uint32_t config_size;	  /* bytes of device config space */
	uint16_t queue_max_size;  /* SET_VRING_NUM: a power of two no larger than this */
};

/*
 * The header alone, before the payload is read: protocol version 1, not a reply, no unknown flag
 * bits, size <= VU_MAX_PAYLOAD (so the payload buffer cannot overflow). 0, or -EPROTO with *why.
 * A bad header means the stream cannot be trusted any more: the connection is closed.
 */
__attribute__((warn_unused_result)) int vu_check_header(const struct vu_header *h,
							const char **why);

/*
 * The whole message against the rules of its request (QEMU docs/interop/vhost-user.rst, "Front-end
 * message types"):
 *   - a supported request (the list in vu_backend.c); anything else is -EOPNOTSUPP;
 *   - the payload size exactly what the request carries (none, u64, vring state, vring address,
 *     memory table of nregions regions, config header + size bytes);
 *   - at most VU_MAX_FDS fds (none lost), and the number: one per region for SET_MEM_TABLE, one for KICK/CALL/ERR unless the NOFD
 *     bit is set (then none), none for everything else;
 *   - queue indices below lim->nr_queues; no bits in the KICK/CALL/ERR u64 but the index and NOFD;
 *   - SET_VRING_NUM a power of two 1..queue_max_size; SET_VRING_BASE below 2^16; SET_VRING_ENABLE
 *     0 or 1; SET_VRING_ADDR without the dirty-log flag (logging is not offered);
 *   - SET_MEM_TABLE: 1..VU_MAX_MEM_REGIONS regions, each non-empty, none whose guest-physical,
 *     user or file-offset range wraps, no two overlapping in guest-physical or in user space;
 *   - GET/SET_CONFIG: size <= VU_MAX_CONFIG_SIZE, offset + size within lim->config_size, SET_CONFIG
 *     flags 0 (front-end) or 1 (migration).
 * Returns 0, or a negative errno with *why set to a static one-line reason:
 *   -EOPNOTSUPP  unknown or unsupported request;  -EBADMSG  wrong payload size;
 *   -EBADF       wrong number of fds;  -ERANGE  an index or value out of range;
 *   -EINVAL      a malformed memory table or config access.
 */
__attribute__((warn_unused_result)) int vu_decode(const struct vu_msg *m,
						  const struct vu_limits *lim, const char **why);

/* The request's name ("SET_VRING_ADDR"), or "UNKNOWN", for messages. */
const char *vu_request_name(uint32_t request);

/* True for the requests whose answer is a reply message of their own (GET_*): REPLY_ACK is not
   used for them (the spec: "for messages that already have replies"). */
bool vu_has_reply(uint32_t request);

#endif
