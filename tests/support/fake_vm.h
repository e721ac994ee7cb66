/* fake_vm.h: a struct vm for unit tests: malloc'd guest RAM, recorded MMIO windows, eventfds, irqfds. */
#ifndef RINGVM_FAKE_VM_H
#define RINGVM_FAKE_VM_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm/vm.h"

/*
 * Implements every function of vmm/vm.h. Guest RAM is one region at guest-physical 0 of the given
 * size (gm_init_from over a zeroed buffer). Registrations are recorded, not acted on: a test reads
 * back the MMIO ops and drives them with fake_vm_mmio_read/write, and plays the guest's kick by
 * writing the recorded ioeventfd (fake_vm_kick). irqfd signals are counted by reading the eventfd.
 */
#define FAKE_VM_MAX 64

struct fake_vm_ioeventfd {
	int fd;
	uint64_t addr;
	uint32_t len;
	bool datamatch;
	uint64_t data;
};

struct fake_vm_irqfd {
	int fd;
	uint32_t gsi;
};

struct fake_vm_mmio {
	uint64_t base, len;
	const struct bus_ops *ops;
	void *opaque;
};

/* size bytes of zeroed RAM at gpa 0. NULL on allocation failure. */
struct vm *fake_vm_create(uint64_t ram_size);
void fake_vm_destroy(struct vm *vm);

/* Host pointer to guest RAM (gpa 0) for the test's driver-side ring builder. */
uint8_t *fake_vm_ram(struct vm *vm);
uint64_t fake_vm_ram_size(struct vm *vm);

/* Recorded registrations (the arrays stay owned by the fake). Removed entries disappear. */
unsigned int fake_vm_mmios(struct vm *vm, const struct fake_vm_mmio **out);
unsigned int fake_vm_ioeventfds(struct vm *vm, const struct fake_vm_ioeventfd **out);
unsigned int fake_vm_irqfds(struct vm *vm, const struct fake_vm_irqfd **out);

/*
 * Everything a transport takes from the VM, summed: virtio-mmio windows handed out
 * (vm_alloc_virtio_mmio, never given back), MMIO regions, ioeventfds and irqfds registered. 0 until
 * something attaches a device: the tests check with it that devices never attach themselves.
 */
unsigned int fake_vm_nr_registered(struct vm *vm);

/* Make vm_ioeventfd fail with -ENOSYS (transports must then fall back to MMIO-trapped notifies). */
void fake_vm_fail_ioeventfd(struct vm *vm, bool fail);

/* Dispatch to the registered window containing addr. -ENOENT when none. len 1, 2, 4 or 8. */
int fake_vm_mmio_read(struct vm *vm, uint64_t addr, void *data, uint32_t len);
int fake_vm_mmio_write(struct vm *vm, uint64_t addr, const void *data, uint32_t len);

/* 32-bit register helpers over the above (what a virtio-mmio driver does). */
uint32_t fake_vm_read32(struct vm *vm, uint64_t addr);
void fake_vm_write32(struct vm *vm, uint64_t addr, uint32_t val);

/*
 * The guest writes val at addr (a QueueNotify): signals the matching ioeventfd like KVM does, or, when
 * none matches, traps to the MMIO window like KVM does. Returns 0 or -ENOENT.
 */
int fake_vm_kick(struct vm *vm, uint64_t addr, uint32_t val);

/*
 * Wait up to timeout_ms for the irqfd of gsi to be signalled; returns the count read (0 on timeout,
 * -ENOENT when no irqfd is registered for gsi).
 */
int fake_vm_wait_irq(struct vm *vm, uint32_t gsi, int timeout_ms);

#endif
