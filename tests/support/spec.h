/* spec.h: tests build device configs from CLI spec strings, through the CLI's parser and the library's checks. */
#ifndef RINGVM_TEST_SPEC_H
#define RINGVM_TEST_SPEC_H

#include "devices/blk/blk.h"
#include "devices/fs/virtio_fs.h"

/*
 * A --disk spec through blk_cli_parse_disk() and blk_config_from(), as `ringvm run` takes it. 0, or
 * -EINVAL with *why (may be NULL) the parser's or the check's reason.
 */
int spec_blk_config(const char *spec, struct blk_config *out, const char **why);

/* A --share spec through fs_cli_parse_share() and fs_config_from(). Same contract. */
int spec_fs_config(const char *spec, struct fs_config *out, const char **why);

/* A --root spec through fs_cli_parse_root() and fs_config_root(). Same contract. */
int spec_fs_root(const char *spec, struct fs_config *out, const char **why);

#endif
