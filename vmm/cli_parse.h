/* cli_parse.h: the CLI's option values (sizes, counts, ids, seconds) and spec pieces for the kinds' parsers, pure and tested. */
#ifndef RINGVM_CLI_PARSE_H
#define RINGVM_CLI_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "include/ringvm.h"

/* "512M", "2G", "65536", "1t": bytes. 0, or -EINVAL with *err saying what is wrong. */
__attribute__((warn_unused_result)) int cli_parse_size(const char *s, uint64_t *out, const char **err);

/* A vCPU count 1..255. 0, or -EINVAL with *err. */
__attribute__((warn_unused_result)) int cli_parse_cpus(const char *s, unsigned int *out, const char **err);

/*
 * The pieces of a device spec ("PATH,readonly,queues=4"), for the kinds' spec parsers
 * (devices/NAME/NAME_cli.c). Those cut the spec in place (commas become NULs) and point the
 * struct's strings into it, so they take a writable copy that outlives the struct.
 */

/* The next ",option" of a spec at *rest, cut at its end (*rest moves past it); NULL after the last. */
char *cli_spec_next(char **rest);

/* Decimal digits only (no sign, no space), lo..hi: 0 with *out, or -EINVAL. */
__attribute__((warn_unused_result)) int cli_spec_uint(const char *s, unsigned long long lo, unsigned long long hi,
						      unsigned long long *out);

/* value's index among names[0..n), or -1. */
int cli_spec_pick(const char *value, const char *const *names, int n);

/* A writable copy of an option's value for a spec parser to cut (the value stays whole for the
   messages), or NULL with "out of memory" in err. The caller frees it once nothing points into it. */
char *cli_spec_copy(const char *arg, char *err, size_t errlen);

/* *err = msg; returns -EINVAL (a parser's refusal in one line). */
int cli_spec_bad(const char **err, const char *msg);

/*
 * A count 1..max in `ringvm serve`'s spelling (--fd, serve fs --queues): strtoul's syntax (leading
 * blanks and a sign pass, as they always have), nothing after the digits. 0 with *out, or -EINVAL;
 * the caller says "must be a number 1..max".
 */
__attribute__((warn_unused_result)) int cli_parse_count(const char *s, unsigned int max, unsigned int *out);
/* A user or group id 0..2^32-2 (-1 means "unchanged" to the kernel: refused). 0, or -EINVAL with
   *err. */
__attribute__((warn_unused_result)) int cli_parse_id(const char *s, uint32_t *out, const char **err);

/* UID[:GID] in decimal, each below 2^32 - 1; GID defaults to UID. 0, or -EINVAL with *err. */
__attribute__((warn_unused_result)) int cli_parse_user(const char *s, uint32_t *uid, uint32_t *gid,
						       const char **err);

/* The longest --timeout and --stop-timeout, in seconds (also the JSON file's "timeout" and
   "stop_timeout"): 10^7 s is about 115 days; 10^6 s in milliseconds fits an unsigned int. */
#define CLI_MAX_TIMEOUT_S 10000000
#define CLI_MAX_STOP_TIMEOUT_S 1000000

/* --timeout: whole seconds, 1 to CLI_MAX_TIMEOUT_S. 0, or -EINVAL with *err. */
__attribute__((warn_unused_result)) int cli_parse_seconds(const char *s, unsigned int *out,
							  const char **err);

/* --stop-timeout: whole seconds, 0 (a signal stops the guest at once) to CLI_MAX_STOP_TIMEOUT_S, as
   milliseconds.
   0, or -EINVAL with *err. */
__attribute__((warn_unused_result)) int cli_parse_stop_timeout(const char *s, unsigned int *ms,
							       const char **err);

#endif
