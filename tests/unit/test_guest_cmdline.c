/* test_cmdline.c: unit tests for the ringvm.cmd= encoder, decoder and /proc/cmdline parameter finder. */
#include "guest/cmdline.h"
#include "tests/unit/tap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define T_MAXARGS 64

/* Encode argv, check the wire form (if expect != NULL), decode it back and compare every byte. */
static bool t_round_trip(char *const argv[], int argc, const char *expect)
{
	char wire[4096], *decoded[T_MAXARGS];
	int len = cmdline_encode_argv(wire, sizeof(wire), (const char *const *)argv, argc);

	if (len < 0 || (size_t)len != strlen(wire)) {
		printf("# encode failed: %d\n", len);
		return false;
	}
	if (strspn(wire, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._/:=+@^-%,") !=
	    (size_t)len) {
		printf("# wire form has a byte outside the protocol's set: %s\n", wire);
		return false;
	}
	if (expect != NULL && strcmp(wire, expect) != 0) {
		printf("# wire form %s, expected %s\n", wire, expect);
		return false;
	}
	if (cmdline_decode_argv(wire, decoded, T_MAXARGS) != argc)
		return false;
	for (int i = 0; i < argc; i++) {
		if (strcmp(decoded[i], argv[i]) != 0) {
			printf("# arg %d decoded as '%s'\n", i, decoded[i]);
			return false;
		}
	}
	return decoded[argc] == NULL;
}

static int t_decode(const char *wire, char *argv[], size_t maxargs)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), "%s", wire);
	return cmdline_decode_argv(buf, argv, maxargs);
}

static void t_encoder(void)
{
	char *simple[] = { "echo", "hi" };
	char *spaces[] = { "sh", "-c", "echo 'a b'; exit 7" };
	char *quotes[] = { "printf", "%s\n", "\"double\" 'single'" };
	char *commas[] = { "a,b", ",", ",," };
	char *percent[] = { "%", "%%", "100%", "%41" };
	char *empty[] = { "", "x", "" };
	char *only_empty[] = { "" };
	char *utf8[] = { "caf\xc3\xa9", "\xe2\x82\xac", "\xff\x80\x01\x7f" };
	char *plain[] = { "A-Za-z0-9._/:=+@^-" };
	char *controls[] = { "tab\there", "nl\nhere", "\x1b[0m" };

	TAP_CHECK(t_round_trip(simple, 2, "echo,hi"), "plain args are written raw");
	TAP_CHECK(t_round_trip(spaces, 3, "sh,-c,echo%20%27a%20b%27%3B%20exit%207"), "spaces survive");
	TAP_CHECK(t_round_trip(quotes, 3, "printf,%25s%0A,%22double%22%20%27single%27"),
		  "quotes and newlines survive");
	TAP_CHECK(t_round_trip(commas, 3, "a%2Cb,%2C,%2C%2C"), "commas inside args survive");
	TAP_CHECK(t_round_trip(percent, 4, "%25,%25%25,100%25,%2541"), "percent signs survive");
	TAP_CHECK(t_round_trip(empty, 3, "%,x,%"), "empty args are the lone %");
	TAP_CHECK(t_round_trip(only_empty, 1, "%"), "a single empty arg");
	TAP_CHECK(t_round_trip(utf8, 3, "caf%C3%A9,%E2%82%AC,%FF%80%01%7F"), "UTF-8 and high bytes");
	TAP_CHECK(t_round_trip(plain, 1, "A-Za-z0-9._/:=+@^-"), "the whole plain set is raw");
	TAP_CHECK(t_round_trip(controls, 3, NULL), "control bytes survive");
}

static void t_encoder_errors(void)
{
	char *argv[] = { "sh", "-c", "a b" }; /* "sh,-c,a%20b": 11 bytes */
	char *with_null[] = { "sh", NULL };
	char out[64];
	bool all_refused = true, all_terminated = true;

	TAP_CHECK(cmdline_encode_argv(out, sizeof(out), (const char *const *)argv, 0) == -EINVAL, "argc 0 is refused");
	TAP_CHECK(cmdline_encode_argv(out, sizeof(out), (const char *const *)argv, -1) == -EINVAL, "negative argc is refused");
	TAP_CHECK(cmdline_encode_argv(out, sizeof(out), (const char *const *)with_null, 2) == -EINVAL, "a NULL arg is refused");
	TAP_CHECK(cmdline_encode_argv(out, 12, (const char *const *)argv, 3) == 11 && strcmp(out, "sh,-c,a%20b") == 0,
		  "an exact fit is accepted");
	for (size_t len = 0; len < 12; len++) {
		memset(out, 'X', sizeof(out));
		if (cmdline_encode_argv(out, len, (const char *const *)argv, 3) != -ENAMETOOLONG)
			all_refused = false;
		if (len > 0 && memchr(out, '\0', len) == NULL)
			all_terminated = false;
		if (out[len] != 'X') /* never writes past outlen */
			all_terminated = false;
	}
	TAP_CHECK(all_refused, "every buffer shorter than the form gives -ENAMETOOLONG");
	TAP_CHECK(all_terminated, "a short buffer stays NUL-terminated and is never overrun");
}

static void t_decoder(void)
{
	char *argv[T_MAXARGS];

	TAP_CHECK(t_decode("caf%c3%a9", argv, T_MAXARGS) == 1 && strcmp(argv[0], "caf\xc3\xa9") == 0,
		  "lower-case hex is accepted");
	TAP_CHECK(t_decode("%,%", argv, T_MAXARGS) == 2 && argv[0][0] == '\0' && argv[1][0] == '\0' &&
			  argv[2] == NULL,
		  "two empty args");
	TAP_CHECK(t_decode("a,b,c", argv, 4) == 3, "maxargs leaves room for exactly the NULL");
	TAP_CHECK(t_decode("a,b,c", argv, 3) == -E2BIG, "too many args give -E2BIG");
	TAP_CHECK(t_decode("a", argv, 1) == -E2BIG, "no room for the NULL gives -E2BIG");

	static const char *const malformed[] = {
		"",	   /* empty list */
		"%G1",	   /* not hex */
		"%1G",	   /* second digit not hex */
		"%4",	   /* truncated */
		"ab%",	   /* truncated at the end */
		"%%",	   /* a % that is not a lone empty ARG */
		"a%,b",	   /* truncated before the separator */
		"%00",	   /* NUL byte */
		",",	   /* raw empty args */
		"a,",	   /* trailing separator */
		",a",	   /* leading separator */
		"a,,b",	   /* raw empty arg in the middle */
		"a b",	   /* raw space */
		"\"a\"",   /* raw quotes */
		"a\tb",	   /* raw tab */
		"50%off",  /* raw percent */
		"caf\xc3\xa9", /* raw UTF-8 */
		"~",	   /* raw byte outside the set */
	};
	for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		char what[96];

		snprintf(what, sizeof(what), "malformed form #%zu is refused", i);
		TAP_CHECK(t_decode(malformed[i], argv, T_MAXARGS) == -EINVAL, what);
	}
}

/* Deterministic pseudo-random argvs (xorshift) of every byte value: encode, decode, compare. */
static void t_random_round_trips(void)
{
	static char storage[8][40];
	char *argv[8];
	uint32_t x = 2463534242u;
	bool ok = true;

	for (int iter = 0; iter < 500 && ok; iter++) {
		int argc;

		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		argc = 1 + (int)(x % 8);
		for (int i = 0; i < argc; i++) {
			size_t len;

			x ^= x << 13, x ^= x >> 17, x ^= x << 5;
			len = x % sizeof(storage[i]);
			for (size_t j = 0; j < len; j++) {
				x ^= x << 13, x ^= x >> 17, x ^= x << 5;
				storage[i][j] = (char)(1 + x % 255);
			}
			storage[i][len] = '\0';
			argv[i] = storage[i];
		}
		ok = t_round_trip(argv, argc, NULL);
	}
	TAP_CHECK(ok, "500 random argvs of arbitrary bytes round-trip");
}

static void t_find_param(void)
{
	char val[64];

	TAP_CHECK(cmdline_find_param("console=ttyS0 ringvm.cmd=echo,hi quiet\n", "ringvm.cmd=", val,
				     sizeof(val)) == 7 &&
			  strcmp(val, "echo,hi") == 0,
		  "finds a parameter in the middle");
	TAP_CHECK(cmdline_find_param("ringvm.cmd=true\n", "ringvm.cmd=", val, sizeof(val)) == 4 &&
			  strcmp(val, "true") == 0,
		  "finds a parameter at the start, newline stripped");
	TAP_CHECK(cmdline_find_param("a ringvm.cmd=one b ringvm.cmd=two", "ringvm.cmd=", val, sizeof(val)) ==
				  3 &&
			  strcmp(val, "two") == 0,
		  "the last occurrence wins");
	TAP_CHECK(cmdline_find_param("xringvm.cmd=no ringvm.cmdx=no ringvm.cmd", "ringvm.cmd=", val,
				     sizeof(val)) == -ENOENT,
		  "only whole parameter names match");
	TAP_CHECK(cmdline_find_param("", "ringvm.cmd=", val, sizeof(val)) == -ENOENT, "empty cmdline");
	TAP_CHECK(cmdline_find_param("ringvm.cmd= quiet", "ringvm.cmd=", val, sizeof(val)) == 0 &&
			  val[0] == '\0',
		  "an empty value is found (the decoder refuses it)");
	TAP_CHECK(cmdline_find_param("foo=\"a ringvm.cmd=x\" ringvm.verbose=1", "ringvm.cmd=", val,
				     sizeof(val)) == -ENOENT,
		  "text inside another parameter's quotes is not a parameter");
	TAP_CHECK(cmdline_find_param("\"ringvm.cmd=a,b\"  ringvm.verbose=1", "ringvm.cmd=", val,
				     sizeof(val)) == 3 &&
			  strcmp(val, "a,b") == 0,
		  "a quoted parameter is unquoted");
	TAP_CHECK(cmdline_find_param("ringvm.cmd=\"a,b\"\tx", "ringvm.cmd=", val, sizeof(val)) == 3 &&
			  strcmp(val, "a,b") == 0,
		  "a quoted value is unquoted");
	TAP_CHECK(cmdline_find_param("ringvm.cmd=0123456789", "ringvm.cmd=", val, 10) == -ENAMETOOLONG,
		  "a value longer than the buffer gives -ENAMETOOLONG");
	TAP_CHECK(cmdline_find_param("ringvm.cmd=012345678", "ringvm.cmd=", val, 10) == 9,
		  "a value that just fits is copied");
	TAP_CHECK(cmdline_find_param("ringvm.cmd=\"", "ringvm.cmd=", val, sizeof(val)) == 0,
		  "a lone quote is handled");
}

/* What PID 1 does at boot: sample /proc/cmdline strings through find + decode. */
static void t_proc_cmdline_samples(void)
{
	static const struct {
		const char *cmdline;
		int argc;
		const char *argv0, *last;
	} samples[] = {
		{ "console=ttyS0 reboot=k panic=-1 quiet ringvm.cmd=uname,-a\n", 2, "uname", "-a" },
		{ "console=ttyS0 ringvm.verbose=1 ringvm.cmd=sh,-c,exit%207 -- initarg\n", 3, "sh", "exit 7" },
		{ "ringvm.cmd=printf,%25s%5Cn,%22a%20b%22%20%27c%27,% loglevel=7\n", 4, "printf", "" },
		{ "ringvm.cmd=%2Fbin%2Ftrue\n", 1, "/bin/true", "/bin/true" },
		{ "console=ttyS0 ringvm.cmd=\n", -EINVAL, NULL, NULL },
		{ "console=ttyS0 ringvm.cmd=ls,%G1\n", -EINVAL, NULL, NULL },
		{ "console=ttyS0 quiet\n", -ENOENT, NULL, NULL },
	};
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		char val[256], *argv[T_MAXARGS], what[96];
		int n = cmdline_find_param(samples[i].cmdline, "ringvm.cmd=", val, sizeof(val));

		if (n >= 0)
			n = cmdline_decode_argv(val, argv, T_MAXARGS);
		snprintf(what, sizeof(what), "sample /proc/cmdline #%zu gives %d", i, samples[i].argc);
		if (samples[i].argc > 0)
			TAP_CHECK(n == samples[i].argc && strcmp(argv[0], samples[i].argv0) == 0 &&
					  strcmp(argv[n - 1], samples[i].last) == 0,
				  what);
		else
			TAP_CHECK(n == samples[i].argc, what);
	}
}

int main(void)
{
	t_encoder();
	t_encoder_errors();
	t_decoder();
	t_random_round_trips();
	t_find_param();
	t_proc_cmdline_samples();
	return tap_done();
}
