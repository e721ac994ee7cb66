/* machine.c: the PC behind arch/arch.h: legacy ports, bzImage/PVH loading, ACPI and boot information. */
#include "arch/arch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/x86/acpi.h"
#include "arch/x86/boot.h"
#include "arch/x86/cpu.h"
#include "arch/x86/legacy.h"
#include "vmm/errmsg.h"
#include "vmm/machine.h"

struct arch_boot {
	struct x86_kernel k;
	struct x86_boot_info info;
};

int arch_machine_init(struct vm *vm)
{
	return x86_legacy_register(vm);
}

int arch_kernel_load(struct vm *vm, const struct img *image, struct arch_boot **out)
{
	struct arch_boot *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	int ret = x86_load_kernel(&vm->mem, image, &b->k);
	if (ret) {
		free(b);
		return ret;
	}
	b->info.rsdp_addr = LAYOUT_ACPI_START;
	*out = b;
	return 0;
}

int arch_initrd_load(struct vm *vm, struct arch_boot *b, const struct img *image)
{
	uint64_t size = image->size;
	uint64_t addr = x86_initrd_addr(&vm->mem, &b->k, size);
	void *dst = addr ? gm_ptr(&vm->mem, addr, size) : NULL;
	if (!dst)
		return -ENOMEM;
	int ret = img_read(image, dst, size, 0);
	if (ret)
		return ret;
	b->info.initrd_addr = addr;
	b->info.initrd_size = size;
	return 0;
}

const char *arch_cmdline_base(void)
{
	/* One 8250 on COM1, reboot through the keyboard controller (legacy.c emulates its reset), no
	   PCI to probe, a TSC KVM keeps stable. */
	return "console=ttyS0 reboot=k pci=off 8250.nr_uarts=1 i8042.noaux tsc=reliable no_timer_check";
}

size_t arch_cmdline_max(const struct arch_boot *b)
{
	return b->k.cmdline_max < LAYOUT_CMDLINE_MAX - 1 ? b->k.cmdline_max : LAYOUT_CMDLINE_MAX - 1;
}

int arch_boot_describe(struct vm *vm, struct arch_boot *b, const char *cmdline, char *err, size_t errlen)
{
	struct acpi_config acpi = {
		.nr_cpus = vm->nr_cpus,
		.mmio_devs = vm->virtio_mmio,
		.nr_mmio_devs = vm->nr_virtio_mmio,
	};
	void *acpi_buf = gm_ptr(&vm->mem, LAYOUT_ACPI_START, LAYOUT_ACPI_SIZE);
	int ret = acpi_buf ? acpi_build(&acpi, acpi_buf, LAYOUT_ACPI_SIZE, LAYOUT_ACPI_START) : -EFAULT;
	if (ret < 0)
		return errmsg(err, errlen, ret, "building ACPI tables: %s", strerror(-ret));
	b->info.cmdline = cmdline;
	ret = x86_write_boot_info(&vm->mem, &b->k, &b->info);
	b->info.cmdline = NULL; /* the caller's buffer */
	if (!ret)
		ret = x86_boot_tables_write(&vm->mem);
	if (ret)
		return errmsg(err, errlen, ret, "writing boot information: %s", strerror(-ret));
	return 0;
}

int arch_boot_vcpu(const struct arch_boot *b, int vcpu_fd)
{
	return x86_boot_regs_apply(vcpu_fd, &b->k);
}

void arch_boot_free(struct arch_boot *b)
{
	free(b);
}

const char *arch_host_unfit(void)
{
	/* kvm_pvm cannot run a stock kernel's kernel-mode code: say so instead of hanging for minutes.
	   RINGVM_ALLOW_PVM=1 runs anyway (the tests' tiny payloads run there). */
	const char *allow = getenv("RINGVM_ALLOW_PVM");
	if (allow && strcmp(allow, "1") == 0)
		return NULL;
	if (access("/sys/module/kvm_pvm", F_OK) != 0)
		return NULL;
	return "/dev/kvm here is PVM (kvm_pvm), which cannot run a stock Linux kernel; use a "
	       "hardware-KVM host or the KVM lab (tests/lab/run)";
}
