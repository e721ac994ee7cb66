# tests/unit/unit.mk: every unit test, in one list. Included by tests/tests.mk after the product
# fragments, whose source lists (VIRTIO_SRCS, FS_CORE_SRCS, ...) the tests link.
#
# A unit test is tests/unit/test_NAME.c, registered with two lines here:
#   UNIT_TESTS += NAME
#   test_NAME_SRCS := the exact sources it links (the code under test, its fakes, the test)
# The Makefile builds build/tests/test_NAME (and build/san/tests/test_NAME with SAN=1); tests/run runs
# every binary there and counts its TAP lines.

# Test doubles shared by the device tests: a struct vm over malloc'd RAM, the driver's side of a ring.
VIRTIO_FAKES := tests/support/fake_vm.c tests/support/fake_ring.c vmm/guest_mem.c
# Device configs from CLI spec strings (the CLI's parser, then the library's checks). The kinds' CLI
# parts bring their JSON code, so a test linking them links json-c (the Makefile's test rule).
SPEC_SRCS := tests/support/spec.c vmm/cli_parse.c $(CLI_KIND_SRCS) devices/blk/blk_spec.c devices/fs/fs_config.c

# vmm/: memory, boot, config, the CLI's parsers, seccomp, privileges, gdb framing, kconfig.
UNIT_TESTS += guest_mem boot config cli_parse cli_config cli_tree seccomp privilege gdb_packet kconfig
test_guest_mem_SRCS := vmm/guest_mem.c vmm/bus.c tests/support/proc_maps.c tests/unit/test_guest_mem.c
test_boot_SRCS := arch/x86/boot.c vmm/guest_mem.c vmm/image.c tests/unit/test_boot.c
# The typed configuration's checks (the devices' own included).
test_config_SRCS := $(LIB_SRCS) tests/unit/test_config.c
# The general values and the kinds' specs (devices/*/NAME_cli.c).
test_cli_parse_SRCS := vmm/cli_parse.c $(CLI_KIND_SRCS) tests/unit/test_cli_parse.c
# The JSON file's loader and printer (the kinds' keys included), with files it writes itself.
test_cli_config_SRCS := vmm/cli_config.c vmm/cli_config_print.c vmm/cli_parse.c $(CLI_KIND_SRCS) $(LIB_SRCS) \
	tests/unit/test_cli_config.c
# The kinds' CLI table itself: options unique, JSON keys named, loaded and printed alike.
UNIT_TESTS += cli_kinds
test_cli_kinds_SRCS := vmm/cli_parse.c $(CLI_KIND_SRCS) $(LIB_SRCS) \
	tests/unit/test_cli_kinds.c
# The tree check asks the real kinds (devices/kinds.c) what a run needs: the library is linked.
test_cli_tree_SRCS := vmm/cli_tree.c $(LIB_SRCS) tests/unit/test_cli_tree.c
test_seccomp_SRCS := vmm/seccomp.c tests/unit/test_seccomp.c
test_privilege_SRCS := vmm/privilege.c tests/unit/test_privilege.c
test_gdb_packet_SRCS := vmm/gdb_packet.c tests/unit/test_gdb_packet.c
# The machine's options over a table of fake kinds, then the real kinds' tables (the library).
test_kconfig_SRCS := $(LIB_SRCS) tests/unit/test_kconfig.c
# libringvm's life cycle with real VMs (firmware payloads), through the public API only.
UNIT_TESTS += lib
test_lib_SRCS := $(LIB_SRCS) tests/unit/test_lib.c

# arch/x86/: ACPI tables, AML, page walk, the debugger's registers, the vCPU's TSC (on /dev/kvm).
UNIT_TESTS += acpi aml pagewalk gdb_x86 tsc
test_tsc_SRCS := arch/x86/tsc.c tests/unit/test_tsc.c
test_acpi_SRCS := arch/x86/acpi.c arch/x86/aml.c tests/unit/test_acpi.c
test_aml_SRCS := arch/x86/aml.c tests/unit/test_aml.c
test_pagewalk_SRCS := arch/x86/pagewalk.c vmm/guest_mem.c tests/unit/test_pagewalk.c
test_gdb_x86_SRCS := arch/x86/gdb_x86.c arch/x86/pagewalk.c vmm/guest_mem.c tests/unit/test_gdb_x86.c

# devices/virtio and devices/blk: rings, transport, pacing, the blk request parser, blk end to end.
UNIT_TESTS += virtq mmio xfer pace worker_pace worker_batch blk_spec blk_req blk_e2e virtq_state
test_virtq_SRCS := devices/virtio/virtq.c devices/virtio/chain.c $(VIRTIO_FAKES) tests/unit/test_virtq.c
test_mmio_SRCS := $(VIRTIO_SRCS) $(VIRTIO_FAKES) tests/unit/test_mmio.c
test_xfer_SRCS := devices/virtio/xfer.c tests/unit/test_xfer.c
test_pace_SRCS := devices/virtio/pace.c tests/unit/test_pace.c
test_worker_pace_SRCS := $(VIRTIO_SRCS) $(VIRTIO_FAKES) tests/unit/test_worker_pace.c
# A receive queue's kicks in batches: a Linux-like driver and one that waits (worker.h: batch_kicks).
test_worker_batch_SRCS := $(VIRTIO_SRCS) $(VIRTIO_FAKES) tests/unit/test_worker_batch.c
# The state report of a queue (SIGUSR2): a fake ring's known state, a real worker's answer.
test_virtq_state_SRCS := $(VIRTIO_SRCS) $(VIRTIO_FAKES) tests/unit/test_virtq_state.c
# vmm/devices.c over a test-only table of fake kinds.
UNIT_TESTS += devices
test_devices_SRCS := vmm/devices.c vmm/kcmdline.c vmm/errmsg.c guest/cmdline.c vmm/seccomp.c $(VIRTIO_SRCS) \
	$(VIRTIO_FAKES) tests/unit/test_devices.c
test_blk_spec_SRCS := $(SPEC_SRCS) devices/blk/blk_spec.c tests/unit/test_blk_spec.c
test_blk_req_SRCS := devices/blk/blk_req.c devices/virtio/virtq.c devices/virtio/chain.c \
	$(VIRTIO_FAKES) tests/unit/test_blk_req.c
test_blk_e2e_SRCS := $(SPEC_SRCS) $(VIRTIO_SRCS) $(BLK_SRCS) $(VIRTIO_FAKES) vmm/seccomp.c \
	tests/unit/test_blk_e2e.c
# The sealed io_urings of virtio-blk, virtio-fs and virtio-console: declared opcodes run, everything
# else is EACCES.
UNIT_TESTS += uring
test_uring_SRCS := $(FS_CORE_SRCS) $(FS_DEV_SRCS) $(BLK_SRCS) $(CONSOLE_SRCS) $(VIRTIO_SRCS) $(VIRTIO_FAKES) \
	tests/unit/test_uring.c
# Short transfers end to end: both devices over a scripted host FUSE mount (root; skipped otherwise).
UNIT_TESTS += short_io blk_durable fs_hang
test_short_io_SRCS := $(SPEC_SRCS) $(FS_CORE_SRCS) $(FS_DEV_SRCS) $(BLK_SRCS) $(VIRTIO_SRCS) $(VIRTIO_FAKES) \
	tests/support/mmio_driver.c tests/support/host_fuse.c tests/support/fs_guest.c vmm/seccomp.c \
	tests/unit/test_short_io.c
# virtio-blk writethrough and WRITE_ZEROES without fallocate, on a scripted host FUSE mount (root).
test_blk_durable_SRCS := $(SPEC_SRCS) $(FS_CORE_SRCS) $(BLK_SRCS) $(VIRTIO_SRCS) $(VIRTIO_FAKES) \
	tests/support/mmio_driver.c tests/support/host_fuse.c vmm/seccomp.c tests/unit/test_blk_durable.c
# A READ that never completes does not wedge reset or teardown (root, /dev/fuse).
test_fs_hang_SRCS := $(SPEC_SRCS) $(FS_CORE_SRCS) $(FS_DEV_SRCS) $(VIRTIO_SRCS) $(VIRTIO_FAKES) \
	tests/support/mmio_driver.c tests/support/host_fuse.c tests/support/fs_guest.c vmm/seccomp.c \
	tests/unit/test_fs_hang.c

# devices/fs: the FUSE decoder and server, its policies and limits, the device.
UNIT_TESTS += fuse_decode fs_server fs_handle virtio_fs fs_policy fs_mounts fs_limits fs_confined
test_fuse_decode_SRCS := devices/fs/fuse_decode.c tests/unit/test_fuse_decode.c
test_fs_server_SRCS := $(FS_CORE_SRCS) tests/unit/test_fs_server.c
# The handle table's references under threads: a handle released while readers hold it.
test_fs_handle_SRCS := $(FS_CORE_SRCS) tests/unit/test_fs_handle.c
test_fs_policy_SRCS := $(SPEC_SRCS) $(FS_CORE_SRCS) devices/fs/fs_config.c tests/support/fs_call.c \
	tests/unit/test_fs_policy.c
test_fs_mounts_SRCS := $(FS_CORE_SRCS) tests/support/fs_call.c tests/unit/test_fs_mounts.c
# Every FUSE operation served under the virtio-fs worker's seccomp filter.
test_fs_confined_SRCS := $(FS_CORE_SRCS) tests/support/fs_call.c vmm/seccomp.c tests/unit/test_fs_confined.c
test_fs_limits_SRCS := $(FS_CORE_SRCS) tests/support/fs_call.c tests/unit/test_fs_limits.c
test_virtio_fs_SRCS := $(SPEC_SRCS) $(FS_CORE_SRCS) $(FS_DEV_SRCS) $(VIRTIO_SRCS) $(VIRTIO_FAKES) \
	tests/support/mmio_driver.c vmm/seccomp.c tests/unit/test_virtio_fs.c

# devices/console: the control queue's messages; the device under its workers' seccomp filter (kill
# mode, as in ringvm: vmm/seccomp.c).
UNIT_TESTS += vcon_ctrl virtio_console
test_vcon_ctrl_SRCS := devices/console/vcon_ctrl.c tests/unit/test_vcon_ctrl.c
test_virtio_console_SRCS := $(CONSOLE_SRCS) $(VIRTIO_SRCS) $(VIRTIO_FAKES) tests/support/mmio_driver.c \
	vmm/seccomp.c tests/unit/test_virtio_console.c

# devices/vhost_user: the decoder; the back-end end to end on a socketpair, a test front-end
# (tests/support/vu_front.c) with fake rings in a memfd, real devices and workers.
VU_FRONT := tests/support/vu_front.c tests/support/fake_ring.c
VU_VIRTIO := devices/virtio/virtq.c devices/virtio/chain.c devices/virtio/uring.c \
	devices/virtio/worker.c devices/virtio/worker_life.c devices/virtio/pace.c \
	devices/virtio/core.c devices/virtio/virtq_state.c
UNIT_TESTS += vu_decode vu_blk vu_fs
test_vu_decode_SRCS := devices/vhost_user/vu_decode.c tests/unit/test_vu_decode.c
test_vu_blk_SRCS := $(SPEC_SRCS) $(VU_SRCS) $(VU_VIRTIO) $(BLK_SRCS) devices/virtio/xfer.c vmm/guest_mem.c \
	$(VU_FRONT) vmm/seccomp.c tests/unit/test_vu_blk.c
test_vu_fs_SRCS := $(VU_SRCS) $(VU_VIRTIO) $(FS_CORE_SRCS) $(FS_DEV_SRCS) vmm/guest_mem.c \
	$(VU_FRONT) vmm/seccomp.c tests/unit/test_vu_fs.c
# A READ abandoned under a memory table never copies into reused memory (root, /dev/fuse).
UNIT_TESTS += vu_fs_hang
test_vu_fs_hang_SRCS := $(VU_SRCS) $(VU_VIRTIO) $(FS_CORE_SRCS) $(FS_DEV_SRCS) vmm/guest_mem.c \
	$(VU_FRONT) vmm/seccomp.c tests/support/host_fuse.c tests/support/proc_maps.c \
	tests/unit/test_vu_fs_hang.c

# guest/: PID 1's parts on the host (the decoder is shared with the VMM).
UNIT_TESTS += guest_sigfwd guest_stdio guest_cmdline guest_relay guest_vport guest_launch guest_drain \
	guest_mounts
test_guest_sigfwd_SRCS := guest/sigfwd.c tests/unit/test_guest_sigfwd.c
# PID 1's wait loop (guest/stdio.c) with pipes for ports: status, output, forwarded signals.
test_guest_stdio_SRCS := guest/stdio.c guest/relay.c guest/vport.c guest/sigfwd.c guest/say.c \
	tests/unit/test_guest_stdio.c
test_guest_cmdline_SRCS := guest/cmdline.c tests/unit/test_guest_cmdline.c
test_guest_launch_SRCS := guest/launch.c guest/cmdline.c tests/unit/test_guest_launch.c
test_guest_relay_SRCS := guest/relay.c tests/unit/test_guest_relay.c
test_guest_vport_SRCS := guest/vport.c tests/unit/test_guest_vport.c
test_guest_drain_SRCS := guest/drain.c tests/unit/test_guest_drain.c
test_guest_mounts_SRCS := guest/mounts.c guest/cmdline.c tests/unit/test_guest_mounts.c

# tests/bench/device: the benchmark driver's ring against ringvm's device-side ring, its histogram
# and its data pattern (the test stays beside the benchmark it checks).
UNIT_TESTS += bench_dvq
test_bench_dvq_SRCS := $(addprefix tests/bench/device/,dvq.c dmem.c stats.c workload.c test_dvq.c) \
	devices/virtio/virtq.c devices/virtio/chain.c vmm/guest_mem.c
