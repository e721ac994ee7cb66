/* test_relay.c: PID 1's stream relay between pipes: bytes, EOF, a reader going away, the end. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest/relay.h"
#include "tests/unit/tap.h"

/*
 * A relay in a child process: one stream from `src` to `dst` (both made non-blocking), polled
 * until it is done. When `finish_fd` becomes readable the stream is told the command ended. The
 * child exits 0 once the stream is done.
 */
static bool with_splice; /* the relay tries splice(2) first, as PID 1's output streams do */

static pid_t run_relay(int src, int dst, int finish_fd, bool output, int *close_in_child, int nclose)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	for (int i = 0; i < nclose; i++)
		close(close_in_child[i]);
	fcntl(src, F_SETFL, O_NONBLOCK);
	fcntl(dst, F_SETFL, O_NONBLOCK);
	struct relay_stream *s = malloc(sizeof(*s));
	relay_init(s, src, dst);
	if (with_splice)
		relay_use_splice(s);
	while (!relay_done(s)) {
		struct pollfd p[3];
		relay_events(s, p);
		p[2] = (struct pollfd){ finish_fd, POLLIN, 0 };
		if (poll(p, 3, 10000) <= 0)
			_exit(3); /* a hang: nothing moved for 10 s */
		if (finish_fd >= 0 && (p[2].revents & POLLIN)) {
			relay_finish(s, output);
			finish_fd = -1;
		}
		relay_step(s, p);
	}
	_exit(0);
}

static int wait_exit(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static void test_copy_and_eof(void)
{
	int a[2], b[2];
	static unsigned char want[3 << 20], got[3 << 20];

	TAP_CHECK(pipe(a) == 0 && pipe(b) == 0, "two pipes");
	int close_in_child[] = { a[1], b[0] };
	pid_t pid = run_relay(a[0], b[1], -1, true, close_in_child, 2);
	close(a[0]);
	close(b[1]);
	for (size_t i = 0; i < sizeof(want); i++)
		want[i] = (unsigned char)(i * 7 + (i >> 12));
	pid_t writer = fork();
	if (writer == 0) {
		close(b[0]);
		_exit(write(a[1], want, sizeof(want)) == (ssize_t)sizeof(want) ? 0 : 1);
	}
	close(a[1]); /* the writer's copy is the last: its exit is the source's EOF */
	size_t n = 0;
	ssize_t r;
	while ((r = read(b[0], got + n, sizeof(got) - n)) > 0)
		n += (size_t)r;
	TAP_CHECK(n == sizeof(want) && memcmp(got, want, n) == 0,
		  "3 MiB pass byte-exact through the relay");
	TAP_CHECK(r == 0, "the source's EOF becomes EOF on the destination");
	TAP_CHECK(wait_exit(pid) == 0 && wait_exit(writer) == 0, "the relay ends once both ends are closed");
	close(b[0]);
}

static void test_reader_gone(void)
{
	int a[2], b[2];
	char buf[65536];

	TAP_CHECK(pipe(a) == 0 && pipe(b) == 0, "two pipes");
	int close_in_child[] = { a[1], b[0] };
	pid_t pid = run_relay(a[0], b[1], -1, true, close_in_child, 2);
	close(a[0]);
	close(b[1]);
	TAP_CHECK(write(a[1], "first\n", 6) == 6 && read(b[0], buf, 6) == 6, "a line goes through");
	close(b[0]); /* the destination's reader goes away, like `| head -1` */
	memset(buf, 'y', sizeof(buf));
	/* The writer keeps writing, as `yes` does: EPIPE must come, not a hang. */
	ssize_t w;
	int tries = 0;
	do
		w = write(a[1], buf, sizeof(buf));
	while (w > 0 && ++tries < 1000);
	TAP_CHECK(w < 0 && errno == EPIPE,
		  "the source's writer gets EPIPE once the destination's reader went away");
	TAP_CHECK(wait_exit(pid) == 0, "and the relay has closed both ends");
	close(a[1]);
}

static void test_finish(void)
{
	int a[2], b[2], fin[2];
	static char buf[100000], got[200000];

	TAP_CHECK(pipe(a) == 0 && pipe(b) == 0 && pipe(fin) == 0, "three pipes");
	/* A large pipe: the command's last 50000 bytes are all in it when it ends. */
	fcntl(a[1], F_SETPIPE_SZ, 1 << 20);
	int close_in_child[] = { a[1], b[0], fin[1] };
	memset(buf, 'z', sizeof(buf));
	TAP_CHECK(write(a[1], buf, 50000) == 50000, "the command leaves 50000 bytes in its pipe");
	pid_t pid = run_relay(a[0], b[1], fin[0], true, close_in_child, 3);
	close(a[0]);
	close(b[1]);
	close(fin[0]);
	/* The command ended; a daemon it left keeps the pipe's write end (a[1]) open. */
	TAP_CHECK(write(fin[1], "x", 1) == 1, "the command ends");
	size_t n = 0;
	ssize_t r;
	while ((r = read(b[0], got + n, sizeof(got) - n)) > 0)
		n += (size_t)r;
	TAP_CHECK(n == 50000 && r == 0,
		  "what was in the pipe is handed over, then EOF, though a writer still holds the pipe");
	TAP_CHECK(wait_exit(pid) == 0, "the relay ends");
	close(a[1]);
	close(b[0]);
	close(fin[1]);

	/* An input stream at the end: closed at once, whatever it held. */
	TAP_CHECK(pipe(a) == 0 && pipe(b) == 0 && pipe(fin) == 0, "three pipes");
	int close2[] = { a[1], b[0], fin[1] };
	pid = run_relay(a[0], b[1], fin[0], false, close2, 3);
	close(a[0]);
	close(b[1]);
	close(fin[0]);
	TAP_CHECK(write(fin[1], "x", 1) == 1, "the command ends while its stdin is still open");
	TAP_CHECK(read(b[0], got, 1) == 0 && wait_exit(pid) == 0,
		  "the input stream closes at once (EOF to whatever still reads it)");
	close(a[1]);
	close(b[0]);
	close(fin[1]);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN); /* the test's own writer checks for EPIPE */
	for (int pass = 0; pass < 2; pass++) {
		with_splice = pass == 1;
		printf("# %s\n", with_splice ? "splice, then read and write" : "read and write");
		test_copy_and_eof();
		test_reader_gone();
		test_finish();
	}
	return tap_done();
}
