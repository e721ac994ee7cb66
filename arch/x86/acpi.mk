# arch/x86/acpi.mk: ACPI tables and the AML builder (tests: tests/unit/unit.mk, tests/host/host.mk).
LIB_SRCS += arch/x86/acpi.c arch/x86/aml.c
