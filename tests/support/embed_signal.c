/*
 * embed_signal.c: an embedder of libringvm that forwards its own signals with ringvm_signal(), as a
 * runtime that leaves handle_signals off does (tests/integration/streams.sh).
 *
 *   embed_signal KERNEL INITRD STOP_TIMEOUT_MS COMMAND [ARG...]
 *
 * The command's streams are this program's; SIGINT, SIGTERM and SIGHUP are blocked on every thread
 * and taken by a forwarding thread with sigwait(), which hands each to ringvm_signal() and says
 * "embed_signal: ringvm_signal(N) = R" on stderr. Exits with the CLI's status for the result.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/ringvm.h"

static sigset_t forwarded;

/* Until the process exits: every forwarded signal goes to the VM, from this thread. */
static void *forward_thread(void *arg)
{
	struct ringvm *vm = arg;

	for (;;) {
		int sig;

		if (sigwait(&forwarded, &sig) != 0)
			return NULL;
		fprintf(stderr, "embed_signal: ringvm_signal(%d) = %d\n", sig, ringvm_signal(vm, sig));
	}
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: %s KERNEL INITRD STOP_TIMEOUT_MS COMMAND [ARG...]\n", argv[0]);
		return 2;
	}
	struct ringvm_config cfg;
	ringvm_config_init(&cfg);
	cfg.kernel = argv[1];
	cfg.initrd = argv[2];
	cfg.stop_timeout_ms = (unsigned int)strtoul(argv[3], NULL, 10);
	cfg.argv = (const char *const *)(argv + 4);
	cfg.argc = (unsigned int)(argc - 4);
	cfg.console.tty = RINGVM_TTY_OFF;
	cfg.handle_signals = false; /* ours: this program forwards them itself */
	cfg.seccomp = false;	    /* the forwarding thread is not one of ringvm's */

	sigemptyset(&forwarded);
	sigaddset(&forwarded, SIGINT);
	sigaddset(&forwarded, SIGTERM);
	sigaddset(&forwarded, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &forwarded, NULL); /* before any thread: all inherit it */

	char err[RINGVM_ERR_MAX];
	struct ringvm *vm;
	int ret = ringvm_create(&cfg, &vm, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "embed_signal: %s\n", err);
		return RINGVM_EXIT_ERROR;
	}
	pthread_t t;
	if ((ret = pthread_create(&t, NULL, forward_thread, vm)) != 0) {
		fprintf(stderr, "embed_signal: pthread_create: %s\n", strerror(ret));
		ringvm_destroy(vm);
		return RINGVM_EXIT_ERROR;
	}
	struct ringvm_result res;
	ret = ringvm_run(vm, &res, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "embed_signal: %s\n", err);
		return RINGVM_EXIT_ERROR; /* the forwarding thread still uses vm: exit without freeing */
	}
	fprintf(stderr, "embed_signal: %s, status %d\n", res.message, res.status);
	return ringvm_exit_code(&res); /* likewise */
}
