# ringvm: one Makefile. Each folder contributes a fragment (*.mk) with explicit source lists.
#
#   make            build/ringvm, build/libringvm.a and the default guest (kernel + initramfs)
#   make SAN=1      the same under AddressSanitizer + UBSan, in build/san/
#   make test       every test (unit, sanitizer, fuzz, integration in the KVM lab); ends "N passed, N failed, N skipped"
#   make fuzz       every libFuzzer target for FUZZ_SECONDS (600), its corpus kept in the tree
#   make run        the README's demo: boot the default guest and run a command (CMD=...)
#   make bench      every benchmark
#   make V=1        show the commands

BUILD_ROOT := build
ifeq ($(SAN),1)
B := $(BUILD_ROOT)/san
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
OPT := -O1
else
B := $(BUILD_ROOT)
SANFLAGS :=
OPT := -O2 -D_FORTIFY_SOURCE=2
endif

CC ?= cc
WARNINGS := -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Wvla -Wundef -Wimplicit-fallthrough -Wcast-qual \
	-Wno-unused-parameter
CFLAGS := -std=gnu11 -g $(OPT) $(WARNINGS) $(SANFLAGS) -fno-strict-aliasing -I. $(EXTRA_CFLAGS)
LDFLAGS := $(SANFLAGS) $(EXTRA_LDFLAGS)
LDLIBS := -luring -lseccomp -lcap-ng -lpthread

ifeq ($(V),1)
Q :=
else
Q := @
endif

.DEFAULT_GOAL := all
.SECONDEXPANSION:
# objs_of DIR,VAR: the object files under DIR for the sources listed in variable VAR.
objs_of = $(addprefix $(1)/,$(patsubst %.c,%.o,$($(2))))
.DELETE_ON_ERROR:
# Keep intermediate objects (test and fuzz sources) so they are not rebuilt every time.
.SECONDARY:

# Filled in by the fragments.
LIB_SRCS :=
CLI_SRCS :=
UNIT_TESTS :=
FUZZERS :=
ALL_TARGETS :=

include vmm/vmm.mk
include arch/x86/x86.mk
include devices/devices.mk
include guest/guest.mk
include firmware/firmware.mk
include tests/lab/lab.mk
include tests/tests.mk
include tests/posix/posix.mk

LIB := $(B)/libringvm.a
LIB_OBJS := $(addprefix $(B)/obj/,$(LIB_SRCS:.c=.o))
CLI_OBJS := $(addprefix $(B)/obj/,$(CLI_SRCS:.c=.o))

$(B)/obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(LIB): $(LIB_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/ringvm: $(CLI_OBJS) $(LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Unit tests: UNIT_TESTS += name, test_name_SRCS := the exact sources it links (fakes included).
UNIT_BINS := $(addprefix $(B)/tests/test_,$(UNIT_TESTS))
$(B)/tests/test_%: $$(call objs_of,$(B)/obj,test_$$*_SRCS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

all: deps $(B)/ringvm $(LIB) $(UNIT_BINS) $(ALL_TARGETS)
unit: $(UNIT_BINS)

-include $(shell find $(B)/obj $(BUILD_ROOT)/fuzz/obj -name '*.d' 2>/dev/null)

.PHONY: all unit clean deps test run bench
clean:
	rm -rf $(BUILD_ROOT)/obj $(BUILD_ROOT)/san $(BUILD_ROOT)/tests $(BUILD_ROOT)/ringvm $(BUILD_ROOT)/libringvm.a

print-host-tests:
	@echo $(HOST_TESTS)
