/* kconfig.h: what a kernel's configuration must say for the kernel to find ringvm's machine and its devices. */
#ifndef RINGVM_KCONFIG_H
#define RINGVM_KCONFIG_H

#include <stddef.h>
#include <stdio.h>

struct device_kind;
struct ringvm_config;

enum kconfig_need {
	KCONFIG_NEED_Y,  /* built in: needed before any module could load */
	KCONFIG_NEED_YM, /* built in, or a module in the initramfs ringvm makes for a tree */
	KCONFIG_NEED_RECOMMENDED, /* not checked: what a host's userland expects; in the fragment only */
};

/*
 * One kernel option: the machine's (kconfig.c) or a device kind's (its device_kind.kconfig table,
 * in its folder). For a kind's row, when is 0 (needed whenever the kind is used) or bits of the
 * kind's own that its kconfig_uses returns (a part of the kind some configs use: fs's overlay).
 */
struct kconfig_option {
	const char *name; /* without CONFIG_ */
	enum kconfig_need need;
	unsigned int when;
	const char *why;  /* its comment in the fragment */
};

/* What a kind's kconfig_uses returns for a config using it at all; its own row bits go above. */
#define KCONFIG_USED 1u

/*
 * The value of CONFIG_<name> in a .config text (name without the CONFIG_ prefix): 'y', 'm', 's' for
 * any other value (a string or a number), or 0 when unset ("# CONFIG_X is not set" or absent).
 */
char kconfig_value(const char *config, size_t len, const char *name);

/*
 * Check a .config text against what ringvm's guest needs for cfg with the device kinds
 * kinds[0..nr) (devices/kinds.c's table; tests pass their own): ACPI, the 8250 console, devtmpfs,
 * the initramfs, ELF, /proc, /sys, tmpfs always; virtio-mmio when any kind is used, and each used
 * kind's rows (kconfig_uses) as built-in or, where they may be, (with CONFIG_MODULES) modules.
 * cfg NULL: everything every kind may use. Writes the missing options to missing[0..len) as one
 * line ("CONFIG_ACPI=y, CONFIG_VIRTIO_FS=y|m"), machine first, then the kinds in table order,
 * truncated if need be. Returns the number of missing options (0: the kernel will find everything).
 */
int kconfig_check(const char *config, size_t len, const struct device_kind *const *kinds, unsigned int nr,
		  const struct ringvm_config *cfg, char *missing, size_t missing_len);

/* Print the fragment a kernel needs for ringvm with kinds[0..nr) (every option above built in,
   plus what a host's userland under --root / expects of its kernel), one CONFIG_X=y per line with
   comments. */
void kconfig_print_fragment(FILE *f, const struct device_kind *const *kinds, unsigned int nr);

#endif
