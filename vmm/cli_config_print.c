/* cli_config_print.c: struct ringvm_config as JSON in cli_config_load's schema (`ringvm config --print`). */
#include "vmm/cli_config.h"

#include <errno.h>
#include <stdint.h>

#include "vmm/cli_json.h"
#include "vmm/cli_kind.h"

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

/* The keys of --env, --workdir, --user, --timeout, --stop-timeout, --tty, --gdb and --gdb-wait. */
static void run_json(const struct ringvm_config *cfg, json_object *o)
{
	const struct ringvm_launch *l = &cfg->launch;
	json_object *env = json_object_new_array();
	for (unsigned int i = 0; l->env && i < l->nr_env; i++)
		json_object_array_add(env, json_object_new_string(l->env[i]));
	json_object_object_add(o, "env", env);
	json_object_object_add(o, "workdir", cli_json_new_string_or_null(l->workdir));
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
	json_object_object_add(o, "tty", json_object_new_string(cli_json_name_of(cli_tty_names, 3, (int)cfg->console.tty)));
	json_object_object_add(o, "gdb", cli_json_new_string_or_null(cfg->gdb));
	json_object_object_add(o, "gdb_wait", json_object_new_boolean(cfg->gdb_wait));
}

int cli_config_print(const struct ringvm_config *cfg, FILE *out)
{
	json_object *o = json_object_new_object();
	if (!o)
		return -ENOMEM;
	json_object_object_add(o, "kernel", cli_json_new_string_or_null(cfg->kernel));
	json_object_object_add(o, "initrd", cli_json_new_string_or_null(cfg->initrd));
	if (cfg->cmdline)
		json_object_object_add(o, "cmdline", json_object_new_string(cfg->cmdline));
	json_object_object_add(o, "cpus", json_object_new_uint64(cfg->cpus));
	json_object_object_add(o, "memory", size_json(cfg->memory));
	json_object *cmd = json_object_new_array();
	for (unsigned int i = 0; i < cfg->argc; i++)
		json_object_array_add(cmd, json_object_new_string(cfg->argv[i]));
	json_object_object_add(o, "command", cmd);
	for (unsigned int i = 0; i < nr_cli_kinds; i++)
		if (cli_kinds[i]->json_print)
			cli_kinds[i]->json_print(cfg, o);
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
