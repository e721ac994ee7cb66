/* kconfig.h: what a kernel's configuration must say for the kernel to find ringvm's machine. */
#ifndef RINGVM_KCONFIG_H
#define RINGVM_KCONFIG_H

#include <stddef.h>
#include <stdio.h>

/* What a run uses, so that only what it needs is asked of the kernel. */
enum kconfig_use {
	KCONFIG_USE_SHARES = 1 << 0,  /* --share or --root: virtio-fs over FUSE */
	KCONFIG_USE_OVERLAY = 1 << 1, /* --root without rw: an overlay over the read-only share */
	KCONFIG_USE_DISKS = 1 << 2,   /* --disk: virtio-blk */
	KCONFIG_USE_STREAMS = 1 << 3, /* a command without a terminal: its stdio over virtio-console */
};

/*
 * The value of CONFIG_<name> in a .config text (name without the CONFIG_ prefix): 'y', 'm', 's' for
 * any other value (a string or a number), or 0 when unset ("# CONFIG_X is not set" or absent).
 */
char kconfig_value(const char *config, size_t len, const char *name);

/*
 * Check a .config text against what ringvm's guest needs for `uses` (enum kconfig_use bits): ACPI,
 * the 8250 console, devtmpfs, the initramfs, ELF, /proc, /sys, tmpfs always; virtio-mmio and the
 * devices a run uses as built-in or (with CONFIG_MODULES) modules. Writes the missing options to
 * missing[0..len) as one line ("CONFIG_ACPI=y, CONFIG_VIRTIO_FS=y|m"), truncated if need be.
 * Returns the number of missing options (0: the kernel will find everything).
 */
int kconfig_check(const char *config, size_t len, unsigned int uses, char *missing, size_t missing_len);

/* Print the fragment a kernel needs for ringvm (every option above built in, plus what a host's
   userland under --root / expects of its kernel), one CONFIG_X=y per line with comments. */
void kconfig_print_fragment(FILE *f);

#endif
