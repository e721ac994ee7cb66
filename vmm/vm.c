/* vm.c: the KVM virtual machine: /dev/kvm, guest RAM slots, irqchip, and the services devices use. */
#define _GNU_SOURCE
#include "vmm/machine.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "arch/x86/cpu.h"

/* Where KVM on Intel keeps its real-mode TSS and identity page: just below the BIOS area, unused. */
#define VM_TSS_ADDR 0xfffbd000ULL
#define VM_IDENTITY_MAP_ADDR 0xfffbc000ULL

static int vm_set_memory(struct vm *vm)
{
	for (unsigned int i = 0; i < vm->mem.nr_regions; i++) {
		const struct gm_region *r = &vm->mem.regions[i];
		struct kvm_userspace_memory_region slot = {
			.slot = i,
			.guest_phys_addr = r->gpa,
			.memory_size = r->size,
			.userspace_addr = (uintptr_t)r->host,
		};
		if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &slot) < 0)
			return -errno;
	}
	return 0;
}

int vm_create(struct vm *vm, uint64_t ram_size, unsigned int nr_cpus, const char **why)
{
	int ret;
	memset(vm, 0, sizeof(*vm));
	vm->kvm_fd = vm->vm_fd = vm->stop_efd = -1;
	vm->mem.memfd = -1;
	vm->nr_cpus = nr_cpus;
	pthread_mutex_init(&vm->stop_lock, NULL);
	pthread_mutex_init(&vm->gate_lock, NULL);
	pthread_cond_init(&vm->gate_cond, NULL);

	*why = "cannot open /dev/kvm";
	vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (vm->kvm_fd < 0)
		return -errno;
	*why = "/dev/kvm speaks an unsupported KVM API version";
	if (ioctl(vm->kvm_fd, KVM_GET_API_VERSION, 0) != KVM_API_VERSION)
		return -EINVAL;
	*why = "KVM lacks a capability ringvm needs (irqfd, ioeventfd, immediate exit, user memory)";
	static const int needed[] = { KVM_CAP_IRQFD, KVM_CAP_IOEVENTFD, KVM_CAP_IMMEDIATE_EXIT,
				      KVM_CAP_USER_MEMORY, KVM_CAP_IRQCHIP, KVM_CAP_PIT2 };
	for (unsigned int i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
		if (ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, needed[i]) <= 0)
			return -ENOTSUP;
	int max_vcpus = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);
	*why = "more vCPUs than this host's KVM allows";
	if (max_vcpus > 0 && nr_cpus > (unsigned int)max_vcpus)
		return -E2BIG;
	vm->run_size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	*why = "KVM_GET_VCPU_MMAP_SIZE";
	if (vm->run_size <= 0)
		return -EINVAL;

	*why = "KVM_CREATE_VM";
	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0)
		return -errno;
	*why = "KVM_SET_TSS_ADDR";
	if (ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, (unsigned long)VM_TSS_ADDR) < 0)
		return -errno;
	uint64_t identity = VM_IDENTITY_MAP_ADDR;
	*why = "KVM_SET_IDENTITY_MAP_ADDR";
	if (ioctl(vm->vm_fd, KVM_SET_IDENTITY_MAP_ADDR, &identity) < 0)
		return -errno;

	*why = "cannot allocate guest memory";
	ret = gm_create(&vm->mem, ram_size);
	if (ret)
		return ret;
	*why = "KVM_SET_USER_MEMORY_REGION";
	ret = vm_set_memory(vm);
	if (ret)
		return ret;

	/* The in-kernel PIC, IOAPIC and LAPICs, and the PIT (its speaker port included). */
	*why = "KVM_CREATE_IRQCHIP";
	if (ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0)
		return -errno;
	struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };
	*why = "KVM_CREATE_PIT2";
	if (ioctl(vm->vm_fd, KVM_CREATE_PIT2, &pit) < 0)
		return -errno;

	*why = "KVM_GET_SUPPORTED_CPUID";
	ret = x86_cpuid_supported(vm->kvm_fd, &vm->cpuid);
	if (ret)
		return ret;
	*why = "eventfd";
	vm->stop_efd = eventfd(0, EFD_CLOEXEC);
	if (vm->stop_efd < 0)
		return -errno;
	*why = NULL;
	return 0;
}

void vm_destroy(struct vm *vm)
{
	free(vm->vcpus);
	vm->vcpus = NULL;
	free(vm->cpuid);
	vm->cpuid = NULL;
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	gm_destroy(&vm->mem);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	if (vm->stop_efd >= 0)
		close(vm->stop_efd);
	pthread_mutex_destroy(&vm->stop_lock);
	pthread_cond_destroy(&vm->gate_cond);
	pthread_mutex_destroy(&vm->gate_lock);
	vm->vm_fd = vm->kvm_fd = vm->stop_efd = -1;
}

void vm_request_stop(struct vm *vm, enum vm_stop_reason reason, int status, const char *fmt, ...)
{
	pthread_mutex_lock(&vm->stop_lock);
	if (vm->stop_reason == VM_STOP_NONE) {
		vm->stop_reason = reason;
		vm->stop_status = status;
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(vm->stop_why, sizeof(vm->stop_why), fmt, ap);
		va_end(ap);
		atomic_store(&vm->stopping, true);
		uint64_t one = 1;
		/* The eventfd counter cannot overflow from one write; nothing useful to do on error. */
		(void)!write(vm->stop_efd, &one, sizeof(one));
	}
	pthread_mutex_unlock(&vm->stop_lock);
}

uint64_t vm_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

const struct guest_mem *vm_guest_mem(struct vm *vm)
{
	return &vm->mem;
}

int vm_alloc_virtio_mmio(struct vm *vm, uint64_t *base, uint32_t *gsi)
{
	static const uint32_t gsis[] = LAYOUT_GSI_VIRTIO;
	_Static_assert(sizeof(gsis) / sizeof(gsis[0]) == LAYOUT_GSI_VIRTIO_COUNT, "LAYOUT_GSI_VIRTIO_COUNT");
	unsigned int n = vm->nr_virtio_mmio;
	if (n == LAYOUT_VIRTIO_MMIO_MAX || n == LAYOUT_GSI_VIRTIO_COUNT)
		return -ENOSPC;
	*base = LAYOUT_VIRTIO_MMIO_START + n * LAYOUT_VIRTIO_MMIO_SIZE;
	*gsi = gsis[n];
	vm->virtio_mmio[n] = (struct acpi_mmio_dev){ *base, LAYOUT_VIRTIO_MMIO_SIZE, *gsi };
	vm->nr_virtio_mmio = n + 1;
	return 0;
}

int vm_register_mmio(struct vm *vm, uint64_t base, uint64_t len, const struct bus_ops *ops, void *opaque)
{
	return bus_add(&vm->mmio, base, len, ops, opaque);
}

int vm_register_pio(struct vm *vm, uint16_t base, uint16_t len, const struct bus_ops *ops, void *opaque)
{
	return bus_add(&vm->pio, base, len, ops, opaque);
}

int vm_ioeventfd(struct vm *vm, int fd, uint64_t addr, uint32_t len, bool datamatch, uint64_t data,
		 bool assign)
{
	struct kvm_ioeventfd io = {
		.datamatch = data,
		.addr = addr,
		.len = len,
		.fd = fd,
		.flags = (datamatch ? KVM_IOEVENTFD_FLAG_DATAMATCH : 0) |
			 (assign ? 0 : KVM_IOEVENTFD_FLAG_DEASSIGN),
	};
	return ioctl(vm->vm_fd, KVM_IOEVENTFD, &io) < 0 ? -errno : 0;
}

int vm_irqfd(struct vm *vm, int fd, uint32_t gsi, bool assign)
{
	struct kvm_irqfd irq = {
		.fd = (uint32_t)fd,
		.gsi = gsi,
		.flags = assign ? 0 : KVM_IRQFD_FLAG_DEASSIGN,
	};
	return ioctl(vm->vm_fd, KVM_IRQFD, &irq) < 0 ? -errno : 0;
}

int vm_irq_line(struct vm *vm, uint32_t gsi, int level)
{
	struct kvm_irq_level irq = { .irq = gsi, .level = (uint32_t)level };
	return ioctl(vm->vm_fd, KVM_IRQ_LINE, &irq) < 0 ? -errno : 0;
}
