/* privilege.c: capabilities by what the shares need, dropped with libcap-ng before the guest runs. */
#include "vmm/privilege.h"

#include <cap-ng.h>
#include <errno.h>
#include <linux/capability.h>
#include <sys/prctl.h>

#define CAPBIT(c) (UINT64_C(1) << (c))

uint64_t priv_keep_mask(const struct priv_need *need)
{
	uint64_t keep = 0;

	if (!need->share)
		return 0;
	keep |= CAPBIT(CAP_DAC_OVERRIDE) | CAPBIT(CAP_SETUID) | CAPBIT(CAP_SETGID);
	if (need->share_writable)
		keep |= CAPBIT(CAP_CHOWN) | CAPBIT(CAP_FOWNER) | CAPBIT(CAP_FSETID) |
			CAPBIT(CAP_SETFCAP);
	if (need->share_writable && need->share_dev)
		keep |= CAPBIT(CAP_MKNOD);
	return keep;
}

int priv_drop(uint64_t keep)
{
	capng_select_t what = CAPNG_SELECT_ALL;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (capng_get_caps_process() < 0)
		return -EPERM;
	/* Nothing held (an unprivileged ringvm): nothing to drop, and no right to touch bounds. */
	if (capng_have_capabilities(CAPNG_SELECT_CAPS) == CAPNG_NONE)
		return 0;
	if (!capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP))
		what = CAPNG_SELECT_CAPS | CAPNG_SELECT_AMBIENT;
	capng_clear(CAPNG_SELECT_ALL);
	for (int c = 0; c <= CAP_LAST_CAP; c++) {
		if (!(keep & CAPBIT(c)))
			continue;
		if (capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED | CAPNG_BOUNDING_SET,
				 (unsigned int)c) < 0)
			return -EINVAL;
	}
	if (capng_apply(what) < 0)
		return -EPERM;
	return 0;
}
