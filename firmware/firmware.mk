# firmware: tiny freestanding PVH guests for the boot tests, one per way a guest can end.
FIRMWARE_MODES := exit panic triple poweroff reset
FIRMWARE := $(addprefix $(BUILD_ROOT)/firmware/,$(addsuffix .elf,$(FIRMWARE_MODES)))
ALL_TARGETS += $(FIRMWARE)

fw_mode_exit := 1
fw_mode_panic := 2
fw_mode_triple := 3
fw_mode_poweroff := 4
fw_mode_reset := 5

$(BUILD_ROOT)/firmware/%.elf: firmware/payload.S guest/protocol.h vmm/layout.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AS      $@")
	$(Q)$(CC) -I. -DMODE=$(fw_mode_$*) -c -o $(@:.elf=.o) $<
	$(Q)ld -m elf_x86_64 -nostdlib -static -Ttext=0x100000 -o $@ $(@:.elf=.o)

# debug.elf: a payload with symbols and its own upper-half page tables, for the gdb stub's tests
# (tests/boot/gdb.sh): gdb loads its symbols, ringvm boots it through PVH.
ALL_TARGETS += $(BUILD_ROOT)/firmware/debug.elf
$(BUILD_ROOT)/firmware/debug.elf: firmware/debug.S firmware/debug.ld guest/protocol.h vmm/layout.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AS      $@")
	$(Q)$(CC) -I. -c -o $(@:.elf=.o) $<
	$(Q)ld -m elf_x86_64 -nostdlib -static --no-warn-rwx-segments -T firmware/debug.ld -o $@ $(@:.elf=.o)
