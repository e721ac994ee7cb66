/* cli_serve.c: `ringvm serve fs|blk`, with virtiofsd's spellings of its common options. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli.h"
#include "devices/blk/blk_cli.h"
#include "vmm/cli_parse.h"
#include "include/ringvm.h"

static void usage_serve(FILE *f)
{
	fprintf(f,
		"usage: ringvm serve fs --socket PATH --shared-dir DIR [--queues N]\n"
		"                       [--cache auto|always|never] [--readonly] [--allow-direct-io]\n"
		"       ringvm serve blk --socket PATH --disk IMG[,readonly][,direct=on|off][,queues=N]\n"
		"       (both: [--poll-us N])\n"
		"\n"
		"Serve ringvm's virtio-fs (a directory) or virtio-blk (an image) to another VMM over\n"
		"vhost-user (QEMU: -chardev socket,path=PATH with vhost-user-fs-* or vhost-user-blk-*;\n"
		"guest memory must be shared: -object memory-backend-memfd,share=on). One front-end at a\n"
		"time; when it disconnects the device is reset and the next one is accepted. SIGINT or\n"
		"SIGTERM ends the server (exit 0) and removes the socket.\n"
		"\n"
		"Options:\n"
		"  --socket PATH         the Unix socket to listen on (also --socket-path, virtiofsd's)\n"
		"  --fd N                listen on the already listening socket N instead\n"
		"  --shared-dir DIR      fs: the directory to share (also -o source=DIR)\n"
		"  --queues N            fs: request queues, 1-16 (default 1; at least QEMU's\n"
		"                        num-request-queues)\n"
		"  --cache MODE          fs: auto (default), always or never ('none' = never)\n"
		"  --readonly            fs: every change fails with EROFS\n"
		"  --allow-direct-io     fs: the guest's O_DIRECT opens are O_DIRECT on the host (default:\n"
		"                        dropped; also -o allow_direct_io)\n"
		"  --disk SPEC           blk: the image and its options, as ringvm run --disk\n"
		"  --poll-us N           queue workers busy-poll up to N us (0-%d) for the next request\n"
		"                        before sleeping; the window adapts below N, so an idle queue\n"
		"                        stops spinning (default %d; 0 = never; blk: poll_us= in --disk,\n"
		"                        0 included, wins)\n"
		"  -h, --help            this help\n"
		"Accepted for virtiofsd compatibility and ignored (a note on stderr):\n"
		"  --thread-pool-size N (ringvm has one io_uring worker per queue), --sandbox X,\n"
		"  --seccomp X (ringvm always confines itself), --announce-submounts, --xattr,\n"
		"  --log-level X, other -o options.\n"
		"\n"
		"Exit status: 0 when stopped by a signal; %d when the server could not start.\n",
		RINGVM_MAX_POLL_US, RINGVM_SERVE_POLL_US, RINGVM_EXIT_ERROR);
}

static unsigned int parse_count(const char *opt, const char *v, unsigned int max)
{
	char *end;
	errno = 0;
	unsigned long n = strtoul(v, &end, 10);
	if (!*v || *end || errno || n < 1 || n > max)
		die("%s %s: must be a number 1..%u", opt, v, max);
	return (unsigned int)n;
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

static enum ringvm_cache parse_cache(const char *opt, const char *v)
{
	if (!strcmp(v, "auto"))
		return RINGVM_CACHE_AUTO;
	if (!strcmp(v, "always"))
		return RINGVM_CACHE_ALWAYS;
	if (!strcmp(v, "never") || !strcmp(v, "none")) /* virtiofsd (C) says none for never */
		return RINGVM_CACHE_NEVER;
	die("%s %s: must be auto, always or never", opt, v);
}

/* virtiofsd (C)'s -o a=b,c,...: source=, cache= and allow_direct_io are understood, the rest noted
   and ignored. */
static void parse_o(char *list, struct ringvm_serve_config *cfg)
{
	for (char *save = NULL, *o = strtok_r(list, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		if (!strncmp(o, "source=", 7) && o[7])
			cfg->share.host_dir = o + 7;
		else if (!strncmp(o, "cache=", 6) && o[6])
			cfg->share.cache = parse_cache("-o cache=", o + 6);
		else if (!strcmp(o, "allow_direct_io"))
			cfg->share.allow_direct_io = true;
		else
			fprintf(stderr, "ringvm: serve: -o %s ignored (virtiofsd option)\n", o);
	}
}

enum {
	OPT_SOCKET = 256,
	OPT_FD,
	OPT_SHARED_DIR,
	OPT_QUEUES,
	OPT_CACHE,
	OPT_READONLY,
	OPT_DIRECT_IO,
	OPT_DISK,
	OPT_POLL_US,
	OPT_IGNORED_VALUE, /* virtiofsd options with a value, accepted and ignored */
	OPT_IGNORED_FLAG,  /* and without one */
};

int cmd_serve(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "socket-path", required_argument, NULL, OPT_SOCKET },
		{ "fd", required_argument, NULL, OPT_FD },
		{ "shared-dir", required_argument, NULL, OPT_SHARED_DIR },
		{ "queues", required_argument, NULL, OPT_QUEUES },
		{ "cache", required_argument, NULL, OPT_CACHE },
		{ "readonly", no_argument, NULL, OPT_READONLY },
		{ "allow-direct-io", no_argument, NULL, OPT_DIRECT_IO },
		{ "disk", required_argument, NULL, OPT_DISK },
		{ "poll-us", required_argument, NULL, OPT_POLL_US },
		{ "thread-pool-size", required_argument, NULL, OPT_IGNORED_VALUE },
		{ "sandbox", required_argument, NULL, OPT_IGNORED_VALUE },
		{ "seccomp", required_argument, NULL, OPT_IGNORED_VALUE },
		{ "log-level", required_argument, NULL, OPT_IGNORED_VALUE },
		{ "announce-submounts", no_argument, NULL, OPT_IGNORED_FLAG },
		{ "xattr", no_argument, NULL, OPT_IGNORED_FLAG },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
			usage_serve(stdout);
			return 0;
		}
		die("serve: which device? ringvm serve fs|blk --socket PATH ... (see ringvm serve --help)");
	}
	struct ringvm_serve_config cfg;
	ringvm_serve_config_init(&cfg);
	char *disk_spec = NULL;
	cfg.handle_signals = true;
	const char *kind = argv[1];
	if (!strcmp(kind, "blk"))
		cfg.device = RINGVM_SERVE_BLK;
	else if (strcmp(kind, "fs") != 0)
		die("serve: unknown device '%s' (fs or blk)", kind);
	bool fs = cfg.device == RINGVM_SERVE_FS;

	argc--;
	argv++;
	opterr = 0;
	optind = 1;
	int c, idx = 0;
	while ((c = getopt_long(argc, argv, "+:o:h", opts, &idx)) != -1) {
		const char *name = c >= OPT_SOCKET ? opts[idx].name : "";
		if ((c == OPT_SHARED_DIR || c == OPT_QUEUES || c == OPT_CACHE || c == OPT_READONLY ||
		     c == OPT_DIRECT_IO || c == 'o') && !fs)
			die("serve blk: --%s is an option of serve fs", c == 'o' ? "o" : name);
		if (c == OPT_DISK && fs)
			die("serve fs: --disk is an option of serve blk");
		switch (c) {
		case OPT_SOCKET:
			cfg.socket = optarg;
			break;
		case OPT_FD:
			cfg.listen_fd = (int)parse_count("--fd", optarg, 1u << 20);
			break;
		case OPT_SHARED_DIR:
			cfg.share.host_dir = optarg;
			break;
		case OPT_QUEUES:
			cfg.share.queues = parse_count("--queues", optarg, RINGVM_MAX_QUEUES);
			break;
		case OPT_CACHE:
			cfg.share.cache = parse_cache("--cache", optarg);
			break;
		case OPT_READONLY:
			cfg.share.readonly = true;
			break;
		case OPT_DIRECT_IO:
			cfg.share.allow_direct_io = true;
			break;
		case OPT_DISK: {
			/* The spec is cut in place: optarg stays whole for the messages. */
			const char *why;
			free(disk_spec);
			disk_spec = strdup(optarg);
			if (!disk_spec)
				die("out of memory");
			if (blk_cli_parse_disk(disk_spec, &cfg.disk, &why))
				die("--disk %s: %s", optarg, why);
			break;
		}
		case OPT_POLL_US:
			cfg.poll_us = parse_number("--poll-us", optarg, RINGVM_MAX_POLL_US);
			break;
		case 'o':
			parse_o(optarg, &cfg);
			break;
		case OPT_IGNORED_VALUE:
			fprintf(stderr, "ringvm: serve: --%s %s ignored (virtiofsd option; %s)\n", name,
				optarg,
				!strcmp(name, "thread-pool-size")
					? "ringvm runs one io_uring worker per queue"
					: "ringvm applies its own sandbox and seccomp filter");
			break;
		case OPT_IGNORED_FLAG:
			fprintf(stderr, "ringvm: serve: --%s ignored (virtiofsd option)\n", name);
			break;
		case 'h':
			usage_serve(stdout);
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
		die("serve %s: --socket PATH is required", kind);
	if (cfg.socket && cfg.listen_fd >= 0)
		die("serve %s: --socket and --fd exclude each other", kind);

	char msg[RINGVM_ERR_MAX];
	int ret = ringvm_serve(&cfg, msg, sizeof(msg));
	free(disk_spec);
	if (ret)
		die("%s", msg);
	return 0;
}
