/* cmdline.h: the ringvm.cmd= argument encoding (guest/protocol.h), shared by the VMM and guest PID 1. */
#ifndef RINGVM_GUEST_CMDLINE_H
#define RINGVM_GUEST_CMDLINE_H

#include <stddef.h>

/*
 * Wire form (guest/protocol.h): "ARG,ARG,...", each ARG percent-encoded so that only bytes of
 * [A-Za-z0-9._/:=+@^-] appear raw; an empty ARG is the lone "%". The form never contains a space,
 * a quote or a NUL, so it survives the kernel's command-line parser as one parameter value.
 *
 * All three functions are pure (no I/O, no allocation) and safe on hostile input: the guest's PID 1
 * runs them on /proc/cmdline, the VMM on the user's argv, the unit and fuzz tests on anything.
 */

/*
 * Encode argv[0..argc-1] into out as a NUL-terminated wire form. Returns its length (without the NUL),
 * -EINVAL if argc < 1 or an argv entry is NULL, -ENAMETOOLONG if it does not fit in outlen bytes
 * (out then holds an unspecified prefix, still NUL-terminated when outlen > 0).
 */
int cmdline_encode_argv(char *out, size_t outlen, const char *const argv[], int argc)
	__attribute__((warn_unused_result));

/*
 * Decode the wire form in buf (NUL-terminated) in place: separators become NULs and argv[i] points
 * into buf; argv[argc] is set to NULL. argv has room for maxargs pointers, the NULL included.
 * Upper- and lower-case hex digits are accepted. Returns argc (>= 1), -EINVAL on a malformed form
 * (empty list, empty raw ARG, a raw byte outside the set, a bad or truncated %XX, %00), or -E2BIG if
 * there are more than maxargs - 1 ARGs. On error buf and argv hold garbage.
 */
int cmdline_decode_argv(char *buf, char *argv[], size_t maxargs) __attribute__((warn_unused_result));

/*
 * Find parameter key (e.g. "ringvm.cmd=", the '=' included) in a kernel command line the way the
 * kernel splits it (whitespace outside double quotes, one pair of quotes around the parameter or its
 * value removed). The last occurrence wins, as for the kernel's own parameters. Copies the value,
 * NUL-terminated, into out. Returns the value's length, -ENOENT if key is absent, -ENAMETOOLONG if
 * the value does not fit in outlen bytes.
 */
int cmdline_find_param(const char *cmdline, const char *key, char *out, size_t outlen)
	__attribute__((warn_unused_result));

#endif
