/* cli_config.c: a JSON configuration file (json-c) into struct ringvm_config and back, every key checked. */
#define _GNU_SOURCE
#include "vmm/cli_config.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/cli_parse.h"

#define CONFIG_MAX_BYTES (1 << 20)
#define CONFIG_MAX_ARGS 4096

const char *const cli_cache_names[3] = { "auto", "always", "never" };
const char *const cli_xattr_names[4] = { "user", "none", "security", "all" };
const char *const cli_tty_names[3] = { "auto", "on", "off" };

/* Where we are in the file, for the error line. */
struct jctx {
	const char *file;
	char *err;
	size_t errlen;
};

static int jbad(const struct jctx *c, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int jbad(const struct jctx *c, const char *path, const char *fmt, ...)
{
	char what[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "%s: %s: %s", c->file, path, what);
	return -EINVAL;
}

static int j_string(const struct jctx *c, const char *path, json_object *v, const char **out)
{
	if (!json_object_is_type(v, json_type_string))
		return jbad(c, path, "expected a string");
	const char *s = json_object_get_string(v);
	if (strlen(s) != (size_t)json_object_get_string_len(v))
		return jbad(c, path, "a string with a NUL in it");
	*out = s;
	return 0;
}

static int j_bool(const struct jctx *c, const char *path, json_object *v, bool *out)
{
	if (!json_object_is_type(v, json_type_boolean))
		return jbad(c, path, "expected true or false");
	*out = json_object_get_boolean(v);
	return 0;
}

/* A non-negative integer up to max. */
static int j_uint(const struct jctx *c, const char *path, json_object *v, uint64_t max, uint64_t *out)
{
	if (!json_object_is_type(v, json_type_int))
		return jbad(c, path, "expected an integer");
	/* json-c keeps integers above INT64_MAX as uint64: read it that way when non-negative. */
	int64_t s = json_object_get_int64(v);
	if (s < 0)
		return jbad(c, path, "expected an integer from 0 to %llu", (unsigned long long)max);
	uint64_t u = json_object_get_uint64(v);
	if (u > max)
		return jbad(c, path, "expected an integer from 0 to %llu", (unsigned long long)max);
	*out = u;
	return 0;
}

static int j_uint32(const struct jctx *c, const char *path, json_object *v, unsigned int *out)
{
	uint64_t u;
	int ret = j_uint(c, path, v, UINT32_MAX, &u);
	if (!ret)
		*out = (unsigned int)u;
	return ret;
}

static int j_enum(const struct jctx *c, const char *path, json_object *v, const char *const *names, int n,
		  int *out)
{
	const char *s;
	int ret = j_string(c, path, v, &s);
	if (ret)
		return ret;
	for (int i = 0; i < n; i++) {
		if (!strcmp(s, names[i])) {
			*out = i;
			return 0;
		}
	}
	char list[96] = "";
	for (int i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "", names[i]);
	return jbad(c, path, "'%s' is not one of %s", s, list);
}

static int j_object(const struct jctx *c, const char *path, json_object *v)
{
	return json_object_is_type(v, json_type_object) ? 0 : jbad(c, path, "expected an object");
}

/* path = prefix + "." + key, cut to fit. */
static void j_join(char *path, size_t len, const char *prefix, const char *key)
{
	snprintf(path, len, "%s%s%s", prefix, *prefix ? "." : "", key);
}

static int load_disk(const struct jctx *c, const char *prefix, json_object *o, struct ringvm_disk *d)
{
	int ret = j_object(c, prefix, o);
	if (ret)
		return ret;
	memset(d, 0, sizeof(*d));
	json_object_object_foreach(o, key, v)
	{
		char path[96];
		j_join(path, sizeof(path), prefix, key);
		if (!strcmp(key, "path"))
			ret = j_string(c, path, v, &d->path);
		else if (!strcmp(key, "readonly"))
			ret = j_bool(c, path, v, &d->readonly);
		else if (!strcmp(key, "direct"))
			ret = j_bool(c, path, v, &d->direct);
		else if (!strcmp(key, "queues"))
			ret = j_uint32(c, path, v, &d->queues);
		else if (!strcmp(key, "id"))
			ret = j_string(c, path, v, &d->id);
		else if (!strcmp(key, "poll_us")) /* null: unset, the run's default (ringvm.h) */
			ret = (d->poll_us_set = !json_object_is_type(v, json_type_null)) ?
				      j_uint32(c, path, v, &d->poll_us) : 0;
		else
			ret = jbad(c, path, "unknown key (path, readonly, direct, queues, id, poll_us)");
		if (ret)
			return ret;
	}
	return d->path ? 0 : jbad(c, prefix, "\"path\" is required");
}

static int load_share(const struct jctx *c, const char *prefix, json_object *o, struct ringvm_share *s)
{
	int ret = j_object(c, prefix, o), e = 0;
	if (ret)
		return ret;
	memset(s, 0, sizeof(*s));
	json_object_object_foreach(o, key, v)
	{
		char path[96];
		j_join(path, sizeof(path), prefix, key);
		if (!strcmp(key, "host_dir")) {
			ret = j_string(c, path, v, &s->host_dir);
		} else if (!strcmp(key, "guest_dir")) {
			ret = j_string(c, path, v, &s->guest_dir);
		} else if (!strcmp(key, "tag")) {
			ret = j_string(c, path, v, &s->tag);
		} else if (!strcmp(key, "readonly")) {
			ret = j_bool(c, path, v, &s->readonly);
		} else if (!strcmp(key, "cache")) {
			ret = j_enum(c, path, v, cli_cache_names, 3, &e);
			s->cache = (enum ringvm_cache)e;
		} else if (!strcmp(key, "queues")) {
			ret = j_uint32(c, path, v, &s->queues);
		} else if (!strcmp(key, "dev")) {
			ret = j_bool(c, path, v, &s->dev);
		} else if (!strcmp(key, "suid")) {
			ret = j_bool(c, path, v, &s->suid);
		} else if (!strcmp(key, "xattr")) {
			ret = j_enum(c, path, v, cli_xattr_names, 4, &e);
			s->xattr = (enum ringvm_xattr)e;
		} else if (!strcmp(key, "allow_direct_io")) {
			ret = j_bool(c, path, v, &s->allow_direct_io);
		} else {
			ret = jbad(c, path, "unknown key (host_dir, guest_dir, tag, readonly, cache, queues, dev, "
					    "suid, xattr, allow_direct_io)");
		}
		if (ret)
			return ret;
	}
	if (!s->host_dir || !s->guest_dir)
		return jbad(c, prefix, "\"host_dir\" and \"guest_dir\" are required");
	return 0;
}

/* An array of at most max items (`items` names them in the errors: "devices", "strings"), each
   through one of the loaders below into items[i]; *count set. */
static int load_list(const struct jctx *c, const char *name, json_object *v, size_t max, const char *noun,
		     unsigned int *count, int (*one)(const struct jctx *, const char *, json_object *, void *),
		     void *items, size_t item_size)
{
	if (!json_object_is_type(v, json_type_array))
		return jbad(c, name, "expected an array of %s", noun);
	size_t n = json_object_array_length(v);
	if (n > max)
		return jbad(c, name, "at most %zu %s", max, noun);
	for (size_t i = 0; i < n; i++) {
		char path[64];
		snprintf(path, sizeof(path), "%s[%zu]", name, i);
		int ret = one(c, path, json_object_array_get_idx(v, i), (char *)items + i * item_size);
		if (ret)
			return ret;
	}
	*count = (unsigned int)n;
	return 0;
}

static int one_disk(const struct jctx *c, const char *p, json_object *o, void *item)
{
	return load_disk(c, p, o, item);
}

static int one_share(const struct jctx *c, const char *p, json_object *o, void *item)
{
	return load_share(c, p, o, item);
}

static int one_string(const struct jctx *c, const char *p, json_object *v, void *item)
{
	return j_string(c, p, v, item);
}

/* An --env entry: NAME=VALUE with a name. */
static int one_env(const struct jctx *c, const char *p, json_object *v, void *item)
{
	const char **s = item;
	int ret = j_string(c, p, v, s);
	if (!ret && (!strchr(*s, '=') || (*s)[0] == '='))
		ret = jbad(c, p, "'%s': want NAME=VALUE", *s);
	return ret;
}

static int load_command(const struct jctx *c, json_object *v, struct ringvm_config *cfg, struct cli_config_file *f)
{
	/* Room for the array as it is (load_list refuses anything else), and the NULL after it. */
	size_t n = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;
	free(f->argv);
	f->argv = calloc((n > CONFIG_MAX_ARGS ? 0 : n) + 1, sizeof(*f->argv));
	if (!f->argv)
		return -ENOMEM;
	int ret = load_list(c, "command", v, CONFIG_MAX_ARGS, "strings", &cfg->argc, one_string, f->argv,
			    sizeof(f->argv[0]));
	if (!ret)
		cfg->argv = f->argv;
	return ret;
}

static int load_root(const struct jctx *c, json_object *o, struct ringvm_root *r)
{
	int ret = j_object(c, "root", o);
	if (ret)
		return ret;
	memset(r, 0, sizeof(*r));
	json_object_object_foreach(o, key, v)
	{
		char path[64];
		j_join(path, sizeof(path), "root", key);
		if (ret)
			break;
		if (!strcmp(key, "host_dir"))
			ret = j_string(c, path, v, &r->host_dir);
		else if (!strcmp(key, "writable"))
			ret = j_bool(c, path, v, &r->writable);
		else
			ret = jbad(c, path, "unknown key (host_dir, writable)");
	}
	if (!ret && !r->host_dir)
		ret = jbad(c, "root", "\"host_dir\" is required");
	return ret;
}

static int load_limits(const struct jctx *c, json_object *o, struct ringvm_fs_limits *l)
{
	int ret = j_object(c, "fs_limits", o);
	if (ret)
		return ret;
	json_object_object_foreach(o, key, v)
	{
		char path[64];
		j_join(path, sizeof(path), "fs_limits", key);
		if (ret)
			break;
		if (!strcmp(key, "fds"))
			ret = j_uint(c, path, v, RINGVM_MAX_FS_LIMIT, &l->fds);
		else if (!strcmp(key, "dir_buffers"))
			ret = j_uint(c, path, v, RINGVM_MAX_FS_LIMIT, &l->dir_buffers);
		else
			ret = jbad(c, path, "unknown key (fds, dir_buffers)");
	}
	return ret;
}

/* A string, or null for none (*out = NULL). */
static int j_string_or_null(const struct jctx *c, const char *path, json_object *v, const char **out)
{
	*out = NULL;
	return json_object_is_type(v, json_type_null) ? 0 : j_string(c, path, v, out);
}

/* "user": { "uid": N, "gid": N } (gid: the uid when absent), as --user UID[:GID]; null: root. */
static int load_user(const struct jctx *c, json_object *o, struct ringvm_launch *l)
{
	l->set_user = false;
	if (json_object_is_type(o, json_type_null))
		return 0;
	int ret = j_object(c, "user", o);
	if (ret)
		return ret;
	bool have_uid = false, have_gid = false;
	uint64_t id;
	json_object_object_foreach(o, key, v)
	{
		char path[64];
		j_join(path, sizeof(path), "user", key);
		if (ret)
			break;
		/* 4294967295 is (uid_t)-1, "no change" to the kernel: not an id. */
		if (!strcmp(key, "uid") && !(ret = j_uint(c, path, v, UINT32_MAX - 1, &id))) {
			l->uid = (uint32_t)id;
			have_uid = true;
		} else if (!strcmp(key, "gid") && !(ret = j_uint(c, path, v, UINT32_MAX - 1, &id))) {
			l->gid = (uint32_t)id;
			have_gid = true;
		} else if (!ret && strcmp(key, "uid") && strcmp(key, "gid")) {
			ret = jbad(c, path, "unknown key (uid, gid)");
		}
	}
	if (!ret && !have_uid)
		ret = jbad(c, "user", "\"uid\" is required");
	if (ret)
		return ret;
	if (!have_gid)
		l->gid = l->uid;
	l->set_user = true;
	return 0;
}

/* How the command runs and how the run ends: the keys of --env, --workdir, --user, --timeout,
   --stop-timeout, --tty/--no-tty, --gdb and --gdb-wait. 1 when key is none of them. */
static int load_run_key(const struct jctx *c, const char *key, json_object *v, struct ringvm_config *cfg,
			struct cli_config_file *f)
{
	uint64_t n;
	int ret, e = 0;
	if (!strcmp(key, "env")) { /* ["NAME=VALUE", ...], as --env */
		ret = load_list(c, key, v, RINGVM_MAX_ENV, "\"NAME=VALUE\" strings", &cfg->launch.nr_env, one_env,
				f->env, sizeof(f->env[0]));
		if (!ret)
			cfg->launch.env = f->env;
		return ret;
	}
	if (!strcmp(key, "workdir")) {
		ret = j_string_or_null(c, key, v, &cfg->launch.workdir);
		if (!ret && cfg->launch.workdir && cfg->launch.workdir[0] != '/')
			ret = jbad(c, key, "'%s': the directory must be absolute", cfg->launch.workdir);
		return ret;
	}
	if (!strcmp(key, "user"))
		return load_user(c, v, &cfg->launch);
	if (!strcmp(key, "timeout")) { /* whole seconds, 0: never (the CLI's --timeout takes 1 and up) */
		ret = j_uint(c, key, v, CLI_MAX_TIMEOUT_S, &n);
		cfg->timeout_s = ret ? cfg->timeout_s : (unsigned int)n;
		return ret;
	}
	if (!strcmp(key, "stop_timeout")) { /* whole seconds, as --stop-timeout */
		ret = j_uint(c, key, v, CLI_MAX_STOP_TIMEOUT_S, &n);
		cfg->stop_timeout_ms = ret ? cfg->stop_timeout_ms : (unsigned int)n * 1000;
		return ret;
	}
	if (!strcmp(key, "tty")) {
		ret = j_enum(c, key, v, cli_tty_names, 3, &e);
		cfg->console.tty = ret ? cfg->console.tty : (enum ringvm_tty)e;
		return ret;
	}
	if (!strcmp(key, "gdb"))
		return j_string_or_null(c, key, v, &cfg->gdb);
	if (!strcmp(key, "gdb_wait"))
		return j_bool(c, key, v, &cfg->gdb_wait);
	return 1;
}

static int load_memory(const struct jctx *c, json_object *v, uint64_t *out)
{
	if (json_object_is_type(v, json_type_int))
		return j_uint(c, "memory", v, UINT64_MAX, out);
	const char *s, *why;
	int ret = j_string(c, "memory", v, &s);
	if (ret)
		return jbad(c, "memory", "expected a size (\"512M\") or a number of bytes");
	if (cli_parse_size(s, out, &why))
		return jbad(c, "memory", "%s: %s", s, why);
	return 0;
}

static int load_top(const struct jctx *c, json_object *root, struct ringvm_config *cfg, struct cli_config_file *f)
{
	int ret = j_object(c, "(top level)", root);
	if (ret)
		return ret;
	json_object_object_foreach(root, key, v)
	{
		if (ret)
			break;
		if (!strcmp(key, "kernel")) {
			ret = j_string(c, key, v, &cfg->kernel);
		} else if (!strcmp(key, "initrd")) {
			f->initrd_set = true;
			cfg->initrd = NULL;
			if (!json_object_is_type(v, json_type_null))
				ret = j_string(c, key, v, &cfg->initrd);
		} else if (!strcmp(key, "cmdline")) {
			ret = j_string(c, key, v, &cfg->cmdline);
		} else if (!strcmp(key, "cpus")) {
			ret = j_uint32(c, key, v, &cfg->cpus);
		} else if (!strcmp(key, "memory")) {
			ret = load_memory(c, v, &cfg->memory);
		} else if (!strcmp(key, "command")) {
			ret = load_command(c, v, cfg, f);
		} else if (!strcmp(key, "disks")) {
			ret = load_list(c, key, v, RINGVM_MAX_DEVICES, "devices", &cfg->nr_disks, one_disk, f->disks,
					sizeof(f->disks[0]));
			cfg->disks = f->disks;
		} else if (!strcmp(key, "shares")) {
			ret = load_list(c, key, v, RINGVM_MAX_DEVICES, "devices", &cfg->nr_shares, one_share, f->shares,
					sizeof(f->shares[0]));
			cfg->shares = f->shares;
		} else if (!strcmp(key, "root")) {
			ret = load_root(c, v, &cfg->root);
		} else if (!strcmp(key, "fs_limits")) {
			ret = load_limits(c, v, &cfg->fs_limits);
		} else if (!strcmp(key, "verbose")) {
			ret = j_bool(c, key, v, &cfg->verbose);
		} else if ((ret = load_run_key(c, key, v, cfg, f)) == 1) {
			ret = jbad(c, key, "unknown key (kernel, initrd, cmdline, cpus, memory, command, disks, "
					   "shares, root, fs_limits, verbose, env, workdir, user, timeout, "
					   "stop_timeout, tty, gdb, gdb_wait)");
		}
	}
	return ret;
}

/* The whole file, NUL-terminated, at most CONFIG_MAX_BYTES. */
static int read_file(const char *path, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char *buf = malloc(CONFIG_MAX_BYTES + 1);
	size_t n = 0;
	int ret = buf ? 0 : -ENOMEM;
	while (!ret && n <= CONFIG_MAX_BYTES) {
		ssize_t r = read(fd, buf + n, CONFIG_MAX_BYTES + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			ret = -errno;
		else if (r == 0)
			break;
		else
			n += (size_t)r;
	}
	close(fd);
	if (!ret && n > CONFIG_MAX_BYTES)
		ret = -EFBIG;
	if (ret) {
		free(buf);
		return ret;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int cli_config_load(const char *path, struct ringvm_config *cfg, struct cli_config_file *f, char *err,
		    size_t errlen)
{
	struct jctx c = { .file = path, .err = err, .errlen = errlen };
	char *text = NULL;
	size_t len = 0;
	int ret = read_file(path, &text, &len);
	if (ret) {
		snprintf(err, errlen, "%s: %s", path, ret == -EFBIG ? "larger than 1 MiB" : strerror(-ret));
		return ret;
	}
	json_tokener *tok = json_tokener_new();
	if (!tok) {
		free(text);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	json_object *root = json_tokener_parse_ex(tok, text, (int)len + 1);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	/* One JSON value and nothing but white space after it. */
	size_t rest = end;
	while (rest < len && strchr(" \t\r\n", text[rest]))
		rest++;
	if (!root || jerr != json_tokener_success || rest < len) {
		unsigned int line = 1;
		for (size_t i = 0; i < end && i < len; i++)
			line += text[i] == '\n';
		snprintf(err, errlen, "%s: line %u: %s", path, line,
			 jerr != json_tokener_success ? json_tokener_error_desc(jerr)
			 : root			      ? "text after the configuration's object"
						      : "empty or not JSON");
		json_object_put(root);
		free(text);
		return -EINVAL;
	}
	free(text);
	f->root = root;
	ret = load_top(&c, root, cfg, f);
	return ret;
}

void cli_config_free(struct cli_config_file *f)
{
	json_object_put(f->root);
	f->root = NULL;
	free(f->argv);
	f->argv = NULL;
}
