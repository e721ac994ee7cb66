/* conform.h: the POSIX conformance program's transcript: one deterministic line per check. */
#ifndef RINGVM_CONFORM_H
#define RINGVM_CONFORM_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * The program (tests/posix/conform.c) runs every case in a directory it is given, once as root and
 * once as an unprivileged user, and prints a transcript meant to be diffed against the same run on
 * another file system: each line is "PHASE/GROUP/CASE: RESULT[ VALUES]", RESULT being "ok" or the
 * errno's name (ENOENT...), VALUES only what two correct file systems must agree on (type, mode
 * bits, link count, owner, size, content, "mtime changed: yes"), never inode numbers, absolute
 * times, block counts or directory sizes. Setup steps print nothing unless they fail.
 *
 * Each group function below makes its own subdirectory of the current directory, works inside it
 * with relative names and returns to where it started.
 */

/* The unprivileged identity of the user phase, and a supplementary group it is a member of. */
#define CF_UID 1000
#define CF_GID 1000
#define CF_SUPP_GID 1001
/* A group and a user the unprivileged phase belongs to in no way. */
#define CF_OTHER_GID 1002
#define CF_OTHER_UID 1003

extern bool cf_root;          /* the phase runs as root */
extern const char *cf_other;  /* a directory on another file system (EXDEV), for this phase */

/* The line prefix: phase ("root", "user") and group ("open", ...). */
void cf_phase(const char *phase);
void cf_group(const char *group);

/*
 * A check: rc is a system call's result (negative: failed, errno says why). Prints
 * "NAME: ok" or "NAME: ENAME", then, when path is not NULL, " -> " and the state of path after the
 * call (cf_desc). Returns rc; errno is kept.
 */
long cf_ret(const char *name, long rc, const char *path);
#define CF(name, call) cf_ret((name), (long)(call), NULL)
#define CFS(name, call, path) cf_ret((name), (long)(call), (path))

/* A check that reports values: "NAME: ok VALUES" (printf-style). */
void cf_val(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "reg 0644 n1 0:0 s5" (type, mode, links, owner, size for files and symlinks, rdev for devices) of
   lstat(path), or the errno's name. Valid until the next call. */
const char *cf_desc(const char *path);

/* The errno's name ("ENOENT"), or "E<number>". */
const char *cf_errname(int err);

/* Up to 64 bytes of a file, printable ("abc", "\x00\x00", or an errno's name). Valid until the next
   call. */
const char *cf_content(const char *path);

/* Setup steps: print "PHASE/GROUP/setup WHAT: ENAME" only when they fail; return rc. */
long cf_setup(const char *what, long rc);
/* A regular file with these bytes and mode (chmod'ed after creation, umask ignored). */
int cf_mkfile(const char *path, mode_t mode, const char *data);
/* Run a group: fn in a fresh subdirectory `dir` (mode 0755) of the current one, the group named
   after it; back in the current directory afterwards (nothing is removed). */
void cf_in_dir(const char *dir, void (*fn)(void));
/* The clock moves on: enough for a changed ctime to show on any file system's time stamps. */
void cf_tick(void);
/* mtime and ctime of path as one comparable value each (0 when lstat fails). */
long long cf_mtime(const char *path);
long long cf_ctime(const char *path);
/* Set path's atime and mtime to a fixed past value (a baseline for "mtime changed"). */
void cf_age(const char *path);
/* "yes" / "no". */
const char *cf_yn(bool b);

/* One entry of a POSIX ACL as Linux stores it in system.posix_acl_* (version 2 format). */
struct cf_acl_entry {
	unsigned short tag, perm; /* ACL_USER_OBJ 0x01, ACL_USER 0x02, ACL_GROUP_OBJ 0x04,
				     ACL_GROUP 0x08, ACL_MASK 0x10, ACL_OTHER 0x20; perm rwx = 4 2 1 */
	unsigned int id;          /* for ACL_USER / ACL_GROUP; (unsigned)-1 otherwise */
};
#define CF_ACL_NOID 0xffffffffu
/* Set the ACL xattr `name` ("system.posix_acl_access" or "..._default") of path; -1 + errno. */
int cf_set_acl(const char *path, const char *name, const struct cf_acl_entry *e, unsigned int n);

/* The groups (tests/posix/conform_*.c). */
void cf_open(void);     /* open/creat flags, read/write, O_APPEND/O_TRUNC, truncate */
void cf_names(void);    /* link, unlink, rename(2)/renameat2, mkdir/rmdir, EXDEV */
void cf_symlink(void);  /* symlink/readlink, lengths, ELOOP, ENAMETOOLONG */
void cf_attr(void);     /* chmod, chown, utimensat, mknod/mkfifo, xattrs */
/* Cross-user rules: fixtures made by root for the user phase, the user phase's checks on them,
   root's look at what the user phase left. */
void cf_fixtures(void);
void cf_cross_user(void);
void cf_after_user(void);

#endif
