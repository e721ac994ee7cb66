/* cli_kind.h: a device kind's part in the ringvm CLI (its options, its JSON keys), one table the CLI loops over. */
#ifndef RINGVM_CLI_KIND_H
#define RINGVM_CLI_KIND_H

#include <getopt.h>
#include <stddef.h>

#include "vmm/cli_json.h"

struct ringvm_config;
struct ringvm_serve_config;

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
 * One option of `ringvm serve NAME` that a kind owns, spelled as the peer it stands in for spells
 * it (virtiofsd's --shared-dir, -o source=). Its help lines are in cli_serve_kind.help.
 */
struct cli_serve_option {
	const char *name; /* "shared-dir": --shared-dir */
	char letter;      /* 'o': -o as well; 0 for none. Unique among serve's options. */
	int has_arg;      /* getopt_long's no_argument or required_argument */
	/*
	 * The option with arg (NULL when it takes none) into cfg; what cfg must point to is kept in
	 * state (the kind's cli_kind.state_size bytes, zeroed, freed by cli_kind.free; arg stays
	 * argv's). 0, or -errno with the whole one-line message ("--queues 0: ...") in err.
	 */
	int (*parse)(void *state, struct ringvm_serve_config *cfg, const char *arg, char *err, size_t errlen);
};

/*
 * A kind's part in `ringvm serve` (vmm/cli_serve.c): its device over vhost-user, its options and
 * its lines of `serve --help`, which lists the servable kinds by their ringvm_serve_device number.
 */
struct cli_serve_kind {
	int device;               /* enum ringvm_serve_device */
	const char *usage;        /* its usage after "ringvm serve " ("fs --socket PATH ...\n"), each line
				     ending in a newline */
	const char *what;         /* what it serves, in the help's first sentence: "virtio-fs (a directory)" */
	const char *qemu_device;  /* QEMU's front-end for it: "vhost-user-fs-*" */
	const char *help;         /* its lines under Options:, each ending in a newline */
	const char *poll_us_note; /* NULL, or a note in --poll-us's help ("blk: poll_us= in --disk ...") */
	const struct cli_serve_option *options;
	unsigned int nr_options;
	size_t state_size;          /* the options' state: zeroed by the caller */
	void (*free)(void *state);  /* free what parse kept in state (not state itself); may be NULL */
};

/*
 * A device kind as the CLI knows it: the CLI side of devices/kind.h's table, built into the ringvm
 * binary only (never into libringvm: spec strings and json-c are the CLI's). Each kind in
 * devices/kinds.h's list defines `const struct cli_kind NAME_cli` in its folder
 * (devices/NAME/NAME_cli.c), an empty one (its name alone) when the CLI has nothing of it to parse;
 * vmm/cli_kinds.c lists them. The CLI parses options first, then reads the --config file into the
 * config, then applies the options over it, so an option given replaces the file's field. Every
 * callback is optional when the kind has no options, keys or serve part that would need it.
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

	/* `ringvm serve NAME`: NULL when the kind is not served to other VMMs. */
	const struct cli_serve_kind *serve;
};

/* The kinds the CLI knows, in devices/kinds.h's order (the order of --help and `config --print`). */
extern const struct cli_kind *const cli_kinds[];
extern const unsigned int nr_cli_kinds;

#endif
