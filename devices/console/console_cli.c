/* console_cli.c: the command's streams in the ringvm CLI: nothing to parse (--tty/--no-tty choose the run's terminal, not a device); the kind's empty CLI part. */
#include "vmm/cli_kind.h"

const struct cli_kind console_cli = {
	.name = "console",
};
