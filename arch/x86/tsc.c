/* tsc.c: a vCPU's TSC as KVM computes it, and the rate KVM sometimes gives a vCPU but cannot run. */
#include "arch/x86/tsc.h"

#include <errno.h>
#include <linux/kvm.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "arch/x86/msr.h"

int x86_tsc_read(int vcpu_fd, uint64_t *tsc)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e;
	} m;
	memset(&m, 0, sizeof(m));
	m.hdr.nmsrs = 1;
	m.e.index = MSR_IA32_TSC;
	int ret = ioctl(vcpu_fd, KVM_GET_MSRS, &m);
	if (ret < 0)
		return -errno;
	if (ret != 1)
		return -EIO; /* KVM returns how many MSRs it read */
	*tsc = m.e.data;
	return 0;
}

/* Whether the vCPU's TSC moves. Two reads already lie an ioctl apart (hundreds of host TSC ticks);
   only when they agree is there a second look 100 us later, so a slow rate is not taken for none. */
static int tsc_moves(int vcpu_fd, bool *moves)
{
	uint64_t first, second;
	int ret = x86_tsc_read(vcpu_fd, &first);
	if (!ret)
		ret = x86_tsc_read(vcpu_fd, &second);
	if (!ret && second == first) {
		const struct timespec pause = { .tv_nsec = 100 * 1000 };
		(void)nanosleep(&pause, NULL);
		ret = x86_tsc_read(vcpu_fd, &second);
	}
	if (!ret)
		*moves = second != first;
	return ret;
}

int x86_tsc_ensure_running(int vcpu_fd, struct x86_tsc_fix *fix)
{
	bool moves = false;
	memset(fix, 0, sizeof(*fix));
	int ret = tsc_moves(vcpu_fd, &moves);
	if (ret || moves)
		return ret;
	int khz = ioctl(vcpu_fd, KVM_GET_TSC_KHZ, 0);
	fix->khz_kept = khz > 0 ? (unsigned int)khz : 0;
	/* 0 means the host kernel's current tsc_khz: the one rate KVM never needs to scale to. */
	if (ioctl(vcpu_fd, KVM_SET_TSC_KHZ, 0UL) < 0)
		return -errno;
	fix->set = true;
	khz = ioctl(vcpu_fd, KVM_GET_TSC_KHZ, 0);
	fix->khz_set = khz > 0 ? (unsigned int)khz : 0;
	ret = tsc_moves(vcpu_fd, &moves);
	return ret ? ret : moves ? 0 : -EIO;
}
