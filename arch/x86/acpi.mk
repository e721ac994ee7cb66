# arch/x86/acpi.mk: ACPI tables and the AML builder, their unit tests and the iasl check.
LIB_SRCS += arch/x86/acpi.c arch/x86/aml.c

UNIT_TESTS += acpi aml
test_acpi_SRCS := arch/x86/acpi.c arch/x86/aml.c arch/x86/test_acpi.c
test_aml_SRCS := arch/x86/aml.c arch/x86/test_aml.c

# acpi-dump DIR: writes each table of a sample machine (2 CPUs, 3 virtio-mmio devices) to DIR/*.dat
# for test_acpi_iasl.sh.
ALL_TARGETS += $(B)/tests/acpi-dump
$(B)/tests/acpi-dump: $(B)/obj/arch/x86/acpi_dump.o $(B)/obj/arch/x86/acpi.o $(B)/obj/arch/x86/aml.o
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^

HOST_TESTS += arch/x86/test_acpi_iasl.sh
