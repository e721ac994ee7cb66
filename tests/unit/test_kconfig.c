/* test_kconfig.c: the .config check names exactly the missing options, for what a run uses. */
#include <string.h>

#include "tests/unit/tap.h"
#include "vmm/kconfig.h"

/* Everything ringvm needs, as built-ins. */
static const char full[] =
	"#\n# Automatically generated file; DO NOT EDIT.\n#\nCONFIG_64BIT=y\nCONFIG_ACPI=y\nCONFIG_PCI=y\n"
	"CONFIG_BLK_DEV_INITRD=y\nCONFIG_BINFMT_ELF=y\nCONFIG_X86_IOPL_IOPERM=y\nCONFIG_TTY=y\nCONFIG_SERIAL_8250=y\n"
	"CONFIG_SERIAL_8250_CONSOLE=y\nCONFIG_PROC_FS=y\nCONFIG_SYSFS=y\nCONFIG_DEVTMPFS=y\n"
	"CONFIG_TMPFS=y\nCONFIG_VIRTIO_MENU=y\nCONFIG_VIRTIO_MMIO=y\nCONFIG_FUSE_FS=y\nCONFIG_VIRTIO_FS=y\n"
	"CONFIG_OVERLAY_FS=y\nCONFIG_BLOCK=y\nCONFIG_BLK_DEV=y\nCONFIG_VIRTIO_BLK=y\n";

int main(void)
{
	char missing[512];
	const unsigned int all = KCONFIG_USE_SHARES | KCONFIG_USE_OVERLAY | KCONFIG_USE_DISKS;
	const char cfg[] = "CONFIG_A=y\nCONFIG_AB=m\n# CONFIG_C is not set\nCONFIG_S=\"x y\"\nCONFIG_N=32\nCONFIG_D=n\n"
			   "CONFIG_LAST=y";
	TAP_CHECK(kconfig_value(cfg, strlen(cfg), "A") == 'y', "=y");
	TAP_CHECK(kconfig_value(cfg, strlen(cfg), "AB") == 'm', "=m, and A is not taken for AB");
	TAP_CHECK(kconfig_value(cfg, strlen(cfg), "C") == 0, "'is not set' is unset");
	TAP_CHECK(kconfig_value(cfg, strlen(cfg), "S") == 's' && kconfig_value(cfg, strlen(cfg), "N") == 's',
		  "strings and numbers");
	TAP_CHECK(kconfig_value(cfg, strlen(cfg), "D") == 0 && kconfig_value(cfg, strlen(cfg), "ZZ") == 0,
		  "=n and absent are unset");
	TAP_CHECK(kconfig_value(cfg, strlen(cfg), "LAST") == 'y', "a last line without a newline");
	TAP_CHECK(kconfig_value(cfg, 10, "AB") == 0, "nothing is read past len");

	TAP_CHECK(kconfig_check(full, strlen(full), all, missing, sizeof(missing)) == 0 && missing[0] == '\0',
		  "a complete config passes");
	TAP_CHECK(kconfig_check("", 0, 0, missing, sizeof(missing)) == 13 &&
			  strstr(missing, "CONFIG_ACPI=y") && strstr(missing, "CONFIG_SERIAL_8250=y") &&
			  strstr(missing, "CONFIG_DEVTMPFS=y") && !strstr(missing, "VIRTIO"),
		  "an empty config misses the always-needed options, and no device it does not use");

	/* Drop ACPI and make virtio-fs a module without CONFIG_MODULES: both reported. */
	char c[sizeof(full) + 64];
	strcpy(c, full);
	memcpy(strstr(c, "CONFIG_ACPI=y"), "CONFIG_ACPX=y", 13);
	memcpy(strstr(c, "CONFIG_VIRTIO_FS=y"), "CONFIG_VIRTIO_FS=m", 18);
	TAP_CHECK(kconfig_check(c, strlen(c), all, missing, sizeof(missing)) == 2 &&
			  !strcmp(missing, "CONFIG_ACPI=y, CONFIG_VIRTIO_FS=y"),
		  "missing ACPI and a module without CONFIG_MODULES, named in one line");
	strcat(c, "CONFIG_MODULES=y\n");
	TAP_CHECK(kconfig_check(c, strlen(c), all, missing, sizeof(missing)) == 1 && !strcmp(missing, "CONFIG_ACPI=y"),
		  "with CONFIG_MODULES a module is enough for virtio-fs");
	memcpy(strstr(c, "CONFIG_SERIAL_8250=y"), "CONFIG_SERIAL_8250=m", 20);
	TAP_CHECK(kconfig_check(c, strlen(c), all, missing, sizeof(missing)) == 2 &&
			  strstr(missing, "CONFIG_SERIAL_8250=y"),
		  "the console must be built in, even with modules");
	TAP_CHECK(kconfig_check(c, strlen(c), 0, missing, sizeof(missing)) == 2,
		  "uses without devices: the same console and ACPI");

	/* A run without disks does not need virtio-blk. */
	strcpy(c, full);
	memcpy(strstr(c, "CONFIG_VIRTIO_BLK=y"), "CONFIG_VIRTIO_BLX=y", 19);
	TAP_CHECK(kconfig_check(c, strlen(c), KCONFIG_USE_SHARES | KCONFIG_USE_OVERLAY, missing, sizeof(missing)) == 0,
		  "no --disk: virtio-blk is not asked for");
	TAP_CHECK(kconfig_check(c, strlen(c), all, missing, sizeof(missing)) == 1 &&
			  !strcmp(missing, "CONFIG_VIRTIO_BLK=y"),
		  "with --disk: virtio-blk is");
	char tiny[8];
	TAP_CHECK(kconfig_check("", 0, all, tiny, sizeof(tiny)) > 13 && strlen(tiny) == 7,
		  "a short buffer is truncated, never overrun");
	return tap_done();
}
