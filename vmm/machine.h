/* machine.h: the VM as the VMM core sees it (struct vm, vCPUs, how a run ends). Not for devices. */
#ifndef RINGVM_MACHINE_H
#define RINGVM_MACHINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/acpi.h"
#include "vmm/layout.h"
#include "vmm/vm.h"

struct seccomp_confinement;

/* Why the guest stopped; the first reason reported wins. */
enum vm_stop_reason {
	VM_STOP_NONE = 0,
	VM_STOP_EXIT_STATUS, /* PID 1 wrote its command's status to RINGVM_EXIT_PORT */
	VM_STOP_POWEROFF,    /* ACPI S5 */
	VM_STOP_RESET,       /* ACPI reset register or 8042 reset */
	VM_STOP_PANIC,       /* the guest kernel panicked */
	VM_STOP_CRASH,       /* triple fault, KVM internal error, failed entry */
	VM_STOP_HOST,        /* asked from the host: signal, ringvm_stop() */
	VM_STOP_ERROR,       /* the VMM itself failed while running */
};

struct vcpu {
	struct vm *vm;
	unsigned int index;
	int fd;
	struct kvm_run *run; /* mmap'd; owned by the vCPU thread except immediate_exit */
	pthread_t thread;
	bool started;
	/* The state report (vmm/vcpu_state.h): the main thread stores state_out, then state_asked
	   (release), then kicks; this vCPU's thread answers and stores state_done. Atomics. */
	unsigned int state_asked, state_done;
	int state_out;
};

struct vm {
	int kvm_fd;
	int vm_fd;
	struct guest_mem mem;
	struct bus pio;  /* immutable once vCPUs run */
	struct bus mmio; /* immutable once vCPUs run */
	unsigned int nr_cpus;
	struct vcpu *vcpus;
	struct kvm_cpuid2 *cpuid;
	int run_size;
	bool verbose;

	struct acpi_mmio_dev virtio_mmio[LAYOUT_VIRTIO_MMIO_MAX]; /* setup time only */
	unsigned int nr_virtio_mmio;

	/* How the run ends: written once under stop_lock, then stop_efd is signalled. */
	pthread_mutex_t stop_lock;
	atomic_bool stopping;
	enum vm_stop_reason stop_reason;
	int stop_status;
	char stop_why[160];
	int stop_efd;

	/*
	 * The start gate: each vCPU thread confines itself (seccomp), says so, and waits until the
	 * gate opens (vcpus_go, or vcpus_stop), so no guest instruction runs before every thread of
	 * ringvm is confined. Under gate_lock; gate_cond signals every change.
	 */
	pthread_mutex_t gate_lock;
	pthread_cond_t gate_cond;
	unsigned int gate_ready; /* vCPU threads past their confinement (done or failed) */
	int gate_err;		 /* the first confinement error, 0 if none */
	bool gate_open;
	const struct seccomp_confinement *vcpu_confine; /* NULL: not confined */
	/* --gdb: the debugger's vCPU hooks (vmm/gdb_stub.h); NULL without. Set before vCPUs run. */
	struct gdb_stub *gdb;

	/* The guest's pvpanic driver read the device's capabilities (arch/x86/legacy.c): from then on
	   a panic is known by its write there, and console text is never taken for one. */
	atomic_bool pvpanic_bound;

	/* Boot timing (CLOCK_MONOTONIC ns; 0 = not yet): written once each, read after the run. */
	uint64_t t_first_run;
	atomic_uint_fast64_t t_init;
};

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t vm_now_ns(void);

/* Open /dev/kvm, create the VM with RAM, irqchip and PIT. 0 or -errno; *why names the failing step. */
__attribute__((warn_unused_result)) int vm_create(struct vm *vm, uint64_t ram_size, unsigned int nr_cpus,
						  const char **why);
void vm_destroy(struct vm *vm);

/* End the run (any thread). The first call's reason, status and message are kept. */
void vm_request_stop(struct vm *vm, enum vm_stop_reason reason, int status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* vCPUs: create all (after memory and irqchip). 0 or -errno, with *why naming the step that failed. */
__attribute__((warn_unused_result)) int vcpus_create(struct vm *vm, const char **why);

/*
 * Start every vCPU thread; each confines itself with confine (NULL: not confined; the pointer must
 * stay valid until vcpus_stop) and then waits at the start gate. Returns once every thread is past
 * its confinement: 0, or -errno (a thread or a confinement failed). Either way the caller opens the
 * gate with vcpus_go (after confining itself) or ends with vcpus_stop.
 */
__attribute__((warn_unused_result)) int vcpus_start(struct vm *vm,
						    const struct seccomp_confinement *confine);

/* Open the start gate: the vCPUs run the guest (or see `stopping` and end). */
void vcpus_go(struct vm *vm);

/* Stop (the gate opens too) and join every vCPU thread; close their fds. */
void vcpus_stop(struct vm *vm);

/* Knock vCPU v (whose thread is `thread`) out of KVM_RUN now or at its next entry (any thread). */
void vcpu_kick(struct vcpu *v, pthread_t thread);

#endif
