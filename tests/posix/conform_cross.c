/* conform_cross.c: rules between users: permissions, sticky and setgid directories, suid/sgid kills. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "tests/posix/conform.h"

/*
 * Root makes the fixtures in fix/ (cf_fixtures), the user phase (CF_UID:CF_GID, member of
 * CF_SUPP_GID, not of CF_OTHER_GID) works on them from fix/ (cf_cross_user), then root looks at what
 * it left and acts on the user's files (cf_after_user).
 */

static void cf_fix_file(const char *path, mode_t mode, uid_t uid, gid_t gid, const char *data)
{
	if (cf_mkfile(path, 0600, data) == 0 && cf_setup(path, chown(path, uid, gid)) == 0)
		cf_setup(path, chmod(path, mode)); /* after chown: chown clears setuid */
}

static void cf_fix_dir(const char *path, mode_t mode, uid_t uid, gid_t gid)
{
	if (cf_setup(path, mkdir(path, 0700)) == 0 && cf_setup(path, chown(path, uid, gid)) == 0)
		cf_setup(path, chmod(path, mode));
}

/* POSIX ACLs (Linux acl(5)): a named-user entry, and a directory whose default ACL new entries
   inherit instead of the umask. */
static void cf_fix_acls(void)
{
	static const struct cf_acl_entry read_for_user[] = {
		{ 0x01, 6, CF_ACL_NOID }, { 0x02, 4, CF_UID }, { 0x04, 0, CF_ACL_NOID },
		{ 0x10, 4, CF_ACL_NOID }, { 0x20, 0, CF_ACL_NOID }
	};
	static const struct cf_acl_entry rwx_for_user[] = {
		{ 0x01, 7, CF_ACL_NOID }, { 0x02, 7, CF_UID }, { 0x04, 5, CF_ACL_NOID },
		{ 0x10, 7, CF_ACL_NOID }, { 0x20, 5, CF_ACL_NOID }
	};

	cf_fix_file("aclread", 0600, 0, 0, "acl-readable");
	cf_setup("acl aclread", cf_set_acl("aclread", "system.posix_acl_access", read_for_user, 5));
	cf_fix_dir("acldir", 0755, 0, 0);
	cf_setup("acl acldir", cf_set_acl("acldir", "system.posix_acl_access", rwx_for_user, 5));
	cf_setup("acl acldir", cf_set_acl("acldir", "system.posix_acl_default", rwx_for_user, 5));
}

void cf_fixtures(void)
{
	cf_group("fixtures");
	cf_fix_file("secret", 0600, 0, 0, "secret");
	cf_fix_file("ro", 0644, 0, 0, "read-only");
	cf_fix_file("ww", 0666, 0, 0, "world-writable");
	cf_fix_file("grp", 0640, 0, CF_SUPP_GID, "group-readable");
	cf_fix_file("grpw", 0660, 0, CF_SUPP_GID, "group-writable");
	cf_fix_file("othergrp", 0640, 0, CF_OTHER_GID, "other-group");
	cf_fix_file("mine", 0644, CF_UID, CF_OTHER_GID, "mine");
	cf_fix_file("suid", 04777, 0, 0, "suid");
	cf_fix_file("sgidx", 02777, 0, 0, "sgid");
	cf_fix_file("sgidnx", 02767, 0, 0, "sgid-no-group-exec");
	cf_fix_file("suidtr", 04777, 0, 0, "suid-truncate");
	cf_fix_file("usuid", 04766, CF_UID, CF_GID, "user-suid");
	cf_fix_file("suidchown", 04755, 0, 0, "suid-chown");
	cf_fix_file("sgidnxtr", 02767, 0, 0, "sgid-no-group-exec-truncate");
	cf_fix_file("sgidnxotr", 02767, 0, 0, "sgid-no-group-exec-open-truncate");
	cf_fix_file("sgidown", 02745, CF_UID, CF_OTHER_GID, "own-sgid-other-group");
	cf_fix_file("sgidmember", 02767, 0, CF_GID, "sgid-primary-group");
	cf_fix_file("sgidsupp", 02767, 0, CF_SUPP_GID, "sgid-supplementary-group");
	cf_fix_file("sgidsupptr", 02767, 0, CF_SUPP_GID, "sgid-supplementary-group-truncate");
	cf_fix_file("sgidsuppown", 02745, CF_UID, CF_SUPP_GID, "own-sgid-supplementary-group");
	cf_fix_dir("gdir", 0770, 0, CF_SUPP_GID);
	cf_fix_dir("gdir/rootsub", 0755, 0, 0);
	cf_fix_dir("gdir/elsewhere", 0777, 0, 0);
	cf_fix_dir("noexec", 0754, 0, 0);
	cf_fix_file("noexec/file", 0644, 0, 0, "noexec");
	cf_fix_dir("noread", 0711, 0, 0);
	cf_fix_file("noread/file", 0644, 0, 0, "noread");
	cf_fix_dir("sticky", 01777, 0, 0);
	cf_fix_file("sticky/rootf", 0666, 0, 0, "root's");
	cf_fix_dir("sticky/rootd", 0777, 0, 0);
	cf_setup("symlink", symlink("rootf", "sticky/rootlink"));
	cf_fix_dir("usticky", 01777, CF_UID, CF_GID);
	cf_fix_file("usticky/rootf", 0644, 0, 0, "root's in user's sticky dir");
	cf_fix_dir("sgid", 02777, 0, CF_OTHER_GID);
	cf_fix_dir("sgidm", 02777, 0, CF_SUPP_GID);
	cf_fix_dir("scratch", 0777, 0, 0);
	cf_fix_acls();
}

static void cf_close_fd(long fd)
{
	if (fd >= 0)
		close((int)fd);
}

/* Plain permission checks against root's files (and the supplementary group's). */
static void cf_cross_perm(void)
{
	const struct timespec now[2] = { { .tv_nsec = UTIME_NOW }, { .tv_nsec = UTIME_NOW } };
	const struct timespec set[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	const struct timespec omit[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_nsec = UTIME_OMIT } };
	char buf[64];
	long fd;

	cf_group("perm");
	cf_close_fd(CF("read-0600-root", open("secret", O_RDONLY)));
	cf_close_fd(CF("read-0644-root", open("ro", O_RDONLY)));
	cf_close_fd(CF("write-0644-root", open("ro", O_WRONLY)));
	cf_close_fd(CF("o_trunc-0644-root", open("ro", O_RDONLY | O_TRUNC)));
	cf_close_fd(CF("o_noatime-root-file", open("ro", O_RDONLY | O_NOATIME)));
	CF("truncate-0644-root", truncate("ro", 0));
	CF("chmod-root-file", chmod("ro", 0666));
	CF("chown-root-file-to-self", chown("ro", CF_UID, CF_GID));
	CF("chgrp-root-file", chown("ro", (uid_t)-1, CF_GID));
	CF("utimensat-now-no-write", utimensat(AT_FDCWD, "ro", now, 0));
	CF("utimensat-set-not-owner", utimensat(AT_FDCWD, "ww", set, 0));
	CF("utimensat-now-with-write", utimensat(AT_FDCWD, "ww", now, 0));
	CF("utimensat-omit-not-owner", utimensat(AT_FDCWD, "ro", omit, 0));
	CF("setxattr-trusted-root-file", setxattr("ww", "trusted.x", "x", 1, 0));
	CF("getxattr-trusted-hidden", getxattr("ww", "trusted.x", buf, sizeof(buf)));
	fd = CF("write-0666-root", open("ww", O_WRONLY));
	if (fd >= 0) {
		CF("write-0666-root-write", write((int)fd, "W", 1));
		close((int)fd);
	}
	cf_close_fd(CF("read-group-0640-supplementary", open("grp", O_RDONLY)));
	cf_close_fd(CF("write-group-0660-supplementary", open("grpw", O_WRONLY)));
	cf_close_fd(CF("read-group-0640-not-member", open("othergrp", O_RDONLY)));
	CF("access-r-0600-root", access("secret", R_OK));
	CF("access-r-group-supplementary", access("grp", R_OK));
	CF("access-w-0644-root", access("ro", W_OK));
	CF("unlink-in-root-dir", unlink("ro"));
	CF("rename-in-root-dir", rename("ro", "ro2"));
	CF("create-in-root-dir", open("newfile", O_CREAT | O_WRONLY, 0644));
	CF("mkdir-in-root-dir", mkdir("newdir", 0755));
	CF("symlink-in-root-dir", symlink("x", "newlink"));
	CF("mkfifo-in-root-dir", mkfifo("newfifo", 0644));
	CFS("link-root-file-elsewhere", link("ro", "scratch/ro-link"), "scratch/ro-link");
	CFS("link-own-file-elsewhere", link("mine", "scratch/mine-link"), "scratch/mine-link");
	/* The owner who is not a member of the file's group: setgid is dropped without an error. */
	CFS("chmod-owner-not-in-group-setgid", chmod("mine", 02755), "mine");
	CFS("chmod-owner-setuid", chmod("mine", 04755), "mine");
	CFS("utimensat-set-owner", utimensat(AT_FDCWD, "mine", set, 0), "mine");
	CFS("chgrp-owner-to-supplementary", chown("mine", (uid_t)-1, CF_SUPP_GID), "mine");
	CFS("chmod-owner-in-supplementary-group-setgid", chmod("mine", 02755), "mine");
	CF("utimensat-now-group-write-supplementary", utimensat(AT_FDCWD, "grpw", now, 0));
	CFS("chown-nothing-not-owner-setuid", chown("suidchown", (uid_t)-1, (gid_t)-1), "suidchown");
	CFS("chown-nothing-not-owner", chown("ro", (uid_t)-1, (gid_t)-1), "ro");
	CF("stat-in-dir-without-search", access("noexec/file", F_OK));
	cf_close_fd(CF("opendir-without-search", open("noexec", O_RDONLY | O_DIRECTORY)));
	cf_close_fd(CF("opendir-without-read", open("noread", O_RDONLY | O_DIRECTORY)));
	cf_val("read-known-name-without-dir-read", "%s", cf_content("noread/file"));
	CF("chdir-without-search", chdir("noexec"));
}

/* Group access through a supplementary group: create, rename, move directories in gdir/. */
static void cf_cross_group_dir(void)
{
	cf_group("group-dir");
	cf_close_fd(CFS("create-in-group-dir", open("gdir/u", O_CREAT | O_WRONLY, 0644), "gdir/u"));
	CFS("mkdir-in-group-dir", mkdir("gdir/ud", 0755), "gdir/ud");
	CF("rename-in-group-dir", rename("gdir/u", "gdir/u2"));
	CF("unlink-in-group-dir", unlink("gdir/u2"));
	CF("rename-root-dir-same-parent", rename("gdir/rootsub", "gdir/rootsub2"));
	CF("rename-root-dir-other-parent", rename("gdir/rootsub2", "gdir/elsewhere/rootsub"));
	CF("rename-own-dir-other-parent", rename("gdir/ud", "gdir/elsewhere/ud"));
	CF("rmdir-in-group-dir", rmdir("gdir/elsewhere/ud"));
}

/* A sticky directory (fix/sticky, root's, 1777) and one the user owns (fix/usticky). */
static void cf_cross_sticky(void)
{
	cf_group("sticky");
	cf_mkfile("sticky/own", 0644, "own");
	CF("unlink-root-file", unlink("sticky/rootf"));
	CF("rename-root-file", rename("sticky/rootf", "sticky/r2"));
	CF("rename-own-over-root-file", rename("sticky/own", "sticky/rootf"));
	CF("rmdir-root-dir", rmdir("sticky/rootd"));
	CF("write-root-file-0666", truncate("sticky/rootf", 1));
	cf_close_fd(CF("o_creat-existing-root-file", open("sticky/rootf", O_CREAT | O_WRONLY, 0644)));
	CFS("rename-own", rename("sticky/own", "sticky/own2"), "sticky/own2");
	CF("unlink-own", unlink("sticky/own2"));
	CF("exchange-root-dir-and-file",
	   renameat2(AT_FDCWD, "sticky/rootd", AT_FDCWD, "sticky/rootf", RENAME_EXCHANGE));
	CF("dir-owner-unlinks-root-file", unlink("usticky/rootf"));
	/* fs.protected_symlinks (printed first): a link in a sticky world-writable directory is
	   followed only by its owner or when the directory's owner owns it. */
	cf_close_fd(CF("follow-root-symlink", open("sticky/rootlink", O_RDONLY)));
	cf_mkfile("sticky/ownf", 0644, "own");
	cf_setup("symlink", symlink("ownf", "sticky/userlink"));
	cf_close_fd(CF("follow-own-symlink", open("sticky/userlink", O_RDONLY)));
}

/* Set-group-ID directories: inherited group and bit; setgid stripped from a non-member's file. */
static void cf_cross_sgid(void)
{
	cf_group("setgid-dir");
	cf_close_fd(CFS("create", open("sgid/f", O_CREAT | O_WRONLY, 0644), "sgid/f"));
	cf_close_fd(CFS("create-setgid-not-member", open("sgid/g", O_CREAT | O_WRONLY, 02755), "sgid/g"));
	CFS("mkdir", mkdir("sgid/d", 0755), "sgid/d");
	CFS("mknod-setgid-not-member", mknod("sgid/n", S_IFREG | 02755, 0), "sgid/n");
	CFS("mkdir-setgid-request", mkdir("sgid/d2", 02755), "sgid/d2");
	cf_close_fd(CFS("create-setgid-member", open("sgidm/g", O_CREAT | O_WRONLY, 02755), "sgidm/g"));
	CFS("mkdir-member", mkdir("sgidm/d", 0755), "sgidm/d");
	CFS("chmod-setgid-own-file-inherited-group", chmod("sgid/f", 02755), "sgid/f");
}

/* Check NAME: one byte written to path through an O_WRONLY open (the open's error if it fails),
   then the file's state. */
static void cf_write_byte(const char *name, const char *path)
{
	long fd = open(path, O_WRONLY);

	if (fd < 0) {
		CFS(name, fd, path);
		return;
	}
	CFS(name, write((int)fd, "w", 1), path);
	close((int)fd);
}

/* Writes and truncates by someone without CAP_FSETID drop setuid and (with group exec) setgid. */
static void cf_cross_kill(void)
{
	long fd;

	cf_group("kill-suid");
	cf_write_byte("write-clears-setuid", "suid");
	cf_write_byte("write-clears-setgid-group-exec", "sgidx");
	cf_write_byte("write-keeps-setgid-no-group-exec", "sgidnx");
	CFS("truncate-clears-setuid", truncate("suidtr", 1), "suidtr");
	CFS("truncate-clears-setgid-no-group-exec-not-member", truncate("sgidnxtr", 1), "sgidnxtr");
	fd = open("sgidnxotr", O_WRONLY | O_TRUNC);
	CFS("open-trunc-clears-setgid-no-group-exec-not-member", fd, "sgidnxotr");
	cf_close_fd(fd);
	CFS("owner-chown-nothing-setgid-no-group-exec-not-member", chown("sgidown", (uid_t)-1, (gid_t)-1),
	    "sgidown");
	cf_write_byte("write-keeps-setgid-no-group-exec-primary-member", "sgidmember");
	cf_write_byte("write-keeps-setgid-no-group-exec-supplementary-member", "sgidsupp");
	CFS("truncate-keeps-setgid-no-group-exec-supplementary-member", truncate("sgidsupptr", 1),
	    "sgidsupptr");
	CFS("owner-chown-nothing-keeps-setgid-no-group-exec-supplementary-member",
	    chown("sgidsuppown", (uid_t)-1, (gid_t)-1), "sgidsuppown");
	fd = open("usuid", O_WRONLY);
	if (fd >= 0) {
		CFS("owner-write-clears-setuid", write((int)fd, "w", 1), "usuid");
		cf_setup("chmod", fchmod((int)fd, 04766));
		CFS("owner-ftruncate-clears-setuid", ftruncate((int)fd, 2), "usuid");
		cf_setup("chmod", fchmod((int)fd, 04766));
		close((int)fd);
	}
	CFS("owner-chown-nothing-clears-setuid", chown("usuid", (uid_t)-1, (gid_t)-1), "usuid");
	cf_setup("chmod", chmod("usuid", 04766));
}

/* What ACLs grant or decide, seen by the named user. */
static void cf_cross_acl(void)
{
	long fd;

	cf_group("acl");
	cf_val("named-user-file", "%s", cf_desc("aclread"));
	cf_close_fd(CF("read-granted-by-named-user-entry", open("aclread", O_RDONLY)));
	cf_close_fd(CF("write-not-granted", open("aclread", O_WRONLY)));
	CF("access-r-granted", access("aclread", R_OK));
	fd = CFS("create-under-default-acl", open("acldir/f", O_CREAT | O_WRONLY, 0666), "acldir/f");
	cf_close_fd(fd);
	CFS("mkdir-under-default-acl", mkdir("acldir/d", 0777), "acldir/d");
	CFS("mknod-under-default-acl", mknod("acldir/p", S_IFIFO | 0666, 0), "acldir/p");
	CF("chmod-own-file-with-acl", chmod("acldir/f", 0640));
	cf_val("chmod-own-file-with-acl-mode", "%s", cf_desc("acldir/f"));
}

void cf_cross_user(void)
{
	cf_cross_acl();
	cf_cross_perm();
	cf_cross_group_dir();
	cf_cross_sticky();
	cf_cross_sgid();
	cf_cross_kill();
}

void cf_after_user(void)
{
	long fd;

	cf_val("acl-inherited-by-user-file", "access acl bytes: %zd",
	       getxattr("acldir/f", "system.posix_acl_access", NULL, 0));
	cf_val("acl-inherited-by-user-dir", "default acl bytes: %zd",
	       getxattr("acldir/d", "system.posix_acl_default", NULL, 0));

	cf_val("user-renamed-root-dir", "%s", cf_desc("gdir/rootsub2"));
	cf_val("user-file-in-setgid-dir", "%s", cf_desc("sgid/f"));
	cf_val("user-dir-in-setgid-dir", "%s", cf_desc("sgid/d"));
	fd = open("usuid", O_WRONLY);
	if (fd >= 0) {
		CFS("root-write-keeps-setuid", write((int)fd, "r", 1), "usuid");
		CFS("root-ftruncate-keeps-setuid", ftruncate((int)fd, 1), "usuid");
		close((int)fd);
	}
	CFS("root-chown-clears-setuid", chown("usuid", CF_UID, CF_GID), "usuid");
	cf_close_fd(CF("root-follows-user-symlink-in-sticky", open("sticky/userlink", O_RDONLY)));
	CF("root-unlinks-in-sticky", unlink("sticky/rootf"));
	CF("root-rmdir-in-sticky", rmdir("sticky/rootd"));
	cf_setup("chmod", chmod("secret", 0));
	cf_close_fd(CFS("root-read-mode-0", open("secret", O_RDONLY), "secret"));
	CF("root-access-x-no-x-bits", access("secret", X_OK));
	CF("root-access-w-mode-0", access("secret", W_OK));
}
