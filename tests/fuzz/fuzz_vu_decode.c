/* fuzz_vu_decode.c: libFuzzer target for the vhost-user message rules, with invariants checked. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "devices/vhost_user/vu_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What an accepted message promises; a broken promise traps (libFuzzer reports a crash). */
static void vu_fuzz_invariants(const struct vu_msg *m, const struct vu_limits *lim)
{
	if (m->hdr.request == VU_SET_MEM_TABLE) {
		const struct vu_memory *t = &m->payload.memory;
		if (t->nregions == 0 || t->nregions > VU_MAX_MEM_REGIONS || m->nr_fds != t->nregions)
			__builtin_trap();
		for (uint32_t i = 0; i < t->nregions; i++) {
			const struct vu_mem_region *a = &t->regions[i];
			if (!a->memory_size || a->guest_phys_addr + a->memory_size < a->guest_phys_addr)
				__builtin_trap();
			for (uint32_t j = 0; j < i; j++) {
				const struct vu_mem_region *b = &t->regions[j];
				if (a->guest_phys_addr < b->guest_phys_addr + b->memory_size &&
				    b->guest_phys_addr < a->guest_phys_addr + a->memory_size)
					__builtin_trap();
			}
		}
	}
	if ((m->hdr.request == VU_GET_CONFIG || m->hdr.request == VU_SET_CONFIG) &&
	    (uint64_t)m->payload.config.offset + m->payload.config.size > lim->config_size)
		__builtin_trap();
	if ((m->hdr.request == VU_SET_VRING_NUM || m->hdr.request == VU_GET_VRING_BASE) &&
	    m->payload.state.index >= lim->nr_queues)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vu_msg m;
	const struct vu_limits lim = { .nr_queues = 17, .config_size = 60, .queue_max_size = 1024 };
	const char *why;

	/* Byte 0: how many fds came with it (9 and up: more than fit, some were dropped). */
	if (size < 1 + sizeof(struct vu_header))
		return 0;
	memset(&m, 0, sizeof(m));
	m.nr_fds = data[0] % 10 > VU_MAX_FDS ? VU_MAX_FDS : data[0] % 10;
	m.fds_lost = data[0] % 10 > VU_MAX_FDS;
	memcpy(&m.hdr, data + 1, sizeof(m.hdr));
	data += 1 + sizeof(m.hdr);
	size -= 1 + sizeof(m.hdr);
	if (vu_check_header(&m.hdr, &why))
		return 0;
	/* The receiver reads exactly hdr.size bytes; a shorter input is a cut message. */
	if (m.hdr.size > size)
		return 0;
	memcpy(m.payload.raw, data, m.hdr.size);
	if (vu_decode(&m, &lim, &why) == 0)
		vu_fuzz_invariants(&m, &lim);
	return 0;
}
