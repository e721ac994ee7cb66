/* test_stdio.c: PID 1's wait loop with pipes for ports: the command's output, status and forwarded signals. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest/stdio.h"
#include "tests/unit/tap.h"

static void on_term(int sig)
{
	(void)sig;
	static const char msg[] = "got TERM\n";
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(9);
	_exit(7);
}

/*
 * Run one "command" (the body: its own process group, fds 0-2 on the relay's pipes) under
 * stdio_run, with `sig` already written to the signal port. Returns its status; *out gets what
 * reached the stdout port.
 */
static int run_command(bool trap, const unsigned char *sig, size_t nsig, char *out, size_t outlen)
{
	int in[2], o[2], e[2], s[2];
	struct stdio_relay r;
	sigset_t chld;

	if (pipe2(in, O_NONBLOCK | O_CLOEXEC) || pipe2(o, O_NONBLOCK | O_CLOEXEC) ||
	    pipe2(e, O_NONBLOCK | O_CLOEXEC) || pipe2(s, O_NONBLOCK | O_CLOEXEC))
		return -1;
	const int ports[4] = { in[0], o[1], e[1], s[0] };
	if (stdio_wire(&r, ports))
		return -1;
	close(in[1]); /* the host's stdin: empty */
	if (write(s[1], sig, nsig) != (ssize_t)nsig)
		return -1;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	/* The child takes these once its fds and dispositions are in place: blocked, a signal sent
	   earlier waits instead of meeting a disposition inherited from whoever started this test. */
	sigaddset(&chld, SIGTERM);
	sigaddset(&chld, SIGHUP);
	sigaddset(&chld, SIGINT);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	/* Installed before the fork: the signal may come before the child's first instruction. */
	signal(SIGTERM, trap ? on_term : SIG_DFL);
	pid_t child = fork();
	if (child == 0) {
		setpgid(0, 0);
		/* A command starts with default dispositions, as under the guest's PID 1; this test may
		   not (nohup ignores SIGHUP, a background job SIGINT), and an ignored signal never ends it. */
		signal(SIGHUP, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		for (int i = 0; i < 3; i++)
			dup2(r.child_fds[i], i);
		sigprocmask(SIG_UNBLOCK, &chld, NULL);
		for (;;)
			pause();
	}
	signal(SIGTERM, SIG_DFL);
	setpgid(child, child);
	int status = stdio_run(&r, child, NULL);
	sigprocmask(SIG_UNBLOCK, &chld, NULL);
	ssize_t n = read(o[0], out, outlen - 1);
	out[n > 0 ? n : 0] = '\0';
	TAP_CHECK(r.signal_fd == -1, "the signal port is closed once the command ended");
	close(o[0]);
	close(e[0]);
	close(s[1]);
	return status;
}

int main(void)
{
	char out[256];

	/* A hang here (a signal that never arrives) is a failure: the alarm ends the test. */
	alarm(30);
	const unsigned char term[] = { 9, 19, 0, 255, SIGTERM };
	int st = run_command(true, term, sizeof(term), out, sizeof(out));
	TAP_CHECK(st == 7 && strcmp(out, "got TERM\n") == 0,
		  "a forwarded SIGTERM reaches the command's handler; its output and exit 7 come back "
		  "(bytes 9, 19, 0, 255 before it dropped)");
	const unsigned char hup[] = { SIGHUP };
	st = run_command(false, hup, 1, out, sizeof(out));
	TAP_CHECK(st == 128 + SIGHUP && out[0] == '\0',
		  "a forwarded SIGHUP kills a command that does not handle it: status 129");
	return tap_done();
}
