# vmm: the machine (KVM, memory, vCPUs, buses, config) and the ringvm CLI.
LIB_SRCS += vmm/guest_mem.c vmm/bus.c vmm/vm.c vmm/vcpu.c vmm/console.c vmm/devices.c vmm/config.c \
	vmm/ringvm.c vmm/serve.c vmm/seccomp.c vmm/privilege.c
CLI_SRCS += vmm/main.c vmm/cli_serve.c vmm/cli_parse.c
