/* errmsg.h: the one-line reason a setup function writes next to the -errno it returns. */
#ifndef RINGVM_ERRMSG_H
#define RINGVM_ERRMSG_H

#include <stddef.h>

/* printf fmt into err[0..errlen) (truncated, NUL-terminated, no newline) and return ret. */
int errmsg(char *err, size_t errlen, int ret, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
