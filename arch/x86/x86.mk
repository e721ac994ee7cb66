# arch/x86: the PC: boot protocol, CPU state, ACPI tables, legacy ports, the COM1 UART.
LIB_SRCS += arch/x86/machine.c arch/x86/boot.c arch/x86/cpu.c arch/x86/legacy.c arch/x86/uart8250.c
-include arch/x86/acpi.mk
