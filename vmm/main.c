/* main.c: the ringvm command line, a thin client of the library in vmm/ringvm.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmm/cli.h"
#include "vmm/cli_parse.h"
#include "vmm/cli_tree.h"
#include "vmm/jail.h"
#include "vmm/ringvm.h"

#define RINGVM_VERSION "0.1"

static void usage_main(FILE *f)
{
	fprintf(f,
		"usage: ringvm run [OPTIONS] [-- COMMAND [ARG...]]\n"
		"       ringvm kconfig [--apply TREE]\n"
		"       ringvm serve fs|blk --socket PATH [OPTIONS]\n"
		"       ringvm --help | --version\n"
		"\n"
		"ringvm boots a Linux guest on KVM, runs COMMAND in it and exits with its status.\n"
		"Without COMMAND it gives an interactive shell on the guest's serial console.\n"
		"`ringvm serve` serves ringvm's virtio-fs or virtio-blk to another VMM over vhost-user.\n"
		"`ringvm run --help` and `ringvm serve --help` list the options.\n");
}

static void usage_run(FILE *f)
{
	fprintf(f,
		"usage: ringvm run [OPTIONS] [-- COMMAND [ARG...]]\n"
		"\n"
		"Boot a Linux guest and run COMMAND as its only job; ringvm exits with COMMAND's exit\n"
		"status (128+N if a signal N killed it). COMMAND reads ringvm's stdin and writes its\n"
		"stdout and stderr, byte for byte, as in a pipeline. Without COMMAND: an interactive\n"
		"shell on the console (Ctrl-A x ends the VM).\n"
		"\n"
		"Options:\n"
		"  -k, --kernel PATH     bzImage or PVH vmlinux (default: the guest built with ringvm), or a\n"
		"                        kernel build tree: its bzImage, its own modules, --root / by default\n"
		"  -i, --initrd PATH     initramfs (default: ringvm's guest initramfs; 'none' for none)\n"
		"  -c, --cmdline TEXT    appended to the kernel command line\n"
		"  -p, --cpus N          vCPUs, 1-255 (default 1)\n"
		"  -m, --memory SIZE     guest RAM, K/M/G/T suffixes, 64M-1T (default 512M)\n"
		"  -d, --disk SPEC       a virtio-blk disk: PATH[,readonly][,queues=N][,direct=on|off]\n"
		"                        [,id=STRING]; repeat for /dev/vdb, /dev/vdc, ...\n"
		"  -s, --share SPEC      a host directory over virtio-fs: HOSTDIR:GUESTDIR[,readonly]\n"
		"                        [,cache=auto|always|never][,tag=NAME][,queues=N][,dev][,suid]\n"
		"                        [,xattr=user|none|security|all][,allow_direct_io]; repeatable.\n"
		"                        dev: allow device nodes; suid: keep setuid/setgid bits; xattr:\n"
		"                        namespaces passed (default user: user.* and POSIX ACLs);\n"
		"                        allow_direct_io: the guest's O_DIRECT is O_DIRECT on the host\n"
		"  -r, --root HOSTDIR[,rw]  boot with HOSTDIR as the guest's root over virtio-fs,\n"
		"                        read-only under a tmpfs overlay (rw: writes go through)\n"
		"      --fs-limits fds=N,dir_buffers=N  what all shares together may hold on the\n"
		"                        host: fds (inodes the guest holds + open files; default the\n"
		"                        fd limit less 1024, at most 2^20) and 8 KiB directory buffers\n"
		"                        (default 2048 = 16 MiB); past them the guest gets ENFILE\n"
		"  -e, --env NAME=VALUE  COMMAND's environment: NAME=VALUE over a small default (PATH,\n"
		"                        HOME, TERM); repeatable\n"
		"  -w, --workdir DIR     COMMAND's working directory (absolute; default /)\n"
		"  -u, --user UID[:GID]  run COMMAND in the guest as this uid and gid (default gid: the\n"
		"                        uid), numeric\n"
		"      --timeout SECONDS stop the guest after SECONDS and exit 124, as timeout(1)\n"
		"      --stop-timeout SECONDS  SIGINT, SIGTERM and SIGHUP sent to ringvm go to COMMAND's\n"
		"                        process group (without a tty); the guest is stopped when COMMAND\n"
		"                        has not ended SECONDS after the first (default 10; 0: at once)\n"
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

void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("ringvm: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(RINGVM_EXIT_ERROR);
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

static uint64_t start_ns;

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

static int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "kernel", required_argument, NULL, 'k' }, { "initrd", required_argument, NULL, 'i' },
		{ "cmdline", required_argument, NULL, 'c' }, { "cpus", required_argument, NULL, 'p' },
		{ "memory", required_argument, NULL, 'm' }, { "disk", required_argument, NULL, 'd' },
		{ "verbose", no_argument, NULL, 'v' },      { "help", no_argument, NULL, 'h' },
		{ "timing", no_argument, NULL, 1000 },      { "share", required_argument, NULL, 's' },
		{ "tty", no_argument, NULL, 't' },          { "no-tty", no_argument, NULL, 'T' },
		{ "env", required_argument, NULL, 'e' },    { "workdir", required_argument, NULL, 'w' },
		{ "user", required_argument, NULL, 'u' },   { "timeout", required_argument, NULL, 1001 },
		{ "root", required_argument, NULL, 'r' },   { "stop-timeout", required_argument, NULL, 1002 },
		{ "gdb", required_argument, NULL, 'g' },    { "gdb-wait", no_argument, NULL, 'W' },
		{ "fs-limits", required_argument, NULL, 'L' },
		{ "jail", no_argument, NULL, 'J' },         { "uid", required_argument, NULL, 'U' },
		{ "gid", required_argument, NULL, 'G' },
		{ NULL, 0, NULL, 0 },
	};
	struct ringvm_config cfg;
	ringvm_config_init(&cfg);
	cfg.handle_signals = true;
	const char *disks[64], *shares[64];
	unsigned int nr_disks = 0, nr_shares = 0;
	char *env[256];
	int nr_env = 0;
	const char *initrd = NULL;
	char kernel_buf[PATH_MAX], initrd_buf[PATH_MAX];
	const char *err;
	bool timing = false, jail = false, have_uid = false, have_gid = false;
	uint32_t uid = 0, gid = 0;

	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+:k:i:c:p:m:d:s:r:vhtTe:w:u:", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			cfg.kernel = optarg;
			break;
		case 'i':
			initrd = optarg;
			break;
		case 'c':
			cfg.cmdline = optarg;
			break;
		case 'p':
			if (cli_parse_cpus(optarg, &cfg.cpus, &err))
				die("--cpus %s: %s", optarg, err);
			break;
		case 'm':
			if (cli_parse_size(optarg, &cfg.memory, &err))
				die("--memory %s: %s", optarg, err);
			break;
		case 'd':
			if (nr_disks == sizeof(disks) / sizeof(disks[0]))
				die("--disk: too many disks");
			disks[nr_disks++] = optarg;
			break;
		case 's':
			if (nr_shares == sizeof(shares) / sizeof(shares[0]))
				die("--share: too many shares");
			shares[nr_shares++] = optarg;
			break;
		case 'r':
			if (cfg.root)
				die("--root given twice");
			cfg.root = optarg;
			break;
		case 'L':
			cfg.fs_limits = optarg;
			break;
		case 'v':
			cfg.verbose = true;
			break;
		case 1000:
			timing = true;
			break;
		case 'J':
			jail = true;
			break;
		case 'U':
			if (cli_parse_id(optarg, &uid, &err))
				die("--uid %s: %s", optarg, err);
			have_uid = true;
			break;
		case 'G':
			if (cli_parse_id(optarg, &gid, &err))
				die("--gid %s: %s", optarg, err);
			have_gid = true;
			break;
		case 't':
			cfg.tty = RINGVM_TTY_ON;
			break;
		case 'e':
			if (nr_env == (int)(sizeof(env) / sizeof(env[0])))
				die("--env: at most %zu variables", sizeof(env) / sizeof(env[0]));
			if (!strchr(optarg, '=') || optarg[0] == '=')
				die("--env %s: want NAME=VALUE", optarg);
			env[nr_env++] = optarg;
			break;
		case 'w':
			if (optarg[0] != '/')
				die("--workdir %s: the directory must be absolute", optarg);
			cfg.workdir = optarg;
			break;
		case 'u':
			if (cli_parse_user(optarg, &cfg.uid, &cfg.gid, &err))
				die("--user %s: %s", optarg, err);
			cfg.set_user = true;
			break;
		case 1001:
			if (cli_parse_seconds(optarg, &cfg.timeout_s, &err))
				die("--timeout %s: %s", optarg, err);
			break;
		case 1002:
			if (cli_parse_stop_timeout(optarg, &cfg.stop_timeout_ms, &err))
				die("--stop-timeout %s: %s", optarg, err);
			break;
		case 'T':
			cfg.tty = RINGVM_TTY_OFF;
			break;
		case 'g':
			cfg.gdb = optarg;
			break;
		case 'W':
			cfg.gdb_wait = true;
			break;
		case 'h':
			usage_run(stdout);
			return 0;
		case ':':
			die("option %s needs a value (see ringvm run --help)", argv[optind - 1]);
		default:
			die("unknown option %s (see ringvm run --help)", argv[optind - 1]);
		}
	}
	if (optind < argc && strcmp(argv[optind - 1], "--") != 0)
		die("unexpected argument '%s': put the command after -- (see ringvm run --help)",
		    argv[optind]);
	cfg.argv = argv + optind;
	cfg.argc = argc - optind;
	cfg.env = env;
	cfg.nr_env = nr_env;
	char msg[512];
	static struct cli_tree tree;
	if (cfg.kernel && cli_is_tree(cfg.kernel)) {
		char helper_buf[PATH_MAX], init_buf[PATH_MAX];
		const char *helper = default_guest_file("tree-initramfs.sh", helper_buf, sizeof(helper_buf));
		const char *init = default_guest_file("init", init_buf, sizeof(init_buf));
		if (cli_tree_setup(&tree, cfg.kernel, &cfg, nr_disks, ringvm_config_wants_streams(&cfg),
				   initrd != NULL, shares, &nr_shares,
				   sizeof(shares) / sizeof(shares[0]), helper, init, msg, sizeof(msg)))
			die("%s", msg);
	}
	cfg.disks = disks;
	cfg.nr_disks = nr_disks;
	cfg.shares = shares;
	cfg.nr_shares = nr_shares;

	if (cfg.gdb_wait && !cfg.gdb)
		die("--gdb-wait needs --gdb");
	if (!cfg.kernel) {
		cfg.kernel = default_guest_file("kernel/vmlinuz", kernel_buf, sizeof(kernel_buf));
		if (!cfg.kernel)
			die("no --kernel given and the default guest kernel is not built (run make)");
	}
	if (initrd) {
		cfg.initrd = strcmp(initrd, "none") ? initrd : NULL;
	} else if (!cfg.initrd) { /* a kernel tree brings its own */
		cfg.initrd = default_guest_file("initramfs.img", initrd_buf, sizeof(initrd_buf));
		if (!cfg.initrd)
			die("no --initrd given and the default guest initramfs is not built (run make)");
	}

	if ((have_uid || have_gid) && !jail)
		die("--uid and --gid need --jail");
	if (have_uid != have_gid)
		die("--uid and --gid go together");
	/* The jail's network namespace has no reachable address and its root no writable directory
	   for a socket: no debugger could ever connect. */
	if (jail && cfg.gdb)
		die("--gdb and --jail do not go together (no debugger can reach into the jail)");
	if (jail) {
		struct jail_options jo = { .drop_ids = have_uid, .uid = uid, .gid = gid };
		int status;
		int r = jail_enter(&cfg, &jo, &status, msg, sizeof(msg));
		if (r < 0)
			die("--jail: %s", msg);
		if (r > 0)
			return status; /* the parent: the jailed VMM ended */
	}
	struct ringvm *vm;
	int ret = ringvm_create(&cfg, &vm, msg, sizeof(msg));
	if (ret)
		die("%s", msg);
	if (cfg.gdb)
		fprintf(stderr, "ringvm: gdb stub on %s%s\n", ringvm_gdb_address(vm),
			cfg.gdb_wait ? ", waiting for the debugger" : "");
	struct ringvm_result res;
	/* The library writes the command's stdout through its own duplicate and closes it when the
	   command closes stdout; ours would keep the reader from seeing that EOF. */
	if (ringvm_streams(vm)) {
		int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null_fd < 0 || dup2(null_fd, STDOUT_FILENO) < 0)
			die("/dev/null: %s", strerror(errno));
		close(null_fd);
	}
	ret = ringvm_run(vm, &res);
	ringvm_destroy(vm);
	cli_tree_close(&tree);
	int code = ringvm_exit_code(&res);
	if (ret || res.end == RINGVM_END_PANIC || res.end == RINGVM_END_CRASH ||
	    res.end == RINGVM_END_ERROR || res.end == RINGVM_END_TIMEOUT)
		fprintf(stderr, "ringvm: %s\n", res.message);
	else if (cfg.verbose)
		fprintf(stderr, "ringvm: %s\n", res.message);
	if (timing)
		print_timing(&res);
	return code;
}

/*
 * A closed fd 0, 1 or 2 would be taken by ringvm's next open (/dev/kvm, a disk image), which the
 * streams would then hand the command as stdin or write its output to: /dev/null stands in, as a
 * closed stdio fd means to ringvm_config. open() returns the lowest free fd, so this fills them in
 * order.
 */
static void stdio_fill_closed(void)
{
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		int null_fd = open("/dev/null", O_RDWR);
		if (null_fd < 0)
			die("/dev/null: %s", strerror(errno));
		if (null_fd != fd) /* cannot happen: every fd below was open */
			close(null_fd);
	}
}

int main(int argc, char **argv)
{
	start_ns = now_ns();
	stdio_fill_closed();
	/* A reader of our stdout or stderr going away is never the end of ringvm. */
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2)
		die("no command given: usage: ringvm run [OPTIONS] [-- COMMAND [ARG...]] (see ringvm --help)");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage_main(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("ringvm %s\n", RINGVM_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "kconfig"))
		return cli_kconfig(argc - 1, argv + 1);
	if (!strcmp(argv[1], "serve"))
		return cmd_serve(argc - 1, argv + 1);
	die("unknown command '%s' (see ringvm --help)", argv[1]);
}
