/* fake_vm.c: vmm/vm.h over malloc'd RAM for unit tests: registrations recorded, kicks and IRQs via eventfds. */
#define _GNU_SOURCE
#include "tests/support/fake_vm.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/layout.h"

struct vm {
	struct guest_mem gm;
	uint8_t *ram;
	uint64_t ram_size;
	unsigned int nr_virtio;
	bool fail_ioeventfd;
	pthread_mutex_t lock; /* the arrays below: tests may register from several threads */
	struct fake_vm_mmio mmio[FAKE_VM_MAX];
	unsigned int nr_mmio;
	struct fake_vm_ioeventfd ioev[FAKE_VM_MAX];
	unsigned int nr_ioev;
	struct fake_vm_irqfd irq[FAKE_VM_MAX];
	unsigned int nr_irq;
};

struct vm *fake_vm_create(uint64_t ram_size)
{
	struct vm *vm = calloc(1, sizeof(*vm));
	if (!vm)
		return NULL;
	vm->ram = calloc(1, ram_size);
	struct gm_region r = { .gpa = 0, .size = ram_size, .host = vm->ram, .offset = 0 };
	if (!vm->ram || gm_init_from(&vm->gm, &r, 1) < 0) {
		free(vm->ram);
		free(vm);
		return NULL;
	}
	vm->ram_size = ram_size;
	pthread_mutex_init(&vm->lock, NULL);
	return vm;
}

void fake_vm_destroy(struct vm *vm)
{
	if (!vm)
		return;
	pthread_mutex_destroy(&vm->lock);
	free(vm->ram);
	free(vm);
}

uint8_t *fake_vm_ram(struct vm *vm)
{
	return vm->ram;
}

uint64_t fake_vm_ram_size(struct vm *vm)
{
	return vm->ram_size;
}

void fake_vm_fail_ioeventfd(struct vm *vm, bool fail)
{
	vm->fail_ioeventfd = fail;
}

const struct guest_mem *vm_guest_mem(struct vm *vm)
{
	return &vm->gm;
}

int vm_alloc_virtio_mmio(struct vm *vm, uint64_t *base, uint32_t *gsi)
{
	static const uint32_t gsis[] = LAYOUT_GSI_VIRTIO;
	if (vm->nr_virtio >= LAYOUT_VIRTIO_MMIO_MAX || vm->nr_virtio >= LAYOUT_GSI_VIRTIO_COUNT)
		return -ENOSPC;
	*base = LAYOUT_VIRTIO_MMIO_START + vm->nr_virtio * LAYOUT_VIRTIO_MMIO_SIZE;
	*gsi = gsis[vm->nr_virtio];
	vm->nr_virtio++;
	return 0;
}

int vm_register_mmio(struct vm *vm, uint64_t base, uint64_t len, const struct bus_ops *ops,
		     void *opaque)
{
	if (len == 0)
		return -EINVAL;
	pthread_mutex_lock(&vm->lock);
	int err = vm->nr_mmio < FAKE_VM_MAX ? 0 : -ENOSPC;
	if (!err)
		vm->mmio[vm->nr_mmio++] = (struct fake_vm_mmio){ base, len, ops, opaque };
	pthread_mutex_unlock(&vm->lock);
	return err;
}

int vm_register_pio(struct vm *vm, uint16_t base, uint16_t len, const struct bus_ops *ops,
		    void *opaque)
{
	return -ENOTSUP;
}

int vm_ioeventfd(struct vm *vm, int fd, uint64_t addr, uint32_t len, bool datamatch, uint64_t data,
		 bool assign)
{
	if (vm->fail_ioeventfd)
		return -ENOSYS;
	pthread_mutex_lock(&vm->lock);
	int err = 0;
	if (assign) {
		if (vm->nr_ioev < FAKE_VM_MAX)
			vm->ioev[vm->nr_ioev++] =
				(struct fake_vm_ioeventfd){ fd, addr, len, datamatch, data };
		else
			err = -ENOSPC;
	} else {
		err = -ENOENT;
		for (unsigned int i = 0; i < vm->nr_ioev; i++) {
			struct fake_vm_ioeventfd *e = &vm->ioev[i];
			if (e->fd == fd && e->addr == addr && e->datamatch == datamatch &&
			    e->data == data) {
				vm->ioev[i] = vm->ioev[--vm->nr_ioev];
				err = 0;
				break;
			}
		}
	}
	pthread_mutex_unlock(&vm->lock);
	return err;
}

int vm_irqfd(struct vm *vm, int fd, uint32_t gsi, bool assign)
{
	pthread_mutex_lock(&vm->lock);
	int err = 0;
	if (assign) {
		if (vm->nr_irq < FAKE_VM_MAX)
			vm->irq[vm->nr_irq++] = (struct fake_vm_irqfd){ fd, gsi };
		else
			err = -ENOSPC;
	} else {
		err = -ENOENT;
		for (unsigned int i = 0; i < vm->nr_irq; i++) {
			if (vm->irq[i].fd == fd && vm->irq[i].gsi == gsi) {
				vm->irq[i] = vm->irq[--vm->nr_irq];
				err = 0;
				break;
			}
		}
	}
	pthread_mutex_unlock(&vm->lock);
	return err;
}

int vm_irq_line(struct vm *vm, uint32_t gsi, int level)
{
	return 0;
}

unsigned int fake_vm_mmios(struct vm *vm, const struct fake_vm_mmio **out)
{
	*out = vm->mmio;
	return vm->nr_mmio;
}

unsigned int fake_vm_ioeventfds(struct vm *vm, const struct fake_vm_ioeventfd **out)
{
	*out = vm->ioev;
	return vm->nr_ioev;
}

unsigned int fake_vm_irqfds(struct vm *vm, const struct fake_vm_irqfd **out)
{
	*out = vm->irq;
	return vm->nr_irq;
}

unsigned int fake_vm_nr_registered(struct vm *vm)
{
	pthread_mutex_lock(&vm->lock);
	unsigned int n = vm->nr_virtio + vm->nr_mmio + vm->nr_ioev + vm->nr_irq;
	pthread_mutex_unlock(&vm->lock);
	return n;
}

static const struct fake_vm_mmio *fake_vm_find(struct vm *vm, uint64_t addr, uint32_t len)
{
	for (unsigned int i = 0; i < vm->nr_mmio; i++) {
		const struct fake_vm_mmio *m = &vm->mmio[i];
		if (addr >= m->base && addr - m->base < m->len && len <= m->len - (addr - m->base))
			return m;
	}
	return NULL;
}

int fake_vm_mmio_read(struct vm *vm, uint64_t addr, void *data, uint32_t len)
{
	const struct fake_vm_mmio *m = fake_vm_find(vm, addr, len);
	if (!m) {
		memset(data, 0xff, len);
		return -ENOENT;
	}
	m->ops->read(m->opaque, addr - m->base, data, len);
	return 0;
}

int fake_vm_mmio_write(struct vm *vm, uint64_t addr, const void *data, uint32_t len)
{
	const struct fake_vm_mmio *m = fake_vm_find(vm, addr, len);
	if (!m)
		return -ENOENT;
	m->ops->write(m->opaque, addr - m->base, data, len);
	return 0;
}

uint32_t fake_vm_read32(struct vm *vm, uint64_t addr)
{
	uint32_t v;
	(void)fake_vm_mmio_read(vm, addr, &v, 4);
	return v;
}

void fake_vm_write32(struct vm *vm, uint64_t addr, uint32_t val)
{
	(void)fake_vm_mmio_write(vm, addr, &val, 4);
}

int fake_vm_kick(struct vm *vm, uint64_t addr, uint32_t val)
{
	int fd = -1;
	pthread_mutex_lock(&vm->lock);
	for (unsigned int i = 0; i < vm->nr_ioev; i++) {
		const struct fake_vm_ioeventfd *e = &vm->ioev[i];
		if (e->addr == addr && e->len == 4 && (!e->datamatch || e->data == val)) {
			fd = e->fd;
			break;
		}
	}
	pthread_mutex_unlock(&vm->lock);
	if (fd < 0)
		return fake_vm_mmio_write(vm, addr, &val, 4);
	uint64_t one = 1;
	return write(fd, &one, sizeof(one)) == sizeof(one) ? 0 : -errno;
}

int fake_vm_wait_irq(struct vm *vm, uint32_t gsi, int timeout_ms)
{
	int fd = -1;
	pthread_mutex_lock(&vm->lock);
	for (unsigned int i = 0; i < vm->nr_irq; i++)
		if (vm->irq[i].gsi == gsi)
			fd = vm->irq[i].fd;
	pthread_mutex_unlock(&vm->lock);
	if (fd < 0)
		return -ENOENT;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	if (poll(&p, 1, timeout_ms) <= 0)
		return 0;
	uint64_t count;
	if (read(fd, &count, sizeof(count)) != sizeof(count))
		return 0;
	return (int)count;
}
