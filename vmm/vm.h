/* vm.h: what devices may ask of the virtual machine. Implemented by vmm/vm.c; unit tests link a fake. */
#ifndef RINGVM_VM_H
#define RINGVM_VM_H

#include <stdbool.h>
#include <stdint.h>

#include "bus.h"
#include "guest_mem.h"

struct vm;

/* Guest RAM; valid for the VM's whole life. */
const struct guest_mem *vm_guest_mem(struct vm *vm);

/*
 * Reserve the next virtio-mmio window and its interrupt (vmm/layout.h). The VM remembers it, so the
 * ACPI DSDT and the kernel command line (virtio_mmio.device=) describe it. Setup time only.
 */
__attribute__((warn_unused_result)) int vm_alloc_virtio_mmio(struct vm *vm, uint64_t *base,
							     uint32_t *gsi);

/* Map a register window on the MMIO or port-I/O bus. Setup time only (before vCPUs run). */
__attribute__((warn_unused_result)) int vm_register_mmio(struct vm *vm, uint64_t base, uint64_t len,
							 const struct bus_ops *ops, void *opaque);
__attribute__((warn_unused_result)) int vm_register_pio(struct vm *vm, uint16_t base, uint16_t len,
							const struct bus_ops *ops, void *opaque);

/*
 * KVM_IOEVENTFD: a guest write of `len` bytes at MMIO address `addr` (matching `data` when
 * datamatch is true) signals eventfd `fd` without a userspace exit. assign=false removes it.
 * Any thread, any time.
 */
__attribute__((warn_unused_result)) int vm_ioeventfd(struct vm *vm, int fd, uint64_t addr,
						     uint32_t len, bool datamatch, uint64_t data,
						     bool assign);

/* KVM_IRQFD: a write to eventfd `fd` raises an edge on IOAPIC pin `gsi`. assign=false removes it. */
__attribute__((warn_unused_result)) int vm_irqfd(struct vm *vm, int fd, uint32_t gsi, bool assign);

/* Drive an IOAPIC/PIC input line (level 1 or 0), for emulated legacy devices. */
int vm_irq_line(struct vm *vm, uint32_t gsi, int level);

#endif
