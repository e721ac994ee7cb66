/* legacy.c: power-off, reset, exit-status and pvpanic ports, each ending the run with its own reason. */
#include "legacy.h"

#include <string.h>

#include <misc/pvpanic.h>

#include "guest/protocol.h"
#include "vmm/layout.h"
#include "vmm/machine.h"

/* ACPI 6.4, 4.8.3.7 Sleep Control Register: SLP_TYP in bits 4:2, SLP_EN in bit 5. */
#define ACPI_SLEEP_TYP(v) (((v) >> 2) & 0x7)
#define ACPI_SLEEP_EN 0x20
#define I8042_CMD_RESET 0xfe

static uint8_t first_byte(const void *data)
{
	uint8_t v;
	memcpy(&v, data, 1);
	return v;
}

static void acpi_read(void *opaque, uint64_t offset, void *data, uint32_t len)
{
	/* Sleep status reads as "not woken"; nothing else is readable. */
	memset(data, 0, len);
}

static void acpi_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	struct vm *vm = opaque;
	uint8_t v = first_byte(data);
	uint16_t port = (uint16_t)(LAYOUT_PORT_ACPI_SLEEP_CTL + offset);
	if (port == LAYOUT_PORT_ACPI_SLEEP_CTL && (v & ACPI_SLEEP_EN) &&
	    ACPI_SLEEP_TYP(v) == LAYOUT_ACPI_S5_TYPE)
		vm_request_stop(vm, VM_STOP_POWEROFF, 0, "guest powered off");
	else if (port == LAYOUT_PORT_ACPI_RESET && v == LAYOUT_ACPI_RESET_VALUE)
		vm_request_stop(vm, VM_STOP_RESET, 0, "guest reset");
}

static const struct bus_ops acpi_ops = { .read = acpi_read, .write = acpi_write };

static void i8042_read(void *opaque, uint64_t offset, void *data, uint32_t len)
{
	/* Status 0: both buffers empty, so a reset loop polling for "input buffer empty" proceeds. */
	memset(data, 0, len);
}

static void i8042_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	struct vm *vm = opaque;
	/* Port 0x64 is offset 4 of the 0x60..0x64 window. */
	if (offset == 4 && first_byte(data) == I8042_CMD_RESET)
		vm_request_stop(vm, VM_STOP_RESET, 0, "guest reset (8042)");
}

static const struct bus_ops i8042_ops = { .read = i8042_read, .write = i8042_write };

static void exit_port_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	struct vm *vm = opaque;
	if (offset == RINGVM_BOOT_PORT - RINGVM_EXIT_PORT) {
		uint64_t none = 0;
		atomic_compare_exchange_strong(&vm->t_init, &none, vm_now_ns());
		return;
	}
	int status = first_byte(data);
	vm_request_stop(vm, VM_STOP_EXIT_STATUS, status, "guest command exited with status %d", status);
}

static const struct bus_ops exit_port_ops = { .read = acpi_read, .write = exit_port_write };

/*
 * QEMU's pvpanic device, as Linux's pvpanic-mmio driver finds it (ACPI QEMU0001 with an I/O port;
 * guest/guest.mk loads the module first of all). The driver reads the capability byte when it binds
 * and writes PVPANIC_PANICKED from the kernel's panic notifier: a channel only the kernel uses
 * (user space would need the port's I/O permission, i.e. root, to touch it). Crash-kernel loads are
 * not offered: ringvm has no kdump to wait for.
 */
static void pvpanic_read(void *opaque, uint64_t offset, void *data, uint32_t len)
{
	struct vm *vm = opaque;
	memset(data, 0, len);
	((uint8_t *)data)[0] = PVPANIC_PANICKED;
	atomic_store(&vm->pvpanic_bound, true);
}

static void pvpanic_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	struct vm *vm = opaque;
	if (first_byte(data) & PVPANIC_PANICKED)
		vm_request_stop(vm, VM_STOP_PANIC, 0, "guest kernel panic");
}

static const struct bus_ops pvpanic_ops = { .read = pvpanic_read, .write = pvpanic_write };

int x86_legacy_register(struct vm *vm)
{
	int ret = vm_register_pio(vm, LAYOUT_PORT_ACPI_SLEEP_CTL, 3, &acpi_ops, vm);
	if (!ret)
		ret = vm_register_pio(vm, LAYOUT_PORT_I8042, 5, &i8042_ops, vm);
	if (!ret)
		ret = vm_register_pio(vm, RINGVM_EXIT_PORT, 2, &exit_port_ops, vm);
	if (!ret)
		ret = vm_register_pio(vm, LAYOUT_PORT_PVPANIC, 1, &pvpanic_ops, vm);
	return ret;
}
