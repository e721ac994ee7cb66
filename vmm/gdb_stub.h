/* gdb_stub.h: --gdb: a gdb remote-protocol server that stops, inspects, changes and steps the vCPUs. */
#ifndef RINGVM_GDB_STUB_H
#define RINGVM_GDB_STUB_H

#include <stdbool.h>
#include <stddef.h>

#include "vmm/seccomp.h"

struct gdb_stub;
struct vcpu;
struct vm;

/*
 * How it runs. One debugger at a time connects to the listening socket; the stub's own thread
 * serves it. The guest is stopped "all-stop": when one vCPU stops (breakpoint, watchpoint, end of
 * a step) or the debugger presses Ctrl-C, every vCPU is kicked out of KVM_RUN and parks in
 * gdb_stub_vcpu_*() on its own thread; the stub thread then reads and writes registers and memory
 * and arms the debug hardware while nothing runs. Each vCPU is a gdb thread (id = index + 1).
 * A step runs the one vCPU being stepped, with interrupts held off when KVM can. When the guest
 * ends, a debugger waiting for it gets an exit packet with ringvm's exit status.
 */

/*
 * Parse addr ("tcp:HOST:PORT", HOST a numeric IPv4 or [IPv6] address, PORT 0 for any free one, or
 * "unix:PATH"; a stale socket at PATH is replaced, any other file refused) and listen on it. With
 * wait, every vCPU parks before its first instruction until a debugger lets it go. Setup time,
 * before seccomp. Returns 0 or -errno with a one-line err.
 */
__attribute__((warn_unused_result)) int gdb_stub_create(struct vm *vm, const char *addr, bool wait,
							struct gdb_stub **out, char *err, size_t errlen);

/* Where it listens, as "tcp:127.0.0.1:1234" or "unix:PATH" (the real port when 0 was asked). */
const char *gdb_stub_address(const struct gdb_stub *s);

/*
 * Start the stub's thread; before the vCPU threads start. The thread confines itself
 * (SECCOMP_ROLE_GDB in mode, vmm/seccomp.h) before it serves anything; returns once it has: 0, or
 * -errno (no thread, or its confinement failed: the thread has ended).
 */
__attribute__((warn_unused_result)) int gdb_stub_start(struct gdb_stub *s, enum seccomp_mode mode);

/*
 * The run is over (vm->stopping is set), before vcpus_stop(): a debugger waiting for the guest
 * hears that it exited with exit_code; parked vCPUs are let go; the thread is joined and touches
 * no vCPU again.
 */
void gdb_stub_finish(struct gdb_stub *s, int exit_code);

/* Close the sockets and remove a Unix socket's path (unless the thread did, confined as it is,
   through the directory's fd). Safe on NULL. */
void gdb_stub_destroy(struct gdb_stub *s);

/* vCPU hooks, called by vmm/vcpu.c on the vCPU's own thread. */
/* Before the first KVM_RUN: parks under --gdb-wait. */
void gdb_stub_vcpu_start(struct gdb_stub *s, struct vcpu *v);
/* KVM_RUN returned EINTR (a kick): parks when the stub asked every vCPU to stop. */
void gdb_stub_vcpu_interrupted(struct gdb_stub *s, struct vcpu *v);
/* KVM_EXIT_DEBUG: report the stop and park, or give a guest's own exception back to it. */
void gdb_stub_vcpu_debug_exit(struct gdb_stub *s, struct vcpu *v);

#endif
