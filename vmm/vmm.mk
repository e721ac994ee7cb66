# vmm: the machine (KVM, memory, vCPUs, buses, config) and the ringvm CLI.
LIB_SRCS += vmm/guest_mem.c vmm/bus.c vmm/vm.c vmm/vcpu.c vmm/vcpu_state.c vmm/state_report.c vmm/console.c vmm/devices.c vmm/config.c \
	vmm/ringvm.c vmm/serve.c vmm/seccomp.c vmm/privilege.c vmm/errmsg.c vmm/unix_sock.c
# The CLI: option and spec parsing, the JSON configuration file (json-c: the CLI's alone, not the
# library's), run/config and serve, --jail.
CLI_SRCS += vmm/main.c vmm/cli_run.c vmm/cli_serve.c vmm/cli_parse.c vmm/cli_config.c vmm/jail.c
CLI_LDLIBS := -ljson-c
DEPS_PKGS += libjson-c-dev

# The JSON file's loader and printer, with files it writes itself.
UNIT_TESTS += cli_config
test_cli_config_SRCS := vmm/cli_config.c vmm/cli_parse.c vmm/config.c vmm/errmsg.c devices/blk/blk_spec.c \
	devices/fs/fs_config.c tests/unit/test_cli_config.c
$(B)/tests/test_cli_config: LDLIBS += $(CLI_LDLIBS)

# The gdb remote protocol: framing (pure, unit-tested) and the session.
LIB_SRCS += vmm/gdb_packet.c
UNIT_TESTS += gdb_packet
test_gdb_packet_SRCS := vmm/gdb_packet.c tests/unit/test_gdb_packet.c
LIB_SRCS += vmm/gdb_stub.c vmm/gdb_cmds.c

# A kernel build tree as --kernel: the kconfig check and fragment (pure), the tree's files (CLI).
LIB_SRCS += vmm/kconfig.c
CLI_SRCS += vmm/cli_tree.c
UNIT_TESTS += kconfig
test_kconfig_SRCS := vmm/kconfig.c tests/unit/test_kconfig.c
UNIT_TESTS += cli_tree
test_cli_tree_SRCS := vmm/cli_tree.c vmm/kconfig.c vmm/errmsg.c tests/unit/test_cli_tree.c
# The fuzzer: the receiver and every packet handler, over the x86 registers and page walk.
FUZZERS += gdb_stub
fuzz_gdb_stub_SRCS := vmm/gdb_packet.c vmm/gdb_cmds.c arch/x86/gdb_x86.c arch/x86/pagewalk.c \
	vmm/guest_mem.c vmm/fuzz_gdb_stub.c
