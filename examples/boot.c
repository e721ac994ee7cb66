/*
 * boot.c: the smallest embedder of libringvm: boot a guest, run one command, print how it ended.
 *
 *   cc $(pkg-config --cflags ringvm) boot.c $(pkg-config --libs ringvm) -o ringvm-boot
 *   ./ringvm-boot KERNEL INITRD|none [COMMAND [ARG...]]
 *
 * The guest's console (the command's output) goes to standard output; the last line is
 * "ringvm-boot: <how it ended>, status N", and the program exits with the CLI's status for it.
 */
#include <ringvm.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s KERNEL INITRD|none [COMMAND [ARG...]]\n", argv[0]);
		return 2;
	}
	struct ringvm_config cfg;
	ringvm_config_init(&cfg);
	cfg.kernel = argv[1];
	cfg.initrd = strcmp(argv[2], "none") ? argv[2] : NULL;
	cfg.argv = (const char *const *)(argv + 3);
	cfg.argc = (unsigned int)(argc - 3);
	cfg.memory = 256ULL << 20;
	cfg.console.stdio[0] = -1; /* a command reads EOF (/dev/null), not our terminal */

	char err[RINGVM_ERR_MAX];
	struct ringvm *vm;
	int ret = ringvm_create(&cfg, &vm, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "ringvm-boot: %s (%s)\n", err, strerror(-ret));
		return RINGVM_EXIT_ERROR;
	}
	struct ringvm_result res;
	ret = ringvm_run(vm, &res, err, sizeof(err));
	ringvm_destroy(vm);
	if (ret) {
		fprintf(stderr, "ringvm-boot: %s\n", err);
		return RINGVM_EXIT_ERROR;
	}
	printf("ringvm-boot: libringvm %s: %s, status %d\n", ringvm_version(), res.message, res.status);
	return ringvm_exit_code(&res);
}
