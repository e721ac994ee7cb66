/* launch.h: how PID 1 starts the command: environment, working directory, user (guest/protocol.h). */
#ifndef RINGVM_GUEST_LAUNCH_H
#define RINGVM_GUEST_LAUNCH_H

#include <stdbool.h>
#include <sys/types.h>

#define LAUNCH_MAX_ENV 512
#define LAUNCH_VALUE_MAX 8192 /* a parameter cannot outgrow the kernel command line */

/*
 * From ringvm.env=, ringvm.cwd= and ringvm.user= (all optional). The environment is PID 1's small
 * default (PATH, HOME=/root, TERM=linux; HOME=/ for a user other than root) with each NAME=VALUE of
 * ringvm.env= replacing the default of the same NAME or added after them, in order.
 */
struct launch {
	char *envp[LAUNCH_MAX_ENV + 4]; /* NULL-terminated; points into env_buf or static strings */
	const char *cwd;		 /* "/" unless ringvm.cwd= */
	bool set_user;
	uid_t uid;
	gid_t gid;
	char env_buf[LAUNCH_VALUE_MAX];
	char cwd_buf[LAUNCH_VALUE_MAX];
	char *cwd_argv[2];
};

/*
 * Fill l from a kernel command line. Pure (no I/O): the guest's PID 1 and the unit tests call it.
 * Returns 0, or -EINVAL with *why set to a static reason: a malformed value, an entry that is not
 * NAME=VALUE, a relative directory, a user that is not UID:GID in decimal, too many variables.
 */
__attribute__((warn_unused_result)) int launch_parse(struct launch *l, const char *cmdline,
						     const char **why);

/*
 * In the command's process, before exec: supplementary groups dropped, gid and uid set (when
 * asked), then chdir. Returns 0 or -errno with *what naming the step that failed.
 */
__attribute__((warn_unused_result)) int launch_apply(const struct launch *l, const char **what);

#endif
