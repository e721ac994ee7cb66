/* tap.h: a minimal TAP producer for ringvm's C unit tests. tests/run counts "ok"/"not ok" lines. */
#ifndef RINGVM_TAP_H
#define RINGVM_TAP_H

#include <stdio.h>

static int tap_count, tap_failed;

/* Record one check; prints "ok N - what" or "not ok N - what (file:line: expr)". */
#define TAP_CHECK(cond, what)                                                                    \
	do {                                                                                     \
		tap_count++;                                                                     \
		if (cond) {                                                                      \
			printf("ok %d - %s\n", tap_count, (what));                               \
		} else {                                                                         \
			tap_failed++;                                                            \
			printf("not ok %d - %s (%s:%d: %s)\n", tap_count, (what), __FILE__,      \
			       __LINE__, #cond);                                                 \
		}                                                                                \
		fflush(stdout);                                                                  \
	} while (0)

/* End of a test program: the plan line, and an exit status that says whether all passed. */
static inline int tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}

#endif
