/* cli_parse.h: parsing of the CLI's numeric values (sizes with suffixes, counts), pure and tested. */
#ifndef RINGVM_CLI_PARSE_H
#define RINGVM_CLI_PARSE_H

#include <stdint.h>

/* "512M", "2G", "65536", "1t": bytes. 0, or -EINVAL with *err saying what is wrong. */
__attribute__((warn_unused_result)) int cli_parse_size(const char *s, uint64_t *out, const char **err);

/* A vCPU count 1..255. 0, or -EINVAL with *err. */
__attribute__((warn_unused_result)) int cli_parse_cpus(const char *s, unsigned int *out, const char **err);

/* A user or group id 0..2^32-2 (-1 means "unchanged" to the kernel: refused). 0, or -EINVAL with
   *err. */
__attribute__((warn_unused_result)) int cli_parse_id(const char *s, uint32_t *out, const char **err);

/* UID[:GID] in decimal, each below 2^32 - 1; GID defaults to UID. 0, or -EINVAL with *err. */
__attribute__((warn_unused_result)) int cli_parse_user(const char *s, uint32_t *uid, uint32_t *gid,
						       const char **err);

/* --timeout: whole seconds, 1 to 10^7 (about 115 days). 0, or -EINVAL with *err. */
__attribute__((warn_unused_result)) int cli_parse_seconds(const char *s, unsigned int *out,
							  const char **err);

/* --stop-timeout: whole seconds, 0 (a signal stops the guest at once) to 10^6, as milliseconds.
   0, or -EINVAL with *err. */
__attribute__((warn_unused_result)) int cli_parse_stop_timeout(const char *s, unsigned int *ms,
							       const char **err);

#endif
