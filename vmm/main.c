/* main.c: the ringvm command line, a thin client of the library in include/ringvm.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "include/ringvm.h"
#include "vmm/cli.h"
#include "vmm/cli_tree.h"

static void usage_main(FILE *f)
{
	fprintf(f,
		"usage: ringvm run [OPTIONS] [-- COMMAND [ARG...]]\n"
		"       ringvm kconfig [--apply TREE]\n"
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
	cli_run_clock_start();
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
		printf("ringvm %s\n", ringvm_version());
		return 0;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "kconfig"))
		return cli_kconfig(argc - 1, argv + 1);
	if (!strcmp(argv[1], "config"))
		return cmd_config(argc - 1, argv + 1);
	if (!strcmp(argv[1], "serve"))
		return cmd_serve(argc - 1, argv + 1);
	die("unknown command '%s' (see ringvm --help)", argv[1]);
}
