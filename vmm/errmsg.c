/* errmsg.c: format a one-line error report into the caller's buffer. */
#include "vmm/errmsg.h"

#include <stdarg.h>
#include <stdio.h>

int errmsg(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}
