/* vu_msg.h: the vhost-user wire format (QEMU docs/interop/vhost-user.rst), written once for both ends. */
#ifndef RINGVM_VU_MSG_H
#define RINGVM_VU_MSG_H

#include <stdint.h>

/*
 * A vhost-user message on the Unix stream socket, host byte order (the spec: "native endian"):
 *
 *   +---------+-------+------+---------------------+
 *   | request | flags | size | payload (size bytes) |    file descriptors ride in SCM_RIGHTS
 *   |  u32    |  u32  | u32  |                     |    on the same sendmsg() as the header
 *   +---------+-------+------+---------------------+
 *
 * flags: bits 0-1 the protocol version (1), bit 2 "this is a reply", bit 3 "reply needed"
 * (REPLY_ACK: the back-end answers a u64 0 = success, non-zero = failure). The front-end sends
 * requests; the back-end (ringvm serve) answers those that have replies. Nothing in a message is
 * trusted by the receiver: sizes, fd counts, indices and addresses are all checked (vu_decode.c).
 *
 * Linux has no uapi header for vhost-user (only for the kernel's vhost, whose structs differ in
 * meaning), so the numbers are defined here, from the spec's "Front-end message types".
 */

#define VU_VERSION 0x1u
#define VU_FLAG_VERSION_MASK 0x3u
#define VU_FLAG_REPLY (1u << 2)
#define VU_FLAG_NEED_REPLY (1u << 3)

/* Largest payload any message we accept carries (SET_MEM_TABLE with 8 regions is 264 bytes,
   GET/SET_CONFIG 268). Anything larger is refused before it is read into a buffer. */
#define VU_MAX_PAYLOAD 4096
/* File descriptors one message may carry (SET_MEM_TABLE: one per region). */
#define VU_MAX_FDS 8
/* Regions in SET_MEM_TABLE ("VHOST_MEMORY_BASELINE_NREGIONS"). */
#define VU_MAX_MEM_REGIONS 8
/* Bytes of device config space GET_CONFIG/SET_CONFIG move at most. */
#define VU_MAX_CONFIG_SIZE 256

enum vu_request {
	VU_GET_FEATURES = 1,
	VU_SET_FEATURES = 2,
	VU_SET_OWNER = 3,
	VU_RESET_OWNER = 4,
	VU_SET_MEM_TABLE = 5,
	VU_SET_LOG_BASE = 6,
	VU_SET_LOG_FD = 7,
	VU_SET_VRING_NUM = 8,
	VU_SET_VRING_ADDR = 9,
	VU_SET_VRING_BASE = 10,
	VU_GET_VRING_BASE = 11,
	VU_SET_VRING_KICK = 12,
	VU_SET_VRING_CALL = 13,
	VU_SET_VRING_ERR = 14,
	VU_GET_PROTOCOL_FEATURES = 15,
	VU_SET_PROTOCOL_FEATURES = 16,
	VU_GET_QUEUE_NUM = 17,
	VU_SET_VRING_ENABLE = 18,
	VU_SEND_RARP = 19,
	VU_NET_SET_MTU = 20,
	VU_SET_BACKEND_REQ_FD = 21,
	VU_IOTLB_MSG = 22,
	VU_SET_VRING_ENDIAN = 23,
	VU_GET_CONFIG = 24,
	VU_SET_CONFIG = 25,
	VU_CREATE_CRYPTO_SESSION = 26,
	VU_CLOSE_CRYPTO_SESSION = 27,
	VU_POSTCOPY_ADVISE = 28,
	VU_POSTCOPY_LISTEN = 29,
	VU_POSTCOPY_END = 30,
	VU_GET_INFLIGHT_FD = 31,
	VU_SET_INFLIGHT_FD = 32,
	VU_GPU_SET_SOCKET = 33,
	VU_RESET_DEVICE = 34,
	VU_VRING_KICK = 35,
	VU_GET_MAX_MEM_SLOTS = 36,
	VU_ADD_MEM_REG = 37,
	VU_REM_MEM_REG = 38,
	VU_SET_STATUS = 39,
	VU_GET_STATUS = 40,
};

/* Virtio feature bit 30 (a transport bit): the back-end speaks protocol features. */
#define VU_F_PROTOCOL_FEATURES 30
/* Virtio feature bit 26: dirty logging for migration (never offered here). */
#define VU_F_LOG_ALL 26

/* Protocol feature bits (GET/SET_PROTOCOL_FEATURES). */
enum vu_protocol_feature {
	VU_PROTOCOL_F_MQ = 0,
	VU_PROTOCOL_F_LOG_SHMFD = 1,
	VU_PROTOCOL_F_RARP = 2,
	VU_PROTOCOL_F_REPLY_ACK = 3,
	VU_PROTOCOL_F_NET_MTU = 4,
	VU_PROTOCOL_F_BACKEND_REQ = 5,
	VU_PROTOCOL_F_CROSS_ENDIAN = 6,
	VU_PROTOCOL_F_CRYPTO_SESSION = 7,
	VU_PROTOCOL_F_PAGEFAULT = 8,
	VU_PROTOCOL_F_CONFIG = 9,
	VU_PROTOCOL_F_BACKEND_SEND_FD = 10,
	VU_PROTOCOL_F_HOST_NOTIFIER = 11,
	VU_PROTOCOL_F_INFLIGHT_SHMFD = 12,
	VU_PROTOCOL_F_RESET_DEVICE = 13,
	VU_PROTOCOL_F_INBAND_NOTIFICATIONS = 14,
	VU_PROTOCOL_F_CONFIGURE_MEM_SLOTS = 15,
	VU_PROTOCOL_F_STATUS = 16,
};

struct vu_header {
	uint32_t request; /* enum vu_request */
	uint32_t flags;
	uint32_t size; /* payload bytes that follow */
};

/* SET_VRING_NUM, SET_VRING_BASE, GET_VRING_BASE (reply), SET_VRING_ENABLE. */
struct vu_vring_state {
	uint32_t index;
	uint32_t num;
};

/* SET_VRING_ADDR: ring areas as front-end user (virtual) addresses, not guest-physical. */
struct vu_vring_addr {
	uint32_t index;
	uint32_t flags; /* bit 0: log used ring writes (VHOST_VRING_F_LOG) */
	uint64_t desc_user_addr;
	uint64_t used_user_addr;
	uint64_t avail_user_addr;
	uint64_t log_guest_addr;
};

/* SET_VRING_KICK / CALL / ERR payload (u64): the queue index, and "no fd" (poll mode) in bit 8. */
#define VU_VRING_INDEX_MASK 0xffu
#define VU_VRING_NOFD_MASK (1u << 8)

/* One region of guest memory: its fd (same index among the message's fds) mapped at mmap_offset. */
struct vu_mem_region {
	uint64_t guest_phys_addr;
	uint64_t memory_size;
	uint64_t userspace_addr; /* the front-end's own mapping: ring addresses are given in it */
	uint64_t mmap_offset;    /* where the region starts in its fd */
};

/* SET_MEM_TABLE: nregions regions, one fd each, in order. */
struct vu_memory {
	uint32_t nregions;
	uint32_t padding;
	struct vu_mem_region regions[VU_MAX_MEM_REGIONS];
};

/* ADD_MEM_REG / REM_MEM_REG (CONFIGURE_MEM_SLOTS). */
struct vu_single_mem_region {
	uint64_t padding;
	struct vu_mem_region region;
};

/* GET_CONFIG / SET_CONFIG: size bytes of device config space at offset. */
struct vu_config {
	uint32_t offset;
	uint32_t size;
	uint32_t flags; /* SET_CONFIG: 0 = writable fields, 1 = during migration */
	uint8_t region[VU_MAX_CONFIG_SIZE];
};
/* The header part of struct vu_config, before region[]. */
#define VU_CONFIG_HDR_SIZE 12u

#endif
