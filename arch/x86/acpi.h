/* acpi.h: the ACPI tables (RSDP, XSDT, FADT, MADT, DSDT) through which Linux finds ringvm's machine. */
#ifndef RINGVM_ACPI_H
#define RINGVM_ACPI_H

#include <stddef.h>
#include <stdint.h>

/* A virtio-mmio device: its register window and the IOAPIC pin (GSI) its irqfd pulses. */
struct acpi_mmio_dev {
	uint64_t base; /* below 4 GiB (described with Memory32Fixed) */
	uint64_t size;
	uint32_t gsi;  /* <= LAYOUT_GSI_MAX */
};

struct acpi_config {
	unsigned int nr_cpus;                  /* 1..255: one enabled LAPIC each, APIC IDs 0..n-1 */
	const struct acpi_mmio_dev *mmio_devs; /* described in the DSDT as "LNRO0005" devices */
	unsigned int nr_mmio_devs;             /* 0..ACPI_MAX_MMIO_DEVS */
};

/* Device names are V000..VFFF (hex index), so at most this many. */
#define ACPI_MAX_MMIO_DEVS 4096

/*
 * Build RSDP, XSDT, FADT, MADT and DSDT into buf, which the caller copies to guest-physical address
 * gpa (LAYOUT_ACPI_START; 16-byte aligned). The RSDP is at offset 0 of buf; every pointer between
 * tables is gpa + offset. The FADT is hardware-reduced: power-off writes SLP_TYP
 * (LAYOUT_ACPI_S5_TYPE) << 2 | SLP_EN (1 << 5) to LAYOUT_PORT_ACPI_SLEEP_CTL, reboot writes
 * LAYOUT_ACPI_RESET_VALUE to LAYOUT_PORT_ACPI_RESET -- but only with "reboot=acpi" on the kernel
 * command line: on a hardware-reduced machine Linux's default is EFI, then a real-mode BIOS jump.
 *
 * Returns the number of bytes used (and buf beyond them is untouched), -ENOSPC if len is too small
 * (nothing is written at or past buf[len]), or -EINVAL for a config out of range. Pure: no I/O, no
 * globals; called once by the boot code before the first KVM_RUN.
 */
__attribute__((warn_unused_result)) int acpi_build(const struct acpi_config *cfg, void *buf, size_t len,
						   uint64_t gpa);

#endif
