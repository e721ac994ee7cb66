/* vu_decode.c: every rule a vhost-user message must pass before the back-end acts on it. */
#include "devices/vhost_user/vu_decode.h"

#include <errno.h>
#include <stddef.h>

/* SET_VRING_ADDR flag bit 0 (VHOST_VRING_F_LOG): log used-ring writes for migration. */
#define VU_VRING_F_LOG 1u

/* The payload shape of each request we serve. */
enum vu_shape {
	VU_NONE,   /* no payload */
	VU_U64,	   /* a u64 */
	VU_STATE,  /* struct vu_vring_state */
	VU_ADDR,   /* struct vu_vring_addr */
	VU_FDIDX,  /* u64 queue index + NOFD flag, one fd unless NOFD */
	VU_MEM,	   /* struct vu_memory with nregions regions, one fd each */
	VU_CONFIG, /* struct vu_config header + size bytes */
};

struct vu_rule {
	const char *name;
	enum vu_shape shape;
	bool reply; /* answered with a message of its own */
};

/* The requests ringvm serves, and how each one looks (vhost-user.rst, "Front-end message types"). */
static const struct vu_rule vu_rules[] = {
	[VU_GET_FEATURES] = { "GET_FEATURES", VU_NONE, true },
	[VU_SET_FEATURES] = { "SET_FEATURES", VU_U64, false },
	[VU_SET_OWNER] = { "SET_OWNER", VU_NONE, false },
	[VU_RESET_OWNER] = { "RESET_OWNER", VU_NONE, false },
	[VU_SET_MEM_TABLE] = { "SET_MEM_TABLE", VU_MEM, false },
	[VU_SET_VRING_NUM] = { "SET_VRING_NUM", VU_STATE, false },
	[VU_SET_VRING_ADDR] = { "SET_VRING_ADDR", VU_ADDR, false },
	[VU_SET_VRING_BASE] = { "SET_VRING_BASE", VU_STATE, false },
	[VU_GET_VRING_BASE] = { "GET_VRING_BASE", VU_STATE, true },
	[VU_SET_VRING_KICK] = { "SET_VRING_KICK", VU_FDIDX, false },
	[VU_SET_VRING_CALL] = { "SET_VRING_CALL", VU_FDIDX, false },
	[VU_SET_VRING_ERR] = { "SET_VRING_ERR", VU_FDIDX, false },
	[VU_GET_PROTOCOL_FEATURES] = { "GET_PROTOCOL_FEATURES", VU_NONE, true },
	[VU_SET_PROTOCOL_FEATURES] = { "SET_PROTOCOL_FEATURES", VU_U64, false },
	[VU_GET_QUEUE_NUM] = { "GET_QUEUE_NUM", VU_NONE, true },
	[VU_SET_VRING_ENABLE] = { "SET_VRING_ENABLE", VU_STATE, false },
	[VU_GET_CONFIG] = { "GET_CONFIG", VU_CONFIG, true },
	[VU_SET_CONFIG] = { "SET_CONFIG", VU_CONFIG, false },
	[VU_RESET_DEVICE] = { "RESET_DEVICE", VU_NONE, false },
};

static const struct vu_rule *vu_rule(uint32_t request)
{
	if (request >= sizeof(vu_rules) / sizeof(vu_rules[0]) || !vu_rules[request].name)
		return NULL;
	return &vu_rules[request];
}

const char *vu_request_name(uint32_t request)
{
	const struct vu_rule *r = vu_rule(request);
	return r ? r->name : "UNKNOWN";
}

bool vu_has_reply(uint32_t request)
{
	const struct vu_rule *r = vu_rule(request);
	return r && r->reply;
}

int vu_check_header(const struct vu_header *h, const char **why)
{
	if ((h->flags & VU_FLAG_VERSION_MASK) != VU_VERSION) {
		*why = "protocol version is not 1";
		return -EPROTO;
	}
	if (h->flags & VU_FLAG_REPLY) {
		*why = "a reply where a request was expected";
		return -EPROTO;
	}
	if (h->flags & ~(VU_FLAG_VERSION_MASK | VU_FLAG_NEED_REPLY)) {
		*why = "unknown flag bits in the header";
		return -EPROTO;
	}
	if (h->size > VU_MAX_PAYLOAD) {
		*why = "payload larger than any request ringvm accepts";
		return -EPROTO;
	}
	return 0;
}

/* [a, a+n) and [b, b+m) overlap; neither sum wraps (checked before). */
static bool vu_overlap(uint64_t a, uint64_t n, uint64_t b, uint64_t m)
{
	return a < b + m && b < a + n;
}

static int vu_check_memory(const struct vu_msg *m, const char **why)
{
	const struct vu_memory *mem = &m->payload.memory;
	uint32_t n = mem->nregions;
	if (m->hdr.size < offsetof(struct vu_memory, regions)) {
		*why = "shorter than the region count";
		return -EBADMSG;
	}
	if (n == 0 || n > VU_MAX_MEM_REGIONS) {
		*why = "region count not 1..8";
		return -ERANGE;
	}
	if (m->hdr.size != offsetof(struct vu_memory, regions) + n * sizeof(struct vu_mem_region)) {
		*why = "payload size does not match the region count";
		return -EBADMSG;
	}
	if (m->nr_fds != n) {
		*why = "not exactly one fd per region";
		return -EBADF;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct vu_mem_region *r = &mem->regions[i];
		uint64_t len = r->memory_size;
		if (len == 0) {
			*why = "an empty region";
			return -EINVAL;
		}
		if (r->guest_phys_addr + len < r->guest_phys_addr ||
		    r->userspace_addr + len < r->userspace_addr || r->userspace_addr == 0 ||
		    r->mmap_offset + len < r->mmap_offset) {
			*why = "a region whose guest, user or file range wraps (or user address 0)";
			return -EINVAL;
		}
		for (uint32_t j = 0; j < i; j++) {
			const struct vu_mem_region *o = &mem->regions[j];
			if (vu_overlap(r->guest_phys_addr, len, o->guest_phys_addr, o->memory_size)) {
				*why = "two regions overlap in guest-physical space";
				return -EINVAL;
			}
			if (vu_overlap(r->userspace_addr, len, o->userspace_addr, o->memory_size)) {
				*why = "two regions overlap in the front-end's address space";
				return -EINVAL;
			}
		}
	}
	return 0;
}

static int vu_check_config(const struct vu_msg *m, const struct vu_limits *lim, const char **why)
{
	const struct vu_config *c = &m->payload.config;
	if (m->hdr.size < VU_CONFIG_HDR_SIZE) {
		*why = "shorter than the config header";
		return -EBADMSG;
	}
	if (c->size > VU_MAX_CONFIG_SIZE || m->hdr.size != VU_CONFIG_HDR_SIZE + c->size) {
		*why = "config size over 256 or not matching the payload";
		return -EBADMSG;
	}
	if (c->offset > lim->config_size || c->size > lim->config_size - c->offset) {
		*why = "config access beyond the device's config space";
		return -EINVAL;
	}
	if (m->hdr.request == VU_SET_CONFIG && c->flags > 1) {
		*why = "unknown SET_CONFIG flags";
		return -EINVAL;
	}
	return 0;
}

/* The request-specific values of a vring state (index already checked). */
static int vu_check_state(const struct vu_msg *m, const struct vu_limits *lim, const char **why)
{
	uint32_t num = m->payload.state.num;
	switch (m->hdr.request) {
	case VU_SET_VRING_NUM:
		if (num == 0 || num > lim->queue_max_size || (num & (num - 1))) {
			*why = "ring size not a power of two within the queue's maximum";
			return -ERANGE;
		}
		return 0;
	case VU_SET_VRING_BASE:
		if (num > UINT16_MAX) {
			*why = "ring base beyond 16 bits";
			return -ERANGE;
		}
		return 0;
	case VU_SET_VRING_ENABLE:
		if (num > 1) {
			*why = "enable value not 0 or 1";
			return -ERANGE;
		}
		return 0;
	default:
		return 0;
	}
}

/* Payload size a fixed-shape request must carry. */
static uint32_t vu_fixed_size(enum vu_shape shape)
{
	switch (shape) {
	case VU_NONE:
		return 0;
	case VU_U64:
	case VU_FDIDX:
		return sizeof(uint64_t);
	case VU_STATE:
		return sizeof(struct vu_vring_state);
	case VU_ADDR:
		return sizeof(struct vu_vring_addr);
	default:
		return UINT32_MAX; /* variable: checked by its own function */
	}
}

int vu_decode(const struct vu_msg *m, const struct vu_limits *lim, const char **why)
{
	const struct vu_rule *r = vu_rule(m->hdr.request);
	if (!r) {
		*why = "request not supported";
		return -EOPNOTSUPP;
	}
	if (m->nr_fds > VU_MAX_FDS || m->fds_lost) {
		*why = "more than 8 fds";
		return -EBADF;
	}
	if (r->shape == VU_MEM)
		return vu_check_memory(m, why);
	if (m->nr_fds && r->shape != VU_FDIDX) {
		*why = "file descriptors on a request that takes none";
		return -EBADF;
	}
	if (r->shape == VU_CONFIG)
		return vu_check_config(m, lim, why);
	if (m->hdr.size != vu_fixed_size(r->shape)) {
		*why = "payload size wrong for the request";
		return -EBADMSG;
	}
	switch (r->shape) {
	case VU_STATE:
		if (m->payload.state.index >= lim->nr_queues) {
			*why = "queue index out of range";
			return -ERANGE;
		}
		return vu_check_state(m, lim, why);
	case VU_ADDR:
		if (m->payload.addr.index >= lim->nr_queues) {
			*why = "queue index out of range";
			return -ERANGE;
		}
		if (m->payload.addr.flags & VU_VRING_F_LOG) {
			*why = "dirty logging asked for (not offered)";
			return -EINVAL;
		}
		if (m->payload.addr.flags) {
			*why = "unknown ring address flags";
			return -EINVAL;
		}
		return 0;
	case VU_FDIDX: {
		uint64_t v = m->payload.u64;
		if (v & ~(uint64_t)(VU_VRING_INDEX_MASK | VU_VRING_NOFD_MASK)) {
			*why = "unknown bits beside the queue index and the no-fd flag";
			return -EINVAL;
		}
		if ((v & VU_VRING_INDEX_MASK) >= lim->nr_queues) {
			*why = "queue index out of range";
			return -ERANGE;
		}
		if (m->nr_fds != ((v & VU_VRING_NOFD_MASK) ? 0u : 1u)) {
			*why = "fd count does not match the no-fd flag";
			return -EBADF;
		}
		return 0;
	}
	default:
		return 0;
	}
}
