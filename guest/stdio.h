/* stdio.h: PID 1's side of ringvm.stdio=virtio: the stdin port, and the command's output pipes relayed to the ports. */
#ifndef RINGVM_GUEST_STDIO_H
#define RINGVM_GUEST_STDIO_H

#include <stdbool.h>
#include <sys/types.h>

#include "guest/relay.h"

/*
 * guest/protocol.h has the contract. PID 1: stdio_setup() after the modules are loaded (it waits
 * for the ports' names), blocks SIGCHLD, forks; the child dup2()s child_fds onto 0, 1, 2 and execs;
 * PID 1 calls stdio_run(), which relays (guest/relay.h) and reaps until the command has ended and
 * every stream is closed. stdin is the port itself (blocking), not relayed: stdio_wire says why. Signals the host forwards on the signal port (guest/sigfwd.h) go to the
 * command's process group as they arrive, until it ends. When the command ends, what it left in its
 * stdout and stderr pipes is still handed over; the ports are then closed (the VMM's reader sees
 * EOF).
 */
struct stdio_relay {
	int child_fds[3];	  /* the command's ends: the stdin port, stdout's and stderr's pipes'
				     write ends */
	struct relay_stream s[3]; /* PID 1's ends, pipe -> port (s[0], stdin, is done from the start) */
	int signal_fd;		  /* the port RINGVM_PORT_SIGNAL (guest/sigfwd.h), -1 once closed */
};

/*
 * Open the four ports (three streams and the signal port) and make the pipes; without `streams`
 * (the command is on the console, a tty) only the signal port: the streams are then closed from
 * the start and child_fds are -1. Waits up to timeout_ms for the ports; at once -ENODEV when no
 * virtio_console driver is registered. Returns 0, or -errno with everything closed (the caller
 * says why and falls back to the console, or to a wait without signals).
 */
__attribute__((warn_unused_result)) int stdio_setup(struct stdio_relay *r, unsigned int timeout_ms,
						    bool streams);

/*
 * stdio_setup's second half, on the four port fds (non-blocking; the streams' in stdin, stdout,
 * stderr order, then the signal port's): the stdin port made blocking for the command, its output
 * pipes and their relays. Returns 0, or -errno with the pipes closed (the ports stay the caller's).
 * Unit tests pass pipes as ports.
 */
__attribute__((warn_unused_result)) int stdio_wire(struct stdio_relay *r, const int ports[4]);

/*
 * Relay until `child` (the command) has ended and the streams are closed; every other child that
 * ends meanwhile is reaped too. SIGCHLD must be blocked since before the fork (the child unblocks
 * it). on_signal() runs when a handled signal interrupts the wait (PID 1's power requests).
 * Returns the command's status as a shell gives it (128+N when signal N killed it).
 */
int stdio_run(struct stdio_relay *r, pid_t child, void (*on_signal)(void));

/* A wait() status as a shell reports it: the exit code, or 128+N for signal N; -1 for neither. */
int stdio_shell_status(int wait_status);

#endif
