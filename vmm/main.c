/* main.c: the ringvm command line, a thin client of the library in include/ringvm.h. */
#define _GNU_SOURCE
#include <errno.h>
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
#include "include/ringvm.h"


static void usage_main(FILE *f)
{
	fprintf(f,
		"usage: ringvm run [OPTIONS] [-- COMMAND [ARG...]]\n"
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
		"status (128+N if a signal N killed it). Without COMMAND: an interactive shell on the\n"
		"console (Ctrl-A x ends the VM).\n"
		"\n"
		"Options:\n"
		"  -k, --kernel PATH     bzImage or PVH vmlinux (default: the guest built with ringvm)\n"
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
		"  -v, --verbose         show the guest kernel's messages and ringvm's own\n"
		"      --timing          print boot timing (ms since start: first KVM_RUN, init, end)\n"
		"  -h, --help            this help\n"
		"\n"
		"Exit status: COMMAND's status; 0 when the guest powers off or reboots by itself;\n"
		"%d when the guest crashed (kernel panic, triple fault); %d when ringvm itself failed.\n",
		RINGVM_EXIT_CRASH, RINGVM_EXIT_ERROR);
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

/* A spec option's value, copied (the parsers cut it in place) and freed at exit. */
struct spec_copies {
	char *p[2 * RINGVM_MAX_DEVICES + 2];
	unsigned int n;
};

static char *spec_copy(struct spec_copies *c, const char *opt, const char *spec)
{
	if (c->n == sizeof(c->p) / sizeof(c->p[0]))
		die("%s: too many devices (at most %d)", opt, RINGVM_MAX_DEVICES);
	char *p = strdup(spec);
	if (!p)
		die("out of memory");
	return c->p[c->n++] = p;
}

static void spec_free(struct spec_copies *c)
{
	while (c->n)
		free(c->p[--c->n]);
}

static int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "kernel", required_argument, NULL, 'k' }, { "initrd", required_argument, NULL, 'i' },
		{ "cmdline", required_argument, NULL, 'c' }, { "cpus", required_argument, NULL, 'p' },
		{ "memory", required_argument, NULL, 'm' }, { "disk", required_argument, NULL, 'd' },
		{ "verbose", no_argument, NULL, 'v' },      { "help", no_argument, NULL, 'h' },
		{ "timing", no_argument, NULL, 'T' },       { "share", required_argument, NULL, 's' },
		{ "root", required_argument, NULL, 'r' },
		{ "fs-limits", required_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	struct ringvm_config cfg;
	ringvm_config_init(&cfg);
	cfg.handle_signals = true;
	struct ringvm_disk disks[RINGVM_MAX_DEVICES];
	struct ringvm_share shares[RINGVM_MAX_DEVICES];
	unsigned int nr_disks = 0, nr_shares = 0;
	struct spec_copies copies = { .n = 0 };
	const char *initrd = NULL;
	char kernel_buf[PATH_MAX], initrd_buf[PATH_MAX];
	const char *err;
	bool timing = false;

	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+:k:i:c:p:m:d:s:r:vh", opts, NULL)) != -1) {
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
			if (nr_disks == RINGVM_MAX_DEVICES)
				die("--disk: too many disks (at most %d devices)", RINGVM_MAX_DEVICES);
			if (cli_parse_disk(spec_copy(&copies, "--disk", optarg), &disks[nr_disks], &err))
				die("--disk %s: %s", optarg, err);
			nr_disks++;
			break;
		case 's':
			if (nr_shares == RINGVM_MAX_DEVICES)
				die("--share: too many shares (at most %d devices)", RINGVM_MAX_DEVICES);
			if (cli_parse_share(spec_copy(&copies, "--share", optarg), &shares[nr_shares], &err))
				die("--share %s: %s", optarg, err);
			nr_shares++;
			break;
		case 'r':
			if (cfg.root.host_dir)
				die("--root given twice");
			if (cli_parse_root(spec_copy(&copies, "--root", optarg), &cfg.root, &err))
				die("--root %s: %s", optarg, err);
			break;
		case 'L':
			if (cli_parse_fs_limits(optarg, &cfg.fs_limits, &err))
				die("--fs-limits %s: %s", optarg, err);
			break;
		case 'v':
			cfg.verbose = true;
			break;
		case 'T':
			timing = true;
			break;
		case 'h':
			usage_run(stdout);
			spec_free(&copies);
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
	cfg.argv = (const char *const *)(argv + optind);
	cfg.argc = (unsigned int)(argc - optind);
	cfg.disks = disks;
	cfg.nr_disks = nr_disks;
	cfg.shares = shares;
	cfg.nr_shares = nr_shares;

	if (!cfg.kernel) {
		cfg.kernel = default_guest_file("kernel/vmlinuz", kernel_buf, sizeof(kernel_buf));
		if (!cfg.kernel)
			die("no --kernel given and the default guest kernel is not built (run make)");
	}
	if (!initrd) {
		cfg.initrd = default_guest_file("initramfs.img", initrd_buf, sizeof(initrd_buf));
		if (!cfg.initrd)
			die("no --initrd given and the default guest initramfs is not built (run make)");
	} else if (strcmp(initrd, "none") != 0) {
		cfg.initrd = initrd;
	}

	char msg[RINGVM_ERR_MAX];
	struct ringvm *vm;
	int ret = ringvm_create(&cfg, &vm, msg, sizeof(msg));
	spec_free(&copies); /* the VM keeps no pointer into the config */
	if (ret)
		die("%s", msg);
	struct ringvm_result res;
	ret = ringvm_run(vm, &res, msg, sizeof(msg));
	ringvm_destroy(vm);
	int code = ringvm_exit_code(&res);
	if (ret || res.end == RINGVM_END_PANIC || res.end == RINGVM_END_CRASH ||
	    res.end == RINGVM_END_ERROR)
		fprintf(stderr, "ringvm: %s\n", res.message);
	else if (cfg.verbose)
		fprintf(stderr, "ringvm: %s\n", res.message);
	if (timing)
		print_timing(&res);
	return code;
}

int main(int argc, char **argv)
{
	start_ns = now_ns();
	if (argc < 2)
		die("no command given: usage: ringvm run [OPTIONS] [-- COMMAND [ARG...]] (see ringvm --help)");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage_main(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("ringvm %s\n", ringvm_version());
		return 0;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "serve"))
		return cmd_serve(argc - 1, argv + 1);
	die("unknown command '%s' (see ringvm --help)", argv[1]);
}
