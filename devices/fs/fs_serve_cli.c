/*
 * fs_serve_cli.c: `ringvm serve fs` in the CLI: virtio-fs over vhost-user as a drop-in for
 * virtiofsd, with virtiofsd's spellings (--shared-dir, --cache, -o source=...). Part of the ringvm
 * binary only; fs_cli.c's entry points to it (vmm/cli_serve.c runs it).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/fs/fs_cli.h"
#include "vmm/cli_kind.h"
#include "vmm/cli_parse.h"

/* The -o lists given: the share's strings (source=) point into these copies. */
struct fs_serve_kept {
	struct fs_serve_kept *next;
	char text[];
};

struct fs_serve_state {
	struct fs_serve_kept *kept;
};

/* MODE of --cache or -o cache= (opt, as the message names it). */
static int fs_serve_cache(const char *opt, const char *v, enum ringvm_cache *out, char *err, size_t errlen)
{
	if (!strcmp(v, "auto"))
		*out = RINGVM_CACHE_AUTO;
	else if (!strcmp(v, "always"))
		*out = RINGVM_CACHE_ALWAYS;
	else if (!strcmp(v, "never") || !strcmp(v, "none")) /* virtiofsd (C) says none for never */
		*out = RINGVM_CACHE_NEVER;
	else {
		snprintf(err, errlen, "%s %s: must be auto, always or never", opt, v);
		return -EINVAL;
	}
	return 0;
}

static int fs_serve_shared_dir(void *state, struct ringvm_serve_config *cfg, const char *arg, char *err,
			       size_t errlen)
{
	(void)state, (void)err, (void)errlen;
	cfg->share.host_dir = arg;
	return 0;
}

static int fs_serve_queues(void *state, struct ringvm_serve_config *cfg, const char *arg, char *err, size_t errlen)
{
	(void)state;
	if (cli_parse_count(arg, RINGVM_MAX_QUEUES, &cfg->share.queues)) {
		snprintf(err, errlen, "--queues %s: must be a number 1..%u", arg, RINGVM_MAX_QUEUES);
		return -EINVAL;
	}
	return 0;
}

static int fs_serve_cache_opt(void *state, struct ringvm_serve_config *cfg, const char *arg, char *err,
			      size_t errlen)
{
	(void)state;
	return fs_serve_cache("--cache", arg, &cfg->share.cache, err, errlen);
}

static int fs_serve_readonly(void *state, struct ringvm_serve_config *cfg, const char *arg, char *err,
			     size_t errlen)
{
	(void)state, (void)arg, (void)err, (void)errlen;
	cfg->share.readonly = true;
	return 0;
}

static int fs_serve_direct_io(void *state, struct ringvm_serve_config *cfg, const char *arg, char *err,
			      size_t errlen)
{
	(void)state, (void)arg, (void)err, (void)errlen;
	cfg->share.allow_direct_io = true;
	return 0;
}

/* virtiofsd (C)'s -o a=b,c,...: source=, cache= and allow_direct_io are understood, the rest noted
   and ignored (a note on stderr each, in order, until a bad cache=). */
static int fs_serve_o(void *state, struct ringvm_serve_config *cfg, const char *arg, char *err, size_t errlen)
{
	struct fs_serve_state *st = state;
	size_t n = strlen(arg);
	struct fs_serve_kept *k = malloc(sizeof(*k) + n + 1);
	if (!k) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	memcpy(k->text, arg, n + 1);
	k->next = st->kept;
	st->kept = k;
	for (char *save = NULL, *o = strtok_r(k->text, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		if (!strncmp(o, "source=", 7) && o[7]) {
			cfg->share.host_dir = o + 7;
		} else if (!strncmp(o, "cache=", 6) && o[6]) {
			int ret = fs_serve_cache("-o cache=", o + 6, &cfg->share.cache, err, errlen);
			if (ret)
				return ret;
		} else if (!strcmp(o, "allow_direct_io")) {
			cfg->share.allow_direct_io = true;
		} else {
			fprintf(stderr, "ringvm: serve: -o %s ignored (virtiofsd option)\n", o);
		}
	}
	return 0;
}

static void fs_serve_free(void *state)
{
	struct fs_serve_state *st = state;
	while (st->kept) {
		struct fs_serve_kept *k = st->kept;
		st->kept = k->next;
		free(k);
	}
}

static const struct cli_serve_option fs_serve_options[] = {
	{ .name = "shared-dir", .has_arg = required_argument, .parse = fs_serve_shared_dir },
	{ .name = "queues", .has_arg = required_argument, .parse = fs_serve_queues },
	{ .name = "cache", .has_arg = required_argument, .parse = fs_serve_cache_opt },
	{ .name = "readonly", .has_arg = no_argument, .parse = fs_serve_readonly },
	{ .name = "allow-direct-io", .has_arg = no_argument, .parse = fs_serve_direct_io },
	{ .letter = 'o', .has_arg = required_argument, .parse = fs_serve_o },
};

const struct cli_serve_kind fs_serve_cli = {
	.device = RINGVM_SERVE_FS,
	.usage = "fs --socket PATH --shared-dir DIR [--queues N]\n"
		 "                       [--cache auto|always|never] [--readonly] [--allow-direct-io]\n",
	.what = "virtio-fs (a directory)",
	.qemu_device = "vhost-user-fs-*",
	.help = "  --shared-dir DIR      fs: the directory to share (also -o source=DIR)\n"
		"  --queues N            fs: request queues, 1-16 (default 1; at least QEMU's\n"
		"                        num-request-queues)\n"
		"  --cache MODE          fs: auto (default), always or never ('none' = never)\n"
		"  --readonly            fs: every change fails with EROFS\n"
		"  --allow-direct-io     fs: the guest's O_DIRECT opens are O_DIRECT on the host (default:\n"
		"                        dropped; also -o allow_direct_io)\n",
	.options = fs_serve_options,
	.nr_options = sizeof(fs_serve_options) / sizeof(fs_serve_options[0]),
	.state_size = sizeof(struct fs_serve_state),
	.free = fs_serve_free,
};
