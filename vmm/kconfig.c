/* kconfig.c: the kernel options ringvm's machine needs, checked against a .config and printed as a fragment. */
#include "vmm/kconfig.h"

#include <stdbool.h>
#include <string.h>

#include "devices/kind.h"

#define ALWAYS 0u
#define WITH_DEVICES 2u /* when any kind is used (the machine itself is 1) */

#define Y KCONFIG_NEED_Y
#define YM KCONFIG_NEED_YM
#define RECOMMENDED KCONFIG_NEED_RECOMMENDED

/*
 * The machine's own options, dependencies first, so that the fragment reads in the order
 * menuconfig would ask; each device kind's follow (its device_kind.kconfig, devices/NAME/), then
 * the recommended ones.
 */
static const struct kconfig_option machine[] = {
	{ "64BIT", Y, ALWAYS, "ringvm boots x86-64 kernels" },
	{ "ACPI", Y, ALWAYS, "CPUs, interrupts and virtio-mmio devices are described in ACPI tables" },
	/* Linux 6.1's ACPICA installs a PCI config space handler with its tables and fails to load them
	   without CONFIG_PCI ("AE_BAD_PARAMETER, During Region initialization"); ringvm passes pci=off. */
	{ "PCI", Y, ALWAYS, "ACPI loads no tables without it (Linux 6.1); pci=off keeps it idle" },
	{ "BLK_DEV_INITRD", Y, ALWAYS, "PID 1 comes in an initramfs" },
	{ "BINFMT_ELF", Y, ALWAYS, "PID 1 is an ELF binary" },
	{ "X86_IOPL_IOPERM", Y, ALWAYS, "PID 1 hands the command's status to ringvm on an I/O port (ioperm)" },
	{ "TTY", Y, ALWAYS, "the console" },
	{ "SERIAL_8250", Y, ALWAYS, "the console is a 16550A on COM1" },
	{ "SERIAL_8250_CONSOLE", Y, ALWAYS, "kernel messages on COM1" },
	{ "PROC_FS", Y, ALWAYS, "PID 1 reads /proc/cmdline" },
	{ "SYSFS", Y, ALWAYS, "PID 1 mounts /sys" },
	{ "DEVTMPFS", Y, ALWAYS, "PID 1 mounts /dev as devtmpfs" },
	{ "TMPFS", Y, ALWAYS, "/tmp, /run, and the overlay's upper layer" },
	/* Every kind's devices sit on the machine's virtio-mmio transports (vmm/devices.c). */
	{ "VIRTIO_MENU", Y, WITH_DEVICES, "virtio drivers" },
	{ "VIRTIO_MMIO", YM, WITH_DEVICES, "ringvm's devices sit on virtio-mmio" },
};

/* What a distribution's userland (--root /) takes for granted; tinyconfig leaves them out. */
static const struct kconfig_option recommended[] = {
	{ "MULTIUSER", RECOMMENDED, ALWAYS, "users and groups" },
	{ "PRINTK", RECOMMENDED, ALWAYS, "kernel messages (ringvm sees a panic by its message)" },
	{ "FUTEX", RECOMMENDED, ALWAYS, "glibc's threads" },
	{ "POSIX_TIMERS", RECOMMENDED, ALWAYS, "timers" },
	{ "EPOLL", RECOMMENDED, ALWAYS, "event loops" },
	{ "SIGNALFD", RECOMMENDED, ALWAYS, "event loops" },
	{ "TIMERFD", RECOMMENDED, ALWAYS, "event loops" },
	{ "EVENTFD", RECOMMENDED, ALWAYS, "event loops" },
	{ "SHMEM", RECOMMENDED, ALWAYS, "tmpfs with swap-backed pages, memfd" },
	{ "FILE_LOCKING", RECOMMENDED, ALWAYS, "flock and fcntl locks" },
	{ "NET", RECOMMENDED, ALWAYS, "sockets" },
	{ "UNIX", RECOMMENDED, ALWAYS, "Unix sockets" },
	{ "UNIX98_PTYS", RECOMMENDED, ALWAYS, "/dev/pts for an interactive shell" },
	{ "BINFMT_SCRIPT", RECOMMENDED, ALWAYS, "#! scripts" },
	{ "SMP", RECOMMENDED, ALWAYS, "--cpus above 1" },
	{ "HYPERVISOR_GUEST", RECOMMENDED, ALWAYS, "KVM guest support" },
	{ "PARAVIRT", RECOMMENDED, ALWAYS, "KVM guest support" },
	{ "KVM_GUEST", RECOMMENDED, ALWAYS, "the KVM clock" },
	{ "PVH", RECOMMENDED, ALWAYS, "the PVH entry: a tree's vmlinux boots without the bzImage's decompressor" },
	{ "MODULES", RECOMMENDED, ALWAYS, "the tree's own modules" },
	{ "MODULE_UNLOAD", RECOMMENDED, ALWAYS, "rmmod" },
};

#define NR(a) (sizeof(a) / sizeof((a)[0]))

/* The line "CONFIG_<name>=..." or "# CONFIG_<name> is not set" in config, or NULL. */
static const char *find_line(const char *config, size_t len, const char *name, size_t *line_len)
{
	size_t nlen = strlen(name);
	size_t i = 0;
	while (i < len) {
		const char *line = config + i;
		const char *nl = memchr(line, '\n', len - i);
		size_t ll = nl ? (size_t)(nl - line) : len - i;
		i += ll + 1;
		if (ll > 7 + nlen && !memcmp(line, "CONFIG_", 7) && !memcmp(line + 7, name, nlen) &&
		    line[7 + nlen] == '=') {
			*line_len = ll;
			return line;
		}
	}
	return NULL;
}

char kconfig_value(const char *config, size_t len, const char *name)
{
	size_t ll;
	const char *line = find_line(config, len, name, &ll);
	if (!line)
		return 0;
	size_t vlen = ll - 8 - strlen(name);
	const char *v = line + 8 + strlen(name);
	if (vlen == 1 && (v[0] == 'y' || v[0] == 'm'))
		return v[0];
	if (vlen == 1 && v[0] == 'n')
		return 0;
	return vlen ? 's' : 0;
}

/* What the missing-option line is being built in. */
struct kconfig_missing {
	char *buf;
	size_t len, used;
	bool modules; /* CONFIG_MODULES=y: a YM option may be a module */
	int count;
};

/* Check one row, needed: note it in m when config does not provide it. */
static void kconfig_check_row(const char *config, size_t len, const struct kconfig_option *opt,
			      struct kconfig_missing *m)
{
	char v = kconfig_value(config, len, opt->name);
	if (v == 'y' || (v == 'm' && opt->need == KCONFIG_NEED_YM && m->modules))
		return;
	m->count++;
	const char *want = opt->need == KCONFIG_NEED_YM ? (m->modules ? "y|m" : "y") : "y";
	int n = snprintf(m->buf + m->used, m->len > m->used ? m->len - m->used : 0, "%sCONFIG_%s=%s",
			 m->count > 1 ? ", " : "", opt->name, want);
	if (n > 0)
		m->used += (size_t)n;
}

/* Is a row needed by uses (a kind's kconfig_uses, or the machine's: 1 | WITH_DEVICES)? A row
   with when ALWAYS is, as soon as its owner is used at all. */
static bool kconfig_needed(const struct kconfig_option *opt, unsigned int uses)
{
	if (opt->need == KCONFIG_NEED_RECOMMENDED)
		return false;
	return opt->when == ALWAYS ? uses != 0 : (opt->when & uses) != 0;
}

/* What cfg uses of kind k (its kconfig_uses; every bit without cfg); 0 without kconfig_uses. */
static unsigned int kind_uses(const struct device_kind *k, const struct ringvm_config *cfg)
{
	if (!k->kconfig_uses)
		return 0;
	return cfg ? k->kconfig_uses(cfg) : ~0u;
}

int kconfig_check(const char *config, size_t len, const struct device_kind *const *kinds, unsigned int nr,
		  const struct ringvm_config *cfg, char *missing, size_t missing_len)
{
	struct kconfig_missing m = { missing, missing_len, 0, kconfig_value(config, len, "MODULES") == 'y', 0 };
	if (missing_len)
		missing[0] = '\0';
	unsigned int machine_uses = 1; /* the machine itself: its ALWAYS rows */
	for (unsigned int k = 0; k < nr; k++)
		if (kind_uses(kinds[k], cfg))
			machine_uses |= WITH_DEVICES;
	for (size_t i = 0; i < NR(machine); i++)
		if (kconfig_needed(&machine[i], machine_uses))
			kconfig_check_row(config, len, &machine[i], &m);
	for (unsigned int k = 0; k < nr; k++) {
		unsigned int uses = kind_uses(kinds[k], cfg);
		for (unsigned int i = 0; i < kinds[k]->nr_kconfig; i++)
			if (kconfig_needed(&kinds[k]->kconfig[i], uses))
				kconfig_check_row(config, len, &kinds[k]->kconfig[i], &m);
	}
	return m.count;
}

static void print_rows(FILE *f, const struct kconfig_option *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "# %s\nCONFIG_%s=y\n", rows[i].why, rows[i].name);
}

void kconfig_print_fragment(FILE *f, const struct device_kind *const *kinds, unsigned int nr)
{
	fprintf(f, "# ringvm: the options a kernel needs to boot under ringvm (ringvm kconfig)\n");
	print_rows(f, machine, NR(machine));
	for (unsigned int k = 0; k < nr; k++)
		print_rows(f, kinds[k]->kconfig, kinds[k]->nr_kconfig);
	fprintf(f, "# what a host's userland expects under --root /\n");
	print_rows(f, recommended, NR(recommended));
}
