# tests/support/support.mk: the test tools built from tests/support/ (test doubles linked into unit
# tests are listed in tests/unit/unit.mk). Included by tests/tests.mk.

# acpi-dump DIR: writes each table of a sample machine (2 CPUs, 3 virtio-mmio devices) to DIR/*.dat
# for tests/host/acpi_iasl.sh.
ACPI_DUMP_SRCS := tests/support/acpi_dump.c arch/x86/acpi.c arch/x86/aml.c
$(B)/tests/acpi-dump: $(call objs_of,$(B)/obj,ACPI_DUMP_SRCS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^
ALL_TARGETS += $(B)/tests/acpi-dump

# The fs server over the host's /dev/fuse (tests/integration/fs.sh --host-fuse, and the integration
# tests' FUSE-backed shares), no VM.
FS_HOST_MOUNT_SRCS := $(FS_CORE_SRCS) tests/support/host_fuse.c tests/support/fuse_host_mount.c
$(B)/tests/fuse_host_mount: $(call objs_of,$(B)/obj,FS_HOST_MOUNT_SRCS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)
ALL_TARGETS += $(B)/tests/fuse_host_mount

# The vhost-user test front-end against a running `ringvm serve` (tests/boot/serve.sh).
VU_PROBE_SRCS := tests/support/vu_probe.c $(VU_FRONT) $(VU_SRCS) $(VU_VIRTIO) vmm/guest_mem.c
$(B)/tests/vu_probe: $(call objs_of,$(B)/obj,VU_PROBE_SRCS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)
ALL_TARGETS += $(B)/tests/vu_probe

# An embedder forwarding its own signals with ringvm_signal() (tests/integration/streams.sh).
# (The Makefile names $(LIB) after including this file: the path is spelled out.)
$(B)/tests/embed_signal: tests/support/embed_signal.c $(B)/libringvm.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)
ALL_TARGETS += $(B)/tests/embed_signal

# LD_PRELOAD into ringvm: a VM-wide TSC rate its host cannot run, set before the first vCPU
# (tests/boot/state.py: ringvm must notice and mend it). Never sanitized: it loads before the runtime.
$(B)/tests/tsc_skew.so: tests/support/tsc_skew.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) -O2 -Wall -Wextra -Werror -fPIC -shared -o $@ $<
ALL_TARGETS += $(B)/tests/tsc_skew.so
