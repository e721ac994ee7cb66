# firmware: tiny freestanding PVH guests for the boot tests, one per way a guest can end.
FIRMWARE_MODES := exit panic triple poweroff reset halt wait
FIRMWARE := $(addprefix $(BUILD_ROOT)/firmware/,$(addsuffix .elf,$(FIRMWARE_MODES)))
ALL_TARGETS += $(FIRMWARE)

fw_mode_exit := 1
fw_mode_panic := 2
fw_mode_triple := 3
fw_mode_poweroff := 4
fw_mode_reset := 5
fw_mode_halt := 6
fw_mode_wait := 7

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

# The attack payload: one freestanding long-mode guest driving the virtio-mmio devices directly,
# running the case named on its command line (attack=NAME; tests/boot/attack.sh runs each).
ATTACK_SRCS := firmware/attack/main.c firmware/attack/rt.c firmware/attack/vio.c \
	firmware/attack/vblk.c firmware/attack/vfuse.c firmware/attack/case_regs.c \
	firmware/attack/case_rings.c firmware/attack/case_blk.c firmware/attack/case_fuse.c
ATTACK_ELF := $(BUILD_ROOT)/firmware/attack.elf
ALL_TARGETS += $(ATTACK_ELF)
# No SSE (nobody enabled it), no red zone, no stack protector, no libc; the loops in rt.c must stay
# loops (not calls to the memcpy they implement).
ATTACK_CFLAGS := -std=gnu11 -O2 -g -ffreestanding -fno-builtin -fno-tree-loop-distribute-patterns \
	-fno-pic -fno-pie -fno-stack-protector -mno-red-zone -mgeneral-regs-only -mcmodel=small \
	$(WARNINGS) -I.
ATTACK_OBJS := $(patsubst %.c,$(BUILD_ROOT)/firmware/obj/%.o,$(ATTACK_SRCS)) \
	$(BUILD_ROOT)/firmware/obj/firmware/attack/entry.o
$(BUILD_ROOT)/firmware/obj/%.o: %.c firmware/attack/cases.def
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FWCC    $<")
	$(Q)$(CC) $(ATTACK_CFLAGS) -MMD -MP -c -o $@ $<
$(BUILD_ROOT)/firmware/obj/%.o: %.S
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AS      $<")
	$(Q)$(CC) -I. -c -o $@ $<
$(ATTACK_ELF): $(ATTACK_OBJS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)ld -m elf_x86_64 -nostdlib -static -Ttext=0x100000 -o $@ $^
-include $(shell find $(BUILD_ROOT)/firmware/obj -name '*.d' 2>/dev/null)
