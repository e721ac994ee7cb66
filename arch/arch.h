/* arch.h: what the library's front door (vmm/ringvm.c) asks of the architecture; arch/x86/machine.c answers. */
#ifndef RINGVM_ARCH_H
#define RINGVM_ARCH_H

#include <stddef.h>
#include <stdint.h>

/*
 * vmm/ringvm.c builds a machine without naming x86: it asks the architecture to set up the
 * machine's fixed devices, load the kernel and initrd, describe the finished machine to the kernel
 * (firmware tables, boot information) and give the boot vCPU its first registers. In order:
 *
 *   vm_create ... arch_machine_init, arch_kernel_load, [arch_initrd_load], devices attached,
 *   arch_cmdline_base + arch_cmdline_max (to build the command line), arch_boot_describe,
 *   vcpus_create, arch_boot_vcpu, arch_boot_free
 *
 * All at setup time, on the thread that builds the machine. One architecture is linked in.
 * (vm.c, vcpu.c and console.c still use arch/x86/ directly: the next part of this seam.)
 */

struct vm;
struct img; /* vmm/image.h */
/* A kernel loaded into guest memory, and how to enter it. */
struct arch_boot;

/* The machine's fixed devices besides the console (x86: ACPI power-off, reset, ringvm's exit
   port). 0 or -errno. */
__attribute__((warn_unused_result)) int arch_machine_init(struct vm *vm);

/*
 * Load a kernel image into guest memory, reading what is loaded straight into place (the image
 * need not stay open afterwards). 0 with *out set, -ENOEXEC for a file that is no kernel this
 * architecture boots, -ENOMEM when it does not fit in guest RAM, -EIO or another -errno from
 * reading it, another -errno for a corrupt or unsupported one.
 */
__attribute__((warn_unused_result)) int arch_kernel_load(struct vm *vm, const struct img *image,
							  struct arch_boot **out);

/* Read an initrd into guest memory where the loaded kernel accepts it. 0, -ENOMEM (it does not
   fit), or -errno from reading it. */
__attribute__((warn_unused_result)) int arch_initrd_load(struct vm *vm, struct arch_boot *b,
							  const struct img *image);

/* What every kernel command line on this machine starts with (console, reboot method, quirks). */
const char *arch_cmdline_base(void);

/* The longest command line (without its NUL) the loaded kernel takes. */
size_t arch_cmdline_max(const struct arch_boot *b);

/*
 * Describe the finished machine to the kernel, after every device is attached and before the vCPUs
 * are created: firmware tables for vm->nr_cpus CPUs and the VM's virtio-mmio windows, the boot
 * information with cmdline (at most arch_cmdline_max() bytes), what the boot vCPU needs in memory.
 * 0, or -errno with one line in err.
 */
__attribute__((warn_unused_result)) int arch_boot_describe(struct vm *vm, struct arch_boot *b,
							    const char *cmdline, char *err, size_t errlen);

/* The boot vCPU's first registers (its KVM fd), for the loaded kernel's entry. 0 or -errno. */
__attribute__((warn_unused_result)) int arch_boot_vcpu(const struct arch_boot *b, int vcpu_fd);

/* NULL ok. */
void arch_boot_free(struct arch_boot *b);

/*
 * Why this host's KVM cannot run a stock kernel of this architecture (one line), or NULL when it
 * can. ringvm_create() asks last, so that mistakes in the user's input are reported first.
 */
const char *arch_host_unfit(void);

#endif
