/* cli_config_print.c: struct ringvm_config as JSON in cli_config_load's schema (`ringvm config --print`). */
#include "vmm/cli_config.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>

/* A size with the largest suffix that divides it ("512M"), or plain bytes. */
static json_object *size_json(uint64_t v)
{
	static const char suffix[] = "KMGT";
	char buf[32];
	int s = -1;
	while (s < 3 && v && v % (1ULL << (10 * (s + 2))) == 0)
		s++;
	if (s < 0)
		return json_object_new_uint64(v);
	snprintf(buf, sizeof(buf), "%llu%c", (unsigned long long)(v >> (10 * (s + 1))), suffix[s]);
	return json_object_new_string(buf);
}

/* The name of an enum value, "?" when out of range (a config not yet checked). */
static const char *name_of(const char *const *names, int n, int v)
{
	return v >= 0 && v < n ? names[v] : "?";
}

static json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static json_object *disk_json(const struct ringvm_disk *d)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "path", str_or_null(d->path));
	json_object_object_add(o, "readonly", json_object_new_boolean(d->readonly));
	json_object_object_add(o, "direct", json_object_new_boolean(d->direct));
	json_object_object_add(o, "queues", json_object_new_uint64(d->queues));
	if (d->id)
		json_object_object_add(o, "id", json_object_new_string(d->id));
	/* null: unset, the run's default applies (ringvm.h) */
	bool poll = d->poll_us_set || d->poll_us;
	json_object_object_add(o, "poll_us", poll ? json_object_new_uint64(d->poll_us) : NULL);
	return o;
}

static json_object *share_json(const struct ringvm_share *s)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "host_dir", str_or_null(s->host_dir));
	json_object_object_add(o, "guest_dir", str_or_null(s->guest_dir));
	if (s->tag)
		json_object_object_add(o, "tag", json_object_new_string(s->tag));
	json_object_object_add(o, "readonly", json_object_new_boolean(s->readonly));
	json_object_object_add(o, "cache", json_object_new_string(name_of(cli_cache_names, 3, (int)s->cache)));
	json_object_object_add(o, "queues", json_object_new_uint64(s->queues));
	json_object_object_add(o, "dev", json_object_new_boolean(s->dev));
	json_object_object_add(o, "suid", json_object_new_boolean(s->suid));
	json_object_object_add(o, "xattr", json_object_new_string(name_of(cli_xattr_names, 4, (int)s->xattr)));
	json_object_object_add(o, "allow_direct_io", json_object_new_boolean(s->allow_direct_io));
	return o;
}

/* The keys of --env, --workdir, --user, --timeout, --stop-timeout, --tty, --gdb and --gdb-wait. */
static void run_json(const struct ringvm_config *cfg, json_object *o)
{
	const struct ringvm_launch *l = &cfg->launch;
	json_object *env = json_object_new_array();
	for (unsigned int i = 0; l->env && i < l->nr_env; i++)
		json_object_array_add(env, json_object_new_string(l->env[i]));
	json_object_object_add(o, "env", env);
	json_object_object_add(o, "workdir", str_or_null(l->workdir));
	json_object *user = NULL;
	if (l->set_user) {
		user = json_object_new_object();
		json_object_object_add(user, "uid", json_object_new_uint64(l->uid));
		json_object_object_add(user, "gid", json_object_new_uint64(l->gid));
	}
	json_object_object_add(o, "user", user);
	json_object_object_add(o, "timeout", json_object_new_uint64(cfg->timeout_s));
	/* Whole seconds, as --stop-timeout gives it (a library caller's odd milliseconds round down). */
	json_object_object_add(o, "stop_timeout", json_object_new_uint64(cfg->stop_timeout_ms / 1000));
	json_object_object_add(o, "tty", json_object_new_string(name_of(cli_tty_names, 3, (int)cfg->console.tty)));
	json_object_object_add(o, "gdb", str_or_null(cfg->gdb));
	json_object_object_add(o, "gdb_wait", json_object_new_boolean(cfg->gdb_wait));
}

int cli_config_print(const struct ringvm_config *cfg, FILE *out)
{
	json_object *o = json_object_new_object();
	if (!o)
		return -ENOMEM;
	json_object_object_add(o, "kernel", str_or_null(cfg->kernel));
	json_object_object_add(o, "initrd", str_or_null(cfg->initrd));
	if (cfg->cmdline)
		json_object_object_add(o, "cmdline", json_object_new_string(cfg->cmdline));
	json_object_object_add(o, "cpus", json_object_new_uint64(cfg->cpus));
	json_object_object_add(o, "memory", size_json(cfg->memory));
	json_object *cmd = json_object_new_array();
	for (unsigned int i = 0; i < cfg->argc; i++)
		json_object_array_add(cmd, json_object_new_string(cfg->argv[i]));
	json_object_object_add(o, "command", cmd);
	json_object *disks = json_object_new_array();
	for (unsigned int i = 0; i < cfg->nr_disks; i++)
		json_object_array_add(disks, disk_json(&cfg->disks[i]));
	json_object_object_add(o, "disks", disks);
	json_object *shares = json_object_new_array();
	for (unsigned int i = 0; i < cfg->nr_shares; i++)
		json_object_array_add(shares, share_json(&cfg->shares[i]));
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
	json_object_object_add(o, "verbose", json_object_new_boolean(cfg->verbose));
	run_json(cfg, o);
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_SPACED |
								 JSON_C_TO_STRING_NOSLASHESCAPE);
	int ret = text ? 0 : -ENOMEM;
	if (text)
		fprintf(out, "%s\n", text);
	json_object_put(o);
	return ret;
}
