/* kvm-smoke.c: prove /dev/kvm runs a guest: three real-mode instructions, one port write, one halt;
   and that KVM keeps the vCPU's TSC, which its TSC-deadline timer counts from. */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "arch/x86/tsc.h"
#include "tests/unit/tap.h"

#define SMOKE_MEM_BASE 0x1000u
#define SMOKE_MEM_SIZE 0x1000u
#define SMOKE_PORT 0x10u
#define SMOKE_VALUE 42u
/* KVM_RUN returns on timer signals and the like; a guest this small needs a handful of entries. */
#define SMOKE_MAX_ENTRIES 16

/* mov $42,%al; out %al,$0x10; hlt */
static const uint8_t smoke_code[] = { 0xb0, SMOKE_VALUE, 0xe6, SMOKE_PORT, 0xf4 };

struct smoke {
	int kvm_fd;
	int vm_fd;
	int vcpu_fd;
	uint8_t *mem;
	struct kvm_run *run;
	size_t run_size;
};

static __attribute__((warn_unused_result)) int smoke_ioctl(int fd, unsigned long req, unsigned long arg)
{
	int ret = ioctl(fd, req, arg);

	return ret < 0 ? -errno : ret;
}

/* Open /dev/kvm and check the API is the stable one; every later step needs this. */
static __attribute__((warn_unused_result)) int smoke_open(struct smoke *s, const char *path)
{
	int ret;

	s->kvm_fd = open(path, O_RDWR | O_CLOEXEC);
	if (s->kvm_fd < 0)
		return -errno;
	ret = smoke_ioctl(s->kvm_fd, KVM_GET_API_VERSION, 0);
	if (ret < 0)
		return ret;
	return ret == KVM_API_VERSION ? 0 : -EPROTO;
}

/* One VM, one page of memory holding the code at SMOKE_MEM_BASE, one vCPU with its run area mapped. */
static __attribute__((warn_unused_result)) int smoke_create(struct smoke *s)
{
	struct kvm_userspace_memory_region region;
	int ret;

	ret = smoke_ioctl(s->kvm_fd, KVM_CREATE_VM, 0);
	if (ret < 0)
		return ret;
	s->vm_fd = ret;

	s->mem = mmap(NULL, SMOKE_MEM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->mem == MAP_FAILED) {
		s->mem = NULL;
		return -errno;
	}
	memcpy(s->mem, smoke_code, sizeof(smoke_code));
	region = (struct kvm_userspace_memory_region){
		.slot = 0,
		.guest_phys_addr = SMOKE_MEM_BASE,
		.memory_size = SMOKE_MEM_SIZE,
		.userspace_addr = (uintptr_t)s->mem,
	};
	ret = smoke_ioctl(s->vm_fd, KVM_SET_USER_MEMORY_REGION, (uintptr_t)&region);
	if (ret < 0)
		return ret;

	ret = smoke_ioctl(s->vm_fd, KVM_CREATE_VCPU, 0);
	if (ret < 0)
		return ret;
	s->vcpu_fd = ret;
	ret = smoke_ioctl(s->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (ret < 0)
		return ret;
	s->run_size = (size_t)ret;
	s->run = mmap(NULL, s->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, s->vcpu_fd, 0);
	if (s->run == MAP_FAILED) {
		s->run = NULL;
		return -errno;
	}
	return 0;
}

/* Real mode, CS based at 0, execution starting at the code. */
static __attribute__((warn_unused_result)) int smoke_set_regs(struct smoke *s)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	int ret;

	ret = smoke_ioctl(s->vcpu_fd, KVM_GET_SREGS, (uintptr_t)&sregs);
	if (ret < 0)
		return ret;
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	ret = smoke_ioctl(s->vcpu_fd, KVM_SET_SREGS, (uintptr_t)&sregs);
	if (ret < 0)
		return ret;
	memset(&regs, 0, sizeof(regs));
	regs.rip = SMOKE_MEM_BASE;
	regs.rflags = 0x2; /* bit 1 is reserved and must be set */
	return smoke_ioctl(s->vcpu_fd, KVM_SET_REGS, (uintptr_t)&regs);
}

/* Enter the guest until it exits for a reason other than an interrupted KVM_RUN; returns the reason. */
static __attribute__((warn_unused_result)) int smoke_run(struct smoke *s)
{
	for (int i = 0; i < SMOKE_MAX_ENTRIES; i++) {
		int ret = smoke_ioctl(s->vcpu_fd, KVM_RUN, 0);

		if (ret == -EINTR || ret == -EAGAIN)
			continue;
		if (ret < 0)
			return ret;
		if (s->run->exit_reason != KVM_EXIT_INTR)
			return (int)s->run->exit_reason;
	}
	return -ETIMEDOUT;
}

/* The value the guest wrote, when the exit is exactly one byte OUT to SMOKE_PORT; else -EPROTO. */
static int smoke_out_value(const struct smoke *s)
{
	const struct kvm_run *run = s->run;

	if (run->io.direction != KVM_EXIT_IO_OUT || run->io.port != SMOKE_PORT || run->io.size != 1 ||
	    run->io.count != 1 || run->io.data_offset + 1 > s->run_size)
		return -EPROTO;
	return ((const uint8_t *)run)[run->io.data_offset];
}

static void smoke_destroy(struct smoke *s)
{
	if (s->run)
		munmap(s->run, s->run_size);
	if (s->vcpu_fd >= 0)
		close(s->vcpu_fd);
	if (s->mem)
		munmap(s->mem, SMOKE_MEM_SIZE);
	if (s->vm_fd >= 0)
		close(s->vm_fd);
	if (s->kvm_fd >= 0)
		close(s->kvm_fd);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/dev/kvm";
	struct smoke s = { .kvm_fd = -1, .vm_fd = -1, .vcpu_fd = -1 };
	int ret, reason = -1, value = -1;

	ret = smoke_open(&s, path);
	if (ret < 0)
		printf("# %s: %s\n", path, strerror(-ret));
	TAP_CHECK(ret == 0, "open /dev/kvm, API version 12");
	if (ret == 0) {
		ret = smoke_create(&s);
		if (ret < 0)
			printf("# creating the VM: %s\n", strerror(-ret));
		TAP_CHECK(ret == 0, "create a VM with one page of memory and one vCPU");
	}
	if (ret == 0) {
		/*
		 * A KVM that took a TSC rate the CPU cannot scale to leaves the vCPU's scaling ratio at
		 * 0: its own view of the guest's TSC then reads 0 for ever, and a TSC-deadline timer
		 * fires minutes late (tests/lab/init, load_kvm, says when L1's KVM did). ringvm mends
		 * that for its own vCPUs (arch/x86/tsc.h), QEMU does not: the lab must not be in it.
		 */
		uint64_t tsc0 = 0, tsc1 = 0;
		int err = x86_tsc_read(s.vcpu_fd, &tsc0);

		if (!err) {
			nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
			err = x86_tsc_read(s.vcpu_fd, &tsc1);
		}
		printf("# the vCPU's TSC as KVM sees it: %llu, 1 ms later %llu%s%s\n",
		       (unsigned long long)tsc0, (unsigned long long)tsc1, err ? ": " : "",
		       err ? strerror(-err) : "");
		TAP_CHECK(!err && tsc0 != 0 && tsc1 > tsc0, "KVM's view of the vCPU's TSC advances");
	}
	if (ret == 0) {
		ret = smoke_set_regs(&s);
		if (ret < 0)
			printf("# setting registers: %s\n", strerror(-ret));
		TAP_CHECK(ret == 0, "set real-mode registers");
	}
	if (ret == 0) {
		reason = smoke_run(&s);
		if (reason == KVM_EXIT_IO)
			value = smoke_out_value(&s);
		printf("# first exit: reason %d, port 0x%x, value %d\n", reason,
		       reason == KVM_EXIT_IO ? s.run->io.port : 0u, value);
		TAP_CHECK(reason == KVM_EXIT_IO && value == SMOKE_VALUE, "guest writes 42 to port 0x10");
		ret = reason == KVM_EXIT_IO ? 0 : -EPROTO;
	}
	if (ret == 0) {
		reason = smoke_run(&s);
		printf("# second exit: reason %d\n", reason);
		TAP_CHECK(reason == KVM_EXIT_HLT, "guest halts");
	}
	smoke_destroy(&s);
	return tap_done();
}
