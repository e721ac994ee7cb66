/* launch.c: the command's environment, working directory and user, from the kernel command line. */
#define _GNU_SOURCE
#include "guest/launch.h"

#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest/cmdline.h"
#include "guest/protocol.h"

static char launch_path[] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
static char launch_home_root[] = "HOME=/root";
static char launch_home_slash[] = "HOME=/";
static char launch_term[] = "TERM=linux";

/* Length of the NAME part of NAME=VALUE, or 0 when entry is not of that form. */
static size_t launch_name_len(const char *entry)
{
	const char *eq = strchr(entry, '=');

	return eq && eq != entry ? (size_t)(eq - entry) : 0;
}

/* A decimal id below 2^32 - 1 ((uid_t)-1 means "unchanged" to the kernel). */
static bool launch_id(const char *s, const char *end, unsigned long *out)
{
	char *stop;

	if (s == end || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtoul(s, &stop, 10);
	return errno == 0 && stop == end && *out < 0xffffffffUL;
}

static int launch_user(struct launch *l, const char *value)
{
	const char *colon = strchr(value, ':');
	unsigned long uid, gid;

	if (!colon || !launch_id(value, colon, &uid) ||
	    !launch_id(colon + 1, colon + strlen(colon), &gid))
		return -EINVAL;
	l->set_user = true;
	l->uid = (uid_t)uid;
	l->gid = (gid_t)gid;
	return 0;
}

int launch_parse(struct launch *l, const char *cmdline, const char **why)
{
	char user[32];
	char *vars[LAUNCH_MAX_ENV + 1];
	int n;

	memset(l, 0, sizeof(*l));
	l->cwd = "/";
	n = cmdline_find_param(cmdline, RINGVM_CMDLINE_USER, user, sizeof(user));
	if (n != -ENOENT && (n < 0 || launch_user(l, user) < 0)) {
		*why = RINGVM_CMDLINE_USER " is not UID:GID in decimal";
		return -EINVAL;
	}
	n = cmdline_find_param(cmdline, RINGVM_CMDLINE_CWD, l->cwd_buf, sizeof(l->cwd_buf));
	if (n != -ENOENT) {
		if (n < 0 || cmdline_decode_argv(l->cwd_buf, l->cwd_argv, 2) != 1 ||
		    l->cwd_argv[0][0] != '/') {
			*why = RINGVM_CMDLINE_CWD " is not one absolute directory";
			return -EINVAL;
		}
		l->cwd = l->cwd_argv[0];
	}

	unsigned int ne = 0;
	l->envp[ne++] = launch_path;
	l->envp[ne++] = l->set_user && l->uid != 0 ? launch_home_slash : launch_home_root;
	l->envp[ne++] = launch_term;
	n = cmdline_find_param(cmdline, RINGVM_CMDLINE_ENV, l->env_buf, sizeof(l->env_buf));
	if (n == -ENOENT)
		return 0;
	if (n >= 0)
		n = cmdline_decode_argv(l->env_buf, vars, LAUNCH_MAX_ENV + 1);
	if (n < 0) {
		*why = n == -E2BIG ? RINGVM_CMDLINE_ENV " has too many variables"
				   : "malformed " RINGVM_CMDLINE_ENV;
		return -EINVAL;
	}
	for (int i = 0; i < n; i++) {
		size_t len = launch_name_len(vars[i]);
		unsigned int j;

		if (len == 0) {
			*why = RINGVM_CMDLINE_ENV " has an entry that is not NAME=VALUE";
			return -EINVAL;
		}
		for (j = 0; j < ne; j++)
			if (launch_name_len(l->envp[j]) == len && !strncmp(l->envp[j], vars[i], len + 1))
				break;
		l->envp[j] = vars[i];
		if (j == ne)
			ne++;
	}
	l->envp[ne] = NULL;
	return 0;
}

int launch_apply(const struct launch *l, const char **what)
{
	if (l->set_user) {
		*what = "setgroups";
		if (setgroups(0, NULL) < 0)
			return -errno;
		*what = "setgid";
		if (setgid(l->gid) < 0)
			return -errno;
		*what = "setuid";
		if (setuid(l->uid) < 0)
			return -errno;
	}
	*what = "chdir";
	if (chdir(l->cwd) < 0)
		return -errno;
	return 0;
}
