# vmm: the machine (KVM, memory, vCPUs, buses, config) and the ringvm CLI.
LIB_SRCS += vmm/guest_mem.c vmm/image.c vmm/bus.c vmm/vm.c vmm/vcpu.c vmm/vcpu_state.c vmm/state_report.c vmm/console.c vmm/devices.c \
	vmm/kcmdline.c vmm/config.c \
	vmm/ringvm.c vmm/serve.c vmm/seccomp.c vmm/privilege.c vmm/errmsg.c vmm/unix_sock.c
# The CLI: option and spec parsing, the JSON configuration file (json-c: the CLI's alone, not the
# library's), run/config and serve, --jail. The device kinds' CLI parts (cli_kind.h: each kind's
# options and JSON keys, in its folder) join CLI_KIND_SRCS from the devices' fragments, with the
# table that lists them; the CLI is linked with them, libringvm never.
CLI_SRCS += vmm/main.c vmm/cli_run.c vmm/cli_serve.c vmm/cli_parse.c vmm/cli_config.c vmm/cli_config_print.c \
	vmm/jail.c
CLI_KIND_SRCS := vmm/cli_kinds.c vmm/cli_json.c
CLI_LDLIBS := -ljson-c
DEPS_PKGS += libjson-c-dev

# The gdb remote protocol: framing (pure, unit-tested) and the session.
LIB_SRCS += vmm/gdb_packet.c
LIB_SRCS += vmm/gdb_stub.c vmm/gdb_cmds.c

# A kernel build tree as --kernel: the kconfig check and fragment (pure), the tree's files (CLI).
LIB_SRCS += vmm/kconfig.c
CLI_SRCS += vmm/cli_tree.c
