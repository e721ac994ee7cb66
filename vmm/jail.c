/* jail.c: fork into new namespaces, build a root of bind mounts of what the VM needs, pivot, drop ids. */
#define _GNU_SOURCE
#include "vmm/jail.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/kvm.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "devices/kind.h"
#include "vmm/errmsg.h"

#define JAIL_MAX_PATHS 64

/* One thing the VM needs from the host, and how it appears in the jail. */
struct jail_path {
	char path[PATH_MAX]; /* absolute, as the command line names it (relative ones under cwd) */
	bool readonly;
};

struct jail {
	struct jail_path p[JAIL_MAX_PATHS];
	unsigned int n;
	char cwd[PATH_MAX];
	char root[64]; /* the jail's mount point on the host: an empty directory under /tmp */
};

/* Add path (relative to j->cwd unless absolute). -ENAMETOOLONG, -E2BIG. */
static int jail_add(struct jail *j, const char *path, bool readonly)
{
	if (j->n == JAIL_MAX_PATHS)
		return -E2BIG;
	struct jail_path *p = &j->p[j->n];
	int w = path[0] == '/' ? snprintf(p->path, sizeof(p->path), "%s", path)
			       : snprintf(p->path, sizeof(p->path), "%s/%s", j->cwd, path);
	if (w < 0 || (size_t)w >= sizeof(p->path))
		return -ENAMETOOLONG;
	p->readonly = readonly;
	j->n++;
	return 0;
}

/* Outer directories first: a bind inside another lands on top of it, not under it. */
static int jail_path_cmp(const void *a, const void *b)
{
	size_t la = strlen(((const struct jail_path *)a)->path);
	size_t lb = strlen(((const struct jail_path *)b)->path);
	return la < lb ? -1 : la > lb;
}

/* jail_add for a kind's host_paths (devices/kind.h). */
static int jail_add_path(void *arg, const char *path, bool readonly)
{
	return jail_add(arg, path, readonly);
}

/* Everything cfg opens: kernel, initrd, and what each device kind's instances open (its
   host_paths: disks, shares, --root). cfg passed ringvm_config_check(). 0 or -errno with err set. */
static int jail_collect(struct jail *j, const struct ringvm_config *cfg, char *err, size_t errlen)
{
	int ret = jail_add(j, cfg->kernel, true);
	if (!ret && cfg->initrd)
		ret = jail_add(j, cfg->initrd, true);
	for (unsigned int k = 0; k < nr_device_kinds && !ret; k++) {
		if (!device_kinds[k]->host_paths)
			continue;
		ret = device_kinds[k]->host_paths(cfg, jail_add_path, j, err, errlen);
		/* A kind's own refusal carries its message; jail_add's errors get the one below. */
		if (ret && ret != -E2BIG && ret != -ENAMETOOLONG)
			return ret;
	}
	if (!ret && access("/sys/module/kvm_pvm", F_OK) == 0)
		ret = jail_add(j, "/sys/module/kvm_pvm", true);
	if (ret)
		return errmsg(err, errlen, ret, "too many paths to put in the jail");
	qsort(j->p, j->n, sizeof(j->p[0]), jail_path_cmp);
	return 0;
}

/* mkdir -p of every directory leading to path (path itself excluded). */
static int jail_mkparents(const char *path)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *s = strchr(buf + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return 0;
}

/* Bind host path p under the jail's root, with its own flags. */
static int jail_bind(const struct jail *j, const struct jail_path *p)
{
	char target[PATH_MAX + 64];
	struct stat st;
	if (stat(p->path, &st) < 0)
		return -errno;
	snprintf(target, sizeof(target), "%s%s", j->root, p->path);
	int ret = jail_mkparents(target);
	if (ret)
		return ret;
	if (S_ISDIR(st.st_mode)) {
		if (mkdir(target, 0755) < 0 && errno != EEXIST)
			return -errno;
	} else if (access(target, F_OK) < 0) {
		/* A mount point of our own (a file that is already there lies in an outer bind). */
		int fd = open(target, O_CREAT | O_RDONLY | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		close(fd);
	}
	/* Recursive for directories: --root / crosses into submounts. A block device as a disk
	   needs device nodes to work; nothing else does. */
	unsigned long flags = MS_NOSUID | MS_NOEXEC | (S_ISBLK(st.st_mode) ? 0 : MS_NODEV) |
			      (p->readonly ? MS_RDONLY : 0);
	if (mount(p->path, target, NULL, MS_BIND | MS_REC, NULL) < 0 ||
	    mount(NULL, target, NULL, MS_REMOUNT | MS_BIND | flags, NULL) < 0)
		return -errno;
	return 0;
}

/* A device node at path like the host's `host` (a character device), with mode. */
static int jail_mknod_like(const char *host, const char *path, mode_t mode)
{
	struct stat st;
	if (stat(host, &st) < 0)
		return -errno;
	if (!S_ISCHR(st.st_mode))
		return -ENODEV;
	return mknod(path, S_IFCHR | mode, st.st_rdev) < 0 ? -errno : 0;
}

/*
 * The jail's /dev (a private tmpfs allowing device nodes): kvm, the VMM user's, and null, which
 * the command's streams stand in for a closed stdio fd and the CLI points its own stdout at.
 */
static int jail_dev(const struct jail *j, const struct jail_options *o)
{
	char dev[96], kvm[112], null[112];
	snprintf(dev, sizeof(dev), "%s/dev", j->root);
	snprintf(kvm, sizeof(kvm), "%s/kvm", dev);
	snprintf(null, sizeof(null), "%s/null", dev);
	if (mkdir(dev, 0755) < 0 ||
	    mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=16k") < 0)
		return -errno;
	int ret = jail_mknod_like("/dev/kvm", kvm, 0600);
	if (!ret)
		ret = jail_mknod_like("/dev/null", null, 0666);
	if (ret)
		return ret;
	if (o->drop_ids && chown(kvm, o->uid, o->gid) < 0)
		return -errno;
	if (mount(NULL, dev, NULL, MS_REMOUNT | MS_NOSUID | MS_NOEXEC | MS_RDONLY, NULL) < 0)
		return -errno;
	return 0;
}

/* The child: namespaces, the root, pivot, then fds, limits and ids. 0 or -errno with err. */
static int jail_child(struct jail *j, const struct jail_options *o, char *err, size_t errlen)
{
	/* The VMM ends with its parent: nobody would be left to report it or remove the mount point. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return errmsg(err, errlen, -errno, "PR_SET_PDEATHSIG: %s", strerror(errno));
	/* Everything inherited but the console goes: the VMM opens what it needs itself. */
	if (syscall(SYS_close_range, 3, ~0U, 0) < 0)
		return errmsg(err, errlen, -errno, "close_range: %s", strerror(errno));
	if (unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET) < 0)
		return errmsg(err, errlen, -errno, "unshare: %s", strerror(errno));
	if (sethostname("ringvm", 6) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", j->root, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=1m") < 0)
		return errmsg(err, errlen, -errno, "the jail's root: %s", strerror(errno));
	for (unsigned int i = 0; i < j->n; i++) {
		int ret = jail_bind(j, &j->p[i]);
		if (ret)
			return errmsg(err, errlen, ret, "%s: %s", j->p[i].path, strerror(-ret));
	}
	int ret = jail_dev(j, o);
	if (ret)
		return errmsg(err, errlen, ret, "the jail's /dev (kvm, null): %s", strerror(-ret));
	char proc[96], old[96], cwd[PATH_MAX + 64];
	snprintf(proc, sizeof(proc), "%s/proc", j->root);
	snprintf(old, sizeof(old), "%s/.old", j->root);
	snprintf(cwd, sizeof(cwd), "%s%s/", j->root, j->cwd);
	/* The working directory, for relative paths: plain directories where no bind made it. */
	if (jail_mkparents(cwd) || mkdir(proc, 0555) < 0 ||
	    mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0 ||
	    mkdir(old, 0700) < 0 || syscall(SYS_pivot_root, j->root, old) < 0 || chdir("/") < 0 ||
	    umount2("/.old", MNT_DETACH) < 0 || rmdir("/.old") < 0 ||
	    mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0 ||
	    chdir(j->cwd) < 0)
		return errmsg(err, errlen, -errno, "pivot into the jail: %s", strerror(errno));
	struct rlimit core = { 0, 0 };
	if (setrlimit(RLIMIT_CORE, &core) < 0)
		return errmsg(err, errlen, -errno, "RLIMIT_CORE: %s", strerror(errno));
	if (o->drop_ids) {
		uid_t r, e, s;
		if (setgroups(0, NULL) < 0 || setresgid(o->gid, o->gid, o->gid) < 0 ||
		    setresuid(o->uid, o->uid, o->uid) < 0 || getresuid(&r, &e, &s) < 0 ||
		    r != o->uid || e != o->uid || s != o->uid)
			return errmsg(err, errlen, -EPERM, "dropping to uid %u gid %u: %s",
					 (unsigned int)o->uid, (unsigned int)o->gid, strerror(errno));
	}
	return 0;
}

/* The parent: pass the stop signals and SIGUSR2 on, wait, say how the child ended. */
static int jail_wait(pid_t child, const sigset_t *sigs)
{
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(sigs, &si);
		if (sig < 0)
			continue; /* EINTR */
		if (sig != SIGCHLD) {
			kill(child, sig);
			continue;
		}
		int st;
		pid_t p = waitpid(child, &st, WNOHANG);
		if (p == child)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}
}

int jail_enter(const struct ringvm_config *cfg, const struct jail_options *o, int *status,
	       char *err, size_t errlen)
{
	static struct jail j; /* 256 KiB of paths: not on the stack */
	memset(&j, 0, sizeof(j));
	if (geteuid() != 0)
		return errmsg(err, errlen, -EPERM,
				 "needs root (it makes namespaces and mounts; --uid/--gid drop after)");
	if (!getcwd(j.cwd, sizeof(j.cwd)))
		return errmsg(err, errlen, -errno, "getcwd: %s", strerror(errno));
	int ret = jail_collect(&j, cfg, err, errlen);
	if (ret)
		return ret;
	snprintf(j.root, sizeof(j.root), "/tmp/ringvm-jail-XXXXXX");
	if (!mkdtemp(j.root))
		return errmsg(err, errlen, -errno, "mkdtemp: %s", strerror(errno));
	sigset_t sigs, old;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGUSR2); /* the state report: the jailed VMM writes it */
	sigaddset(&sigs, SIGCHLD);
	/* Blocked before the fork: a stop signal the child gets before ringvm_run takes it stays
	   pending (PID 1 would drop it otherwise) until ringvm_run's signalfd reads it. */
	sigprocmask(SIG_BLOCK, &sigs, &old);
	/*
	 * A fork into a new PID namespace. Not unshare(CLONE_NEWPID) + fork(): that would leave this
	 * process's own next children (the sanitizer's leak checker at exit) in the child's namespace,
	 * dead by then. The process has one thread: the raw clone is a fork.
	 */
	fflush(NULL);
	pid_t child = (pid_t)syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, NULL, NULL, NULL, 0);
	if (child < 0) {
		ret = errmsg(err, errlen, -errno, "clone(CLONE_NEWPID): %s", strerror(errno));
		goto fail;
	}
	if (child == 0) {
		sigset_t chld;
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		sigprocmask(SIG_UNBLOCK, &chld, NULL);
		return jail_child(&j, o, err, errlen);
	}
	/* The parent writes nothing on stdout: its copy would keep a reader of the command's stdout
	   (ringvm's streams) from seeing EOF when the command closes it. */
	int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null_fd >= 0) {
		(void)dup2(null_fd, STDOUT_FILENO);
		close(null_fd);
	}
	*status = jail_wait(child, &sigs);
	rmdir(j.root);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return 1;
fail:
	rmdir(j.root);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ret;
}
