/* sigfwd.h: signals sent to ringvm, forwarded to the guest command's process group (guest/protocol.h). */
#ifndef RINGVM_GUEST_SIGFWD_H
#define RINGVM_GUEST_SIGFWD_H

#include <sys/types.h>

/*
 * Wire form on the port RINGVM_PORT_SIGNAL (host -> guest): one byte per signal, the signal's
 * number; only SIGHUP (1), SIGINT (2) and SIGTERM (15) are ever sent. Any other byte is ignored by
 * the guest: the port carries nothing else, and a byte PID 1 does not expect must not become a
 * SIGKILL or a SIGSTOP of the command.
 *
 * The codec is pure and linked into both ends (the VMM encodes, PID 1 decodes); sigfwd_deliver is
 * PID 1's, unit-tested on the host with a pipe and a real process group (tests/unit/test_guest_sigfwd.c).
 */

/* The byte for signal sig, or -EINVAL when sig is not one that is forwarded. */
__attribute__((warn_unused_result)) int sigfwd_encode(int sig);

/* The signal a byte stands for, or -EINVAL for a byte that stands for none. */
__attribute__((warn_unused_result)) int sigfwd_decode(unsigned char byte);

/*
 * Read what the non-blocking fd holds now and send each signal it names to process group pgrp
 * (kill(-pgrp, sig)); bytes that decode to nothing are dropped. A group that is already gone
 * (ESRCH) is not an error: the command ended meanwhile. Returns how many signals were sent, -EPIPE
 * when the fd is at EOF (the host side closed; stop watching it), or -errno of the read.
 */
__attribute__((warn_unused_result)) int sigfwd_deliver(int fd, pid_t pgrp);

#endif
