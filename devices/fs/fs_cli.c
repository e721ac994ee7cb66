/*
 * fs_cli.c: virtio-fs shares and the root in the ringvm CLI: the --share, --root and --fs-limits
 * options (their specs, their help lines) and the JSON file's "shares", "root" and "fs_limits"
 * keys, loaded and printed. Part of the ringvm binary only, never of libringvm (spec strings and
 * json-c are the CLI's); vmm/cli_kinds.c lists it.
 */
#include "devices/fs/fs_cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli_kind.h"
#include "vmm/cli_parse.h"

/* The names of enum ringvm_cache and enum ringvm_xattr, in the enums' order (specs and JSON). */
static const char *const fs_cli_caches[] = { "auto", "always", "never" };
static const char *const fs_cli_xattrs[] = { "user", "none", "security", "all" };
#define FS_CLI_NR_CACHES 3
#define FS_CLI_NR_XATTRS 4

static int fs_cli_share_option(char *opt, struct ringvm_share *s, const char **err)
{
	unsigned long long v;
	int i;
	if (!strcmp(opt, "readonly") || !strcmp(opt, "ro")) {
		s->readonly = true;
	} else if (!strncmp(opt, "cache=", 6)) {
		if ((i = cli_spec_pick(opt + 6, fs_cli_caches, FS_CLI_NR_CACHES)) < 0)
			return cli_spec_bad(err, "cache= must be auto, always or never");
		s->cache = (enum ringvm_cache)i;
	} else if (!strncmp(opt, "tag=", 4)) {
		s->tag = opt + 4; /* its characters are ringvm_config_check's */
	} else if (!strcmp(opt, "dev")) {
		s->dev = true;
	} else if (!strcmp(opt, "suid")) {
		s->suid = true;
	} else if (!strcmp(opt, "allow_direct_io")) {
		s->allow_direct_io = true;
	} else if (!strncmp(opt, "xattr=", 6)) {
		if ((i = cli_spec_pick(opt + 6, fs_cli_xattrs, FS_CLI_NR_XATTRS)) < 0)
			return cli_spec_bad(err, "xattr= must be user, none, security or all");
		s->xattr = (enum ringvm_xattr)i;
	} else if (!strncmp(opt, "queues=", 7)) {
		if (cli_spec_uint(opt + 7, 1, RINGVM_MAX_QUEUES, &v))
			return cli_spec_bad(err, "queues= must be 1..16");
		s->queues = (unsigned int)v;
	} else {
		return cli_spec_bad(err, "unknown option (readonly, cache=, tag=, queues=, dev, suid, xattr=, "
					 "allow_direct_io)");
	}
	return 0;
}

int fs_cli_parse_share(char *spec, struct ringvm_share *out, const char **err)
{
	memset(out, 0, sizeof(*out));
	char *colon = strchr(spec, ':');
	if (!colon || colon == spec)
		return cli_spec_bad(err, "expected HOSTDIR:GUESTDIR[,options]");
	*colon = '\0';
	out->host_dir = spec;
	char *rest = colon + 1;
	out->guest_dir = cli_spec_next(&rest);
	if (out->guest_dir[0] != '/')
		return cli_spec_bad(err, "GUESTDIR must be an absolute path");
	for (char *opt; (opt = cli_spec_next(&rest));) {
		int ret = fs_cli_share_option(opt, out, err);
		if (ret)
			return ret;
	}
	return 0;
}

int fs_cli_parse_root(char *spec, struct ringvm_root *out, const char **err)
{
	memset(out, 0, sizeof(*out));
	char *rest = spec;
	out->host_dir = cli_spec_next(&rest);
	if (!out->host_dir[0])
		return cli_spec_bad(err, "expected HOSTDIR[,rw]");
	if (rest && !strcmp(rest, "rw"))
		out->writable = true;
	else if (rest)
		return cli_spec_bad(err, "the only --root option is ,rw");
	return 0;
}

int fs_cli_parse_limits(const char *spec, struct ringvm_fs_limits *out, const char **err)
{
	static const char usage[] = "expected fds=N,dir_buffers=N with N in 1..1073741824";
	memset(out, 0, sizeof(*out));
	const char *opt = spec;
	while (*opt) {
		const char *next = strchr(opt, ',');
		size_t n = next ? (size_t)(next - opt) : strlen(opt);
		char buf[32];
		if (n >= sizeof(buf))
			return cli_spec_bad(err, usage);
		memcpy(buf, opt, n);
		buf[n] = '\0';
		unsigned long long v;
		if (!strncmp(buf, "fds=", 4) && !cli_spec_uint(buf + 4, 1, RINGVM_MAX_FS_LIMIT, &v))
			out->fds = v;
		else if (!strncmp(buf, "dir_buffers=", 12) && !cli_spec_uint(buf + 12, 1, RINGVM_MAX_FS_LIMIT, &v))
			out->dir_buffers = v;
		else
			return cli_spec_bad(err, usage);
		if (!next)
			break;
		opt = next + 1;
	}
	if (!out->fds && !out->dir_buffers)
		return cli_spec_bad(err, usage);
	return 0;
}

/* The options given: the shares in order, the root, the limits, and the copies they point into. */
struct fs_cli_state {
	struct ringvm_share shares[RINGVM_MAX_DEVICES];
	char *specs[RINGVM_MAX_DEVICES];
	unsigned int nr_shares;
	struct ringvm_root root;
	char *root_spec;
	struct ringvm_fs_limits limits;
	bool limits_set;
};

static int fs_cli_share(void *state, const char *arg, char *err, size_t errlen)
{
	struct fs_cli_state *st = state;
	const char *why;
	if (st->nr_shares == RINGVM_MAX_DEVICES) {
		snprintf(err, errlen, "--share: too many shares (at most %d devices)", RINGVM_MAX_DEVICES);
		return -EINVAL;
	}
	char *spec = st->specs[st->nr_shares] = cli_spec_copy(arg, err, errlen);
	if (!spec)
		return -ENOMEM;
	if (fs_cli_parse_share(spec, &st->shares[st->nr_shares], &why)) {
		snprintf(err, errlen, "--share %s: %s", arg, why);
		return -EINVAL;
	}
	st->nr_shares++;
	return 0;
}

static int fs_cli_root(void *state, const char *arg, char *err, size_t errlen)
{
	struct fs_cli_state *st = state;
	const char *why;
	if (st->root.host_dir) {
		snprintf(err, errlen, "--root given twice");
		return -EINVAL;
	}
	free(st->root_spec);
	st->root_spec = cli_spec_copy(arg, err, errlen);
	if (!st->root_spec)
		return -ENOMEM;
	if (fs_cli_parse_root(st->root_spec, &st->root, &why)) {
		snprintf(err, errlen, "--root %s: %s", arg, why);
		return -EINVAL;
	}
	return 0;
}

static int fs_cli_limits(void *state, const char *arg, char *err, size_t errlen)
{
	struct fs_cli_state *st = state;
	const char *why;
	if (fs_cli_parse_limits(arg, &st->limits, &why)) {
		snprintf(err, errlen, "--fs-limits %s: %s", arg, why);
		return -EINVAL;
	}
	st->limits_set = true;
	return 0;
}

/* Any --share replaces the file's whole list; --fs-limits only the limits it names. */
static void fs_cli_apply(void *state, struct ringvm_config *cfg)
{
	struct fs_cli_state *st = state;
	if (st->nr_shares) {
		cfg->shares = st->shares;
		cfg->nr_shares = st->nr_shares;
	}
	if (st->root.host_dir)
		cfg->root = st->root;
	if (st->limits_set) {
		if (st->limits.fds)
			cfg->fs_limits.fds = st->limits.fds;
		if (st->limits.dir_buffers)
			cfg->fs_limits.dir_buffers = st->limits.dir_buffers;
	}
}

static void fs_cli_free(void *state)
{
	struct fs_cli_state *st = state;
	/* A spec whose parse failed is kept too (at index nr_shares). */
	for (unsigned int i = 0; i <= st->nr_shares && i < RINGVM_MAX_DEVICES; i++) {
		free(st->specs[i]);
		st->specs[i] = NULL;
	}
	st->nr_shares = 0;
	free(st->root_spec);
	st->root_spec = NULL;
}

/* One object of "shares", "host_dir" and "guest_dir" required. */
static int fs_cli_load_share(const struct cli_json *c, const char *prefix, json_object *o, void *item)
{
	struct ringvm_share *s = item;
	int ret = cli_json_object(c, prefix, o), e = 0;
	if (ret)
		return ret;
	memset(s, 0, sizeof(*s));
	json_object_object_foreach(o, key, v)
	{
		char path[96];
		cli_json_join(path, sizeof(path), prefix, key);
		if (!strcmp(key, "host_dir")) {
			ret = cli_json_string(c, path, v, &s->host_dir);
		} else if (!strcmp(key, "guest_dir")) {
			ret = cli_json_string(c, path, v, &s->guest_dir);
		} else if (!strcmp(key, "tag")) {
			ret = cli_json_string(c, path, v, &s->tag);
		} else if (!strcmp(key, "readonly")) {
			ret = cli_json_bool(c, path, v, &s->readonly);
		} else if (!strcmp(key, "cache")) {
			ret = cli_json_enum(c, path, v, fs_cli_caches, FS_CLI_NR_CACHES, &e);
			s->cache = (enum ringvm_cache)e;
		} else if (!strcmp(key, "queues")) {
			ret = cli_json_uint32(c, path, v, &s->queues);
		} else if (!strcmp(key, "dev")) {
			ret = cli_json_bool(c, path, v, &s->dev);
		} else if (!strcmp(key, "suid")) {
			ret = cli_json_bool(c, path, v, &s->suid);
		} else if (!strcmp(key, "xattr")) {
			ret = cli_json_enum(c, path, v, fs_cli_xattrs, FS_CLI_NR_XATTRS, &e);
			s->xattr = (enum ringvm_xattr)e;
		} else if (!strcmp(key, "allow_direct_io")) {
			ret = cli_json_bool(c, path, v, &s->allow_direct_io);
		} else {
			ret = cli_json_bad(c, path, "unknown key (host_dir, guest_dir, tag, readonly, cache, queues, "
						    "dev, suid, xattr, allow_direct_io)");
		}
		if (ret)
			return ret;
	}
	if (!s->host_dir || !s->guest_dir)
		return cli_json_bad(c, prefix, "\"host_dir\" and \"guest_dir\" are required");
	return 0;
}

static int fs_cli_load_root(const struct cli_json *c, json_object *o, struct ringvm_root *r)
{
	int ret = cli_json_object(c, "root", o);
	if (ret)
		return ret;
	memset(r, 0, sizeof(*r));
	json_object_object_foreach(o, key, v)
	{
		char path[64];
		cli_json_join(path, sizeof(path), "root", key);
		if (ret)
			break;
		if (!strcmp(key, "host_dir"))
			ret = cli_json_string(c, path, v, &r->host_dir);
		else if (!strcmp(key, "writable"))
			ret = cli_json_bool(c, path, v, &r->writable);
		else
			ret = cli_json_bad(c, path, "unknown key (host_dir, writable)");
	}
	if (!ret && !r->host_dir)
		ret = cli_json_bad(c, "root", "\"host_dir\" is required");
	return ret;
}

static int fs_cli_load_limits(const struct cli_json *c, json_object *o, struct ringvm_fs_limits *l)
{
	int ret = cli_json_object(c, "fs_limits", o);
	if (ret)
		return ret;
	json_object_object_foreach(o, key, v)
	{
		char path[64];
		cli_json_join(path, sizeof(path), "fs_limits", key);
		if (ret)
			break;
		if (!strcmp(key, "fds"))
			ret = cli_json_uint(c, path, v, RINGVM_MAX_FS_LIMIT, &l->fds);
		else if (!strcmp(key, "dir_buffers"))
			ret = cli_json_uint(c, path, v, RINGVM_MAX_FS_LIMIT, &l->dir_buffers);
		else
			ret = cli_json_bad(c, path, "unknown key (fds, dir_buffers)");
	}
	return ret;
}

static int fs_cli_json_load(const struct cli_json *c, const char *key, json_object *v, struct ringvm_config *cfg)
{
	if (!strcmp(key, "root"))
		return fs_cli_load_root(c, v, &cfg->root);
	if (!strcmp(key, "fs_limits"))
		return fs_cli_load_limits(c, v, &cfg->fs_limits);
	if (strcmp(key, "shares"))
		return 1;
	void *shares;
	int ret = cli_json_list(c, key, v, RINGVM_MAX_DEVICES, "devices", fs_cli_load_share,
				sizeof(struct ringvm_share), &shares, &cfg->nr_shares);
	if (!ret)
		cfg->shares = shares;
	return ret;
}

static json_object *fs_cli_share_json(const struct ringvm_share *s)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "host_dir", cli_json_new_string_or_null(s->host_dir));
	json_object_object_add(o, "guest_dir", cli_json_new_string_or_null(s->guest_dir));
	if (s->tag)
		json_object_object_add(o, "tag", json_object_new_string(s->tag));
	json_object_object_add(o, "readonly", json_object_new_boolean(s->readonly));
	json_object_object_add(o, "cache", json_object_new_string(cli_json_name_of(fs_cli_caches, FS_CLI_NR_CACHES,
										   (int)s->cache)));
	json_object_object_add(o, "queues", json_object_new_uint64(s->queues));
	json_object_object_add(o, "dev", json_object_new_boolean(s->dev));
	json_object_object_add(o, "suid", json_object_new_boolean(s->suid));
	json_object_object_add(o, "xattr", json_object_new_string(cli_json_name_of(fs_cli_xattrs, FS_CLI_NR_XATTRS,
										   (int)s->xattr)));
	json_object_object_add(o, "allow_direct_io", json_object_new_boolean(s->allow_direct_io));
	return o;
}

static void fs_cli_json_print(const struct ringvm_config *cfg, json_object *o)
{
	json_object *shares = json_object_new_array();
	for (unsigned int i = 0; i < cfg->nr_shares; i++)
		json_object_array_add(shares, fs_cli_share_json(&cfg->shares[i]));
	json_object_object_add(o, "shares", shares);
	if (cfg->root.host_dir) {
		json_object *r = json_object_new_object();
		json_object_object_add(r, "host_dir", json_object_new_string(cfg->root.host_dir));
		json_object_object_add(r, "writable", json_object_new_boolean(cfg->root.writable));
		json_object_object_add(o, "root", r);
	}
	json_object *l = json_object_new_object();
	json_object_object_add(l, "fds", json_object_new_uint64(cfg->fs_limits.fds));
	json_object_object_add(l, "dir_buffers", json_object_new_uint64(cfg->fs_limits.dir_buffers));
	json_object_object_add(o, "fs_limits", l);
}

static const struct cli_kind_option fs_cli_options[] = {
	{ .name = "share", .letter = 's', .has_arg = required_argument, .parse = fs_cli_share,
	  .help = "  -s, --share SPEC      a host directory over virtio-fs: HOSTDIR:GUESTDIR[,readonly]\n"
		  "                        [,cache=auto|always|never][,tag=NAME][,queues=N][,dev][,suid]\n"
		  "                        [,xattr=user|none|security|all][,allow_direct_io]; repeatable.\n"
		  "                        dev: allow device nodes; suid: keep setuid/setgid bits; xattr:\n"
		  "                        namespaces passed (default user: user.* and POSIX ACLs);\n"
		  "                        allow_direct_io: the guest's O_DIRECT is O_DIRECT on the host\n" },
	{ .name = "root", .letter = 'r', .has_arg = required_argument, .parse = fs_cli_root,
	  .help = "  -r, --root HOSTDIR[,rw]  boot with HOSTDIR as the guest's root over virtio-fs,\n"
		  "                        read-only under a tmpfs overlay (rw: writes go through)\n" },
	{ .name = "fs-limits", .has_arg = required_argument, .parse = fs_cli_limits,
	  .help = "      --fs-limits fds=N,dir_buffers=N  what all shares together may hold on the\n"
		  "                        host: fds (inodes the guest holds + open files; default the\n"
		  "                        fd limit less 1024, at most 2^20) and 8 KiB directory buffers\n"
		  "                        (default 2048 = 16 MiB); past them the guest gets ENFILE\n" },
};

const struct cli_kind fs_cli = {
	.name = "fs",
	.options = fs_cli_options,
	.nr_options = sizeof(fs_cli_options) / sizeof(fs_cli_options[0]),
	.state_size = sizeof(struct fs_cli_state),
	.apply = fs_cli_apply,
	.free = fs_cli_free,
	.json_keys = "shares, root, fs_limits",
	.json_load = fs_cli_json_load,
	.json_print = fs_cli_json_print,
	.serve = &fs_serve_cli, /* fs_serve_cli.c */
};
