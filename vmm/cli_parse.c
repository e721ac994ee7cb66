/* cli_parse.c: sizes and counts from the command line; every malformed value is refused, none guessed. */
#include "vmm/cli_parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

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

int cli_parse_id(const char *s, uint32_t *out, const char **err)
{
	if (!s || !isdigit((unsigned char)s[0])) {
		*err = "not a number (a numeric id)";
		return -EINVAL;
	}
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end != '\0' || errno == ERANGE || v >= UINT32_MAX) {
		*err = "not an id (0 to 4294967294)";
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}
