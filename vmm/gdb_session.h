/* gdb_session.h: the gdb stub's state, shared by its run control (gdb_stub.c) and its packets (gdb_cmds.c). */
#ifndef RINGVM_GDB_SESSION_H
#define RINGVM_GDB_SESSION_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "vmm/gdb_arch.h"
#include "vmm/gdb_packet.h"
#include "vmm/seccomp.h"

#define GDB_MAX_SW_POINTS 64 /* software breakpoints inserted at once */
#define GDB_XML_MAX 16384
#define GDB_SIGINT 2
#define GDB_SIGTRAP 5

/* Why the guest stopped, as the stop reply tells it. */
struct gdb_stop {
	bool valid;
	enum gdb_hit kind;
	unsigned int vcpu;
	uint64_t addr; /* WATCH: the watched address */
	enum gdb_point_type watch_type;
};

/* The stub's view of one vCPU. */
struct gdb_vcpu {
	/* Protected by gdb_stub.lock. */
	bool present;     /* its thread has started (thread is valid) */
	bool may_run;     /* false: park at the next chance */
	bool parked;
	pthread_t thread;
	struct gdb_stop pending; /* a watchpoint hit that lost the race to report a stop */
	/* Written by the stub thread while every vCPU is parked; read by the vCPU at a debug exit. */
	bool stepping;
	/* Stub thread only, while the vCPU is parked. */
	struct gdb_arch_regs *regs;
	bool regs_valid;
};

struct gdb_sw_point {
	bool used;
	uint64_t addr; /* linear address gdb gave */
	uint64_t gpa;  /* where the trap instruction went */
	uint8_t saved[GDB_ARCH_SW_BP_LEN];
};

enum gdb_state {
	GDB_NO_CLIENT, /* listening */
	GDB_STOPPED,   /* every vCPU parked: packets are served */
	GDB_RUNNING,   /* the guest runs: waiting for a stop, a Ctrl-C or the end */
};

struct vm;

struct gdb_stub {
	struct vm *vm;
	int listen_fd;
	int conn_fd;  /* -1: no debugger */
	int wake_efd; /* a vCPU reported a stop, or the run is finishing */
	char address[128];
	char unix_path[108]; /* "" for TCP */
	int unix_dir_fd;     /* O_PATH of unix_path's directory, -1 for TCP: the confined thread
				removes the socket file through it (the one unlinkat its role has) */
	const char *unix_name; /* the socket's name in that directory (points into unix_path) */
	bool unix_removed;
	bool wait;
	bool block_irq;
	pthread_t thread;
	bool thread_started;
	struct seccomp_confinement confine; /* the thread's */
	bool confine_done; /* the thread is past its confinement (lock) */
	int confine_err;   /* how it went (lock) */

	pthread_mutex_t lock;
	pthread_cond_t cond; /* parked count changed, or vCPUs may run again */
	struct gdb_vcpu *vcpus;
	unsigned int nr_vcpus;
	unsigned int nr_parked;
	struct gdb_stop stop; /* the event that ended the last run (lock) */
	bool released;        /* the run is over: nobody parks any more (lock) */
	bool finishing;       /* gdb_stub_finish() was called (lock) */
	int exit_code;        /* its argument (lock) */

	/* Stub thread only. */
	enum gdb_state state;
	bool vm_ended;
	struct gdb_rx rx;
	bool no_ack;
	bool broken; /* a send failed or the debugger hung up: drop it at the next safe point */
	bool client_swbreak; /* the debugger understands swbreak/hwbreak stop reasons */
	unsigned int g_vcpu; /* the thread 'g', 'm', ... act on (Hg) */
	unsigned int c_vcpu; /* the thread a plain step steps (Hc) */
	struct gdb_sw_point sw[GDB_MAX_SW_POINTS];
	struct gdb_hw_point hw[GDB_HW_POINTS];
	char last_frame[2 * GDB_PACKET_MAX + 8]; /* for a resend after '-' */
	size_t last_frame_len;
	unsigned int resends;
	char reply[GDB_PACKET_MAX + 1]; /* the reply being built */
	uint8_t scratch[GDB_PACKET_MAX]; /* memory and register bytes of the packet being served */
	char xml[GDB_XML_MAX];
	size_t xml_len;
};

/*
 * gdb_cmds.c: serve one packet (payload NUL-terminated) while stopped. Sends the reply itself, or
 * resumes the guest (state becomes GDB_RUNNING; the stop reply comes later), or ends the session
 * (detach, kill: state becomes GDB_NO_CLIENT).
 */
void gdb_cmd_dispatch(struct gdb_stub *s, char *pkt, size_t len);

/* gdb_stub.c, for gdb_cmds.c. */
/* Frame and send a reply; a failing debugger is dropped. */
void gdb_send(struct gdb_stub *s, const char *payload, size_t len);
void gdb_send_str(struct gdb_stub *s, const char *payload);
/* The stop reply for s->stop ("T05thread:1;swbreak:;"). */
void gdb_send_stop_reply(struct gdb_stub *s);
/* Re-arm the debug hardware of every vCPU and let them run: all, or only `step` stepping.
   Sends the stop reply at once when a vCPU has an event pending. */
void gdb_resume(struct gdb_stub *s, int step_vcpu);
/* Disarm everything, let the guest go and close the connection. */
void gdb_detach(struct gdb_stub *s);
/* The registers of a parked vCPU (fetched on first use after each stop); NULL if KVM failed. */
struct gdb_arch_regs *gdb_vcpu_regs(struct gdb_stub *s, unsigned int vcpu);
/* The vCPU's fd (ioctls while it is parked). */
int gdb_vcpu_fd(struct gdb_stub *s, unsigned int vcpu);

#endif
