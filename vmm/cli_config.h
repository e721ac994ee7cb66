/* cli_config.h: the typed configuration as a JSON file: `ringvm run --config FILE`, `ringvm config --print`. */
#ifndef RINGVM_CLI_CONFIG_H
#define RINGVM_CLI_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "include/ringvm.h"

struct json_object;
struct cli_json_block;

/* What a loaded file's config points into: the parsed file (its strings) and the arrays made for
   it (the disks, shares, command, environment: vmm/cli_json.h's cli_json_alloc). */
struct cli_config_file {
	struct json_object *root;
	struct cli_json_block *kept;
	bool initrd_set; /* the file says "initrd" (null: none), so the CLI's default does not apply */
};

/*
 * Read FILE (at most 1 MiB of JSON, README "Configuration file" has the schema) into cfg: every
 * key present replaces that field, the others keep what cfg had. Each key is checked for its type
 * (and enum values, integer ranges that the struct cannot hold); the library's ringvm_config_check
 * does the rest. 0, or -errno with one line in err naming the file and the key's path
 * ("vm.json: disks[1].queues: expected an integer"), or the line of a syntax error. cfg then
 * points into f until cli_config_free(f), which is safe on a zeroed or failed f.
 */
__attribute__((warn_unused_result)) int cli_config_load(const char *path, struct ringvm_config *cfg,
							struct cli_config_file *f, char *err, size_t errlen);
void cli_config_free(struct cli_config_file *f);

/* The JSON names of enum ringvm_tty, in the enum's order. */
extern const char *const cli_tty_names[3];

/* cfg as JSON in the same schema, every field written (defaults too; the device kinds' keys by
   their vmm/cli_kinds.c entries): what `config --print`
   shows and what cli_config_load reads back to the same config. 0 or -ENOMEM. */
__attribute__((warn_unused_result)) int cli_config_print(const struct ringvm_config *cfg, FILE *out);

#endif
