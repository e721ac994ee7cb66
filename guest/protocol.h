/* protocol.h: the contract between the ringvm VMM and the guest's PID 1 (guest/init.c). */
#ifndef RINGVM_GUEST_PROTOCOL_H
#define RINGVM_GUEST_PROTOCOL_H

/*
 * Kernel command line -> PID 1 (read from /proc/cmdline; dotted names are never passed to init by the
 * kernel, so they cannot collide with init's own argv/envp):
 *
 *   ringvm.cmd=ARG,ARG,...   the command to run. Each ARG is percent-encoded: every byte outside
 *                            [A-Za-z0-9._/:=+@^-] is written %XX (upper-case hex), so ',' ' ' '"'
 *                            and '%' never appear raw. An empty ARG is written as "%". Absent: PID 1
 *                            runs an interactive shell on the console.
 *   ringvm.verbose=1         PID 1 reports what it does (module loads, mounts) on the console.
 *   ringvm.stdin=null        the command's stdin is /dev/null instead of the console: the VMM says so
 *                            when it was asked for a tty (-t) but its stdin is not a terminal.
 *   ringvm.stdio=virtio      the command's stdin, stdout and stderr are the virtio-console ports named
 *                            RINGVM_PORT_STDIN, _STDOUT, _STDERR (found by name in
 *                            /sys/class/virtio-ports/vportNpM/name), not the console. The stdin
 *                            port is the command's fd 0 itself: EOF when the host's stdin ends (an
 *                            empty buffer on the port, and every buffer after it empty too, so
 *                            each later read() returns 0 as on a pipe). PID 1 relays the command's
 *                            stdout and stderr pipes to their ports (guest/stdio.h): EPIPE/SIGPIPE
 *                            when the host's reader goes away (PORT_OPEN 0: POLLHUP).
 *                            After the command ended PID 1 hands over what it left in the pipes and
 *                            closes the ports; the VMM writes out everything queued on them before it
 *                            exits with the status.
 *                            A fourth port, RINGVM_PORT_SIGNAL (host -> guest), carries SIGINT, SIGTERM
 *                            and SIGHUP sent to ringvm, one byte each (guest/sigfwd.h); PID 1 waits on
 *                            it in the same poll() as the streams and sends each to the command's
 *                            process group until the command ends. The VMM stops the guest itself
 *                            when the command has not ended --stop-timeout after the first one.
 *   ringvm.signals=virtio    the command is on the console (a tty), and the device has one port only,
 *                            RINGVM_PORT_SIGNAL: the signals as with ringvm.stdio=virtio.
 *   ringvm.env=NAME=VALUE,...  the command's environment: PID 1's default (PATH, HOME, TERM) with these
 *                            over it (guest/launch.h), in the ringvm.cmd= wire form.
 *   ringvm.cwd=DIR           the command's working directory (absolute; wire form); default "/".
 *   ringvm.user=UID:GID      the command runs as this uid and gid (decimal), no supplementary groups.
 *                            A directory or user that cannot be set ends the run with status 125.
 *   ringvm.mount=TAG,PATH,MODE,TAG,PATH,MODE,...
 *                            virtio-fs shares (--share), in the ringvm.cmd= wire form: a list of
 *                            triples, each field percent-encoded; MODE is "ro" or "rw". PID 1 mounts
 *                            each (mkdir -p PATH; mount -t virtiofs TAG PATH) after switching to the
 *                            root below, in order. A failed mount ends the run with status 125.
 *   ringvm.root=TAG,MODE     boot with virtio-fs TAG as the root filesystem (--root). MODE "ro": PID 1
 *                            mounts it read-only under a tmpfs overlay, so writes stay in the guest;
 *                            "rw": it writes through. PID 1 moves /proc, /sys, /dev into it, makes it
 *                            "/" (MS_MOVE + chroot), mounts a fresh /tmp and /run, then runs the
 *                            command there. Failure ends the run with status 125.
 *
 * PID 1 -> VMM, when the command has ended:
 *   PID 1 waits until the console's output queue is empty (as long as bytes keep leaving it:
 *   guest/drain.h), sync(), then one byte, the exit status (128+N when killed by signal N), written
 *   with `outb` to I/O port RINGVM_EXIT_PORT (PID 1 calls ioperm() first). The VMM stops the guest at
 *   once and exits with that status: every byte the guest wrote to the UART before is already on the
 *   VMM's output (it writes each one out before the vCPU resumes). If the write is impossible (not
 *   under ringvm), PID 1 powers off instead.
 *
 * Console: /dev/console is the 8250 on COM1. For a command, PID 1 puts it in raw mode (no ONLCR, no
 * echo) so the command's bytes reach the host unchanged (when it is the command's terminal).
 */
#define RINGVM_EXIT_PORT 0x5f0
/*
 * PID 1 -> VMM, once, as soon as PID 1 runs (after ioperm): any byte written to RINGVM_BOOT_PORT marks
 * "init reached", which `ringvm run --timing` reports. Harmless to skip.
 */
#define RINGVM_BOOT_PORT 0x5f1
#define RINGVM_CMDLINE_CMD "ringvm.cmd="
#define RINGVM_CMDLINE_VERBOSE "ringvm.verbose="
#define RINGVM_CMDLINE_STDIN "ringvm.stdin="
#define RINGVM_CMDLINE_MOUNT "ringvm.mount="
#define RINGVM_CMDLINE_ROOT "ringvm.root="
#define RINGVM_CMDLINE_STDIO "ringvm.stdio="
#define RINGVM_CMDLINE_ENV "ringvm.env="
#define RINGVM_CMDLINE_CWD "ringvm.cwd="
#define RINGVM_CMDLINE_USER "ringvm.user="
#define RINGVM_CMDLINE_SIGNALS "ringvm.signals="
#define RINGVM_STDIO_VIRTIO "virtio"
#define RINGVM_PORT_STDIN "ringvm.stdin"
#define RINGVM_PORT_STDOUT "ringvm.stdout"
#define RINGVM_PORT_STDERR "ringvm.stderr"
#define RINGVM_PORT_SIGNAL "ringvm.signal"

#endif
