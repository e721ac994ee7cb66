/* layout.h: every guest-physical address and legacy port ringvm uses, in one place. */
#ifndef RINGVM_LAYOUT_H
#define RINGVM_LAYOUT_H

/*
 * Guest physical map (x86-64):
 *
 *   0x0000_0000  real-mode IVT/BDA (RAM, left zero)
 *   0x0000_7000  boot_params ("zero page") or PVH hvm_start_info
 *   0x0000_9000  long-mode page tables (PML4, PDPT, PD: identity map of the first 4 GiB, 2 MiB pages)
 *   0x0000_0500  GDT
 *   0x0002_0000  kernel command line (up to LAYOUT_CMDLINE_MAX)
 *   0x0009_fc00  end of low RAM (EBDA and BIOS area above are reserved in e820)
 *   0x000e_0000  ACPI tables (RSDP first, then XSDT, FADT, MADT, DSDT), reserved in e820
 *   0x0010_0000  kernel (bzImage protected-mode part or vmlinux segments)
 *   ...          RAM up to min(memory, LAYOUT_MMIO_HOLE_START); initrd at the top of low RAM
 *   0xd000_0000  virtio-mmio windows, LAYOUT_VIRTIO_MMIO_SIZE each
 *   0xfec0_0000  IOAPIC (in-kernel)
 *   0xfee0_0000  LAPIC (in-kernel)
 *   4 GiB        RAM above the hole, if memory > LAYOUT_MMIO_HOLE_START
 */
#define LAYOUT_ZERO_PAGE 0x7000ULL
#define LAYOUT_GDT 0x500ULL
#define LAYOUT_PML4 0x9000ULL
#define LAYOUT_PDPT 0xa000ULL
#define LAYOUT_PD 0xb000ULL /* four pages: 0xb000..0xefff */
#define LAYOUT_PVH_START_INFO 0x6000ULL
#define LAYOUT_PVH_MEMMAP 0x6100ULL  /* up to LAYOUT_PVH_MEMMAP_MAX entries */
#define LAYOUT_PVH_MEMMAP_MAX 16
#define LAYOUT_PVH_MODLIST 0x6400ULL
#define LAYOUT_BOOT_STACK 0x8ff0ULL
#define LAYOUT_CMDLINE 0x20000ULL
#define LAYOUT_CMDLINE_MAX 0x10000ULL
#define LAYOUT_EBDA_START 0x9fc00ULL
#define LAYOUT_ACPI_START 0xe0000ULL
#define LAYOUT_ACPI_SIZE 0x20000ULL /* up to 1 MiB */
#define LAYOUT_HIGH_MEM_START 0x100000ULL /* kernel load address */

#define LAYOUT_MMIO_HOLE_START 0xc0000000ULL
#define LAYOUT_MMIO_HOLE_END 0x100000000ULL
#define LAYOUT_VIRTIO_MMIO_START 0xd0000000ULL
#define LAYOUT_VIRTIO_MMIO_SIZE 0x1000ULL
#define LAYOUT_VIRTIO_MMIO_MAX 32
#define LAYOUT_IOAPIC_ADDR 0xfec00000ULL
#define LAYOUT_LAPIC_ADDR 0xfee00000ULL

/*
 * Interrupts (IOAPIC GSIs; KVM's in-kernel IOAPIC has 24 pins). 0-15 are the ISA IRQs: the PIT
 * (0, routed to pin 2) and COM1 (4) are the only ISA devices, and hardware-reduced ACPI has no SCI,
 * so virtio-mmio devices take pins 16-23 first, then the ISA pins nothing here uses (an ISA pin is
 * edge-triggered and active-high by default, as the DSDT describes every virtio-mmio interrupt).
 * One pin per device, never shared: LAYOUT_GSI_VIRTIO lists them in the order they are handed out.
 */
#define LAYOUT_GSI_COM1 4
#define LAYOUT_GSI_VIRTIO { 16, 17, 18, 19, 20, 21, 22, 23, 5, 6, 7, 10, 11, 12, 13, 14, 15 }
#define LAYOUT_GSI_VIRTIO_COUNT 17
#define LAYOUT_GSI_MAX 23

/* I/O ports */
#define LAYOUT_PORT_COM1 0x3f8
#define LAYOUT_PORT_I8042 0x60 /* 0x60 and 0x64: only the reset command (0xfe on 0x64) is emulated */
#define LAYOUT_PORT_PVPANIC 0x505 /* QEMU's pvpanic (ACPI QEMU0001), 1 byte; QEMU's port too */
#define LAYOUT_PORT_ACPI_SLEEP_CTL 0x600 /* FADT SLEEP_CONTROL_REG, 1 byte */
#define LAYOUT_PORT_ACPI_SLEEP_STS 0x601 /* FADT SLEEP_STATUS_REG, 1 byte */
#define LAYOUT_PORT_ACPI_RESET 0x602     /* FADT RESET_REG, 1 byte, reset value LAYOUT_ACPI_RESET_VALUE */
#define LAYOUT_ACPI_RESET_VALUE 0x01
#define LAYOUT_ACPI_S5_TYPE 5 /* SLP_TYP written for S5 (soft off); \_S5 package in the DSDT says so */

#endif
