/* cli_kinds.c: the device kinds' CLI parts (vmm/cli_kind.h), one line per kind; the CLI only (never libringvm). */
#include "vmm/cli_kind.h"

/*
 * X(entry) names the `const struct cli_kind` a kind's folder defines (devices/NAME/NAME_cli.c), in
 * devices/kinds.c's order: --help lists their options and `config --print` their keys this way.
 * A kind with nothing to configure from the command line (the console) has no line.
 */
#define CLI_KINDS(X)                                                                               \
	X(blk_cli) /* devices/blk: --disk, "disks" */                                               \
	X(fs_cli)  /* devices/fs: --share, --root, --fs-limits, "shares", "root", "fs_limits" */

#define CLI_KIND_DECLARE(k) extern const struct cli_kind k;
#define CLI_KIND_ENTRY(k) &k,

CLI_KINDS(CLI_KIND_DECLARE)

const struct cli_kind *const cli_kinds[] = { CLI_KINDS(CLI_KIND_ENTRY) };
const unsigned int nr_cli_kinds = sizeof(cli_kinds) / sizeof(cli_kinds[0]);
