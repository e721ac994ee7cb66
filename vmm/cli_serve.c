/*
 * cli_serve.c: `ringvm serve KIND`, one device kind over vhost-user: the options every kind shares
 * (the socket, busy-polling, virtiofsd's ignored ones) here, each kind's own from its CLI part
 * (vmm/cli_kind.h: cli_kind.serve, in its folder).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli.h"
#include "vmm/cli_kind.h"
#include "vmm/cli_parse.h"
#include "include/ringvm.h"

/* The kinds with a serve part, by their ringvm_serve_device number (fs, the default, first). */
struct serve_kinds {
	const struct cli_kind *k[16];
	unsigned int n;
};

static void serve_kinds_find(struct serve_kinds *s)
{
	s->n = 0;
	for (unsigned int i = 0; i < nr_cli_kinds && s->n < 16; i++) {
		if (!cli_kinds[i]->serve)
			continue;
		unsigned int j = s->n++;
		for (; j > 0 && s->k[j - 1]->serve->device > cli_kinds[i]->serve->device; j--)
			s->k[j] = s->k[j - 1];
		s->k[j] = cli_kinds[i];
	}
}

/* What pick says of each kind, joined: sep between two, last before the last ("fs or blk",
   "a, b or c"; "fs|blk"). */
static void serve_kinds_join(FILE *f, const struct serve_kinds *s, const char *(*pick)(const struct cli_kind *),
			     const char *sep, const char *last)
{
	for (unsigned int i = 0; i < s->n; i++)
		fprintf(f, "%s%s", i == 0 ? "" : i + 1 == s->n ? last : sep, pick(s->k[i]));
}

static const char *pick_name(const struct cli_kind *k)
{
	return k->name;
}

static const char *pick_what(const struct cli_kind *k)
{
	return k->serve->what;
}

static const char *pick_qemu(const struct cli_kind *k)
{
	return k->serve->qemu_device;
}

static void usage_serve(FILE *f, const struct serve_kinds *s)
{
	for (unsigned int i = 0; i < s->n; i++)
		fprintf(f, "%sringvm serve %s", i ? "       " : "usage: ", s->k[i]->serve->usage);
	fprintf(f, "       (%s: [--poll-us N])\n\nServe ringvm's ", s->n == 2 ? "both" : "all");
	serve_kinds_join(f, s, pick_what, ", ", " or ");
	fprintf(f, " to another VMM over\nvhost-user (QEMU: -chardev socket,path=PATH with ");
	serve_kinds_join(f, s, pick_qemu, ", ", " or ");
	fprintf(f,
		";\n"
		"guest memory must be shared: -object memory-backend-memfd,share=on). One front-end at a\n"
		"time; when it disconnects the device is reset and the next one is accepted. SIGINT or\n"
		"SIGTERM ends the server (exit 0) and removes the socket.\n"
		"\n"
		"Options:\n"
		"  --socket PATH         the Unix socket to listen on (also --socket-path, virtiofsd's)\n"
		"  --fd N                listen on the already listening socket N instead\n");
	for (unsigned int i = 0; i < s->n; i++)
		fputs(s->k[i]->serve->help, f);
	fprintf(f,
		"  --poll-us N           queue workers busy-poll up to N us (0-%d) for the next request\n"
		"                        before sleeping; the window adapts below N, so an idle queue\n"
		"                        stops spinning (default %d; 0 = never",
		RINGVM_MAX_POLL_US, RINGVM_SERVE_POLL_US);
	for (unsigned int i = 0; i < s->n; i++)
		if (s->k[i]->serve->poll_us_note)
			fprintf(f, "; %s", s->k[i]->serve->poll_us_note);
	fprintf(f,
		")\n"
		"  -h, --help            this help\n"
		"Accepted for virtiofsd compatibility and ignored (a note on stderr):\n"
		"  --thread-pool-size N (ringvm has one io_uring worker per queue), --sandbox X,\n"
		"  --seccomp X (ringvm always confines itself), --announce-submounts, --xattr,\n"
		"  --log-level X, other -o options.\n"
		"\n"
		"Exit status: 0 when stopped by a signal; %d when the server could not start.\n",
		RINGVM_EXIT_ERROR);
}

/* A decimal number 0..max, or a one-line error and exit. */
static unsigned int parse_number(const char *opt, const char *v, unsigned int max)
{
	char *end;
	errno = 0;
	unsigned long n = strtoul(v, &end, 10);
	if (!*v || *v == '-' || *end || errno || n > max)
		die("%s %s: must be a number 0..%u", opt, v, max);
	return (unsigned int)n;
}

enum {
	OPT_SOCKET = 256,
	OPT_FD,
	OPT_POLL_US,
	OPT_IGNORED_VALUE, /* virtiofsd options with a value, accepted and ignored */
	OPT_IGNORED_FLAG,  /* and without one */
	OPT_KIND = 512,    /* + i: serve_getopt.kopt[i] */
};

#define SERVE_MAX_KIND_OPTS 48

/* getopt_long's tables: the kinds' options (by serve order) amid the general ones. */
struct serve_getopt {
	struct option longopts[SERVE_MAX_KIND_OPTS + 16];
	char shortopts[2 * SERVE_MAX_KIND_OPTS + 8];
	const struct cli_serve_option *kopt[SERVE_MAX_KIND_OPTS];
	const struct cli_kind *kind[SERVE_MAX_KIND_OPTS]; /* whose kopt[i] is */
	unsigned int nr_kopts;
};

static void serve_getopt_init(struct serve_getopt *g, const struct serve_kinds *s)
{
	static const struct option head[] = {
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "socket-path", required_argument, NULL, OPT_SOCKET },
		{ "fd", required_argument, NULL, OPT_FD },
	};
	static const struct option tail[] = {
		{ "poll-us", required_argument, NULL, OPT_POLL_US },
		{ "thread-pool-size", required_argument, NULL, OPT_IGNORED_VALUE },
		{ "sandbox", required_argument, NULL, OPT_IGNORED_VALUE },
		{ "seccomp", required_argument, NULL, OPT_IGNORED_VALUE },
		{ "log-level", required_argument, NULL, OPT_IGNORED_VALUE },
		{ "announce-submounts", no_argument, NULL, OPT_IGNORED_FLAG },
		{ "xattr", no_argument, NULL, OPT_IGNORED_FLAG },
		{ "help", no_argument, NULL, 'h' },
	};
	unsigned int nl = 0;
	size_t ns = 0;
	memset(g, 0, sizeof(*g));
	for (unsigned int i = 0; i < sizeof(head) / sizeof(head[0]); i++)
		g->longopts[nl++] = head[i];
	g->shortopts[ns++] = '+'; /* options end at the first argument */
	g->shortopts[ns++] = ':'; /* a missing value is ':', not '?' */
	for (unsigned int k = 0; k < s->n; k++)
		for (unsigned int i = 0; i < s->k[k]->serve->nr_options; i++) {
			const struct cli_serve_option *o = &s->k[k]->serve->options[i];
			if (g->nr_kopts == SERVE_MAX_KIND_OPTS)
				die("internal: serve's option table cannot take %s's options", s->k[k]->name);
			int val = OPT_KIND + (int)g->nr_kopts;
			g->kopt[g->nr_kopts] = o;
			g->kind[g->nr_kopts++] = s->k[k];
			if (o->name)
				g->longopts[nl++] = (struct option){ o->name, o->has_arg, NULL, val };
			if (o->letter) {
				g->shortopts[ns++] = o->letter;
				if (o->has_arg == required_argument)
					g->shortopts[ns++] = ':';
			}
		}
	for (unsigned int i = 0; i < sizeof(tail) / sizeof(tail[0]); i++)
		g->longopts[nl++] = tail[i];
	g->shortopts[ns++] = 'h';
	/* longopts ends with the zeroed entry memset left. */
}

/* The kind option a getopt_long result c stands for (its value, or its letter), or -1. */
static int serve_kind_option(const struct serve_getopt *g, int c)
{
	if (c >= OPT_KIND && c < OPT_KIND + (int)g->nr_kopts)
		return c - OPT_KIND;
	for (unsigned int i = 0; c > 0 && c < 256 && i < g->nr_kopts; i++)
		if (g->kopt[i]->letter == c)
			return (int)i;
	return -1;
}

int cmd_serve(int argc, char **argv)
{
	struct serve_kinds s;
	serve_kinds_find(&s);
	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
			usage_serve(stdout, &s);
			return 0;
		}
		fputs("ringvm: serve: which device? ringvm serve ", stderr);
		serve_kinds_join(stderr, &s, pick_name, "|", "|");
		fputs(" --socket PATH ... (see ringvm serve --help)\n", stderr);
		exit(RINGVM_EXIT_ERROR);
	}
	const char *name = argv[1];
	const struct cli_kind *kind = NULL;
	for (unsigned int i = 0; i < s.n; i++)
		if (!strcmp(s.k[i]->name, name))
			kind = s.k[i];
	if (!kind) {
		fprintf(stderr, "ringvm: serve: unknown device '%s' (", name);
		serve_kinds_join(stderr, &s, pick_name, ", ", " or ");
		fputs(")\n", stderr);
		exit(RINGVM_EXIT_ERROR);
	}
	struct ringvm_serve_config cfg;
	ringvm_serve_config_init(&cfg);
	cfg.device = (enum ringvm_serve_device)kind->serve->device;
	cfg.handle_signals = true;
	void *state = kind->serve->state_size ? calloc(1, kind->serve->state_size) : NULL;
	if (kind->serve->state_size && !state)
		die("out of memory");
	static struct serve_getopt g;
	serve_getopt_init(&g, &s);

	argc--;
	argv++;
	opterr = 0;
	optind = 1;
	int c, idx = 0;
	char msg[RINGVM_ERR_MAX];
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, &idx)) != -1) {
		const char *opt_name = c >= OPT_SOCKET ? g.longopts[idx].name : "";
		int ko = serve_kind_option(&g, c);
		if (ko >= 0) {
			const struct cli_serve_option *o = g.kopt[ko];
			if (g.kind[ko] != kind)
				die("serve %s: --%s is an option of serve %s", name,
				    o->name ? o->name : (char[]){ o->letter, '\0' }, g.kind[ko]->name);
			if (o->parse(state, &cfg, optarg, msg, sizeof(msg)))
				die("%s", msg);
			continue;
		}
		switch (c) {
		case OPT_SOCKET:
			cfg.socket = optarg;
			break;
		case OPT_FD: {
			unsigned int fd;
			if (cli_parse_count(optarg, 1u << 20, &fd))
				die("--fd %s: must be a number 1..%u", optarg, 1u << 20);
			cfg.listen_fd = (int)fd;
			break;
		}
		case OPT_POLL_US:
			cfg.poll_us = parse_number("--poll-us", optarg, RINGVM_MAX_POLL_US);
			break;
		case OPT_IGNORED_VALUE:
			fprintf(stderr, "ringvm: serve: --%s %s ignored (virtiofsd option; %s)\n", opt_name,
				optarg,
				!strcmp(opt_name, "thread-pool-size")
					? "ringvm runs one io_uring worker per queue"
					: "ringvm applies its own sandbox and seccomp filter");
			break;
		case OPT_IGNORED_FLAG:
			fprintf(stderr, "ringvm: serve: --%s ignored (virtiofsd option)\n", opt_name);
			break;
		case 'h':
			usage_serve(stdout, &s);
			if (kind->serve->free)
				kind->serve->free(state);
			free(state);
			return 0;
		case ':':
			die("option %s needs a value (see ringvm serve --help)", argv[optind - 1]);
		default:
			die("unknown option %s (see ringvm serve --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		die("serve: unexpected argument '%s' (see ringvm serve --help)", argv[optind]);
	if (!cfg.socket && cfg.listen_fd < 0)
		die("serve %s: --socket PATH is required", name);
	if (cfg.socket && cfg.listen_fd >= 0)
		die("serve %s: --socket and --fd exclude each other", name);

	int ret = ringvm_serve(&cfg, msg, sizeof(msg));
	if (kind->serve->free)
		kind->serve->free(state);
	free(state);
	if (ret)
		die("%s", msg);
	return 0;
}
