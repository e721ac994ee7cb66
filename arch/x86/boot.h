/* boot.h: the Linux x86 boot protocols: bzImage (64-bit entry) and vmlinux ELF (PVH entry). */
#ifndef RINGVM_X86_BOOT_H
#define RINGVM_X86_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include <asm/bootparam.h>

#include "vmm/guest_mem.h"
#include "vmm/image.h"

enum x86_entry_kind {
	X86_ENTRY_LINUX64, /* 64-bit boot protocol: long mode, RSI = boot_params */
	X86_ENTRY_PVH,     /* PVH: 32-bit protected mode, paging off, EBX = hvm_start_info */
};

/* Where the kernel went and how to enter it; filled by x86_load_kernel(). */
struct x86_kernel {
	enum x86_entry_kind kind;
	uint64_t entry;      /* guest-physical entry point */
	uint64_t end;        /* first guest-physical byte after the loaded image and its bss */
	uint32_t cmdline_max; /* longest command line the kernel accepts, without the NUL */
	uint32_t initrd_max;  /* highest address the initrd may end at (bzImage initrd_addr_max) */
	/* bzImage only: the setup header (its first setup_hdr_len bytes as the file has them), copied
	   into boot_params. */
	struct setup_header setup_hdr;
	size_t setup_hdr_len;
};

/*
 * Load a kernel image into guest memory: a bzImage whose header offers the 64-bit entry (protocol
 * >= 2.12, XLF_KERNEL_64), or an ELF64 vmlinux with a PVH (XEN_ELFNOTE_PHYS32_ENTRY) note. Headers
 * are read into locals and checked; each segment (the bzImage's payload, the vmlinux's PT_LOADs)
 * is checked against guest RAM and read straight into it (vmm/image.h); the rest of the file is
 * never read. Returns 0, -ENOEXEC for an image that is neither, -EINVAL for a corrupt one, -ENOMEM
 * when it does not fit, -EIO or another -errno when the file cannot be read. *out keeps nothing of
 * image.
 */
__attribute__((warn_unused_result)) int x86_load_kernel(const struct guest_mem *gm, const struct img *image,
							 struct x86_kernel *out);

/*
 * Choose where the initrd goes: page-aligned, as high in low RAM as allowed, above the kernel.
 * Returns the address or 0 when it does not fit.
 */
uint64_t x86_initrd_addr(const struct guest_mem *gm, const struct x86_kernel *k, uint64_t size);

/* The e820 map (guest RAM around the legacy area and the MMIO hole); returns the entry count. */
struct boot_e820_entry;
unsigned int x86_e820_build(const struct guest_mem *gm, struct boot_e820_entry *tab, unsigned int max);

struct x86_boot_info {
	const char *cmdline;  /* NUL-terminated, already checked against cmdline_max */
	uint64_t initrd_addr; /* 0 when there is none */
	uint64_t initrd_size;
	uint64_t rsdp_addr;   /* ACPI RSDP */
};

/*
 * Write the boot information the entry kind expects: boot_params (zero page) with the setup header,
 * e820 map, command line and initrd for LINUX64; hvm_start_info with its memory map and module list
 * for PVH. Returns 0 or -errno (-E2BIG for a command line longer than the kernel takes).
 */
__attribute__((warn_unused_result)) int x86_write_boot_info(const struct guest_mem *gm,
							     const struct x86_kernel *k,
							     const struct x86_boot_info *info);

#endif
