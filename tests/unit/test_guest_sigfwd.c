/* test_sigfwd.c: the signal port's byte codec, and PID 1's delivery to a real process group. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest/sigfwd.h"
#include "tests/unit/tap.h"

static void on_term(int sig)
{
	(void)sig;
}

/*
 * A child leading its own process group, with a grandchild in the same group. The child survives
 * SIGTERM (a handler), the grandchild does not (default action); the child waits for it, writes
 * the number of the signal that ended it on *report, and waits to be ended by the next signal.
 * Returns the child's pid once both are in place.
 */
static pid_t group_start(int *report)
{
	int ready[2];

	if (pipe(ready) < 0)
		return -1;
	pid_t child = fork();
	if (child == 0) {
		setpgid(0, 0);
		/*
		 * Whoever started the test may have left SIGINT ignored (a shell does for a job it runs in
		 * the background), and an ignored signal stays ignored across fork and exec: the group
		 * takes the defaults, or the SIGINT check below waits forever.
		 */
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGTERM, on_term);
		pid_t grand = fork();
		if (grand == 0) {
			signal(SIGTERM, SIG_DFL);
			if (write(ready[1], "g", 1) != 1)
				_exit(98);
			for (;;)
				pause();
		}
		int st;
		while (waitpid(grand, &st, 0) < 0 && errno == EINTR) {
		}
		char sig = WIFSIGNALED(st) ? (char)WTERMSIG(st) : 0;
		if (write(ready[1], &sig, 1) != 1)
			_exit(98);
		for (;;)
			pause();
	}
	char c;
	close(ready[1]);
	if (child > 0 && read(ready[0], &c, 1) != 1)
		child = -1;
	setpgid(child, child); /* whichever runs first: the group exists before we signal it */
	*report = ready[0];
	return child;
}

int main(void)
{
	/* A group member that never ends must fail the test, not hang it (alarm: not inherited by fork). */
	alarm(120);
	/* The codec: the three forwarded signals round-trip; nothing else is a byte, no byte is else. */
	int bad_bytes = 0;
	for (int b = 0; b < 256; b++) {
		int sig = sigfwd_decode((unsigned char)b);
		if (sig >= 0 && sig != SIGHUP && sig != SIGINT && sig != SIGTERM)
			bad_bytes++;
		if (sig >= 0 && sigfwd_encode(sig) != b)
			bad_bytes++;
	}
	TAP_CHECK(bad_bytes == 0, "every byte decodes to SIGHUP, SIGINT, SIGTERM or nothing, and back");
	TAP_CHECK(sigfwd_encode(SIGHUP) == 1 && sigfwd_encode(SIGINT) == 2 && sigfwd_encode(SIGTERM) == 15,
		  "SIGHUP, SIGINT, SIGTERM are the bytes 1, 2, 15");
	TAP_CHECK(sigfwd_encode(SIGKILL) == -EINVAL && sigfwd_encode(SIGSTOP) == -EINVAL &&
			  sigfwd_encode(0) == -EINVAL && sigfwd_encode(-1) == -EINVAL &&
			  sigfwd_encode(256 + SIGTERM) == -EINVAL && sigfwd_encode(SIGQUIT) == -EINVAL,
		  "SIGKILL, SIGSTOP, 0, -1, 271, SIGQUIT are not forwarded");
	TAP_CHECK(sigfwd_decode(SIGKILL) == -EINVAL && sigfwd_decode(SIGSTOP) == -EINVAL &&
			  sigfwd_decode(0) == -EINVAL && sigfwd_decode(255) == -EINVAL,
		  "bytes 9, 19, 0, 255 stand for no signal");

	int p[2];
	if (pipe2(p, O_NONBLOCK | O_CLOEXEC) < 0)
		return 1;
	TAP_CHECK(sigfwd_deliver(p[0], 12345) == 0, "nothing to read: 0 signals, no error");

	/* A group: SIGTERM reaches both members; SIGKILL and SIGSTOP bytes are dropped. */
	int report = -1;
	pid_t child = group_start(&report);
	TAP_CHECK(child > 0, "a process group of two");
	const unsigned char term[] = { SIGKILL, SIGSTOP, 0, SIGTERM };
	TAP_CHECK(write(p[1], term, sizeof(term)) == (ssize_t)sizeof(term), "bytes written");
	TAP_CHECK(sigfwd_deliver(p[0], child) == 1, "one signal sent out of four bytes");
	char got = 0;
	TAP_CHECK(read(report, &got, 1) == 1 && got == SIGTERM,
		  "SIGTERM reached the other member of the group: it ended by it");
	close(report);
	int st = 0;
	pid_t w = waitpid(child, &st, WNOHANG | WUNTRACED);
	TAP_CHECK(w == 0, "the group leader, which handles SIGTERM, runs on (neither killed nor stopped)");
	const unsigned char intr[] = { SIGINT };
	TAP_CHECK(write(p[1], intr, 1) == 1 && sigfwd_deliver(p[0], child) == 1, "SIGINT sent");
	while ((w = waitpid(child, &st, 0)) < 0 && errno == EINTR) {
	}
	TAP_CHECK(w == child && WIFSIGNALED(st) && WTERMSIG(st) == SIGINT,
		  "SIGINT ended the leader (not SIGKILL)");

	/* A group that is gone: not an error. */
	TAP_CHECK(write(p[1], intr, 1) == 1 && sigfwd_deliver(p[0], child) == 0,
		  "a group that no longer exists: 0 sent, no error");

	/* pgrp 0 would be our own group: never signalled (checked in a child of its own group). */
	pid_t guard = fork();
	if (guard == 0) {
		setpgid(0, 0);
		const unsigned char t[] = { SIGTERM };
		if (write(p[1], t, 1) != 1)
			_exit(2);
		_exit(sigfwd_deliver(p[0], 0) == 0 ? 0 : 3);
	}
	while ((w = waitpid(guard, &st, 0)) < 0 && errno == EINTR) {
	}
	TAP_CHECK(w == guard && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "group 0 (the caller's own) is never signalled");

	close(p[1]);
	TAP_CHECK(sigfwd_deliver(p[0], 12345) == -EPIPE, "EOF: -EPIPE");
	close(p[0]);
	TAP_CHECK(sigfwd_deliver(p[0], 12345) == -EBADF, "a read error is returned");
	return tap_done();
}
