/* legacy.h: the PC's small port-I/O devices: ACPI sleep/reset registers, 8042 reset, ringvm's exit port, pvpanic. */
#ifndef RINGVM_X86_LEGACY_H
#define RINGVM_X86_LEGACY_H

struct vm;

/* Register the ports (vmm/layout.h, guest/protocol.h) on the VM's port bus. 0 or -errno. */
__attribute__((warn_unused_result)) int x86_legacy_register(struct vm *vm);

#endif
