/* cli_kind.h: a device kind's part in the ringvm CLI (its options, its JSON keys), one table the CLI loops over. */
#ifndef RINGVM_CLI_KIND_H
#define RINGVM_CLI_KIND_H

#include <getopt.h>
#include <stddef.h>

#include "vmm/cli_json.h"

struct ringvm_config;

/*
 * One option of `ringvm run` (and `ringvm config --print`) that a kind owns, the way kvmtool's
 * OPT_CALLBACK entries live with their device: getopt_long's spelling, its lines in --help, and
 * the callback that turns its value into the kind's option state.
 */
struct cli_kind_option {
	const char *name; /* "disk": --disk */
	char letter;      /* 'd': -d as well; 0 for none. No two options of the CLI share one. */
	int has_arg;      /* getopt_long's no_argument or required_argument */
	const char *help; /* its lines in `ringvm run --help`, each ending in a newline */
	/*
	 * The option given with arg (NULL when it takes none): checked and kept in state (the
	 * kind's, cli_kind.state_size bytes; arg is argv's, a parser that cuts it copies it first).
	 * 0, or -errno with the whole one-line message ("--disk X: ...") in err.
	 */
	int (*parse)(void *state, const char *arg, char *err, size_t errlen);
};

/*
 * A device kind as the CLI knows it: the CLI side of devices/kind.h's table, built into the ringvm
 * binary only (never into libringvm: spec strings and json-c are the CLI's). Each kind defines
 * `const struct cli_kind NAME_cli` in its folder (devices/NAME/NAME_cli.c); vmm/cli_kinds.c lists
 * them. The CLI parses options first, then reads the --config file into the config, then applies
 * the options over it, so an option given replaces the file's field.
 */
struct cli_kind {
	const char *name;                       /* "blk", as in devices/kind.h */
	const struct cli_kind_option *options;
	unsigned int nr_options;
	size_t state_size;                      /* the options' state: zeroed by the caller */
	/* The options given (state) over cfg, after the file: each replaces what it names. cfg then
	   points into state until free. */
	void (*apply)(void *state, struct ringvm_config *cfg);
	/* Free what parse kept in state (not state itself). Safe on a zeroed state. */
	void (*free)(void *state);

	/* Its top-level keys of the JSON file, as the unknown-key error lists them ("disks"). */
	const char *json_keys;
	/*
	 * Top-level key with value v into cfg: 1 when key is not the kind's; 0; or -errno with the
	 * error, naming the key's path, in c (cli_json_bad). What cfg points to lives as long as the
	 * file (its strings, cli_json_alloc).
	 */
	int (*json_load)(const struct cli_json *c, const char *key, json_object *v, struct ringvm_config *cfg);
	/* Its keys of cfg added to o, every field written (defaults too), in the schema json_load
	   reads back to the same config. */
	void (*json_print)(const struct ringvm_config *cfg, json_object *o);
};

/* The kinds the CLI knows, in devices/kinds.c's order (the order of --help and `config --print`). */
extern const struct cli_kind *const cli_kinds[];
extern const unsigned int nr_cli_kinds;

#endif
