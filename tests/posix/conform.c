/* conform.c: the POSIX conformance program: every case as root, then as an unprivileged user. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/posix/conform.h"

/*
 * usage: conform DIR OTHERDIR
 *
 * DIR: an empty directory on the file system under test; OTHERDIR: an empty directory on another
 * file system (for EXDEV). Root only. The transcript goes to stdout (see conform.h); the exit status
 * is 0 when every phase ran to its end, whatever the checks said (the differential comparison of two
 * transcripts decides), 2 on bad usage, 1 when a phase could not run.
 *
 * Layout made under DIR: root/ (the root phase's groups), user/ (owned by CF_UID: the user phase's
 * groups), fix/ (root's fixtures the user phase must be refused on or is allowed to use).
 */

/* The sysctls that change what the kernel allows (protected_*): part of the environment, printed so
   that two runs with different settings differ there first. */
static void cf_env(void)
{
	static const char *const names[] = { "protected_hardlinks", "protected_symlinks",
					     "protected_regular", "protected_fifos" };
	char path[64], v[16];
	size_t i;

	cf_phase("env");
	cf_group("sysctl");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/sys/fs/%s", names[i]);
		f = fopen(path, "r");
		if (!f || !fgets(v, sizeof(v), f))
			snprintf(v, sizeof(v), "?\n");
		if (f)
			fclose(f);
		v[strcspn(v, "\n")] = '\0';
		cf_val(names[i], "%s", v);
	}
}

static int cf_mkdir_owned(const char *path, uid_t uid, gid_t gid)
{
	if (cf_setup(path, mkdir(path, 0755)) < 0)
		return -1;
	return (int)cf_setup(path, chown(path, uid, gid));
}

/* The groups every phase runs in its own directory. */
static void cf_common_groups(void)
{
	cf_open();
	cf_names();
	cf_symlink();
	cf_attr();
}

/* The child: become CF_UID:CF_GID with CF_SUPP_GID, run the user phase, never return. */
static void cf_user_phase(const char *other_user)
{
	gid_t groups[1] = { CF_SUPP_GID };

	cf_phase("user");
	cf_group("identity");
	if (cf_setup("setgroups", setgroups(1, groups)) < 0 ||
	    cf_setup("setresgid", setresgid(CF_GID, CF_GID, CF_GID)) < 0 ||
	    cf_setup("setresuid", setresuid(CF_UID, CF_UID, CF_UID)) < 0 || geteuid() != CF_UID)
		_exit(1);
	umask(022);
	cf_root = false;
	cf_other = other_user;
	if (cf_setup("chdir user", chdir("user")) < 0)
		_exit(1);
	cf_common_groups();
	if (cf_setup("chdir fix", chdir("../fix")) < 0)
		_exit(1);
	cf_cross_user();
	fflush(stdout);
	_exit(0);
}

int main(int argc, char **argv)
{
	char other_root[4096], other_user[4096];
	struct stat a, b;
	int status;
	pid_t pid;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DIR OTHERDIR\n", argv[0]);
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "conform: must run as root (it also runs as uid %d)\n", CF_UID);
		return 2;
	}
	if (stat(argv[1], &a) < 0 || stat(argv[2], &b) < 0 || !S_ISDIR(a.st_mode) || !S_ISDIR(b.st_mode)) {
		fprintf(stderr, "conform: %s and %s must be directories\n", argv[1], argv[2]);
		return 2;
	}
	if (a.st_dev == b.st_dev) {
		fprintf(stderr, "conform: %s must be on another file system than %s\n", argv[2], argv[1]);
		return 2;
	}
	snprintf(other_root, sizeof(other_root), "%s/root", argv[2]);
	snprintf(other_user, sizeof(other_user), "%s/user", argv[2]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	umask(022);
	cf_env();

	cf_phase("root");
	cf_group("layout");
	cf_root = true;
	cf_other = other_root;
	if (cf_setup("chdir", chdir(argv[1])) < 0 || cf_mkdir_owned("root", 0, 0) < 0 ||
	    cf_mkdir_owned("fix", 0, 0) < 0 || cf_mkdir_owned("user", CF_UID, CF_GID) < 0 ||
	    cf_mkdir_owned(other_root, 0, 0) < 0 || cf_mkdir_owned(other_user, CF_UID, CF_GID) < 0 ||
	    cf_setup("chdir root", chdir("root")) < 0)
		return 1;
	cf_common_groups();
	if (cf_setup("chdir fix", chdir("../fix")) < 0)
		return 1;
	cf_fixtures();
	if (cf_setup("chdir ..", chdir("..")) < 0)
		return 1;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		cf_user_phase(other_user);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("user/exit: status %d\n", status);
		return 1;
	}

	cf_phase("root");
	cf_group("after-user");
	if (cf_setup("chdir fix", chdir("fix")) < 0)
		return 1;
	cf_after_user();
	return 0;
}
