/* kcmdline.h: the guest kernel's command line as ringvm builds it: words appended to a bounded buffer. */
#ifndef RINGVM_KCMDLINE_H
#define RINGVM_KCMDLINE_H

#include <stddef.h>

/*
 * A command line being built: buf[0..len) so far, NUL-terminated, in a caller-owned buffer of cap
 * bytes. Each append either fits whole or leaves the line as it was and returns -E2BIG, so a
 * caller may report which piece did not fit. Whether the kernel takes the result is for the caller
 * to check (its own limit is smaller).
 */
struct kcmdline {
	char *buf;
	size_t cap;
	size_t len;
};

/* Start an empty line in buf[cap] (cap > 0). */
void kcmdline_init(struct kcmdline *c, char *buf, size_t cap);

/* Append printf(fmt, ...) as it is (the caller writes the separating space). 0 or -E2BIG. */
__attribute__((warn_unused_result, format(printf, 2, 3))) int kcmdline_add(struct kcmdline *c,
									   const char *fmt, ...);

/* Append " KEY" followed by argv[0..argc) in the wire form guest/cmdline.h encodes (KEY ends in
   '=', from guest/protocol.h). 0 or -E2BIG. */
__attribute__((warn_unused_result)) int kcmdline_add_argv(struct kcmdline *c, const char *key,
							  const char *const *argv, int argc);

#endif
