/* test_kconfig.c: the .config check names exactly the missing options, for what a run uses: the machine's, then each device kind's (fake kinds, then the real table). */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/kind.h"
#include "include/ringvm.h"
#include "tests/unit/tap.h"
#include "vmm/kconfig.h"

/* Everything ringvm needs, as built-ins. */
static const char full[] =
	"#\n# Automatically generated file; DO NOT EDIT.\n#\nCONFIG_64BIT=y\nCONFIG_ACPI=y\nCONFIG_PCI=y\n"
	"CONFIG_BLK_DEV_INITRD=y\nCONFIG_BINFMT_ELF=y\nCONFIG_X86_IOPL_IOPERM=y\nCONFIG_TTY=y\nCONFIG_SERIAL_8250=y\n"
	"CONFIG_SERIAL_8250_CONSOLE=y\nCONFIG_PROC_FS=y\nCONFIG_SYSFS=y\nCONFIG_DEVTMPFS=y\n"
	"CONFIG_TMPFS=y\nCONFIG_VIRTIO_MENU=y\nCONFIG_VIRTIO_MMIO=y\nCONFIG_FUSE_FS=y\nCONFIG_VIRTIO_FS=y\n"
	"CONFIG_OVERLAY_FS=y\nCONFIG_BLOCK=y\nCONFIG_BLK_DEV=y\nCONFIG_VIRTIO_BLK=y\n";

/* Two fake kinds: "a" uses A1 always and A2 only with its bit 2; "b" has no rows but devices. */
static const struct kconfig_option fake_a_rows[] = {
	{ "A1", KCONFIG_NEED_YM, 0, "a's driver" },
	{ "A2", KCONFIG_NEED_Y, KCONFIG_USED << 1, "a's extra" },
};

static unsigned int fake_a_uses(const struct ringvm_config *cfg)
{
	return cfg->nr_disks ? KCONFIG_USED | (cfg->nr_disks > 1 ? KCONFIG_USED << 1 : 0) : 0;
}

static unsigned int fake_b_uses(const struct ringvm_config *cfg)
{
	return cfg->nr_shares ? KCONFIG_USED : 0;
}

static const struct device_kind fake_a = { .name = "a", .kconfig = fake_a_rows, .nr_kconfig = 2,
					   .kconfig_uses = fake_a_uses };
static const struct device_kind fake_b = { .name = "b", .kconfig_uses = fake_b_uses };
static const struct device_kind *const fakes[] = { &fake_a, &fake_b };

/* The machine's rows for a run with devices, as built-ins. */
#define MACHINE                                                                                    \
	"CONFIG_64BIT=y\nCONFIG_ACPI=y\nCONFIG_PCI=y\nCONFIG_BLK_DEV_INITRD=y\nCONFIG_BINFMT_ELF=y\n"      \
	"CONFIG_X86_IOPL_IOPERM=y\nCONFIG_TTY=y\nCONFIG_SERIAL_8250=y\nCONFIG_SERIAL_8250_CONSOLE=y\n"    \
	"CONFIG_PROC_FS=y\nCONFIG_SYSFS=y\nCONFIG_DEVTMPFS=y\nCONFIG_TMPFS=y\nCONFIG_VIRTIO_MENU=y\n"    \
	"CONFIG_VIRTIO_MMIO=y\n"

static void test_fake_kinds(void)
{
	char missing[512];
	struct ringvm_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	const char *machine = MACHINE;
	TAP_CHECK(kconfig_check(machine, strlen(machine), fakes, 2, &cfg, missing, sizeof(missing)) == 0,
		  "fake kinds, none used: the machine's options are enough");
	cfg.nr_disks = 1;
	TAP_CHECK(kconfig_check(machine, strlen(machine), fakes, 2, &cfg, missing, sizeof(missing)) == 1 &&
			  !strcmp(missing, "CONFIG_A1=y"),
		  "a kind used: its unconditional row, not the one for a part it does not use");
	cfg.nr_disks = 2;
	TAP_CHECK(kconfig_check(machine, strlen(machine), fakes, 2, &cfg, missing, sizeof(missing)) == 2 &&
			  !strcmp(missing, "CONFIG_A1=y, CONFIG_A2=y"),
		  "... and the row of the part it uses, in the kind's order");
	TAP_CHECK(kconfig_check(machine, strlen(machine), fakes, 2, NULL, missing, sizeof(missing)) == 2,
		  "without a config: every row of every kind");
	const char *bare = "CONFIG_64BIT=y\nCONFIG_ACPI=y\nCONFIG_PCI=y\nCONFIG_BLK_DEV_INITRD=y\nCONFIG_BINFMT_ELF=y\n"
			   "CONFIG_X86_IOPL_IOPERM=y\nCONFIG_TTY=y\nCONFIG_SERIAL_8250=y\nCONFIG_SERIAL_8250_CONSOLE=y\n"
			   "CONFIG_PROC_FS=y\nCONFIG_SYSFS=y\nCONFIG_DEVTMPFS=y\nCONFIG_TMPFS=y\n";
	memset(&cfg, 0, sizeof(cfg));
	TAP_CHECK(kconfig_check(bare, strlen(bare), fakes, 2, &cfg, missing, sizeof(missing)) == 0,
		  "no kind used: virtio-mmio is not asked for");
	cfg.nr_shares = 1;
	TAP_CHECK(kconfig_check(bare, strlen(bare), fakes, 2, &cfg, missing, sizeof(missing)) == 2 &&
			  !strcmp(missing, "CONFIG_VIRTIO_MENU=y, CONFIG_VIRTIO_MMIO=y"),
		  "a kind without rows of its own, used: the machine's virtio-mmio is");
	TAP_CHECK(kconfig_check(bare, strlen(bare), fakes, 0, NULL, missing, sizeof(missing)) == 0,
		  "no kinds at all: nothing but the machine's own");
}

/* The fragment holds every row: the machine's, each kind's, then the recommended ones. */
static void test_fragment(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	kconfig_print_fragment(f, device_kinds, nr_device_kinds);
	fclose(f);
	bool all = strstr(text, "CONFIG_ACPI=y\n") && strstr(text, "CONFIG_VIRTIO_MMIO=y\n") &&
		   strstr(text, "CONFIG_PVH=y\n");
	unsigned int rows = 0;
	for (unsigned int k = 0; k < nr_device_kinds; k++)
		for (unsigned int i = 0; i < device_kinds[k]->nr_kconfig; i++) {
			char line[96];
			snprintf(line, sizeof(line), "\nCONFIG_%s=y\n", device_kinds[k]->kconfig[i].name);
			all &= strstr(text, line) != NULL;
			rows++;
		}
	TAP_CHECK(all && rows >= 7, "the fragment has the machine's options and every kind's");
	TAP_CHECK(strstr(text, "CONFIG_VIRTIO_MMIO=y") < strstr(text, "CONFIG_VIRTIO_FS=y") &&
			  strstr(text, "CONFIG_VIRTIO_CONSOLE=y") < strstr(text, "# what a host's userland"),
		  "... the kinds' after the machine's, before the recommended ones");
	free(text);
}

/* What each real kind says it needs (its folder's table). */
static void test_real_kinds(void)
{
	bool named = true, unused = true;
	struct ringvm_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	for (unsigned int k = 0; k < nr_device_kinds; k++) {
		const struct device_kind *kind = device_kinds[k];
		named &= kind->kconfig_uses != NULL;
		for (unsigned int i = 0; i < kind->nr_kconfig; i++)
			named &= kind->kconfig[i].name && kind->kconfig[i].why &&
				 kind->kconfig[i].need != KCONFIG_NEED_RECOMMENDED;
		unused &= !kind->kconfig_uses || kind->kconfig_uses(&cfg) == 0;
	}
	TAP_CHECK(named, "every kind answers kconfig_uses and names and explains each option it needs");
	TAP_CHECK(unused, "an empty config uses no kind");
}

int main(void)
{
	char missing[512];
	/* A run with a read-only root and a disk, its command on a terminal (no streams). */
	struct ringvm_disk disk = { .path = "disk.img" };
	struct ringvm_config all_cfg, none;
	memset(&all_cfg, 0, sizeof(all_cfg));
	memset(&none, 0, sizeof(none));
	all_cfg.root.host_dir = "/";
	all_cfg.disks = &disk;
	all_cfg.nr_disks = 1;
	const struct ringvm_config *all = &all_cfg;
	const struct ringvm_config *const uses0 = &none;
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

	TAP_CHECK(kconfig_check(full, strlen(full), device_kinds, nr_device_kinds, all, missing, sizeof(missing)) == 0 && missing[0] == '\0',
		  "a complete config passes");
	TAP_CHECK(kconfig_check("", 0, device_kinds, nr_device_kinds, uses0, missing, sizeof(missing)) == 13 &&
			  strstr(missing, "CONFIG_ACPI=y") && strstr(missing, "CONFIG_SERIAL_8250=y") &&
			  strstr(missing, "CONFIG_DEVTMPFS=y") && !strstr(missing, "VIRTIO"),
		  "an empty config misses the always-needed options, and no device it does not use");

	/* Drop ACPI and make virtio-fs a module without CONFIG_MODULES: both reported. */
	char c[sizeof(full) + 64];
	strcpy(c, full);
	memcpy(strstr(c, "CONFIG_ACPI=y"), "CONFIG_ACPX=y", 13);
	memcpy(strstr(c, "CONFIG_VIRTIO_FS=y"), "CONFIG_VIRTIO_FS=m", 18);
	TAP_CHECK(kconfig_check(c, strlen(c), device_kinds, nr_device_kinds, all, missing, sizeof(missing)) == 2 &&
			  !strcmp(missing, "CONFIG_ACPI=y, CONFIG_VIRTIO_FS=y"),
		  "missing ACPI and a module without CONFIG_MODULES, named in one line");
	strcat(c, "CONFIG_MODULES=y\n");
	TAP_CHECK(kconfig_check(c, strlen(c), device_kinds, nr_device_kinds, all, missing, sizeof(missing)) == 1 && !strcmp(missing, "CONFIG_ACPI=y"),
		  "with CONFIG_MODULES a module is enough for virtio-fs");
	memcpy(strstr(c, "CONFIG_SERIAL_8250=y"), "CONFIG_SERIAL_8250=m", 20);
	TAP_CHECK(kconfig_check(c, strlen(c), device_kinds, nr_device_kinds, all, missing, sizeof(missing)) == 2 &&
			  strstr(missing, "CONFIG_SERIAL_8250=y"),
		  "the console must be built in, even with modules");
	TAP_CHECK(kconfig_check(c, strlen(c), device_kinds, nr_device_kinds, uses0, missing, sizeof(missing)) == 2,
		  "uses without devices: the same console and ACPI");

	/* A run without disks does not need virtio-blk. */
	strcpy(c, full);
	memcpy(strstr(c, "CONFIG_VIRTIO_BLK=y"), "CONFIG_VIRTIO_BLX=y", 19);
	struct ringvm_config no_disk = all_cfg;
	no_disk.nr_disks = 0;
	TAP_CHECK(kconfig_check(c, strlen(c), device_kinds, nr_device_kinds, &no_disk, missing, sizeof(missing)) == 0,
		  "no --disk: virtio-blk is not asked for");
	TAP_CHECK(kconfig_check(c, strlen(c), device_kinds, nr_device_kinds, all, missing, sizeof(missing)) == 1 &&
			  !strcmp(missing, "CONFIG_VIRTIO_BLK=y"),
		  "with --disk: virtio-blk is");
	char tiny[8];
	TAP_CHECK(kconfig_check("", 0, device_kinds, nr_device_kinds, all, tiny, sizeof(tiny)) > 13 && strlen(tiny) == 7,
		  "a short buffer is truncated, never overrun");
	/* A writable root needs no overlay; a read-only one does. */
	strcpy(c, full);
	memcpy(strstr(c, "CONFIG_OVERLAY_FS=y"), "CONFIG_OVERLAY_FX=y", 19);
	struct ringvm_config rw = all_cfg;
	rw.root.writable = true;
	TAP_CHECK(kconfig_check(c, strlen(c), device_kinds, nr_device_kinds, &rw, missing, sizeof(missing)) == 0 &&
			  kconfig_check(c, strlen(c), device_kinds, nr_device_kinds, all, missing, sizeof(missing)) == 1 &&
			  !strcmp(missing, "CONFIG_OVERLAY_FS=y"),
		  "--root rw: no overlay asked for; read-only: the overlay is");
	/* The command's streams without a terminal: virtio-console. */
	struct ringvm_config streams = all_cfg;
	streams.argc = 1;
	streams.console.tty = RINGVM_TTY_OFF;
	TAP_CHECK(kconfig_check(full, strlen(full), device_kinds, nr_device_kinds, &streams, missing, sizeof(missing)) == 1 &&
			  !strcmp(missing, "CONFIG_VIRTIO_CONSOLE=y"),
		  "a command's streams: virtio-console is asked for");
	TAP_CHECK(kconfig_check(full, strlen(full), device_kinds, nr_device_kinds, NULL, missing, sizeof(missing)) == 1,
		  "without a config (kconfig --apply): everything, virtio-console included");
	test_fake_kinds();
	test_fragment();
	test_real_kinds();
	return tap_done();
}
