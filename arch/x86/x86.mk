# arch/x86: the PC: boot protocol, CPU state, ACPI tables, legacy ports, the COM1 UART.
LIB_SRCS += arch/x86/machine.c arch/x86/boot.c arch/x86/cpu.c arch/x86/tsc.c arch/x86/legacy.c arch/x86/uart8250.c
-include arch/x86/acpi.mk

# The debugger's view of the vCPU: page-table walk (vmm/gdb_stub.c reads memory by virtual address).
LIB_SRCS += arch/x86/pagewalk.c arch/x86/gdb_x86.c
