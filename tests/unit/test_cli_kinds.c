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

/* serve's own options (vmm/cli_serve.c): no kind may take their spellings. */
static const char *const serve_general[] = { "socket", "socket-path", "fd", "poll-us", "thread-pool-size",
					     "sandbox", "seccomp", "log-level", "announce-submounts", "xattr",
					     "help" };

/* Is "--name" (or "-L") in text, as a whole word? */
static int mentions(const char *text, const char *spelling)
{
	size_t n = strlen(spelling);
	for (const char *p = text; (p = strstr(p, spelling)); p += n)
		if ((p == text || p[-1] == ' ' || p[-1] == '(' || p[-1] == '[') &&
		    (p[n] == ' ' || p[n] == '\n' || p[n] == ',' || p[n] == ')' || p[n] == ']'))
			return 1;
	return 0;
}

/*
 * Every servable kind's serve part is whole (usage, help, its device) and each of its options has
 * a parser, a spelling no other serve option has (general or another kind's) and a line in the
 * kind's help or usage.
 */
static void test_serve_options(void)
{
	int whole = 1, unique = 1, documented = 1, servable = 0;
	for (unsigned int k = 0; k < nr_cli_kinds; k++) {
		const struct cli_serve_kind *sk = cli_kinds[k]->serve;
		if (!sk)
			continue;
		servable++;
		whole &= sk->usage && sk->what && sk->qemu_device && sk->help && sk->help[strlen(sk->help) - 1] == '\n' &&
			 sk->usage[strlen(sk->usage) - 1] == '\n' && !strncmp(sk->usage, cli_kinds[k]->name,
										 strlen(cli_kinds[k]->name));
		for (unsigned int l = k + 1; l < nr_cli_kinds; l++)
			if (cli_kinds[l]->serve && cli_kinds[l]->serve->device == sk->device)
				unique = 0;
		for (unsigned int i = 0; i < sk->nr_options; i++) {
			const struct cli_serve_option *a = &sk->options[i];
			char spelling[64];
			whole &= a->parse && (a->name || a->letter);
			if (a->name)
				snprintf(spelling, sizeof(spelling), "--%s", a->name);
			else
				snprintf(spelling, sizeof(spelling), "-%c", a->letter);
			documented &= mentions(sk->help, spelling) || mentions(sk->usage, spelling);
			for (unsigned int g = 0; a->name && g < sizeof(serve_general) / sizeof(serve_general[0]); g++)
				unique &= strcmp(a->name, serve_general[g]) != 0;
			unique &= a->letter != 'h';
			for (unsigned int l = k; l < nr_cli_kinds; l++) {
				const struct cli_serve_kind *ol = cli_kinds[l]->serve;
				for (unsigned int j = l == k ? i + 1 : 0; ol && j < ol->nr_options; j++) {
					const struct cli_serve_option *b = &ol->options[j];
					if ((a->name && b->name && !strcmp(a->name, b->name)) ||
					    (a->letter && a->letter == b->letter))
						unique = 0;
				}
			}
		}
	}
	TAP_CHECK(servable >= 2 && whole, "each servable kind has its usage, help, device and option parsers");
	TAP_CHECK(unique, "serve's options: no two spelled alike (general, every kind's), no two kinds on one device");
	TAP_CHECK(documented, "every serve option of a kind is in its help lines");
}

/* A kind's serve option by spelling ("queues", or "o" for a letter). */
static const struct cli_serve_option *serve_option(const char *kind_name, const char *spelling,
						   const struct cli_serve_kind **sk)
{
	*sk = NULL;
	for (unsigned int k = 0; k < nr_cli_kinds; k++)
		if (!strcmp(cli_kinds[k]->name, kind_name))
			*sk = cli_kinds[k]->serve;
	for (unsigned int i = 0; *sk && i < (*sk)->nr_options; i++) {
		const struct cli_serve_option *o = &(*sk)->options[i];
		if ((o->name && !strcmp(o->name, spelling)) || (!o->name && o->letter == spelling[0] && !spelling[1]))
			return o;
	}
	return NULL;
}

/* Serve options reach the serve config, bad values are refused by name; state freed (ASan). */
static void test_serve_parse(void)
{
	static const struct {
		const char *kind, *opt, *good, *bad, *bad_msg;
	} cases[] = {
		{ "fs", "queues", "4", "0", "--queues 0: must be a number 1..16" },
		{ "fs", "cache", "none", "sometimes", "--cache sometimes: must be auto, always or never" },
		{ "fs", "o", "source=/srv,cache=always,allow_direct_io", "cache=x", "-o cache= x: must be auto, always or never" },
		{ "blk", "disk", "/d.img,readonly,queues=2", "/d.img,bogus", "--disk /d.img,bogus: unknown option" },
	};
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct cli_serve_kind *sk;
		const struct cli_serve_option *o = serve_option(cases[i].kind, cases[i].opt, &sk);
		struct ringvm_serve_config cfg, before;
		ringvm_serve_config_init(&before);
		cfg = before;
		char err[RINGVM_ERR_MAX] = "", what[128];
		void *st = sk ? calloc(1, sk->state_size ? sk->state_size : 1) : NULL;
		int good = o && st && o->parse(st, &cfg, cases[i].good, err, sizeof(err)) == 0 &&
			   memcmp(&cfg, &before, sizeof(cfg)) != 0;
		if (good && !strcmp(cases[i].opt, "o"))
			good = !strcmp(cfg.share.host_dir, "/srv") && cfg.share.cache == RINGVM_CACHE_ALWAYS &&
			       cfg.share.allow_direct_io;
		if (good && !strcmp(cases[i].opt, "disk"))
			good = !strcmp(cfg.disk.path, "/d.img") && cfg.disk.readonly && cfg.disk.queues == 2;
		int bad = o && st && o->parse(st, &cfg, cases[i].bad, err, sizeof(err)) < 0 &&
			  !strncmp(err, cases[i].bad_msg, strlen(cases[i].bad_msg));
		if (st && sk->free)
			sk->free(st);
		free(st);
		snprintf(what, sizeof(what), "serve %s: %s%s into the serve config, a bad value refused by name",
			 cases[i].kind, cases[i].opt[1] ? "--" : "-", cases[i].opt);
		TAP_CHECK(good && bad, what);
	}
}

int main(void)
{
	test_serve_options();
	test_serve_parse();
	test_tables_match();
	test_host_paths();
	test_options_unique();
	test_json_keys();
	test_options_apply();
	return tap_done();
}
