/* errmsg.h: the library's one-line error reports: a message in the caller's buffer, the error back. */
#ifndef RINGVM_ERRMSG_H
#define RINGVM_ERRMSG_H

#include <stddef.h>

/* Format one line (no newline) into err[0..errlen) (nothing when err is NULL or errlen 0) and
   return ret (a -errno), so that a failing step reads `return errmsg(err, errlen, -EINVAL, "...")`. */
int errmsg(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
