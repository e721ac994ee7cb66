# ringvm: one Makefile. Each folder contributes a fragment (*.mk) with explicit source lists.
#
#   make            build/ringvm and its library (libringvm.a, libringvm.so): nothing else, nothing installed
#   make all        that, the packages it needs (make deps), the default guest (make guest), the
#                   firmware payloads, unit tests, test tools and the man page
#   make SAN=1      the same under AddressSanitizer + UBSan, in build/san/
#   make install    PREFIX=/usr/local DESTDIR=...: the CLI, the library (.so, .a), ringvm.h, ringvm.pc,
#                   ringvm(1) (dist/dist.mk)
#   make test       every test (unit, sanitizer, fuzz, integration in the KVM lab); ends "N passed, N failed, N skipped"
#   make fuzz       every libFuzzer target for FUZZ_SECONDS (600), its corpus kept in the tree
#   make run        the README's demo: boot the default guest and run a command (CMD=...)
#   make bench      every benchmark
#   make V=1        show the commands
#
# CC, CFLAGS, CPPFLAGS and LDFLAGS come from the environment or the command line (CFLAGS replaces the
# default -g -O2; the warning set, -std and -I. are always added); WERROR=0 keeps warnings warnings.

BUILD_ROOT := build
ifeq ($(SAN),1)
B := $(BUILD_ROOT)/san
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
CFLAGS ?= -g -O1
else
B := $(BUILD_ROOT)
SANFLAGS :=
CFLAGS ?= -g -O2
CPPFLAGS ?= -D_FORTIFY_SOURCE=2
endif
LDFLAGS ?=
WERROR ?= 1

CC ?= cc
WARNINGS := -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror) -Wshadow -Wpointer-arith -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Wvla -Wundef -Wimplicit-fallthrough -Wcast-qual \
	-Wno-unused-parameter
# Every object is position-independent: the same objects make libringvm.a, libringvm.so and the tests.
ALL_CFLAGS := -std=gnu11 $(WARNINGS) $(SANFLAGS) -fno-strict-aliasing -fPIC -I. $(CPPFLAGS) $(CFLAGS) \
	$(EXTRA_CFLAGS)
ALL_LDFLAGS := $(SANFLAGS) $(LDFLAGS) $(EXTRA_LDFLAGS)
LDLIBS := -luring -lseccomp -lcap-ng -lpthread

ifeq ($(V),1)
Q :=
else
Q := @
endif

.DEFAULT_GOAL := build
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

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(LIB): $(LIB_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/ringvm: $(CLI_OBJS) $(LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS) $(CLI_LDLIBS)

# The shared library, install, the man page and pkg-config file; the example built against the install.
include dist/dist.mk
include examples/examples.mk

# Unit tests (tests/unit/unit.mk): UNIT_TESTS += name, test_name_SRCS := the exact sources it links.
# One that links the CLI's JSON code (CLI_KIND_SRCS) links the CLI's libraries too.
UNIT_BINS := $(addprefix $(B)/tests/test_,$(UNIT_TESTS))
$(B)/tests/test_%: $$(call objs_of,$(B)/obj,test_$$*_SRCS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS) $(if $(filter $(CLI_KIND_SRCS),$(test_$*_SRCS)),$(CLI_LDLIBS))

# make: the CLI and its library only.
build: $(B)/ringvm $(LIB) $(SHLIB)
# make all: the packages first (the build needs their headers), then everything the tests use.
all: deps
	$(Q)$(MAKE) --no-print-directory everything
everything: build $(UNIT_BINS) $(ALL_TARGETS)
unit: $(UNIT_BINS)

-include $(shell find $(B)/obj $(BUILD_ROOT)/fuzz/obj -name '*.d' 2>/dev/null)

.PHONY: build all everything unit clean deps test run bench
clean:
	rm -rf $(BUILD_ROOT)/obj $(BUILD_ROOT)/san $(BUILD_ROOT)/tests $(BUILD_ROOT)/ringvm $(BUILD_ROOT)/libringvm.a
