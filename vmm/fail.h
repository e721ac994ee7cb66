/* fail.h: the library's one way of reporting an error: a negative errno returned, one line written. */
#ifndef RINGVM_FAIL_H
#define RINGVM_FAIL_H

#include <stddef.h>

/*
 * Write the printf-style line into err[errlen] (nothing when err is NULL or errlen 0) and return
 * ret, a negative errno: `return vmm_fail(err, errlen, -EINVAL, "cpus must be ...")`.
 */
int vmm_fail(char *err, size_t errlen, int ret, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
