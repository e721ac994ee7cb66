/* test_cli_kinds.c: the table of the kinds' CLI parts (vmm/cli_kinds.c) holds together: options unique, each kind's JSON keys loaded, printed and named alike, options applied over a config. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/ringvm.h"
#include "tests/unit/tap.h"
#include "vmm/cli_json.h"
#include "vmm/cli_kind.h"
#include "devices/kind.h"

/* Does the ", "-separated list hold word? */
static int listed(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

/* No two options of all kinds share a long name or a letter; each has help and a parser. */
static void test_options_unique(void)
{
	int ok = 1;
	for (unsigned int k = 0; k < nr_cli_kinds; k++) {
		for (unsigned int i = 0; i < cli_kinds[k]->nr_options; i++) {
			const struct cli_kind_option *a = &cli_kinds[k]->options[i];
			if (!a->name || !a->help || !a->parse || a->help[strlen(a->help) - 1] != '\n')
				ok = 0;
			for (unsigned int l = k; l < nr_cli_kinds; l++)
				for (unsigned int j = l == k ? i + 1 : 0; j < cli_kinds[l]->nr_options; j++) {
					const struct cli_kind_option *b = &cli_kinds[l]->options[j];
					if (!strcmp(a->name, b->name) || (a->letter && a->letter == b->letter))
						ok = 0;
				}
		}
	}
	TAP_CHECK(ok && nr_cli_kinds >= 2, "every kind option has its own name and letter, help and a parser");
}

/*
 * Every key a kind prints for a default config is one its json_keys names, and one its json_load
 * takes (a wrong type is an error naming the key, not "not mine"); a key of no kind is not taken.
 */
static void test_json_keys(void)
{
	struct ringvm_config cfg;
	char err[RINGVM_ERR_MAX];
	struct cli_json_block *kept = NULL;
	struct cli_json c = { .file = "t.json", .err = err, .errlen = sizeof(err), .kept = &kept };
	json_object *wrong = json_object_new_string("wrong type");
	for (unsigned int k = 0; k < nr_cli_kinds; k++) {
		const struct cli_kind *kind = cli_kinds[k];
		if (!kind->json_print && !kind->json_load && !kind->json_keys)
			continue; /* a kind without keys (the console) */
		ringvm_config_init(&cfg);
		cfg.root.host_dir = "/"; /* so the fs kind prints "root" too */
		json_object *o = json_object_new_object();
		kind->json_print(&cfg, o);
		int printed = 0, named = 1, loaded = 1;
		json_object_object_foreach(o, key, v)
		{
			(void)v;
			printed++;
			named &= listed(kind->json_keys, key);
			err[0] = '\0';
			loaded &= kind->json_load(&c, key, wrong, &cfg) == -EINVAL && strstr(err, key) != NULL;
		}
		int others = kind->json_load(&c, "no_such_key", wrong, &cfg) == 1;
		char what[160];
		snprintf(what, sizeof(what), "%s: printed keys (%d) all in \"%s\", each loaded, others left alone",
			 kind->name, printed, kind->json_keys);
		TAP_CHECK(printed > 0 && named && loaded && others, what);
		json_object_put(o);
	}
	json_object_put(wrong);
	cli_json_free_all(&kept);
}

/* Each option's value reaches the config only through apply, and a bad one is refused with its
   option named; free leaves nothing behind (ASan's leak check). */
static void test_options_apply(void)
{
	static const struct {
		const char *kind, *name, *good, *bad;
	} cases[] = {
		{ "blk", "disk", "/d.img,readonly", "/d.img,bogus" },
		{ "fs", "share", "/srv:/mnt,ro", "/srv:mnt" },
		{ "fs", "root", "/r,rw", "/r,ro" },
		{ "fs", "fs-limits", "fds=10", "fds=0" },
	};
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct cli_kind *kind = NULL;
		const struct cli_kind_option *opt = NULL;
		for (unsigned int k = 0; k < nr_cli_kinds; k++)
			if (!strcmp(cli_kinds[k]->name, cases[i].kind))
				kind = cli_kinds[k];
		for (unsigned int j = 0; kind && j < kind->nr_options; j++)
			if (!strcmp(kind->options[j].name, cases[i].name))
				opt = &kind->options[j];
		char err[RINGVM_ERR_MAX] = "", want[64], what[96];
		void *st = kind ? calloc(1, kind->state_size) : NULL;
		struct ringvm_config before, cfg;
		ringvm_config_init(&before);
		cfg = before;
		int good = st && opt && opt->parse(st, cases[i].good, err, sizeof(err)) == 0;
		int untouched = !memcmp(&before, &cfg, sizeof(cfg));
		if (st)
			kind->apply(st, &cfg);
		int applied = memcmp(&before, &cfg, sizeof(cfg)) != 0;
		if (st)
			kind->free(st);
		free(st);
		/* On a fresh state: a second --root is refused for being second. */
		st = kind ? calloc(1, kind->state_size) : NULL;
		snprintf(want, sizeof(want), "--%s %s: ", cases[i].name, cases[i].bad);
		int bad = st && opt && opt->parse(st, cases[i].bad, err, sizeof(err)) == -EINVAL &&
			  !strncmp(err, want, strlen(want));
		if (st)
			kind->free(st);
		free(st);
		snprintf(what, sizeof(what), "--%s: parsed, applied over the config, a bad value refused by name",
			 cases[i].name);
		TAP_CHECK(good && untouched && applied && bad, what);
	}
}

/* One list (devices/kinds.h) makes both tables: the same kinds, in the same order. */
static void test_tables_match(void)
{
	int same = nr_cli_kinds == nr_device_kinds;
	for (unsigned int k = 0; same && k < nr_cli_kinds; k++)
		same = !strcmp(cli_kinds[k]->name, device_kinds[k]->name);
	int whole = 1;
	for (unsigned int k = 0; k < nr_cli_kinds; k++) {
		const struct cli_kind *c = cli_kinds[k];
		/* What a kind has needs what uses it: options their state, keys their loader and printer. */
		if ((c->nr_options && (!c->state_size || !c->apply || !c->free)) ||
		    (!c->json_keys != !c->json_load || !c->json_keys != !c->json_print))
			whole = 0;
	}
	TAP_CHECK(same, "the device kinds and their CLI parts: the same kinds in the same order");
	TAP_CHECK(whole, "each CLI part has what its options and keys need, and nothing half");
}

/* What --jail is told to bind: paths as the kinds' host_paths add them. */
struct paths {
	char text[512];
	int fail_at; /* the add call that fails with -E2BIG; 0: none */
	int calls;
};

static int add_path(void *arg, const char *path, bool readonly)
{
	struct paths *p = arg;
	if (++p->calls == p->fail_at)
		return -E2BIG;
	snprintf(p->text + strlen(p->text), sizeof(p->text) - strlen(p->text), "%s%s;", path,
		 readonly ? ":ro" : "");
	return 0;
}

/* Every kind's host paths for cfg, in table order, into p (0 or the first error, err set). */
static int all_paths(const struct ringvm_config *cfg, struct paths *p, char *err, size_t errlen)
{
	for (unsigned int k = 0; k < nr_device_kinds; k++) {
		if (!device_kinds[k]->host_paths)
			continue;
		int ret = device_kinds[k]->host_paths(cfg, add_path, p, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

static void test_host_paths(void)
{
	struct ringvm_disk disks[2] = { { .path = "a.img", .readonly = true }, { .path = "/dev/vdz" } };
	struct ringvm_share shares[2] = { { .host_dir = "/srv/x", .guest_dir = "/x", .readonly = true },
					  { .host_dir = "rel", .guest_dir = "/y" } };
	struct ringvm_config cfg;
	ringvm_config_init(&cfg);
	cfg.disks = disks;
	cfg.nr_disks = 2;
	cfg.shares = shares;
	cfg.nr_shares = 2;
	cfg.root.host_dir = "/srv/root";
	char err[RINGVM_ERR_MAX] = "";
	struct paths p = { "", 0, 0 };
	int ret = all_paths(&cfg, &p, err, sizeof(err));
	TAP_CHECK(ret == 0 && !strcmp(p.text, "a.img:ro;/dev/vdz;/srv/x:ro;rel;/srv/root:ro;"),
		  "--jail binds every disk, share and the root, read-only where the device is");
	cfg.root.writable = true;
	memset(&p, 0, sizeof(p));
	ret = all_paths(&cfg, &p, err, sizeof(err));
	TAP_CHECK(ret == 0 && strstr(p.text, "/srv/root;"), "... a writable root bound writable");
	memset(&p, 0, sizeof(p));
	p.fail_at = 2;
	ret = all_paths(&cfg, &p, err, sizeof(err));
	TAP_CHECK(ret == -E2BIG && p.calls == 2, "the jail's own error stops the kind and comes back as it is");
	shares[1].host_dir = "/";
	memset(&p, 0, sizeof(p));
	ret = all_paths(&cfg, &p, err, sizeof(err));
	TAP_CHECK(ret == -EINVAL && !strcmp(err, "--share /: a share of / leaves nothing outside the jail"),
		  "a share of / is refused by the fs kind, naming --share");
	shares[1].host_dir = "rel";
	cfg.root.host_dir = "/";
	memset(&p, 0, sizeof(p));
	ret = all_paths(&cfg, &p, err, sizeof(err));
	TAP_CHECK(ret == -EINVAL && !strcmp(err, "--root /: a share of / leaves nothing outside the jail"),
		  "... and a root of /, naming --root");
	ringvm_config_init(&cfg);
	memset(&p, 0, sizeof(p));
	TAP_CHECK(all_paths(&cfg, &p, err, sizeof(err)) == 0 && p.calls == 0, "no devices: no paths");
}

int main(void)
{
	test_tables_match();
	test_host_paths();
	test_options_unique();
	test_json_keys();
	test_options_apply();
	return tap_done();
}
