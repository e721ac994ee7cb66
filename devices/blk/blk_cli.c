/*
 * blk_cli.c: virtio-blk disks in the ringvm CLI: the --disk option (its spec, its help lines), the
 * JSON file's "disks" key, loaded and printed, and `ringvm serve blk`'s --disk. Part of the ringvm binary only, never of
 * libringvm (spec strings and json-c are the CLI's); vmm/cli_kinds.c lists it.
 */
#include "devices/blk/blk_cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli_kind.h"
#include "vmm/cli_parse.h"

static int blk_cli_option(char *opt, struct ringvm_disk *d, const char **err)
{
	unsigned long long v;
	if (!strcmp(opt, "readonly")) {
		d->readonly = true;
	} else if (!strncmp(opt, "queues=", 7)) {
		if (cli_spec_uint(opt + 7, 1, RINGVM_MAX_QUEUES, &v))
			return cli_spec_bad(err, "queues= must be a number from 1 to 16");
		d->queues = (unsigned int)v;
	} else if (!strncmp(opt, "poll_us=", 8)) {
		if (cli_spec_uint(opt + 8, 0, RINGVM_MAX_POLL_US, &v))
			return cli_spec_bad(err, "poll_us= must be a number from 0 to 1000");
		d->poll_us = (unsigned int)v;
		d->poll_us_set = true; /* 0 too: it overrides serve's --poll-us */
	} else if (!strcmp(opt, "direct=on") || !strcmp(opt, "direct=off")) {
		d->direct = opt[8] == 'n';
	} else if (!strncmp(opt, "direct=", 7)) {
		return cli_spec_bad(err, "direct= must be on or off");
	} else if (!strncmp(opt, "id=", 3)) {
		d->id = opt + 3; /* its characters are ringvm_config_check's */
	} else if (!opt[0]) {
		return cli_spec_bad(err, "empty option (two commas in a row?)");
	} else {
		return cli_spec_bad(err, "unknown option (expected readonly, queues=N, direct=on|off, "
					 "id=STRING, poll_us=N)");
	}
	return 0;
}

int blk_cli_parse_disk(char *spec, struct ringvm_disk *out, const char **err)
{
	memset(out, 0, sizeof(*out));
	char *rest = spec;
	char *path = cli_spec_next(&rest);
	if (!path[0])
		return cli_spec_bad(err, "missing file name (PATH[,readonly][,queues=N][,direct=on|off]"
					 "[,id=STRING][,poll_us=N])");
	out->path = path;
	for (char *opt; (opt = cli_spec_next(&rest));) {
		int ret = blk_cli_option(opt, out, err);
		if (ret)
			return ret;
	}
	return 0;
}

/* The --disk options given, in order (the guest's vda, vdb, ...), and the copies they point into. */
struct blk_cli_state {
	struct ringvm_disk disks[RINGVM_MAX_DEVICES];
	char *specs[RINGVM_MAX_DEVICES];
	unsigned int nr_disks;
};

static int blk_cli_disk(void *state, const char *arg, char *err, size_t errlen)
{
	struct blk_cli_state *st = state;
	const char *why;
	if (st->nr_disks == RINGVM_MAX_DEVICES) {
		snprintf(err, errlen, "--disk: too many disks (at most %d devices)", RINGVM_MAX_DEVICES);
		return -EINVAL;
	}
	char *spec = st->specs[st->nr_disks] = cli_spec_copy(arg, err, errlen);
	if (!spec)
		return -ENOMEM;
	if (blk_cli_parse_disk(spec, &st->disks[st->nr_disks], &why)) {
		snprintf(err, errlen, "--disk %s: %s", arg, why);
		return -EINVAL;
	}
	st->nr_disks++;
	return 0;
}

/* Any --disk replaces the file's whole list. */
static void blk_cli_apply(void *state, struct ringvm_config *cfg)
{
	struct blk_cli_state *st = state;
	if (st->nr_disks) {
		cfg->disks = st->disks;
		cfg->nr_disks = st->nr_disks;
	}
}

static void blk_cli_free(void *state)
{
	struct blk_cli_state *st = state;
	/* A spec whose parse failed is kept too (at index nr_disks). */
	for (unsigned int i = 0; i <= st->nr_disks && i < RINGVM_MAX_DEVICES; i++) {
		free(st->specs[i]);
		st->specs[i] = NULL;
	}
	st->nr_disks = 0;
}

/* One object of "disks": { "path": ..., "readonly": ..., ... }, "path" required. */
static int blk_cli_load_disk(const struct cli_json *c, const char *prefix, json_object *o, void *item)
{
	struct ringvm_disk *d = item;
	int ret = cli_json_object(c, prefix, o);
	if (ret)
		return ret;
	memset(d, 0, sizeof(*d));
	json_object_object_foreach(o, key, v)
	{
		char path[96];
		cli_json_join(path, sizeof(path), prefix, key);
		if (!strcmp(key, "path"))
			ret = cli_json_string(c, path, v, &d->path);
		else if (!strcmp(key, "readonly"))
			ret = cli_json_bool(c, path, v, &d->readonly);
		else if (!strcmp(key, "direct"))
			ret = cli_json_bool(c, path, v, &d->direct);
		else if (!strcmp(key, "queues"))
			ret = cli_json_uint32(c, path, v, &d->queues);
		else if (!strcmp(key, "id"))
			ret = cli_json_string(c, path, v, &d->id);
		else if (!strcmp(key, "poll_us")) /* null: unset, the run's default (ringvm.h) */
			ret = (d->poll_us_set = !json_object_is_type(v, json_type_null)) ?
				      cli_json_uint32(c, path, v, &d->poll_us) : 0;
		else
			ret = cli_json_bad(c, path, "unknown key (path, readonly, direct, queues, id, poll_us)");
		if (ret)
			return ret;
	}
	return d->path ? 0 : cli_json_bad(c, prefix, "\"path\" is required");
}

static int blk_cli_json_load(const struct cli_json *c, const char *key, json_object *v, struct ringvm_config *cfg)
{
	if (strcmp(key, "disks"))
		return 1;
	void *disks;
	int ret = cli_json_list(c, key, v, RINGVM_MAX_DEVICES, "devices", blk_cli_load_disk,
				sizeof(struct ringvm_disk), &disks, &cfg->nr_disks);
	if (!ret)
		cfg->disks = disks;
	return ret;
}

static void blk_cli_json_print(const struct ringvm_config *cfg, json_object *o)
{
	json_object *disks = json_object_new_array();
	for (unsigned int i = 0; i < cfg->nr_disks; i++) {
		const struct ringvm_disk *d = &cfg->disks[i];
		json_object *j = json_object_new_object();
		json_object_object_add(j, "path", cli_json_new_string_or_null(d->path));
		json_object_object_add(j, "readonly", json_object_new_boolean(d->readonly));
		json_object_object_add(j, "direct", json_object_new_boolean(d->direct));
		json_object_object_add(j, "queues", json_object_new_uint64(d->queues));
		if (d->id)
			json_object_object_add(j, "id", json_object_new_string(d->id));
		/* null: unset, the run's default applies (ringvm.h) */
		bool poll = d->poll_us_set || d->poll_us;
		json_object_object_add(j, "poll_us", poll ? json_object_new_uint64(d->poll_us) : NULL);
		json_object_array_add(disks, j);
	}
	json_object_object_add(o, "disks", disks);
}

/* `ringvm serve blk --disk SPEC`: the spec as run's; given again, it replaces the first. */
struct blk_serve_state {
	char *spec; /* cfg->disk's strings point into it */
};

static int blk_serve_disk(void *state, struct ringvm_serve_config *cfg, const char *arg, char *err, size_t errlen)
{
	struct blk_serve_state *st = state;
	const char *why;
	free(st->spec);
	st->spec = cli_spec_copy(arg, err, errlen);
	if (!st->spec)
		return -ENOMEM;
	if (blk_cli_parse_disk(st->spec, &cfg->disk, &why)) {
		snprintf(err, errlen, "--disk %s: %s", arg, why);
		return -EINVAL;
	}
	return 0;
}

static void blk_serve_free(void *state)
{
	struct blk_serve_state *st = state;
	free(st->spec);
	st->spec = NULL;
}

static const struct cli_serve_option blk_serve_options[] = {
	{ .name = "disk", .has_arg = required_argument, .parse = blk_serve_disk },
};

/* A drop-in for qemu-storage-daemon's vhost-user-blk export. */
static const struct cli_serve_kind blk_serve_cli = {
	.device = RINGVM_SERVE_BLK,
	.usage = "blk --socket PATH --disk IMG[,readonly][,direct=on|off][,queues=N]\n",
	.what = "virtio-blk (an image)",
	.qemu_device = "vhost-user-blk-*",
	.help = "  --disk SPEC           blk: the image and its options, as ringvm run --disk\n",
	.poll_us_note = "blk: poll_us= in --disk,\n"
			"                        0 included, wins",
	.options = blk_serve_options,
	.nr_options = sizeof(blk_serve_options) / sizeof(blk_serve_options[0]),
	.state_size = sizeof(struct blk_serve_state),
	.free = blk_serve_free,
};

static const struct cli_kind_option blk_cli_options[] = {
	{ .name = "disk", .letter = 'd', .has_arg = required_argument, .parse = blk_cli_disk,
	  .help = "  -d, --disk SPEC       a virtio-blk disk: PATH[,readonly][,queues=N][,direct=on|off]\n"
		  "                        [,id=STRING]; repeat for /dev/vdb, /dev/vdc, ...\n" },
};

const struct cli_kind blk_cli = {
	.name = "blk",
	.options = blk_cli_options,
	.nr_options = sizeof(blk_cli_options) / sizeof(blk_cli_options[0]),
	.state_size = sizeof(struct blk_cli_state),
	.apply = blk_cli_apply,
	.free = blk_cli_free,
	.json_keys = "disks",
	.json_load = blk_cli_json_load,
	.json_print = blk_cli_json_print,
	.serve = &blk_serve_cli,
};
