/* test_seccomp.c: after seccomp_install() the listed calls work and anything else kills the process. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <signal.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "tests/unit/tap.h"
#include "vmm/seccomp.h"

/* Run fn in a child under the filter of role; return its wait status. */
static int confined_role(enum seccomp_role role, int (*fn)(void))
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (seccomp_install_role(SECCOMP_MODE_KILL, role) != 0)
			_exit(100);
		_exit(fn());
	}
	int status = 0;
	waitpid(pid, &status, 0);
	return status;
}

static int confined(int (*fn)(void))
{
	return confined_role(SECCOMP_ROLE_VM, fn);
}

/* What the gdb stub does after the filter: accept a debugger, send to it, read a vCPU's registers. */
static int gdb_calls(void)
{
	struct kvm_regs regs;
	if (accept4(STDIN_FILENO, NULL, NULL, SOCK_CLOEXEC) >= 0 || errno == ENOSYS)
		return 7;
	if (send(STDIN_FILENO, "", 0, MSG_NOSIGNAL) >= 0 && errno == ENOSYS)
		return 8;
	return ioctl(STDIN_FILENO, KVM_GET_REGS, &regs) < 0 && errno != ENOSYS ? 0 : 9;
}

static int debug_ioctl(void)
{
	struct kvm_regs regs;
	return ioctl(STDIN_FILENO, KVM_GET_REGS, &regs) == 0 ? 0 : 10;
}

/* A connected pair made before the filter, as ringvm serve's accepted connection is. */
static int pair[2];

static int socket_messages(void)
{
	char c = 'x';
	struct iovec iov = { &c, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (sendmsg(pair[0], &mh, 0) != 1 || recvmsg(pair[1], &mh, 0) != 1)
		return 7;
	return 0;
}

static int terminal_ioctl(void)
{
	struct termios t;
	(void)tcgetattr(STDIN_FILENO, &t); /* TCGETS: the VM's console may, the server may not */
	return 0;
}

static int allowed_calls(void)
{
	int fd = openat(AT_FDCWD, "/proc/self/status", O_RDONLY);
	char buf[64];
	if (fd < 0 || read(fd, buf, sizeof(buf)) <= 0 || close(fd) != 0)
		return 1;
	return write(STDOUT_FILENO, "", 0) == 0 ? 0 : 2;
}

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

static int bad_ioctl(void)
{
	/* FIONREAD is a harmless ioctl, but not one of the listed requests. */
	int n;
	return ioctl(STDIN_FILENO, FIONREAD, &n) == 0 ? 0 : 5;
}

static int unshare_net(void)
{
	return unshare(CLONE_NEWNET) == 0 ? 0 : 6;
}

int main(void)
{
	int st = confined(allowed_calls);
	TAP_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "listed calls (openat, read, close, write) still work");
	st = confined(make_socket);
	TAP_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "socket() kills the process (SIGSYS)");
	st = confined(run_exec);
	TAP_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "execve() kills the process");
	st = confined(bad_ioctl);
	TAP_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "an ioctl outside the list kills the process");
	st = confined(unshare_net);
	TAP_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "unshare other than CLONE_FS kills the process");
	st = confined_role(SECCOMP_ROLE_VM_GDB, gdb_calls);
	TAP_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "with --gdb: accept4, send and the vCPU state ioctls are allowed");
	st = confined(gdb_calls);
	TAP_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "without --gdb: accept4 kills the process");
	st = confined(debug_ioctl);
	TAP_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "without --gdb: KVM_GET_REGS kills the process");
	st = confined_role(SECCOMP_ROLE_VM_GDB, make_socket);
	TAP_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "with --gdb: socket() still kills the process");
	TAP_CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0, "socket pair made before the filter");
	st = confined_role(SECCOMP_ROLE_SERVE, socket_messages);
	TAP_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "serve role: sendmsg/recvmsg on a connection work");
	st = confined(socket_messages);
	TAP_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "VM role: sendmsg/recvmsg kill the process");
	st = confined_role(SECCOMP_ROLE_SERVE, make_socket);
	TAP_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "serve role: socket() still kills");
	st = confined_role(SECCOMP_ROLE_SERVE, run_exec);
	TAP_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "serve role: execve() kills");
	st = confined_role(SECCOMP_ROLE_SERVE, terminal_ioctl);
	TAP_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "serve role: no ioctl at all (TCGETS kills)");
	st = confined(terminal_ioctl);
	TAP_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "VM role: the console's TCGETS is allowed");
	close(pair[0]);
	close(pair[1]);
	setenv("RINGVM_SECCOMP", "off", 1);
	TAP_CHECK(seccomp_mode_from_env() == SECCOMP_MODE_OFF, "RINGVM_SECCOMP=off is understood");
	setenv("RINGVM_SECCOMP", "bogus", 1); /* set, so even the sanitizer build means kill */
	TAP_CHECK(seccomp_mode_from_env() == SECCOMP_MODE_KILL, "an unknown RINGVM_SECCOMP means kill");
	return tap_done();
}
