/* cli_kinds.c: the device kinds' CLI parts (vmm/cli_kind.h), from devices/kinds.h's list; the CLI only (never libringvm). */
#include "vmm/cli_kind.h"

#include "devices/kinds.h"

/* Every kind has a CLI part (NAME_cli, in its folder), an empty one when it has no options: --help
   lists their options and `config --print` their keys in the kinds' order. */
#define CLI_KIND_DECLARE(name) extern const struct cli_kind name##_cli;
#define CLI_KIND_ENTRY(name) &name##_cli,

DEVICE_KINDS(CLI_KIND_DECLARE)

const struct cli_kind *const cli_kinds[] = { DEVICE_KINDS(CLI_KIND_ENTRY) };
const unsigned int nr_cli_kinds = sizeof(cli_kinds) / sizeof(cli_kinds[0]);
