# arch/x86: the PC: boot protocol, CPU state, ACPI tables, legacy ports, the COM1 UART.
LIB_SRCS += arch/x86/machine.c arch/x86/boot.c arch/x86/cpu.c arch/x86/legacy.c arch/x86/uart8250.c
-include arch/x86/acpi.mk

# The debugger's view of the vCPU: page-table walk (vmm/gdb_stub.c reads memory by virtual address).
LIB_SRCS += arch/x86/pagewalk.c arch/x86/gdb_x86.c
UNIT_TESTS += pagewalk
test_pagewalk_SRCS := arch/x86/pagewalk.c vmm/guest_mem.c arch/x86/test_pagewalk.c
UNIT_TESTS += gdb_x86
test_gdb_x86_SRCS := arch/x86/gdb_x86.c arch/x86/pagewalk.c vmm/guest_mem.c arch/x86/test_gdb_x86.c
