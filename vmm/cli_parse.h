/* cli_parse.h: the CLI's option values (sizes, counts, --disk/--share/--root/--fs-limits specs), pure and tested. */
#ifndef RINGVM_CLI_PARSE_H
#define RINGVM_CLI_PARSE_H

#include <stdint.h>

#include "include/ringvm.h"

/* "512M", "2G", "65536", "1t": bytes. 0, or -EINVAL with *err saying what is wrong. */
__attribute__((warn_unused_result)) int cli_parse_size(const char *s, uint64_t *out, const char **err);

/* A vCPU count 1..255. 0, or -EINVAL with *err. */
__attribute__((warn_unused_result)) int cli_parse_cpus(const char *s, unsigned int *out, const char **err);

/*
 * The spec parsers below cut spec in place (commas and the ':' become NULs) and point the struct's
 * strings into it: spec must be a writable copy that outlives the struct. Each zeroes *out first,
 * checks the syntax and the ranges the struct cannot express (queues=0), and leaves the rest to
 * ringvm_config_check(). 0, or -EINVAL with *err a static one-line reason.
 */

/* --disk PATH[,readonly][,queues=N][,direct=on|off][,id=STRING][,poll_us=N] */
__attribute__((warn_unused_result)) int cli_parse_disk(char *spec, struct ringvm_disk *out, const char **err);

/* --share HOSTDIR:GUESTDIR[,readonly|ro][,cache=auto|always|never][,tag=NAME][,queues=N][,dev][,suid]
   [,xattr=user|none|security|all][,allow_direct_io] */
__attribute__((warn_unused_result)) int cli_parse_share(char *spec, struct ringvm_share *out,
							const char **err);

/* --root HOSTDIR[,rw] */
__attribute__((warn_unused_result)) int cli_parse_root(char *spec, struct ringvm_root *out, const char **err);

/* --fs-limits fds=N,dir_buffers=N (either may be left out, not both; N in 1..2^30). Does not cut. */
__attribute__((warn_unused_result)) int cli_parse_fs_limits(const char *spec, struct ringvm_fs_limits *out,
							    const char **err);

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
