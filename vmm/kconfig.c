/* kconfig.c: the kernel options ringvm's machine needs, checked against a .config and printed as a fragment. */
#include "vmm/kconfig.h"

#include <stdbool.h>
#include <string.h>

enum need {
	NEED_Y,  /* built in: needed before any module could load */
	NEED_YM, /* built in, or a module in the initramfs ringvm makes for a tree */
	NEED_RECOMMENDED, /* not checked: what a host's userland expects; in the fragment only */
};

#define ALWAYS 0u

struct kconfig_option {
	const char *name;
	enum need need;
	unsigned int when; /* enum kconfig_use bits; ALWAYS */
	const char *why;
};

/* Dependencies first, so that the fragment reads in the order menuconfig would ask. */
static const struct kconfig_option options[] = {
	{ "64BIT", NEED_Y, ALWAYS, "ringvm boots x86-64 kernels" },
	{ "ACPI", NEED_Y, ALWAYS, "CPUs, interrupts and virtio-mmio devices are described in ACPI tables" },
	/* Linux 6.1's ACPICA installs a PCI config space handler with its tables and fails to load them
	   without CONFIG_PCI ("AE_BAD_PARAMETER, During Region initialization"); ringvm passes pci=off. */
	{ "PCI", NEED_Y, ALWAYS, "ACPI loads no tables without it (Linux 6.1); pci=off keeps it idle" },
	{ "BLK_DEV_INITRD", NEED_Y, ALWAYS, "PID 1 comes in an initramfs" },
	{ "BINFMT_ELF", NEED_Y, ALWAYS, "PID 1 is an ELF binary" },
	{ "X86_IOPL_IOPERM", NEED_Y, ALWAYS, "PID 1 hands the command's status to ringvm on an I/O port (ioperm)" },
	{ "TTY", NEED_Y, ALWAYS, "the console" },
	{ "SERIAL_8250", NEED_Y, ALWAYS, "the console is a 16550A on COM1" },
	{ "SERIAL_8250_CONSOLE", NEED_Y, ALWAYS, "kernel messages on COM1" },
	{ "PROC_FS", NEED_Y, ALWAYS, "PID 1 reads /proc/cmdline" },
	{ "SYSFS", NEED_Y, ALWAYS, "PID 1 mounts /sys" },
	{ "DEVTMPFS", NEED_Y, ALWAYS, "PID 1 mounts /dev as devtmpfs" },
	{ "TMPFS", NEED_Y, ALWAYS, "/tmp, /run, and the overlay's upper layer" },
	{ "VIRTIO_MENU", NEED_Y, KCONFIG_USE_SHARES | KCONFIG_USE_DISKS | KCONFIG_USE_STREAMS, "virtio drivers" },
	{ "VIRTIO_MMIO", NEED_YM, KCONFIG_USE_SHARES | KCONFIG_USE_DISKS | KCONFIG_USE_STREAMS,
	  "ringvm's devices sit on virtio-mmio" },
	{ "FUSE_FS", NEED_YM, KCONFIG_USE_SHARES, "virtio-fs speaks FUSE" },
	{ "VIRTIO_FS", NEED_YM, KCONFIG_USE_SHARES, "--share and --root" },
	{ "OVERLAY_FS", NEED_YM, KCONFIG_USE_OVERLAY, "a writable layer over a read-only --root" },
	{ "BLOCK", NEED_Y, KCONFIG_USE_DISKS, "--disk" },
	{ "BLK_DEV", NEED_Y, KCONFIG_USE_DISKS, "--disk" },
	{ "VIRTIO_BLK", NEED_YM, KCONFIG_USE_DISKS, "--disk" },
	{ "VIRTIO_CONSOLE", NEED_YM, KCONFIG_USE_STREAMS, "a command's stdin, stdout and stderr without a terminal" },
	/* What a distribution's userland (--root /) takes for granted; tinyconfig leaves them out. */
	{ "MULTIUSER", NEED_RECOMMENDED, ALWAYS, "users and groups" },
	{ "PRINTK", NEED_RECOMMENDED, ALWAYS, "kernel messages (ringvm sees a panic by its message)" },
	{ "FUTEX", NEED_RECOMMENDED, ALWAYS, "glibc's threads" },
	{ "POSIX_TIMERS", NEED_RECOMMENDED, ALWAYS, "timers" },
	{ "EPOLL", NEED_RECOMMENDED, ALWAYS, "event loops" },
	{ "SIGNALFD", NEED_RECOMMENDED, ALWAYS, "event loops" },
	{ "TIMERFD", NEED_RECOMMENDED, ALWAYS, "event loops" },
	{ "EVENTFD", NEED_RECOMMENDED, ALWAYS, "event loops" },
	{ "SHMEM", NEED_RECOMMENDED, ALWAYS, "tmpfs with swap-backed pages, memfd" },
	{ "FILE_LOCKING", NEED_RECOMMENDED, ALWAYS, "flock and fcntl locks" },
	{ "NET", NEED_RECOMMENDED, ALWAYS, "sockets" },
	{ "UNIX", NEED_RECOMMENDED, ALWAYS, "Unix sockets" },
	{ "UNIX98_PTYS", NEED_RECOMMENDED, ALWAYS, "/dev/pts for an interactive shell" },
	{ "BINFMT_SCRIPT", NEED_RECOMMENDED, ALWAYS, "#! scripts" },
	{ "SMP", NEED_RECOMMENDED, ALWAYS, "--cpus above 1" },
	{ "HYPERVISOR_GUEST", NEED_RECOMMENDED, ALWAYS, "KVM guest support" },
	{ "PARAVIRT", NEED_RECOMMENDED, ALWAYS, "KVM guest support" },
	{ "KVM_GUEST", NEED_RECOMMENDED, ALWAYS, "the KVM clock" },
	{ "PVH", NEED_RECOMMENDED, ALWAYS, "the PVH entry: a tree's vmlinux boots without the bzImage's decompressor" },
	{ "MODULES", NEED_RECOMMENDED, ALWAYS, "the tree's own modules" },
	{ "MODULE_UNLOAD", NEED_RECOMMENDED, ALWAYS, "rmmod" },
};

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

int kconfig_check(const char *config, size_t len, unsigned int uses, char *missing, size_t missing_len)
{
	bool modules = kconfig_value(config, len, "MODULES") == 'y';
	int count = 0;
	size_t o = 0;
	if (missing_len)
		missing[0] = '\0';
	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		const struct kconfig_option *opt = &options[i];
		if (opt->need == NEED_RECOMMENDED || (opt->when != ALWAYS && !(opt->when & uses)))
			continue;
		char v = kconfig_value(config, len, opt->name);
		if (v == 'y' || (v == 'm' && opt->need == NEED_YM && modules))
			continue;
		count++;
		const char *want = opt->need == NEED_YM ? (modules ? "y|m" : "y") : "y";
		int n = snprintf(missing + o, missing_len > o ? missing_len - o : 0, "%sCONFIG_%s=%s",
				 count > 1 ? ", " : "", opt->name, want);
		if (n > 0)
			o += (size_t)n;
	}
	return count;
}

void kconfig_print_fragment(FILE *f)
{
	fprintf(f, "# ringvm: the options a kernel needs to boot under ringvm (ringvm kconfig)\n");
	enum need last = NEED_Y;
	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		if (options[i].need == NEED_RECOMMENDED && last != NEED_RECOMMENDED)
			fprintf(f, "# what a host's userland expects under --root /\n");
		last = options[i].need;
		fprintf(f, "# %s\nCONFIG_%s=y\n", options[i].why, options[i].name);
	}
}
