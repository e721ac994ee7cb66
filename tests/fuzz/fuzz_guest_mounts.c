/* fuzz_mounts.c: libFuzzer target: the ringvm.mount= and ringvm.root= parsers on any bytes, results checked. */
#include "guest/mounts.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FZ_MAX 8192

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A string the parser handed back must lie inside the buffer it decoded and end there. */
static void fz_inside(const char *s, const char *buf, size_t size)
{
	if (s < buf || s > buf + size || memchr(s, '\0', (size_t)(buf + size + 1 - s)) == NULL)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char value[FZ_MAX + 1];
	static struct mnt_share shares[MNT_MAX_SHARES];
	struct mnt_root root;
	const char *why = NULL;
	int n;

	if (size > FZ_MAX)
		return 0;
	memcpy(value, data, size);
	value[size] = '\0';
	n = mnt_parse_shares(value, shares, MNT_MAX_SHARES, &why);
	if (n == 0 || n > MNT_MAX_SHARES || (n < 0 && why == NULL))
		__builtin_trap();
	for (int i = 0; i < n; i++) {
		fz_inside(shares[i].tag, value, size);
		fz_inside(shares[i].path, value, size);
		if (shares[i].tag[0] == '\0' || shares[i].path[0] != '/' || strlen(shares[i].path) >= PATH_MAX)
			__builtin_trap();
	}
	memcpy(value, data, size);
	value[size] = '\0';
	why = NULL;
	if (mnt_parse_root(value, &root, &why) == 0) {
		fz_inside(root.tag, value, size);
		if (root.tag[0] == '\0')
			__builtin_trap();
	} else if (why == NULL) {
		__builtin_trap();
	}
	return 0;
}
