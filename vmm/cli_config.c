/* cli_config.c: a JSON configuration file (json-c) into struct ringvm_config and back, every key checked. */
#define _GNU_SOURCE
#include "vmm/cli_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/cli_json.h"
#include "vmm/cli_kind.h"
#include "vmm/cli_parse.h"

#define CONFIG_MAX_BYTES (1 << 20)
#define CONFIG_MAX_ARGS 4096

const char *const cli_tty_names[3] = { "auto", "on", "off" };

static int one_string(const struct cli_json *c, const char *p, json_object *v, void *item)
{
	return cli_json_string(c, p, v, item);
}

/* An --env entry: NAME=VALUE with a name. */
static int one_env(const struct cli_json *c, const char *p, json_object *v, void *item)
{
	const char **s = item;
	int ret = cli_json_string(c, p, v, s);
	if (!ret && (!strchr(*s, '=') || (*s)[0] == '='))
		ret = cli_json_bad(c, p, "'%s': want NAME=VALUE", *s);
	return ret;
}

static int load_command(const struct cli_json *c, json_object *v, struct ringvm_config *cfg)
{
	void *argv; /* ends in NULL: cli_json_list leaves a zeroed item after the last */
	int ret = cli_json_list(c, "command", v, CONFIG_MAX_ARGS, "strings", one_string, sizeof(const char *), &argv,
				&cfg->argc);
	if (!ret)
		cfg->argv = argv;
	return ret;
}

/* "user": { "uid": N, "gid": N } (gid: the uid when absent), as --user UID[:GID]; null: root. */
static int load_user(const struct cli_json *c, json_object *o, struct ringvm_launch *l)
{
	l->set_user = false;
	if (json_object_is_type(o, json_type_null))
		return 0;
	int ret = cli_json_object(c, "user", o);
	if (ret)
		return ret;
	bool have_uid = false, have_gid = false;
	uint64_t id;
	json_object_object_foreach(o, key, v)
	{
		char path[64];
		cli_json_join(path, sizeof(path), "user", key);
		if (ret)
			break;
		/* 4294967295 is (uid_t)-1, "no change" to the kernel: not an id. */
		if (!strcmp(key, "uid") && !(ret = cli_json_uint(c, path, v, UINT32_MAX - 1, &id))) {
			l->uid = (uint32_t)id;
			have_uid = true;
		} else if (!strcmp(key, "gid") && !(ret = cli_json_uint(c, path, v, UINT32_MAX - 1, &id))) {
			l->gid = (uint32_t)id;
			have_gid = true;
		} else if (!ret && strcmp(key, "uid") && strcmp(key, "gid")) {
			ret = cli_json_bad(c, path, "unknown key (uid, gid)");
		}
	}
	if (!ret && !have_uid)
		ret = cli_json_bad(c, "user", "\"uid\" is required");
	if (ret)
		return ret;
	if (!have_gid)
		l->gid = l->uid;
	l->set_user = true;
	return 0;
}

/* How the command runs and how the run ends: the keys of --env, --workdir, --user, --timeout,
   --stop-timeout, --tty/--no-tty, --gdb and --gdb-wait. 1 when key is none of them. */
static int load_run_key(const struct cli_json *c, const char *key, json_object *v, struct ringvm_config *cfg)
{
	uint64_t n;
	int ret, e = 0;
	if (!strcmp(key, "env")) { /* ["NAME=VALUE", ...], as --env */
		void *env;
		ret = cli_json_list(c, key, v, RINGVM_MAX_ENV, "\"NAME=VALUE\" strings", one_env, sizeof(const char *),
				    &env, &cfg->launch.nr_env);
		if (!ret)
			cfg->launch.env = env;
		return ret;
	}
	if (!strcmp(key, "workdir")) {
		ret = cli_json_string_or_null(c, key, v, &cfg->launch.workdir);
		if (!ret && cfg->launch.workdir && cfg->launch.workdir[0] != '/')
			ret = cli_json_bad(c, key, "'%s': the directory must be absolute", cfg->launch.workdir);
		return ret;
	}
	if (!strcmp(key, "user"))
		return load_user(c, v, &cfg->launch);
	if (!strcmp(key, "timeout")) { /* whole seconds, 0: never (the CLI's --timeout takes 1 and up) */
		ret = cli_json_uint(c, key, v, CLI_MAX_TIMEOUT_S, &n);
		cfg->timeout_s = ret ? cfg->timeout_s : (unsigned int)n;
		return ret;
	}
	if (!strcmp(key, "stop_timeout")) { /* whole seconds, as --stop-timeout */
		ret = cli_json_uint(c, key, v, CLI_MAX_STOP_TIMEOUT_S, &n);
		cfg->stop_timeout_ms = ret ? cfg->stop_timeout_ms : (unsigned int)n * 1000;
		return ret;
	}
	if (!strcmp(key, "tty")) {
		ret = cli_json_enum(c, key, v, cli_tty_names, 3, &e);
		cfg->console.tty = ret ? cfg->console.tty : (enum ringvm_tty)e;
		return ret;
	}
	if (!strcmp(key, "gdb"))
		return cli_json_string_or_null(c, key, v, &cfg->gdb);
	if (!strcmp(key, "gdb_wait"))
		return cli_json_bool(c, key, v, &cfg->gdb_wait);
	return 1;
}

static int load_memory(const struct cli_json *c, json_object *v, uint64_t *out)
{
	if (json_object_is_type(v, json_type_int))
		return cli_json_uint(c, "memory", v, UINT64_MAX, out);
	const char *s, *why;
	int ret = cli_json_string(c, "memory", v, &s);
	if (ret)
		return cli_json_bad(c, "memory", "expected a size (\"512M\") or a number of bytes");
	if (cli_parse_size(s, out, &why))
		return cli_json_bad(c, "memory", "%s: %s", s, why);
	return 0;
}

/* A key of a device kind's (vmm/cli_kinds.c): 1 when no kind has it. */
static int load_kind_key(const struct cli_json *c, const char *key, json_object *v, struct ringvm_config *cfg)
{
	int ret = 1;
	for (unsigned int i = 0; i < nr_cli_kinds && ret == 1; i++)
		if (cli_kinds[i]->json_load)
			ret = cli_kinds[i]->json_load(c, key, v, cfg);
	return ret;
}

/* Every top-level key named, the kinds' in the middle, where `config --print` writes them. */
static int unknown_key(const struct cli_json *c, const char *key)
{
	char keys[512] = "kernel, initrd, cmdline, cpus, memory, command";
	for (unsigned int i = 0; i < nr_cli_kinds; i++)
		if (cli_kinds[i]->json_keys)
			snprintf(keys + strlen(keys), sizeof(keys) - strlen(keys), ", %s", cli_kinds[i]->json_keys);
	return cli_json_bad(c, key, "unknown key (%s, verbose, env, workdir, user, timeout, stop_timeout, tty, gdb, "
				    "gdb_wait)", keys);
}

static int load_top(const struct cli_json *c, json_object *root, struct ringvm_config *cfg, struct cli_config_file *f)
{
	int ret = cli_json_object(c, "(top level)", root);
	if (ret)
		return ret;
	json_object_object_foreach(root, key, v)
	{
		if (ret)
			break;
		if (!strcmp(key, "kernel")) {
			ret = cli_json_string(c, key, v, &cfg->kernel);
		} else if (!strcmp(key, "initrd")) {
			f->initrd_set = true;
			cfg->initrd = NULL;
			if (!json_object_is_type(v, json_type_null))
				ret = cli_json_string(c, key, v, &cfg->initrd);
		} else if (!strcmp(key, "cmdline")) {
			ret = cli_json_string(c, key, v, &cfg->cmdline);
		} else if (!strcmp(key, "cpus")) {
			ret = cli_json_uint32(c, key, v, &cfg->cpus);
		} else if (!strcmp(key, "memory")) {
			ret = load_memory(c, v, &cfg->memory);
		} else if (!strcmp(key, "command")) {
			ret = load_command(c, v, cfg);
		} else if (!strcmp(key, "verbose")) {
			ret = cli_json_bool(c, key, v, &cfg->verbose);
		} else if ((ret = load_run_key(c, key, v, cfg)) == 1 && (ret = load_kind_key(c, key, v, cfg)) == 1) {
			ret = unknown_key(c, key);
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
	struct cli_json c = { .file = path, .err = err, .errlen = errlen, .kept = &f->kept };
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
	cli_json_free_all(&f->kept);
}
