/* console.h: the host side of the guest console: COM1 output to a file descriptor, terminal input. */
#ifndef RINGVM_CONSOLE_H
#define RINGVM_CONSOLE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <termios.h>

#include "arch/x86/uart8250.h"

struct vm;
struct seccomp_confinement;

struct console {
	struct vm *vm;
	struct uart8250 uart;
	int in_fd;  /* host terminal, or -1 when input is not forwarded */
	int out_fd; /* where the guest's console bytes go */
	bool raw;   /* in_fd's termios was changed and must be restored */
	struct termios saved;
	pthread_t input_thread;
	bool input_started;
	bool escape;          /* Ctrl-A seen: the next key is a ringvm command */
	unsigned int panic_match; /* bytes of the panic marker matched so far (vCPU threads, uart lock) */
	atomic_bool panicked;     /* the kernel printed its panic line before pvpanic bound */
	const struct seccomp_confinement *confine; /* the input thread's, from console_start */
};

/*
 * Attach COM1 to the VM. Output goes to out_fd (-1: dropped). When in_fd is a terminal its input is forwarded to
 * the guest: with `raw` (an interactive guest shell) keystrokes go through untouched and Ctrl-A x
 * ends the VM; without it (a command) the terminal stays cooked, so lines are edited on the host and
 * Ctrl-C interrupts ringvm itself. Output processing stays on either way: a command's console is raw
 * in the guest, so the host terminal turns its newlines into CR LF. 0 or -errno.
 */
__attribute__((warn_unused_result)) int console_create(struct console *c, struct vm *vm, int in_fd,
						       int out_fd, bool raw);

/*
 * Start forwarding input: the input thread confines itself with confine (NULL: not confined; it must
 * stay valid until console_destroy) before it reads, and stops the VM if it cannot. Before the
 * caller confines itself (no role may create threads). 0 or -errno.
 */
__attribute__((warn_unused_result)) int console_start(struct console *c,
						      const struct seccomp_confinement *confine);

/* Stop the input thread and restore the terminal. Safe to call more than once. */
void console_destroy(struct console *c);

#endif
