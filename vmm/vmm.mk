# vmm: the machine (KVM, memory, vCPUs, buses, config) and the ringvm CLI.
LIB_SRCS += vmm/guest_mem.c vmm/bus.c vmm/vm.c vmm/vcpu.c vmm/console.c vmm/devices.c vmm/config.c \
	vmm/ringvm.c vmm/serve.c vmm/seccomp.c vmm/privilege.c
# The CLI: option and spec parsing, the JSON configuration file (json-c: the CLI's alone, not the
# library's), run/config and serve.
CLI_SRCS += vmm/main.c vmm/cli_run.c vmm/cli_serve.c vmm/cli_parse.c vmm/cli_config.c
CLI_LDLIBS := -ljson-c
DEPS_PKGS += libjson-c-dev

# The JSON file's loader and printer, with files it writes itself.
UNIT_TESTS += cli_config
test_cli_config_SRCS := vmm/cli_config.c vmm/cli_parse.c vmm/config.c devices/blk/blk_spec.c devices/fs/fs_config.c \
	tests/unit/test_cli_config.c
$(B)/tests/test_cli_config: LDLIBS += $(CLI_LDLIBS)
