/* spec.c: device configs from CLI spec strings, the way `ringvm run` makes them (for tests). */
#include "tests/support/spec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/blk/blk_cli.h"
#include "devices/fs/fs_cli.h"

/* Each kind's two steps: the CLI's parser into the public struct, the library's check into the
   device's config. */
static int blk_steps(char *copy, void *out, const char **why)
{
	struct ringvm_disk d;
	int ret = blk_cli_parse_disk(copy, &d, why);
	return ret ? ret : blk_config_from(&d, out, why);
}

static int share_steps(char *copy, void *out, const char **why)
{
	struct ringvm_share s;
	int ret = fs_cli_parse_share(copy, &s, why);
	return ret ? ret : fs_config_from(&s, out, why);
}

static int root_steps(char *copy, void *out, const char **why)
{
	struct ringvm_root r;
	int ret = fs_cli_parse_root(copy, &r, why);
	return ret ? ret : fs_config_root(&r, out, why);
}

/* The parsers cut their input: each call works on its own copy, freed once the config is copied. */
static int on_copy(const char *spec, void *out, const char **why,
		   int (*steps)(char *copy, void *out, const char **why))
{
	const char *dummy;
	char *copy = strdup(spec);
	if (!copy)
		return -ENOMEM;
	int ret = steps(copy, out, why ? why : &dummy);
	free(copy);
	return ret;
}

int spec_blk_config(const char *spec, struct blk_config *out, const char **why)
{
	return on_copy(spec, out, why, blk_steps);
}

int spec_fs_config(const char *spec, struct fs_config *out, const char **why)
{
	return on_copy(spec, out, why, share_steps);
}

int spec_fs_root(const char *spec, struct fs_config *out, const char **why)
{
	return on_copy(spec, out, why, root_steps);
}
