/* cli_run.c: `ringvm run` and `ringvm config --print`: options and a JSON file into one struct ringvm_config. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "include/ringvm.h"
#include "vmm/cli.h"
#include "vmm/cli_config.h"
#include "vmm/cli_kind.h"
#include "vmm/cli_parse.h"
#include "vmm/cli_tree.h"
#include "vmm/jail.h"

/* The general options, then each device kind's (vmm/cli_kinds.c), then the rest. */
static void usage_run(FILE *f)
{
	fputs(	"usage: ringvm run [OPTIONS] [-- COMMAND [ARG...]]\n"
		"\n"
		"Boot a Linux guest and run COMMAND as its only job; ringvm exits with COMMAND's exit\n"
		"status (128+N if a signal N killed it). COMMAND reads ringvm's stdin and writes its\n"
		"stdout and stderr, byte for byte, as in a pipeline. Without COMMAND: an interactive\n"
		"shell on the console (Ctrl-A x ends the VM).\n"
		"\n"
		"Options:\n"
		"      --config FILE     a JSON configuration (README \"Configuration file\"); the\n"
		"                        options below override its fields, and a --disk or --share\n"
		"                        replaces its list of disks or shares\n"
		"  -k, --kernel PATH     bzImage or PVH vmlinux (default: the guest built with ringvm), or a\n"
		"                        kernel build tree: its vmlinux (CONFIG_PVH=y) or bzImage, its own\n"
		"                        modules, --root / by default\n"
		"  -i, --initrd PATH     initramfs (default: ringvm's guest initramfs; 'none' for none)\n"
		"  -c, --cmdline TEXT    appended to the kernel command line\n"
		"  -p, --cpus N          vCPUs, 1-255 (default 1)\n"
		"  -m, --memory SIZE     guest RAM, K/M/G/T suffixes, 64M-1T (default 512M)\n",
		f);
	for (unsigned int k = 0; k < nr_cli_kinds; k++)
		for (unsigned int i = 0; i < cli_kinds[k]->nr_options; i++)
			fputs(cli_kinds[k]->options[i].help, f);
	fprintf(f,
		"  -e, --env NAME=VALUE  COMMAND's environment: NAME=VALUE over a small default (PATH,\n"
		"                        HOME, TERM); repeatable\n"
		"  -w, --workdir DIR     COMMAND's working directory (absolute; default /)\n"
		"  -u, --user UID[:GID]  run COMMAND in the guest as this uid and gid (default gid: the\n"
		"                        uid), numeric\n"
		"      --timeout SECONDS stop the guest after SECONDS and exit 124, as timeout(1)\n"
		"      --stop-timeout SECONDS  SIGINT, SIGTERM and SIGHUP sent to ringvm go to COMMAND's\n"
		"                        process group; the guest is stopped when COMMAND has not ended\n"
		"                        SECONDS after the first (default 10; 0: at once)\n"
		"  -t, --tty             COMMAND runs on the serial console as a terminal (default when\n"
		"                        stdin is a terminal: raw mode, Ctrl-A x ends the VM)\n"
		"  -T, --no-tty          COMMAND's stdin, stdout and stderr are ringvm's own, as pipes\n"
		"                        (virtio-console; default when stdin is not a terminal)\n"
		"      --jail            run the VMM in namespaces of its own (mount, PID, IPC, UTS,\n"
		"                        network) whose root holds only the kernel, initrd, disks and\n"
		"                        shares, every other fd closed, no core dumps (root only)\n"
		"      --uid N, --gid N  with --jail: run the VMM on the host as this user and group\n"
		"                        (numeric); the disks and shares must be theirs to use,\n"
		"                        /dev/kvm is made for them\n"
		"  -v, --verbose         show the guest kernel's messages and ringvm's own\n"
		"      --timing          print boot timing (ms since start: first KVM_RUN, init, end)\n"
		"      --gdb ADDR        a gdb stub on tcp:HOST:PORT (port 0: any) or unix:PATH; then\n"
		"                        gdb vmlinux -ex 'target remote HOST:PORT'\n"
		"      --gdb-wait        with --gdb: stop before the first instruction until gdb continues\n"
		"  -h, --help            this help\n"
		"\n"
		"Exit status: COMMAND's status; 0 when the guest powers off or reboots by itself;\n"
		"%d when the guest crashed (kernel panic, triple fault); %d after --timeout; %d when\n"
		"ringvm itself failed.\n",
		RINGVM_EXIT_CRASH, RINGVM_EXIT_TIMEOUT, RINGVM_EXIT_ERROR);
}

/* The default guest lives next to the binary: build/guest/ for build/ringvm, and build/san/ringvm. */
static const char *default_guest_file(const char *name, char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	static const char *const dirs[] = { "guest", "../guest" };
	for (unsigned int i = 0; i < 2; i++) {
		int w = snprintf(buf, len, "%s/%s/%s", exe, dirs[i], name);
		if (w > 0 && (size_t)w < len && access(buf, R_OK) == 0)
			return buf;
	}
	return NULL;
}

static uint64_t start_ns; /* set by cli_run_clock_start(), first thing in main */

static uint64_t now_ns(void);

void cli_run_clock_start(void)
{
	start_ns = now_ns();
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static double ms_since_start(uint64_t t)
{
	return t ? (double)(t - start_ns) / 1e6 : -1.0;
}

/* One machine-readable line: milliseconds since ringvm started (-1: never reached). */
static void print_timing(const struct ringvm_result *res)
{
	fprintf(stderr, "ringvm: timing: first_kvm_run_ms=%.2f init_ms=%.2f end_ms=%.2f\n",
		ms_since_start(res->t_first_run), ms_since_start(res->t_init), ms_since_start(res->t_end));
}

/* Everything a run's config points into, alive until the run is over. */
struct cli_run {
	struct ringvm_config cfg;
	struct cli_config_file file;
	void **kind_state; /* each device kind's options (cli_kind.state_size bytes), in cli_kinds order */
	struct ringvm_share tree_shares[RINGVM_MAX_DEVICES]; /* --kernel TREE: the given shares and its own */
	char kernel_buf[PATH_MAX], initrd_buf[PATH_MAX];
	const char *env[RINGVM_MAX_ENV];
	struct cli_tree tree; /* --kernel TREE: what the config points into */
	bool timing;
	/* --jail [--uid N --gid N] */
	bool jail, have_uid, have_gid;
	uint32_t uid, gid;
};

/* The options as given, before the file's fields are known: they are applied over it. */
struct run_opts {
	const char *config, *kernel, *initrd, *cmdline;
	bool cpus_set, memory_set, verbose;
	unsigned int cpus;
	uint64_t memory;
	unsigned int nr_env;
	const char *workdir;
	bool set_user;
	uint32_t uid, gid;
	unsigned int timeout_s;
	bool stop_timeout_set;
	unsigned int stop_timeout_ms;
	bool tty_set;
	enum ringvm_tty tty;
	const char *gdb;
	bool gdb_wait;
};

/* --kernel TREE: the tree's image, initramfs, --root / by default and its shares (cli_tree.h). */
static void tree_setup(struct cli_run *r, const char *dir)
{
	struct ringvm_config *cfg = &r->cfg;
	char helper_buf[PATH_MAX], init_buf[PATH_MAX], msg[RINGVM_ERR_MAX];
	const char *helper = default_guest_file("tree-initramfs.sh", helper_buf, sizeof(helper_buf));
	const char *init = default_guest_file("init", init_buf, sizeof(init_buf));
	/* The tree's shares join the given ones (options' or the file's) in r->tree_shares. */
	unsigned int n = cfg->nr_shares;
	if (n && n <= RINGVM_MAX_DEVICES)
		memcpy(r->tree_shares, cfg->shares, n * sizeof(r->tree_shares[0]));
	if (n > RINGVM_MAX_DEVICES ||
	    cli_tree_setup(&r->tree, dir, cfg, r->file.initrd_set,
			   r->tree_shares, &n, RINGVM_MAX_DEVICES, helper, init, msg, sizeof(msg)))
		die("%s", n > RINGVM_MAX_DEVICES ? "too many shares" : msg);
	cfg->shares = r->tree_shares;
	cfg->nr_shares = n;
}

/* The device kinds' options (vmm/cli_kind.h) as getopt_long sees them: the i-th returns
   KIND_OPT_BASE + i, or its letter. */
#define KIND_OPT_BASE 2000
#define MAX_KIND_OPTS 32

/* getopt_long's tables: the general options, then every kind's. */
struct run_getopt {
	struct option longopts[64];
	char shortopts[96];
	const struct cli_kind_option *kopt[MAX_KIND_OPTS];
	unsigned int kind[MAX_KIND_OPTS]; /* kopt[i]'s index in cli_kinds */
	unsigned int nr_kopts;
};

static void run_getopt_init(struct run_getopt *g)
{
	static const struct option opts[] = {
		{ "kernel", required_argument, NULL, 'k' }, { "initrd", required_argument, NULL, 'i' },
		{ "cmdline", required_argument, NULL, 'c' }, { "cpus", required_argument, NULL, 'p' },
		{ "memory", required_argument, NULL, 'm' },
		{ "verbose", no_argument, NULL, 'v' },      { "help", no_argument, NULL, 'h' },
		{ "timing", no_argument, NULL, 1000 },
		{ "tty", no_argument, NULL, 't' },          { "no-tty", no_argument, NULL, 'T' },
		{ "env", required_argument, NULL, 'e' },    { "workdir", required_argument, NULL, 'w' },
		{ "user", required_argument, NULL, 'u' },   { "timeout", required_argument, NULL, 1001 },
		{ "config", required_argument, NULL, 'C' },
		{ "gdb", required_argument, NULL, 'g' },    { "gdb-wait", no_argument, NULL, 'W' },
		{ "jail", no_argument, NULL, 'J' },         { "uid", required_argument, NULL, 'U' },
		{ "gid", required_argument, NULL, 'G' },    { "stop-timeout", required_argument, NULL, 1002 },
		{ "print", no_argument, NULL, 'P' },
	};
	const unsigned int nr_opts = sizeof(opts) / sizeof(opts[0]);
	memset(g, 0, sizeof(*g));
	memcpy(g->longopts, opts, sizeof(opts));
	strcpy(g->shortopts, "+:k:i:c:p:m:vhtTe:w:u:");
	for (unsigned int k = 0; k < nr_cli_kinds; k++) {
		for (unsigned int i = 0; i < cli_kinds[k]->nr_options; i++) {
			const struct cli_kind_option *ko = &cli_kinds[k]->options[i];
			unsigned int n = g->nr_kopts;
			/* The table's own mistakes, found by any run (tests/boot/cli.sh runs many). */
			bool taken = false;
			for (unsigned int j = 0; j < nr_opts + n; j++)
				taken |= !strcmp(g->longopts[j].name, ko->name);
			if (taken || n == MAX_KIND_OPTS || nr_opts + n + 1 >= sizeof(g->longopts) / sizeof(g->longopts[0]) ||
			    (ko->letter && strchr(g->shortopts, ko->letter)) ||
			    strlen(g->shortopts) + 3 > sizeof(g->shortopts))
				die("internal: the option table cannot take %s's --%s", cli_kinds[k]->name, ko->name);
			g->kopt[n] = ko;
			g->kind[n] = k;
			g->longopts[nr_opts + n] = (struct option){ ko->name, ko->has_arg, NULL,
								    ko->letter ? ko->letter : KIND_OPT_BASE + (int)n };
			if (ko->letter) {
				char add[3] = { ko->letter, ko->has_arg == required_argument ? ':' : '\0', '\0' };
				strcat(g->shortopts, add);
			}
			g->nr_kopts++;
		}
	}
}

/* Which kind option getopt_long's c is, or -1. */
static int run_getopt_kind(const struct run_getopt *g, int c)
{
	for (unsigned int i = 0; i < g->nr_kopts; i++)
		if (c == (g->kopt[i]->letter ? g->kopt[i]->letter : KIND_OPT_BASE + (int)i))
			return (int)i;
	return -1;
}

/* Parse `ringvm run`'s options (or `config --print`'s: the same) into r->cfg; dies on bad input.
   Returns 1 when --help was printed, else 0. */
static int run_parse(int argc, char **argv, struct cli_run *r, const char *cmd)
{
	static struct run_getopt g;
	run_getopt_init(&g);
	r->kind_state = calloc(nr_cli_kinds, sizeof(*r->kind_state));
	for (unsigned int k = 0; r->kind_state && k < nr_cli_kinds; k++)
		if (cli_kinds[k]->state_size && !(r->kind_state[k] = calloc(1, cli_kinds[k]->state_size)))
			die("out of memory");
	if (!r->kind_state)
		die("out of memory");
	char msg[RINGVM_ERR_MAX];
	struct run_opts o = { 0 };
	const char *err;
	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		int k = run_getopt_kind(&g, c);
		if (k >= 0) {
			if (g.kopt[k]->parse(r->kind_state[g.kind[k]], optarg, msg, sizeof(msg)))
				die("%s", msg);
			continue;
		}
		switch (c) {
		case 'C':
			o.config = optarg;
			break;
		case 'k':
			o.kernel = optarg;
			break;
		case 'i':
			o.initrd = optarg;
			break;
		case 'c':
			o.cmdline = optarg;
			break;
		case 'p':
			if (cli_parse_cpus(optarg, &o.cpus, &err))
				die("--cpus %s: %s", optarg, err);
			o.cpus_set = true;
			break;
		case 'm':
			if (cli_parse_size(optarg, &o.memory, &err))
				die("--memory %s: %s", optarg, err);
			o.memory_set = true;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 1000:
			r->timing = true;
			break;
		case 'J':
			r->jail = true;
			break;
		case 'U':
			if (cli_parse_id(optarg, &r->uid, &err))
				die("--uid %s: %s", optarg, err);
			r->have_uid = true;
			break;
		case 'G':
			if (cli_parse_id(optarg, &r->gid, &err))
				die("--gid %s: %s", optarg, err);
			r->have_gid = true;
			break;
		case 't':
		case 'T':
			o.tty_set = true;
			o.tty = c == 't' ? RINGVM_TTY_ON : RINGVM_TTY_OFF;
			break;
		case 'e':
			if (o.nr_env == RINGVM_MAX_ENV)
				die("--env: at most %d variables", RINGVM_MAX_ENV);
			if (!strchr(optarg, '=') || optarg[0] == '=')
				die("--env %s: want NAME=VALUE", optarg);
			r->env[o.nr_env++] = optarg;
			break;
		case 'w':
			if (optarg[0] != '/')
				die("--workdir %s: the directory must be absolute", optarg);
			o.workdir = optarg;
			break;
		case 'u':
			if (cli_parse_user(optarg, &o.uid, &o.gid, &err))
				die("--user %s: %s", optarg, err);
			o.set_user = true;
			break;
		case 1001:
			if (cli_parse_seconds(optarg, &o.timeout_s, &err))
				die("--timeout %s: %s", optarg, err);
			break;
		case 1002:
			if (cli_parse_stop_timeout(optarg, &o.stop_timeout_ms, &err))
				die("--stop-timeout %s: %s", optarg, err);
			o.stop_timeout_set = true;
			break;
		case 'g':
			o.gdb = optarg;
			break;
		case 'W':
			o.gdb_wait = true;
			break;
		case 'P':
			if (strcmp(cmd, "config") != 0)
				die("unknown option --print (see ringvm %s --help)", cmd);
			break;
		case 'h':
			usage_run(stdout);
			return 1;
		case ':':
			die("option %s needs a value (see ringvm %s --help)", argv[optind - 1], cmd);
		default:
			die("unknown option %s (see ringvm %s --help)", argv[optind - 1], cmd);
		}
	}
	if (optind < argc && strcmp(argv[optind - 1], "--") != 0)
		die("unexpected argument '%s': put the command after -- (see ringvm %s --help)", argv[optind], cmd);

	/* The file first, then every option given over it. */
	struct ringvm_config *cfg = &r->cfg;
	ringvm_config_init(cfg);
	cfg->handle_signals = true;
	if (o.config && cli_config_load(o.config, cfg, &r->file, msg, sizeof(msg)))
		die("%s", msg);
	if (o.kernel)
		cfg->kernel = o.kernel;
	if (o.initrd) {
		r->file.initrd_set = true;
		cfg->initrd = strcmp(o.initrd, "none") ? o.initrd : NULL;
	}
	if (o.cmdline)
		cfg->cmdline = o.cmdline;
	if (o.cpus_set)
		cfg->cpus = o.cpus;
	if (o.memory_set)
		cfg->memory = o.memory;
	for (unsigned int k = 0; k < nr_cli_kinds; k++)
		if (cli_kinds[k]->apply)
			cli_kinds[k]->apply(r->kind_state[k], cfg);
	if (o.verbose)
		cfg->verbose = true;
	if (optind < argc) {
		cfg->argv = (const char *const *)(argv + optind);
		cfg->argc = (unsigned int)(argc - optind);
	}
	if (o.nr_env) {
		cfg->launch.env = r->env;
		cfg->launch.nr_env = o.nr_env;
	}
	if (o.workdir)
		cfg->launch.workdir = o.workdir;
	if (o.set_user) {
		cfg->launch.set_user = true;
		cfg->launch.uid = o.uid;
		cfg->launch.gid = o.gid;
	}
	if (o.timeout_s)
		cfg->timeout_s = o.timeout_s;
	if (o.stop_timeout_set)
		cfg->stop_timeout_ms = o.stop_timeout_ms;
	if (o.tty_set)
		cfg->console.tty = o.tty;
	if (o.gdb)
		cfg->gdb = o.gdb;
	if (o.gdb_wait)
		cfg->gdb_wait = true;
	if (cfg->gdb_wait && !cfg->gdb)
		die("--gdb-wait needs --gdb");
	if (cfg->kernel && cli_is_tree(cfg->kernel))
		tree_setup(r, cfg->kernel);

	if (!cfg->kernel) {
		cfg->kernel = default_guest_file("kernel/vmlinuz", r->kernel_buf, sizeof(r->kernel_buf));
		if (!cfg->kernel)
			die("no --kernel given and the default guest kernel is not built (run make)");
	}
	if (!r->file.initrd_set && !cfg->initrd) { /* a kernel tree brings its own */
		cfg->initrd = default_guest_file("initramfs.img", r->initrd_buf, sizeof(r->initrd_buf));
		if (!cfg->initrd)
			die("no --initrd given and the default guest initramfs is not built (run make)");
	}
	return 0;
}

static void run_free(struct cli_run *r)
{
	cli_tree_close(&r->tree);
	for (unsigned int k = 0; r->kind_state && k < nr_cli_kinds; k++) {
		if (r->kind_state[k] && cli_kinds[k]->free)
			cli_kinds[k]->free(r->kind_state[k]);
		free(r->kind_state[k]);
	}
	free(r->kind_state);
	r->kind_state = NULL;
	cli_config_free(&r->file);
}

int cmd_run(int argc, char **argv)
{
	static struct cli_run r; /* PATH_MAX buffers: off the stack */
	if (run_parse(argc, argv, &r, "run")) {
		run_free(&r);
		return 0;
	}
	struct ringvm_config *cfg = &r.cfg;
	char msg[RINGVM_ERR_MAX];
	/* SIGUSR2 asks for the state report (README): one that comes while the VM is being built
	   waits, blocked, for ringvm_run's signalfd instead of killing ringvm. */
	sigset_t usr2;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	sigprocmask(SIG_BLOCK, &usr2, NULL);
	if ((r.have_uid || r.have_gid) && !r.jail)
		die("--uid and --gid need --jail");
	if (r.have_uid != r.have_gid)
		die("--uid and --gid go together");
	/* The jail's network namespace has no reachable address and its root no writable directory
	   for a socket: no debugger could ever connect. */
	if (r.jail && cfg->gdb)
		die("--gdb and --jail do not go together (no debugger can reach into the jail)");
	if (r.jail) {
		/* The jail binds what the config names: its mistakes are reported first. */
		if (ringvm_config_check(cfg, msg, sizeof(msg)))
			die("%s", msg);
		struct jail_options jo = { .drop_ids = r.have_uid, .uid = r.uid, .gid = r.gid };
		int status;
		int j = jail_enter(cfg, &jo, &status, msg, sizeof(msg));
		if (j < 0)
			die("--jail: %s", msg);
		if (j > 0) {
			run_free(&r);
			return status; /* the parent: the jailed VMM ended */
		}
	}
	struct ringvm *vm;
	int ret = ringvm_create(cfg, &vm, msg, sizeof(msg));
	bool verbose = cfg->verbose, gdb_wait = cfg->gdb_wait;
	run_free(&r); /* the VM keeps no pointer into the config */
	if (ret)
		die("%s", msg);
	if (ringvm_gdb_address(vm))
		fprintf(stderr, "ringvm: gdb stub on %s%s\n", ringvm_gdb_address(vm),
			gdb_wait ? ", waiting for the debugger" : "");
	/* The library writes the command's stdout through its own duplicate and closes it when the
	   command closes stdout; ours would keep the reader from seeing that EOF. */
	if (ringvm_streams(vm)) {
		int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null_fd < 0 || dup2(null_fd, STDOUT_FILENO) < 0)
			die("/dev/null: %s", strerror(errno));
		close(null_fd);
	}
	struct ringvm_result res;
	ret = ringvm_run(vm, &res, msg, sizeof(msg));
	ringvm_destroy(vm);
	int code = ringvm_exit_code(&res);
	if (ret || res.end == RINGVM_END_PANIC || res.end == RINGVM_END_CRASH ||
	    res.end == RINGVM_END_ERROR || res.end == RINGVM_END_TIMEOUT)
		fprintf(stderr, "ringvm: %s\n", res.message);
	else if (verbose)
		fprintf(stderr, "ringvm: %s\n", res.message);
	if (r.timing)
		print_timing(&res);
	return code;
}

int cmd_config(int argc, char **argv)
{
	static struct cli_run r;
	if (argc < 2 || strcmp(argv[1], "--print") != 0)
		die("config: usage: ringvm config --print [--config FILE] [RUN OPTIONS] [-- COMMAND]");
	if (run_parse(argc - 1, argv + 1, &r, "config")) {
		run_free(&r);
		return 0;
	}
	/* What `ringvm run` with these arguments would check first: only a config that passes is
	   printed, so the output always loads again. */
	char msg[RINGVM_ERR_MAX];
	if (ringvm_config_check(&r.cfg, msg, sizeof(msg)))
		die("%s", msg);
	int ret = cli_config_print(&r.cfg, stdout);
	run_free(&r);
	if (ret)
		die("config --print: %s", strerror(-ret));
	return 0;
}
