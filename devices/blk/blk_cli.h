/* blk_cli.h: the --disk spec, for the ringvm CLI only (never libringvm): `run --disk` (blk_cli.c) and `serve blk --disk`. */
#ifndef RINGVM_BLK_CLI_H
#define RINGVM_BLK_CLI_H

#include "include/ringvm.h"

/*
 * PATH[,readonly][,queues=N][,direct=on|off][,id=STRING][,poll_us=N] into *out (zeroed first).
 * Cuts spec in place and points out->path and out->id into it: spec must be a writable copy that
 * outlives *out. Checks the syntax and the ranges the struct cannot express (queues=0), leaves the
 * rest to ringvm_config_check(). 0, or -EINVAL with *err a static one-line reason.
 */
__attribute__((warn_unused_result)) int blk_cli_parse_disk(char *spec, struct ringvm_disk *out, const char **err);

#endif
