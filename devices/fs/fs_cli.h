/* fs_cli.h: the --share, --root and --fs-limits specs, for the ringvm CLI only (never libringvm; fs_cli.c). */
#ifndef RINGVM_FS_CLI_H
#define RINGVM_FS_CLI_H

#include "include/ringvm.h"

/*
 * The share and root parsers cut spec in place (commas and the ':' become NULs) and point the
 * struct's strings into it: spec must be a writable copy that outlives the struct. Each zeroes *out
 * first, checks the syntax and the ranges the struct cannot express (queues=0), and leaves the rest
 * to ringvm_config_check(). 0, or -EINVAL with *err a static one-line reason.
 */

/* --share HOSTDIR:GUESTDIR[,readonly|ro][,cache=auto|always|never][,tag=NAME][,queues=N][,dev][,suid]
   [,xattr=user|none|security|all][,allow_direct_io] */
__attribute__((warn_unused_result)) int fs_cli_parse_share(char *spec, struct ringvm_share *out,
							   const char **err);

/* --root HOSTDIR[,rw] */
__attribute__((warn_unused_result)) int fs_cli_parse_root(char *spec, struct ringvm_root *out, const char **err);

/* --fs-limits fds=N,dir_buffers=N (either may be left out, not both; N in 1..2^30). Does not cut. */
__attribute__((warn_unused_result)) int fs_cli_parse_limits(const char *spec, struct ringvm_fs_limits *out,
							    const char **err);

/* `ringvm serve fs`'s part (vmm/cli_kind.h; fs_serve_cli.c), for fs_cli.c's entry. */
struct cli_serve_kind;
extern const struct cli_serve_kind fs_serve_cli;

#endif
