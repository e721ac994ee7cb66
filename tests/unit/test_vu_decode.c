/* test_vu_decode.c: the vhost-user message rules, each with an accepted and a refused example. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "devices/vhost_user/vu_decode.h"
#include "tests/unit/tap.h"

static const struct vu_limits lim = { .nr_queues = 3, .config_size = 60, .queue_max_size = 256 };
static struct vu_msg m;
static const char *why;

/* A fresh message: request, payload size, fds (their numbers do not matter to the decoder). */
static struct vu_msg *msg(uint32_t request, uint32_t size, unsigned int nr_fds)
{
	memset(&m, 0, sizeof(m));
	m.hdr = (struct vu_header){ .request = request, .flags = VU_VERSION, .size = size };
	m.nr_fds = nr_fds;
	for (unsigned int i = 0; i < nr_fds && i < VU_MAX_FDS; i++)
		m.fds[i] = 100 + (int)i;
	return &m;
}

static int dec(void)
{
	why = NULL;
	int r = vu_decode(&m, &lim, &why);
	return r && !why ? -9999 : r; /* every refusal must say why */
}

static void state(uint32_t request, uint32_t index, uint32_t num)
{
	msg(request, sizeof(struct vu_vring_state), 0);
	m.payload.state = (struct vu_vring_state){ index, num };
}

/* A table of n regions of 1 MiB each: gpa i MiB, uva 0x7f00_0000_0000 + i MiB, offset i MiB. */
static void table(uint32_t n)
{
	msg(VU_SET_MEM_TABLE, 8 + n * (uint32_t)sizeof(struct vu_mem_region), n);
	m.payload.memory.nregions = n;
	for (uint32_t i = 0; i < n && i < VU_MAX_MEM_REGIONS; i++)
		m.payload.memory.regions[i] = (struct vu_mem_region){
			.guest_phys_addr = (uint64_t)i << 20,
			.memory_size = 1 << 20,
			.userspace_addr = 0x7f0000000000ULL + ((uint64_t)i << 20),
			.mmap_offset = (uint64_t)i << 20,
		};
}

static void config(uint32_t request, uint32_t offset, uint32_t size)
{
	msg(request, VU_CONFIG_HDR_SIZE + size, 0);
	m.payload.config.offset = offset;
	m.payload.config.size = size;
}

static void test_header(void)
{
	struct vu_header h = { VU_GET_FEATURES, VU_VERSION, 0 };
	TAP_CHECK(vu_check_header(&h, &why) == 0, "header: version 1 request accepted");
	h.flags = VU_VERSION | VU_FLAG_NEED_REPLY;
	TAP_CHECK(vu_check_header(&h, &why) == 0, "header: NEED_REPLY accepted");
	h.flags = 2;
	TAP_CHECK(vu_check_header(&h, &why) == -EPROTO, "header: version 2 refused");
	h.flags = VU_VERSION | VU_FLAG_REPLY;
	TAP_CHECK(vu_check_header(&h, &why) == -EPROTO, "header: a reply from the front-end refused");
	h.flags = VU_VERSION | (1u << 4);
	TAP_CHECK(vu_check_header(&h, &why) == -EPROTO, "header: unknown flag bit refused");
	h.flags = VU_VERSION;
	h.size = VU_MAX_PAYLOAD;
	TAP_CHECK(vu_check_header(&h, &why) == 0, "header: the largest payload accepted");
	h.size = VU_MAX_PAYLOAD + 1;
	TAP_CHECK(vu_check_header(&h, &why) == -EPROTO && why, "header: an oversized payload refused");
}

static void test_requests(void)
{
	msg(VU_GET_FEATURES, 0, 0);
	TAP_CHECK(dec() == 0, "GET_FEATURES without payload accepted");
	msg(VU_GET_FEATURES, 8, 0);
	TAP_CHECK(dec() == -EBADMSG, "GET_FEATURES with a payload refused (size)");
	msg(VU_SET_FEATURES, 8, 0);
	TAP_CHECK(dec() == 0, "SET_FEATURES u64 accepted");
	msg(VU_SET_FEATURES, 4, 0);
	TAP_CHECK(dec() == -EBADMSG, "SET_FEATURES with 4 bytes refused (size)");
	msg(VU_SET_FEATURES, 8, 1);
	TAP_CHECK(dec() == -EBADF, "SET_FEATURES with an fd refused (fd count)");
	msg(VU_SET_LOG_BASE, 8, 0);
	TAP_CHECK(dec() == -EOPNOTSUPP, "SET_LOG_BASE refused (not supported)");
	msg(0, 0, 0);
	TAP_CHECK(dec() == -EOPNOTSUPP, "request 0 refused");
	msg(0xffffffffu, 0, 0);
	TAP_CHECK(dec() == -EOPNOTSUPP, "request 2^32-1 refused");
	msg(VU_SET_OWNER, 0, 0);
	m.fds_lost = true;
	TAP_CHECK(dec() == -EBADF, "a message that came with more than 8 fds refused");
	msg(VU_RESET_DEVICE, 0, 0);
	TAP_CHECK(dec() == 0, "RESET_DEVICE accepted");
	TAP_CHECK(!strcmp(vu_request_name(VU_SET_VRING_ADDR), "SET_VRING_ADDR") &&
			  !strcmp(vu_request_name(12345), "UNKNOWN"),
		  "request names for messages");
	TAP_CHECK(vu_has_reply(VU_GET_VRING_BASE) && vu_has_reply(VU_GET_CONFIG) &&
			  !vu_has_reply(VU_SET_MEM_TABLE) && !vu_has_reply(999),
		  "requests with replies of their own");
}

static void test_vring_state(void)
{
	state(VU_SET_VRING_NUM, 2, 256);
	TAP_CHECK(dec() == 0, "SET_VRING_NUM 256 on queue 2 accepted");
	state(VU_SET_VRING_NUM, 3, 256);
	TAP_CHECK(dec() == -ERANGE, "SET_VRING_NUM on queue 3 of 3 refused (index)");
	state(VU_GET_VRING_BASE, 0xffffffffu, 0);
	TAP_CHECK(dec() == -ERANGE, "GET_VRING_BASE on queue 2^32-1 refused (index)");
	state(VU_SET_VRING_NUM, 0, 0);
	TAP_CHECK(dec() == -ERANGE, "SET_VRING_NUM 0 refused");
	state(VU_SET_VRING_NUM, 0, 48);
	TAP_CHECK(dec() == -ERANGE, "SET_VRING_NUM 48 (not a power of two) refused");
	state(VU_SET_VRING_NUM, 0, 512);
	TAP_CHECK(dec() == -ERANGE, "SET_VRING_NUM above the queue's maximum refused");
	state(VU_SET_VRING_BASE, 1, 65535);
	TAP_CHECK(dec() == 0, "SET_VRING_BASE 65535 accepted");
	state(VU_SET_VRING_BASE, 1, 65536);
	TAP_CHECK(dec() == -ERANGE, "SET_VRING_BASE 65536 refused");
	state(VU_SET_VRING_ENABLE, 1, 1);
	TAP_CHECK(dec() == 0, "SET_VRING_ENABLE 1 accepted");
	state(VU_SET_VRING_ENABLE, 1, 2);
	TAP_CHECK(dec() == -ERANGE, "SET_VRING_ENABLE 2 refused");
	state(VU_GET_VRING_BASE, 0, 0);
	m.hdr.size = 4;
	TAP_CHECK(dec() == -EBADMSG, "GET_VRING_BASE with 4 bytes refused (size)");
}

static void test_vring_addr(void)
{
	msg(VU_SET_VRING_ADDR, sizeof(struct vu_vring_addr), 0);
	m.payload.addr = (struct vu_vring_addr){ .index = 1, .desc_user_addr = 0x1000 };
	TAP_CHECK(dec() == 0, "SET_VRING_ADDR accepted");
	m.payload.addr.index = 3;
	TAP_CHECK(dec() == -ERANGE, "SET_VRING_ADDR on queue 3 of 3 refused (index)");
	m.payload.addr.index = 0;
	m.payload.addr.flags = 1;
	TAP_CHECK(dec() == -EINVAL, "SET_VRING_ADDR asking for dirty logging refused");
	m.payload.addr.flags = 4;
	TAP_CHECK(dec() == -EINVAL, "SET_VRING_ADDR with unknown flags refused");
	m.payload.addr.flags = 0;
	m.hdr.size = 32;
	TAP_CHECK(dec() == -EBADMSG, "SET_VRING_ADDR with 32 bytes refused (size)");
}

static void test_vring_fd(void)
{
	msg(VU_SET_VRING_KICK, 8, 1);
	m.payload.u64 = 2;
	TAP_CHECK(dec() == 0, "SET_VRING_KICK with one fd accepted");
	msg(VU_SET_VRING_CALL, 8, 0);
	m.payload.u64 = 1 | VU_VRING_NOFD_MASK;
	TAP_CHECK(dec() == 0, "SET_VRING_CALL with NOFD and no fd accepted");
	msg(VU_SET_VRING_KICK, 8, 0);
	m.payload.u64 = 0;
	TAP_CHECK(dec() == -EBADF, "SET_VRING_KICK without NOFD and without an fd refused");
	msg(VU_SET_VRING_ERR, 8, 1);
	m.payload.u64 = VU_VRING_NOFD_MASK;
	TAP_CHECK(dec() == -EBADF, "SET_VRING_ERR with NOFD and an fd refused");
	msg(VU_SET_VRING_CALL, 8, 2);
	m.payload.u64 = 0;
	TAP_CHECK(dec() == -EBADF, "SET_VRING_CALL with two fds refused");
	msg(VU_SET_VRING_KICK, 8, 1);
	m.payload.u64 = 3;
	TAP_CHECK(dec() == -ERANGE, "SET_VRING_KICK on queue 3 of 3 refused (index)");
	m.payload.u64 = 0x200;
	TAP_CHECK(dec() == -EINVAL, "SET_VRING_KICK with bits beyond index and NOFD refused");
}

static void test_mem_table(void)
{
	table(2);
	TAP_CHECK(dec() == 0, "SET_MEM_TABLE with 2 regions and 2 fds accepted");
	table(8);
	TAP_CHECK(dec() == 0, "SET_MEM_TABLE with 8 regions accepted");
	table(2);
	m.nr_fds = 1;
	TAP_CHECK(dec() == -EBADF, "SET_MEM_TABLE with fewer fds than regions refused");
	table(1);
	m.nr_fds = 2;
	TAP_CHECK(dec() == -EBADF, "SET_MEM_TABLE with more fds than regions refused");
	table(0);
	TAP_CHECK(dec() == -ERANGE, "SET_MEM_TABLE with 0 regions refused");
	table(8);
	m.payload.memory.nregions = 9;
	m.hdr.size += sizeof(struct vu_mem_region);
	TAP_CHECK(dec() == -ERANGE, "SET_MEM_TABLE with 9 regions refused");
	table(2);
	m.hdr.size -= 8;
	TAP_CHECK(dec() == -EBADMSG, "SET_MEM_TABLE size not matching the region count refused");
	table(2);
	m.hdr.size = 4;
	TAP_CHECK(dec() == -EBADMSG, "SET_MEM_TABLE shorter than its count refused");
	table(2);
	m.payload.memory.regions[1].memory_size = 0;
	TAP_CHECK(dec() == -EINVAL, "an empty region refused");
	table(2);
	m.payload.memory.regions[1].guest_phys_addr = UINT64_MAX - 4096;
	TAP_CHECK(dec() == -EINVAL, "a region whose guest range wraps refused");
	table(2);
	m.payload.memory.regions[1].userspace_addr = UINT64_MAX - 4096;
	TAP_CHECK(dec() == -EINVAL, "a region whose user range wraps refused");
	table(2);
	m.payload.memory.regions[1].mmap_offset = UINT64_MAX - 4096;
	TAP_CHECK(dec() == -EINVAL, "a region whose file range wraps refused");
	table(2);
	m.payload.memory.regions[0].userspace_addr = 0;
	TAP_CHECK(dec() == -EINVAL, "a region at user address 0 refused");
	table(2);
	m.payload.memory.regions[1].guest_phys_addr = 4096;
	TAP_CHECK(dec() == -EINVAL, "regions overlapping in guest-physical space refused");
	table(3);
	m.payload.memory.regions[2].userspace_addr = m.payload.memory.regions[0].userspace_addr + 8;
	TAP_CHECK(dec() == -EINVAL, "regions overlapping in user space refused");
	table(2);
	m.payload.memory.regions[1].guest_phys_addr = 1 << 20; /* adjacent, not overlapping */
	TAP_CHECK(dec() == 0, "adjacent regions accepted");
}

static void test_config(void)
{
	config(VU_GET_CONFIG, 0, 60);
	TAP_CHECK(dec() == 0, "GET_CONFIG of the whole 60-byte space accepted");
	config(VU_GET_CONFIG, 56, 8);
	TAP_CHECK(dec() == -EINVAL, "GET_CONFIG beyond the config space refused");
	config(VU_GET_CONFIG, 0xfffffff0u, 32);
	TAP_CHECK(dec() == -EINVAL, "GET_CONFIG at a huge offset refused (no wrap)");
	config(VU_GET_CONFIG, 0, 4);
	m.hdr.size = 8;
	TAP_CHECK(dec() == -EBADMSG, "GET_CONFIG shorter than its header refused");
	config(VU_GET_CONFIG, 0, 4);
	m.hdr.size += 1;
	TAP_CHECK(dec() == -EBADMSG, "GET_CONFIG whose size does not match the payload refused");
	config(VU_GET_CONFIG, 0, 257);
	TAP_CHECK(dec() == -EBADMSG, "GET_CONFIG of 257 bytes refused");
	config(VU_SET_CONFIG, 4, 4);
	m.payload.config.flags = 1;
	TAP_CHECK(dec() == 0, "SET_CONFIG with the migration flag passes the decoder");
	m.payload.config.flags = 2;
	TAP_CHECK(dec() == -EINVAL, "SET_CONFIG with unknown flags refused");
	config(VU_SET_CONFIG, 4, 4);
	m.nr_fds = 1;
	TAP_CHECK(dec() == -EBADF, "SET_CONFIG with an fd refused");
}

int main(void)
{
	test_header();
	test_requests();
	test_vring_state();
	test_vring_addr();
	test_vring_fd();
	test_mem_table();
	test_config();
	return tap_done();
}
