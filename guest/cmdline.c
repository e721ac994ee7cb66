/* cmdline.c: encode an argv into a ringvm.cmd= value, decode it back, find it in /proc/cmdline. */
#include "guest/cmdline.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* The bytes protocol.h lets through raw; everything else becomes %XX. */
static bool cl_is_plain(unsigned char c)
{
	if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
		return true;
	return c != '\0' && strchr("._/:=+@^-", c) != NULL;
}

static int cl_hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int cmdline_encode_argv(char *out, size_t outlen, const char *const argv[], int argc)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t used = 0;

	if (argc < 1 || argv == NULL)
		return -EINVAL;
	if (outlen > 0)
		out[0] = '\0';
	for (int i = 0; i < argc; i++) {
		const unsigned char *arg = (const unsigned char *)argv[i];

		if (arg == NULL)
			return -EINVAL;
		/* Worst case per byte is 3 ("%XX"); room for the NUL is checked at the end. */
		if (i > 0) {
			if (outlen - used < 2)
				goto too_long;
			out[used++] = ',';
		}
		if (*arg == '\0') {
			if (outlen - used < 2)
				goto too_long;
			out[used++] = '%';
		}
		for (; *arg != '\0'; arg++) {
			if (cl_is_plain(*arg)) {
				if (outlen - used < 2)
					goto too_long;
				out[used++] = (char)*arg;
			} else {
				if (outlen - used < 4)
					goto too_long;
				out[used++] = '%';
				out[used++] = hex[*arg >> 4];
				out[used++] = hex[*arg & 0xf];
			}
		}
		out[used] = '\0';
	}
	if (used > (size_t)0x7fffffff)
		return -ENAMETOOLONG;
	return (int)used;

too_long:
	if (outlen > 0)
		out[used < outlen ? used : outlen - 1] = '\0';
	return -ENAMETOOLONG;
}

int cmdline_decode_argv(char *buf, char *argv[], size_t maxargs)
{
	char *rd = buf, *wr = buf;
	size_t argc = 0;

	if (buf == NULL || argv == NULL || maxargs < 2)
		return buf == NULL || argv == NULL ? -EINVAL : -E2BIG;
	if (*rd == '\0')
		return -EINVAL; /* an empty list: there is no command to run */
	for (;;) {
		/* One ARG: from rd up to ',' or the end. */
		if (argc + 1 >= maxargs)
			return -E2BIG;
		argv[argc++] = wr;
		if (rd[0] == '%' && (rd[1] == ',' || rd[1] == '\0')) {
			rd++; /* the lone "%": an empty ARG */
		} else if (*rd == ',' || *rd == '\0') {
			return -EINVAL; /* a raw empty ARG is not the canonical form; refuse it */
		} else {
			while (*rd != ',' && *rd != '\0') {
				unsigned char c = (unsigned char)*rd;
				int hi, lo;

				if (c != '%') {
					if (!cl_is_plain(c))
						return -EINVAL;
					*wr++ = (char)c;
					rd++;
					continue;
				}
				/* rd[1] is read only if it is not the NUL, so a truncated %X stops here. */
				hi = cl_hex_value((unsigned char)rd[1]);
				if (hi < 0)
					return -EINVAL;
				lo = cl_hex_value((unsigned char)rd[2]);
				if (lo < 0 || (hi == 0 && lo == 0))
					return -EINVAL; /* %00 would cut the argument short */
				*wr++ = (char)(hi << 4 | lo);
				rd += 3;
			}
		}
		if (*rd == '\0')
			break;
		rd++; /* the ',' */
		*wr++ = '\0';
	}
	*wr = '\0';
	argv[argc] = NULL;
	return (int)argc;
}

static bool cl_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

int cmdline_find_param(const char *cmdline, const char *key, char *out, size_t outlen)
{
	size_t keylen = strlen(key);
	const char *p = cmdline;
	int found = -ENOENT;

	while (*p != '\0') {
		const char *start, *end, *val;
		bool in_quote = false;

		while (cl_is_space(*p))
			p++;
		if (*p == '\0')
			break;
		start = p;
		for (; *p != '\0' && (in_quote || !cl_is_space(*p)); p++) {
			if (*p == '"')
				in_quote = !in_quote;
		}
		end = p;
		/* "param=value" may be quoted as a whole, or only its value, like the kernel's next_arg(). */
		if (*start == '"') {
			start++;
			if (end > start && end[-1] == '"')
				end--;
		}
		if ((size_t)(end - start) < keylen || memcmp(start, key, keylen) != 0)
			continue;
		val = start + keylen;
		if (val < end && *val == '"') {
			val++;
			if (end > val && end[-1] == '"')
				end--;
		}
		if ((size_t)(end - val) >= outlen || end - val > 0x7fffffff) {
			found = -ENAMETOOLONG;
			continue;
		}
		memcpy(out, val, (size_t)(end - val));
		out[end - val] = '\0';
		found = (int)(end - val);
	}
	return found;
}
