/* spec.c: device configs from CLI spec strings, the way `ringvm run` makes them (for tests). */
#include "tests/support/spec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli_parse.h"

/* The parsers cut their input: each call works on its own copy, freed once the config is copied. */
int spec_blk_config(const char *spec, struct blk_config *out, const char **why)
{
	const char *dummy;
	char *copy = strdup(spec);
	struct ringvm_disk d;
	if (!why)
		why = &dummy;
	if (!copy)
		return -ENOMEM;
	int ret = cli_parse_disk(copy, &d, why);
	if (!ret)
		ret = blk_config_from(&d, out, why);
	free(copy);
	return ret;
}

int spec_fs_config(const char *spec, struct fs_config *out, const char **why)
{
	const char *dummy;
	char *copy = strdup(spec);
	struct ringvm_share s;
	if (!why)
		why = &dummy;
	if (!copy)
		return -ENOMEM;
	int ret = cli_parse_share(copy, &s, why);
	if (!ret)
		ret = fs_config_from(&s, out, why);
	free(copy);
	return ret;
}

int spec_fs_root(const char *spec, struct fs_config *out, const char **why)
{
	const char *dummy;
	char *copy = strdup(spec);
	struct ringvm_root r;
	if (!why)
		why = &dummy;
	if (!copy)
		return -ENOMEM;
	int ret = cli_parse_root(copy, &r, why);
	if (!ret)
		ret = fs_config_root(&r, out, why);
	free(copy);
	return ret;
}
