/* fuzz_cmdline.c: libFuzzer target: the ringvm.cmd= finder and decoder on any bytes, and round trips. */
#include "guest/cmdline.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FZ_MAX 4096
#define FZ_MAXARGS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Encode argv, decode the result: every argument must come back byte for byte. */
static void fz_round_trip(char *const argv[], int argc)
{
	static char wire[3 * FZ_MAX + FZ_MAXARGS + 1];
	char *back[FZ_MAXARGS + 1];
	int len = cmdline_encode_argv(wire, sizeof(wire), (const char *const *)argv, argc);

	if (len < 0 || (size_t)len != strlen(wire))
		__builtin_trap();
	if (cmdline_decode_argv(wire, back, FZ_MAXARGS + 1) != argc)
		__builtin_trap();
	for (int i = 0; i < argc; i++)
		if (strcmp(back[i], argv[i]) != 0)
			__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[FZ_MAX + 1], value[FZ_MAX + 1], copy[FZ_MAX + 1];
	char *argv[FZ_MAXARGS];
	int argc, n;

	if (size > FZ_MAX)
		return 0;
	/* As a kernel command line: find the parameter, decode it, re-encode what came out. */
	memcpy(text, data, size);
	text[size] = '\0';
	n = cmdline_find_param(text, "ringvm.cmd=", value, sizeof(value));
	if (n >= 0) {
		argc = cmdline_decode_argv(value, argv, FZ_MAXARGS);
		if (argc > 0)
			fz_round_trip(argv, argc);
	}
	/* As an argv split at NUL bytes: any argv must survive the encoding. */
	memcpy(copy, data, size);
	copy[size] = '\0';
	argc = 0;
	for (size_t i = 0; i <= size && argc < FZ_MAXARGS - 1; i++) {
		argv[argc++] = copy + i;
		i += strlen(copy + i);
	}
	fz_round_trip(argv, argc);
	return 0;
}
