/* test_seccomp.c: each role's filter lets its own calls through and kills on anything else. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <liburing.h>
#include <linux/kvm.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "tests/unit/tap.h"
#include "vmm/seccomp.h"

/*
 * Each check forks a child that confines itself to a role (SECCOMP_MODE_KILL) and runs one function:
 * an allowed call must return (the child exits 0, or the function's own non-zero code when the call
 * failed), a forbidden one must end the child with SIGSYS. What the functions touch is made before
 * the fork, or in the child before it confines itself, as ringvm makes it before confining: a pipe,
 * a socket pair, a listening socket, a scratch directory, an io_uring.
 */
static int pipe_fds[2], pair[2], listen_fd = -1, dir_fd = -1;
static struct io_uring ring;
static char dir[] = "/tmp/ringvm-seccomp-XXXXXX";

/* Run fn in a child confined to role (unlink_dirfd = dir_fd for SERVE); its wait status. */
static int confined_mode(enum seccomp_mode mode, enum seccomp_role role, int (*fn)(void))
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		/* A ring of its own: a ring's indices live in the process that uses it, and the parent
		   never submits on it. */
		struct seccomp_confinement c = { mode, role, dir_fd };
		if (io_uring_queue_init(8, &ring, 0) != 0 || seccomp_confine(&c) != 0)
			_exit(100);
		_exit(fn());
	}
	int status = 0;
	waitpid(pid, &status, 0);
	return status;
}

static int confined(enum seccomp_role role, int (*fn)(void))
{
	return confined_mode(SECCOMP_MODE_KILL, role, fn);
}

static bool ran(int st)
{
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static bool killed(int st)
{
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS;
}

/* ---- calls every role makes ---- */

static int common_calls(void)
{
	void *big = malloc(4 << 20); /* mmap */
	struct timespec ts = { 0, 1000 };
	if (!big || write(STDOUT_FILENO, "", 0) != 0 || nanosleep(&ts, NULL) != 0)
		return 1;
	free(big); /* munmap */
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	sigset_t set;
	sigemptyset(&set);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0 || syscall(SYS_gettid) <= 0)
		return 2;
	struct rlimit rl;
	return getrlimit(RLIMIT_NOFILE, &rl) == 0 ? 0 : 3;
}

/* ---- calls no role may make ---- */

static int make_socket(void)
{
	return socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 0 : 3;
}

static int run_exec(void)
{
	char *argv[] = { "/bin/true", NULL };
	execv("/bin/true", argv);
	return 4;
}

static int new_ring(void)
{
	struct io_uring r;
	return io_uring_queue_init(4, &r, 0) == 0 ? 0 : 5;
}

static int register_files(void)
{
	int fds[1] = { pipe_fds[0] };
	return io_uring_register_files(&ring, fds, 1) == 0 ? 0 : 6;
}

static void *nothing(void *arg)
{
	return arg;
}

static int new_thread(void)
{
	pthread_t t;
	return pthread_create(&t, NULL, nothing, NULL) == 0 ? 0 : 7;
}

/* clone3 is answered ENOSYS (glibc then falls back to clone, which kills). */
static int raw_clone3(void)
{
	return syscall(SYS_clone3, NULL, 0) == -1 && errno == ENOSYS ? 0 : 8;
}

static int map_exec(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p != MAP_FAILED ? 0 : 9;
}

static int signal_init(void)
{
	return syscall(SYS_tgkill, 1, 1, 0) == 0 ? 0 : 10; /* signal 0 to PID 1: another process */
}

static int raise_limit(void)
{
	struct rlimit rl = { 64, 64 };
	return setrlimit(RLIMIT_NOFILE, &rl) == 0 ? 0 : 11;
}

static int unshare_net(void)
{
	return unshare(CLONE_NEWNET) == 0 ? 0 : 12;
}

static int open_file(void)
{
	int fd = openat(AT_FDCWD, "/proc/self/status", O_RDONLY);
	return fd >= 0 && close(fd) == 0 ? 0 : 13;
}

/* Roles that open nothing: refused with EACCES (glibc's malloc tries one file, and copes). */
static int open_refused(void)
{
	int fd = openat(AT_FDCWD, "/proc/self/status", O_RDONLY);
	return fd < 0 && errno == EACCES ? 0 : 14;
}

/* ---- calls of one role or a few ---- */

static int wait_and_read(void) /* control, serve: poll on eventfds/signalfd, read them */
{
	char c;
	struct pollfd p = { pipe_fds[0], POLLIN, 0 };
	if (write(pipe_fds[1], "x", 1) != 1 || poll(&p, 1, 1000) != 1 || read(pipe_fds[0], &c, 1) != 1)
		return 20;
	return 0;
}

static int terminal_ioctl(void) /* control: the console */
{
	struct termios t;
	(void)tcgetattr(STDIN_FILENO, &t); /* TCGETS (ENOTTY is fine: the call returned) */
	return 0;
}

static int other_ioctl(void)
{
	int n; /* FIONREAD is harmless, but no role lists it */
	return ioctl(STDIN_FILENO, FIONREAD, &n) == 0 ? 0 : 21;
}

static int kvm_run(void) /* vcpu: KVM_RUN, here on a pipe (ENOTTY: the call was let through) */
{
	return ioctl(pipe_fds[0], KVM_RUN, 0) < 0 && errno == ENOTTY ? 0 : 22;
}

static int kvm_create_vm(void)
{
	return ioctl(pipe_fds[0], KVM_CREATE_VM, 0) < 0 ? 0 : 23;
}

static int close_fd(void) /* control, vcpu (a share's reset), worker-fs, serve, worker-console */
{
	return close(pipe_fds[1]) == 0 ? 0 : 24;
}

static int read_fd(void)
{
	char c;
	return write(pipe_fds[1], "y", 1) == 1 && read(pipe_fds[0], &c, 1) == 1 ? 0 : 25;
}

static int ring_nop(void) /* workers: their io_uring, made before confinement */
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct io_uring_cqe *cqe;
	if (!sqe)
		return 26;
	io_uring_prep_nop(sqe);
	if (io_uring_submit_and_wait(&ring, 1) != 1 || io_uring_peek_cqe(&ring, &cqe) != 0)
		return 27;
	io_uring_cqe_seen(&ring, cqe);
	return 0;
}

static int stat_path(void) /* worker-fs: by name; control and serve: fstat only */
{
	struct stat st;
	return fstatat(AT_FDCWD, "/", &st, 0) == 0 ? 0 : 28;
}

static int stat_fd(void)
{
	struct stat st;
	return fstat(pipe_fds[0], &st) == 0 ? 0 : 29;
}

static int fs_calls(void) /* worker-fs: a file's life under the share */
{
	int fd = openat(dir_fd, "f", O_CREAT | O_RDWR | O_CLOEXEC, 0600);
	struct stat st;
	char buf[4096];
	if (fd < 0 || fchmod(fd, 0640) != 0 || fstat(fd, &st) != 0 || ftruncate(fd, 10) != 0 ||
	    fsync(fd) != 0 || close(fd) != 0)
		return 30;
	int d = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int fl = d >= 0 ? fcntl(d, F_GETFL) : -1;
	if (fl < 0 || fcntl(d, F_SETFL, fl) != 0 || syscall(SYS_getdents64, d, buf, sizeof(buf)) <= 0 ||
	    close(d) != 0)
		return 31;
	if (mkdirat(dir_fd, "d", 0700) != 0 || syscall(SYS_renameat2, dir_fd, "d", dir_fd, "e", 0) != 0 ||
	    unlinkat(dir_fd, "e", AT_REMOVEDIR) != 0 || unlinkat(dir_fd, "f", 0) != 0)
		return 32;
	if (syscall(SYS_setfsuid, -1) < 0 || syscall(SYS_setfsgid, -1) < 0)
		return 33;
	umask(0);
	return 0;
}

static int fcntl_setfd(void)
{
	return fcntl(pipe_fds[0], F_SETFD, FD_CLOEXEC) == 0 ? 0 : 34;
}

static int set_groups(void)
{
	return syscall(SYS_setgroups, 0, NULL) == 0 ? 0 : 35;
}

static int unshare_fs(void)
{
	return unshare(CLONE_FS) == 0 ? 0 : 36;
}

static int socket_messages(void) /* serve: the front-end's messages */
{
	char c = 'x';
	struct iovec iov = { &c, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (sendmsg(pair[0], &mh, 0) != 1 || recvmsg(pair[1], &mh, 0) != 1)
		return 40;
	/* The next front-end (none is waiting: EAGAIN, but the call went through). */
	return accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC) < 0 && errno == EAGAIN ? 0 : 41;
}

static int unlink_in_socket_dir(void) /* serve: the socket file at exit */
{
	return unlinkat(dir_fd, "sock", 0) == 0 ? 0 : 42;
}

static int unlink_elsewhere(void)
{
	char path[64];
	snprintf(path, sizeof(path), "%s/other", dir);
	return unlinkat(AT_FDCWD, path, 0) == 0 ? 0 : 43;
}

/* A request on a pipe: ENOTTY means the filter let the ioctl through. */
static bool ioctls_pass(const unsigned long *reqs, size_t n)
{
	char arg[8192] = { 0 }; /* larger than any of these requests' structures */
	for (size_t i = 0; i < n; i++)
		if (ioctl(pipe_fds[0], reqs[i], arg) == 0 || errno != ENOTTY)
			return false;
	return true;
}

static int vcpu_state_ioctls(void) /* gdb: a parked vCPU's registers, the debug controls */
{
	static const unsigned long reqs[] = { KVM_GET_REGS,  KVM_SET_REGS, KVM_GET_SREGS,
					      KVM_SET_SREGS, KVM_GET_FPU,  KVM_SET_FPU,
					      KVM_SET_GUEST_DEBUG };
	return ioctls_pass(reqs, sizeof(reqs) / sizeof(reqs[0])) ? 0 : 50;
}

static int reinject_ioctls(void) /* vcpu-gdb: the guest's own #DB/#BP given back */
{
	static const unsigned long reqs[] = { KVM_GET_DEBUGREGS, KVM_SET_DEBUGREGS, KVM_GET_VCPU_EVENTS,
					      KVM_SET_VCPU_EVENTS };
	return ioctls_pass(reqs, sizeof(reqs) / sizeof(reqs[0])) ? 0 : 51;
}

static int report_ioctls(void) /* vcpu: the SIGUSR2 state report, its own state read-only */
{
	static const unsigned long reqs[] = { KVM_GET_MP_STATE, KVM_GET_REGS, KVM_GET_MSRS,
					      KVM_GET_LAPIC, KVM_GET_VCPU_EVENTS };
	return ioctls_pass(reqs, sizeof(reqs) / sizeof(reqs[0])) ? 0 : 55;
}

static int irqchip_ioctl(void) /* control: the state report's PICs and IOAPIC */
{
	static const unsigned long reqs[] = { KVM_GET_IRQCHIP };
	return ioctls_pass(reqs, 1) ? 0 : 56;
}

static int debugger_connection(void) /* gdb: the next debugger, replies, dropping one */
{
	char c;
	/* None is waiting: EAGAIN, but the call went through. */
	if (accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK) >= 0 || errno != EAGAIN)
		return 52;
	if (send(pair[0], "z", 1, MSG_NOSIGNAL) != 1 || read(pair[1], &c, 1) != 1)
		return 53;
	/* Not on the pair, which the parent shares: on the pipe, ENOTSOCK once let through. */
	return shutdown(pipe_fds[0], SHUT_RDWR) < 0 && errno == ENOTSOCK ? 0 : 54;
}

static bool touch(const char *name)
{
	int fd = openat(dir_fd, name, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	return fd >= 0 && close(fd) == 0;
}

/* Each role: what it must be let do, and what kills it. */
struct role_case {
	enum seccomp_role role;
	int (*allowed[6])(void);
	const char *allowed_what;
	int (*killing[8])(void);
	const char *killing_what;
};

static const struct role_case cases[] = {
	{ SECCOMP_ROLE_CONTROL,
	  { wait_and_read, terminal_ioctl, stat_fd, close_fd, open_refused, irqchip_ioctl },
	  "poll, read, TCGETS, fstat, close (openat answers EACCES), KVM_GET_IRQCHIP",
	  { ring_nop, other_ioctl, kvm_create_vm, kvm_run, stat_path, socket_messages },
	  "io_uring_enter, FIONREAD, KVM_CREATE_VM, KVM_RUN, stat by path, sendmsg" },
	{ SECCOMP_ROLE_VCPU,
	  { kvm_run, close_fd, open_refused, report_ioctls },
	  "KVM_RUN, close (openat answers EACCES), the report's KVM_GET_MP_STATE, REGS, MSRS, LAPIC, "
	  "VCPU_EVENTS",
	  { read_fd, ring_nop, kvm_create_vm, terminal_ioctl, wait_and_read, stat_fd, vcpu_state_ioctls,
	    reinject_ioctls },
	  "read, io_uring_enter, KVM_CREATE_VM, TCGETS, poll, fstat, --gdb's KVM_SET_REGS and "
	  "KVM_GET_DEBUGREGS" },
	{ SECCOMP_ROLE_WORKER,
	  { ring_nop, open_refused },
	  "io_uring_enter (openat answers EACCES)",
	  { close_fd, read_fd, terminal_ioctl, stat_fd, stat_path, wait_and_read },
	  "close, read, ioctl, fstat, stat by path, poll" },
	{ SECCOMP_ROLE_WORKER_FS,
	  { ring_nop, fs_calls, stat_path, open_file, close_fd },
	  "io_uring_enter, openat, fstat(at), fchmod, ftruncate, fsync, getdents64, fcntl GETFL/SETFL, "
	  "mkdirat, renameat, unlinkat, setfsuid/gid, umask, close",
	  { fcntl_setfd, set_groups, unshare_fs, terminal_ioctl, socket_messages, wait_and_read },
	  "fcntl F_SETFD, setgroups, unshare(CLONE_FS), ioctl, sendmsg, poll" },
	{ SECCOMP_ROLE_SERVE,
	  { socket_messages, wait_and_read, stat_fd, close_fd, unlink_in_socket_dir, open_refused },
	  "sendmsg, recvmsg, accept4, poll, read, fstat, close, unlinkat in the socket's directory "
	  "(openat answers EACCES)",
	  { terminal_ioctl, ring_nop, stat_path, unlink_elsewhere, kvm_run },
	  "ioctl, io_uring_enter, stat by path, unlinkat elsewhere, KVM_RUN" },
	{ SECCOMP_ROLE_WORKER_CONSOLE,
	  { ring_nop, close_fd, open_refused },
	  "io_uring_enter, close (openat answers EACCES)",
	  { read_fd, wait_and_read, terminal_ioctl, stat_fd, stat_path, socket_messages, kvm_run,
	    unlink_in_socket_dir },
	  "read, poll, ioctl, fstat, stat by path, sendmsg, KVM_RUN, unlinkat" },
	{ SECCOMP_ROLE_VCPU_GDB,
	  { kvm_run, reinject_ioctls, close_fd, open_refused, report_ioctls },
	  "KVM_RUN, KVM_GET/SET_DEBUGREGS, KVM_GET/SET_VCPU_EVENTS, close (openat answers EACCES), "
	  "the report's ioctls",
	  { vcpu_state_ioctls, debugger_connection, read_fd, ring_nop, kvm_create_vm, terminal_ioctl,
	    wait_and_read, stat_fd },
	  "the stub's KVM_GET_REGS .. KVM_SET_GUEST_DEBUG, accept4, read, io_uring_enter, "
	  "KVM_CREATE_VM, TCGETS, poll, fstat" },
	{ SECCOMP_ROLE_GDB,
	  { debugger_connection, wait_and_read, vcpu_state_ioctls, close_fd, unlink_in_socket_dir,
	    open_refused },
	  "accept4, send, shutdown, poll, read, KVM_GET/SET_REGS, SREGS, FPU, KVM_SET_GUEST_DEBUG, "
	  "close, unlinkat in the socket's directory (openat answers EACCES)",
	  { kvm_run, reinject_ioctls, socket_messages, ring_nop, terminal_ioctl, stat_fd,
	    unlink_elsewhere, kvm_create_vm },
	  "KVM_RUN, KVM_GET_DEBUGREGS, sendmsg, io_uring_enter, TCGETS, fstat, unlinkat elsewhere, "
	  "KVM_CREATE_VM" },
};

/* Calls that kill in every role. */
static int (*const never[])(void) = { make_socket, run_exec, new_ring, register_files, new_thread,
				       map_exec, signal_init, raise_limit, unshare_net };

static void check_role(const struct role_case *rc)
{
	const char *name = seccomp_role_name(rc->role);
	bool all = true;
	int st = 0;
	for (int i = 0; i < 6 && rc->allowed[i]; i++) {
		if (rc->allowed[i] == unlink_in_socket_dir && !touch("sock"))
			all = false;
		st = confined(rc->role, rc->allowed[i]);
		all = all && ran(st);
		if (!ran(st))
			printf("# %s: allowed call %d: status 0x%x\n", name, i, st);
	}
	char what[512];
	snprintf(what, sizeof(what), "%s: the common calls, clone3 answered ENOSYS, and %s work", name,
		 rc->allowed_what);
	TAP_CHECK(all && ran(confined(rc->role, common_calls)) && ran(confined(rc->role, raw_clone3)),
		  what);
	all = true;
	for (int i = 0; i < 8 && rc->killing[i]; i++) {
		if (rc->killing[i] == unlink_elsewhere && !touch("other"))
			all = false;
		st = confined(rc->role, rc->killing[i]);
		all = all && killed(st);
		if (!killed(st))
			printf("# %s: forbidden call %d: status 0x%x\n", name, i, st);
	}
	snprintf(what, sizeof(what), "%s: %s kill the process (SIGSYS)", name, rc->killing_what);
	TAP_CHECK(all, what);
	all = true;
	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++) {
		st = confined(rc->role, never[i]);
		all = all && killed(st);
		if (!killed(st))
			printf("# %s: never-allowed call %zu: status 0x%x\n", name, i, st);
	}
	snprintf(what, sizeof(what),
		 "%s: socket, execve, io_uring_setup, io_uring_register, clone (a thread), mmap "
		 "PROT_EXEC, tgkill outside ringvm, setrlimit, unshare(CLONE_NEWNET) kill",
		 name);
	TAP_CHECK(all, what);
}

int main(void)
{
	struct sockaddr_un auto_addr = { .sun_family = AF_UNIX }; /* autobind: an abstract name */
	bool ready = pipe2(pipe_fds, O_CLOEXEC) == 0 &&
		     socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0 &&
		     (listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) >= 0 &&
		     bind(listen_fd, (struct sockaddr *)&auto_addr, sizeof(sa_family_t)) == 0 &&
		     listen(listen_fd, 1) == 0 &&
		     mkdtemp(dir) && (dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0;
	TAP_CHECK(ready, "what a confined thread uses was made beforehand");
	if (!ready)
		return tap_done();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_role(&cases[i]);

	/* The other modes. */
	TAP_CHECK(ran(confined_mode(SECCOMP_MODE_LOG, SECCOMP_ROLE_VCPU, read_fd)),
		  "log mode: a call outside the list is let through (and logged)");
	TAP_CHECK(ran(confined_mode(SECCOMP_MODE_OFF, SECCOMP_ROLE_VCPU, make_socket)),
		  "off: no filter at all");
	struct seccomp_confinement bad = { SECCOMP_MODE_KILL, (enum seccomp_role)SECCOMP_NR_ROLES, -1 };
	TAP_CHECK(seccomp_confine(&bad) == -EINVAL, "an unknown role is refused, nothing installed");
	setenv("RINGVM_SECCOMP", "off", 1);
	TAP_CHECK(seccomp_mode_from_env() == SECCOMP_MODE_OFF, "RINGVM_SECCOMP=off is understood");
	setenv("RINGVM_SECCOMP", "bogus", 1); /* set, so even the sanitizer build means kill */
	TAP_CHECK(seccomp_mode_from_env() == SECCOMP_MODE_KILL, "an unknown RINGVM_SECCOMP means kill");

	unlinkat(dir_fd, "sock", 0);
	unlinkat(dir_fd, "other", 0);
	close(dir_fd);
	rmdir(dir);
	return tap_done();
}
