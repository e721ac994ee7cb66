/* cli_parse.c: option values from the command line (sizes, counts, ids, seconds) and the pieces of a device spec; every malformed value is refused, none guessed. */
#include "vmm/cli_parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_parse_size(const char *s, uint64_t *out, const char **err)
{
	if (!s || !isdigit((unsigned char)s[0])) {
		*err = "not a size (expected a number with an optional K, M, G or T suffix)";
		return -EINVAL;
	}
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno == ERANGE) {
		*err = "too large";
		return -EINVAL;
	}
	unsigned int shift = 0;
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default:
		*err = "unknown suffix (expected K, M, G or T)";
		return -EINVAL;
	}
	/* Accept "512M" and "512MiB"/"512MB" spellings, nothing else after the suffix. */
	if (shift && (*end == 'i' || *end == 'I'))
		end++;
	if (shift && (*end == 'b' || *end == 'B'))
		end++;
	if (*end != '\0') {
		*err = "trailing characters after the size";
		return -EINVAL;
	}
	if (v == 0) {
		*err = "must not be zero";
		return -EINVAL;
	}
	if (shift && v > (UINT64_MAX >> shift)) {
		*err = "too large";
		return -EINVAL;
	}
	*out = (uint64_t)v << shift;
	return 0;
}

int cli_parse_count(const char *s, unsigned int max, unsigned int *out)
{
	char *end;
	errno = 0;
	unsigned long n = strtoul(s, &end, 10);
	/* strtoul takes "-1" as ULONG_MAX: refused by max. */
	if (!*s || *end || errno || n < 1 || n > max)
		return -EINVAL;
	*out = (unsigned int)n;
	return 0;
}

int cli_parse_cpus(const char *s, unsigned int *out, const char **err)
{
	if (!s || !isdigit((unsigned char)s[0])) {
		*err = "not a number";
		return -EINVAL;
	}
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*end != '\0' || errno == ERANGE) {
		*err = "not a number";
		return -EINVAL;
	}
	if (v < 1 || v > 255) {
		*err = "must be between 1 and 255";
		return -EINVAL;
	}
	*out = (unsigned int)v;
	return 0;
}

int cli_spec_uint(const char *s, unsigned long long lo, unsigned long long hi, unsigned long long *out)
{
	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || errno == ERANGE || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli_spec_bad(const char **err, const char *msg)
{
	*err = msg;
	return -EINVAL;
}

char *cli_spec_copy(const char *arg, char *err, size_t errlen)
{
	char *p = strdup(arg);
	if (!p)
		snprintf(err, errlen, "out of memory");
	return p;
}

char *cli_spec_next(char **rest)
{
	char *opt = *rest;
	if (!opt)
		return NULL;
	char *comma = strchr(opt, ',');
	if (comma)
		*comma = '\0';
	*rest = comma ? comma + 1 : NULL;
	return opt;
}

int cli_spec_pick(const char *value, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(value, names[i]))
			return i;
	return -1;
}

/* A decimal id: digits only, below 2^32 - 1 (the kernel's "unchanged"); end is where it stops. */
static int cli_id(const char *s, const char *end, uint32_t *out)
{
	if (s == end || !isdigit((unsigned char)*s))
		return -EINVAL;
	char *stop;
	errno = 0;
	unsigned long long v = strtoull(s, &stop, 10);
	if (errno == ERANGE || stop != end || v >= UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int cli_parse_id(const char *s, uint32_t *out, const char **err)
{
	if (!s || cli_id(s, s + strlen(s), out) < 0) {
		*err = s && isdigit((unsigned char)s[0]) ? "not an id (0 to 4294967294)"
							  : "not a number (a numeric id)";
		return -EINVAL;
	}
	return 0;
}

int cli_parse_user(const char *s, uint32_t *uid, uint32_t *gid, const char **err)
{
	const char *colon = s ? strchr(s, ':') : NULL;
	const char *end = s ? s + strlen(s) : NULL;
	if (!s || cli_id(s, colon ? colon : end, uid) < 0 ||
	    (colon && cli_id(colon + 1, end, gid) < 0)) {
		*err = "want UID[:GID] in decimal (names are not looked up)";
		return -EINVAL;
	}
	if (!colon)
		*gid = *uid;
	return 0;
}

int cli_parse_seconds(const char *s, unsigned int *out, const char **err)
{
	uint32_t v;
	if (!s || cli_id(s, s + strlen(s), &v) < 0 || v < 1 || v > CLI_MAX_TIMEOUT_S) {
		*err = "want whole seconds, 1 to 10000000";
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int cli_parse_stop_timeout(const char *s, unsigned int *ms, const char **err)
{
	uint32_t v;
	if (!s || cli_id(s, s + strlen(s), &v) < 0 || v > CLI_MAX_STOP_TIMEOUT_S) {
		*err = "want whole seconds, 0 to 1000000";
		return -EINVAL;
	}
	*ms = v * 1000;
	return 0;
}
