# firmware: tiny freestanding PVH guests for the boot tests, one per way a guest can end.
FIRMWARE_MODES := exit panic triple poweroff reset halt
FIRMWARE := $(addprefix $(BUILD_ROOT)/firmware/,$(addsuffix .elf,$(FIRMWARE_MODES)))
ALL_TARGETS += $(FIRMWARE)

fw_mode_exit := 1
fw_mode_panic := 2
fw_mode_triple := 3
fw_mode_poweroff := 4
fw_mode_reset := 5
fw_mode_halt := 6

$(BUILD_ROOT)/firmware/%.elf: firmware/payload.S guest/protocol.h vmm/layout.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AS      $@")
	$(Q)$(CC) -I. -DMODE=$(fw_mode_$*) -c -o $(@:.elf=.o) $<
	$(Q)ld -m elf_x86_64 -nostdlib -static -Ttext=0x100000 -o $@ $(@:.elf=.o)
