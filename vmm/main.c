/* main.c: the ringvm command line, a thin client of the library in include/ringvm.h. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/ringvm.h"
#include "vmm/cli.h"

static void usage_main(FILE *f)
{
	fprintf(f,
		"usage: ringvm run [OPTIONS] [-- COMMAND [ARG...]]\n"
		"       ringvm serve fs|blk --socket PATH [OPTIONS]\n"
		"       ringvm config --print [--config FILE] [RUN OPTIONS] [-- COMMAND]\n"
		"       ringvm --help | --version\n"
		"\n"
		"ringvm boots a Linux guest on KVM, runs COMMAND in it and exits with its status.\n"
		"Without COMMAND it gives an interactive shell on the guest's serial console.\n"
		"`ringvm serve` serves ringvm's virtio-fs or virtio-blk to another VMM over vhost-user.\n"
		"`ringvm config --print` shows the configuration `ringvm run` would use, as JSON.\n"
		"`ringvm run --help` and `ringvm serve --help` list the options.\n");
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

int main(int argc, char **argv)
{
	cli_run_clock_start();
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
	if (!strcmp(argv[1], "config"))
		return cmd_config(argc - 1, argv + 1);
	if (!strcmp(argv[1], "serve"))
		return cmd_serve(argc - 1, argv + 1);
	die("unknown command '%s' (see ringvm --help)", argv[1]);
}
