/* kcmdline.c: append words to the guest kernel's command line, whole or not at all. */
#include "vmm/kcmdline.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "guest/cmdline.h"

void kcmdline_init(struct kcmdline *c, char *buf, size_t cap)
{
	c->buf = buf;
	c->cap = cap;
	c->len = 0;
	buf[0] = '\0';
}

int kcmdline_add(struct kcmdline *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(c->buf + c->len, c->cap - c->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= c->cap - c->len) {
		c->buf[c->len] = '\0';
		return -E2BIG;
	}
	c->len += (size_t)n;
	return 0;
}

int kcmdline_add_argv(struct kcmdline *c, const char *key, const char *const *argv, int argc)
{
	size_t start = c->len;
	int ret = kcmdline_add(c, " %s", key);
	if (ret)
		return ret;
	int enc = cmdline_encode_argv(c->buf + c->len, c->cap - c->len, argv, argc);
	if (enc < 0) {
		c->len = start;
		c->buf[start] = '\0';
		return -E2BIG;
	}
	c->len += (size_t)enc;
	return 0;
}
