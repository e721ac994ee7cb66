/* vcpu.c: one thread per vCPU: KVM_RUN and the exits that come back to userspace. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "vmm/gdb_stub.h"
#include "vmm/machine.h"
#include "vmm/seccomp.h"
#include "vmm/vcpu_state.h"

/* The signal that knocks a vCPU out of KVM_RUN; its handler does nothing. */
#define VCPU_KICK_SIGNAL SIGUSR1

static void vcpu_kick_handler(int sig)
{
	(void)sig;
}

/* A vCPU whose TSC KVM does not run gets the host's rate (arch/x86/tsc.h); said once per VM. */
static int vcpu_tsc_ensure(struct vcpu *v, bool *said, const char **why)
{
	struct x86_tsc_fix fix;
	int ret = x86_tsc_ensure_running(v->fd, &fix);
	if (fix.set && !*said) {
		*said = true;
		fprintf(stderr,
			"ringvm: KVM gave vCPU %u a TSC rate it cannot run here (%u kHz; as when the kvm "
			"module loaded before the host's TSC calibration was final, dmesg: \"user requested "
			"TSC rate below hardware speed\"); the vCPUs run at the host's %u kHz\n",
			v->index, fix.khz_kept, fix.khz_set);
	}
	if (ret == -EIO)
		*why = "KVM computes a vCPU's TSC as 0 even at the host's own rate: the guest's timers "
		       "would never fire";
	else if (ret)
		*why = "reading or setting a vCPU's TSC rate (KVM_GET_MSRS, KVM_SET_TSC_KHZ)";
	return ret;
}

int vcpus_create(struct vm *vm, const char **why)
{
	bool tsc_said = false;
	*why = "out of memory";
	vm->vcpus = calloc(vm->nr_cpus, sizeof(*vm->vcpus));
	if (!vm->vcpus)
		return -ENOMEM;
	for (unsigned int i = 0; i < vm->nr_cpus; i++)
		vm->vcpus[i].fd = -1;
	for (unsigned int i = 0; i < vm->nr_cpus; i++) {
		struct vcpu *v = &vm->vcpus[i];
		v->vm = vm;
		v->index = i;
		*why = "KVM_CREATE_VCPU";
		v->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, (unsigned long)i);
		if (v->fd < 0)
			return -errno;
		*why = "mapping the vCPU's kvm_run";
		v->run = mmap(NULL, (size_t)vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
		if (v->run == MAP_FAILED) {
			v->run = NULL;
			return -errno;
		}
		/* Before the MSRs: their TSC write of 0 must be made at the rate the vCPU keeps. */
		int ret = vcpu_tsc_ensure(v, &tsc_said, why);
		if (ret)
			return ret;
		*why = "setting the vCPU's CPUID, MSRs and LAPIC";
		ret = x86_cpuid_apply(v->fd, vm->cpuid, i, vm->nr_cpus);
		if (!ret)
			ret = x86_msrs_apply(v->fd);
		if (!ret)
			ret = x86_lapic_setup(v->fd);
		if (ret)
			return ret;
	}
	return 0;
}

static void vcpu_handle_io(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	/* String I/O (rep outsb/insb) arrives as `count` items back to back in the shared page. */
	for (uint32_t i = 0; i < run->io.count; i++, data += run->io.size) {
		if (run->io.direction == KVM_EXIT_IO_OUT)
			(void)bus_write(&v->vm->pio, run->io.port, data, run->io.size);
		else
			(void)bus_read(&v->vm->pio, run->io.port, data, run->io.size);
	}
}

static void vcpu_handle_mmio(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	uint32_t len = run->mmio.len <= 8 ? run->mmio.len : 8;
	if (run->mmio.is_write)
		(void)bus_write(&v->vm->mmio, run->mmio.phys_addr, run->mmio.data, len);
	else
		(void)bus_read(&v->vm->mmio, run->mmio.phys_addr, run->mmio.data, len);
}

/* Handle one exit; false when this vCPU must stop. */
static bool vcpu_handle_exit(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		vcpu_handle_io(v);
		return true;
	case KVM_EXIT_MMIO:
		vcpu_handle_mmio(v);
		return true;
	case KVM_EXIT_DEBUG:
		/* Only with --gdb has anything asked KVM for debug exits. */
		if (!v->vm->gdb) {
			vm_request_stop(v->vm, VM_STOP_CRASH, 0, "unexpected debug exit on vCPU %u", v->index);
			return false;
		}
		gdb_stub_vcpu_debug_exit(v->vm->gdb, v);
		return true;
	case KVM_EXIT_HLT:
		/* Only without an in-kernel LAPIC; ours has one. Treat as power-off rather than spin. */
		vm_request_stop(v->vm, VM_STOP_POWEROFF, 0, "vCPU %u halted", v->index);
		return false;
	case KVM_EXIT_SHUTDOWN:
		vm_request_stop(v->vm, VM_STOP_CRASH, 0, "guest triple fault on vCPU %u", v->index);
		return false;
	case KVM_EXIT_SYSTEM_EVENT:
		if (run->system_event.type == KVM_SYSTEM_EVENT_RESET)
			vm_request_stop(v->vm, VM_STOP_RESET, 0, "guest reset");
		else if (run->system_event.type == KVM_SYSTEM_EVENT_SHUTDOWN)
			vm_request_stop(v->vm, VM_STOP_POWEROFF, 0, "guest power-off");
		else
			vm_request_stop(v->vm, VM_STOP_CRASH, 0, "guest system event %u",
					run->system_event.type);
		return false;
	case KVM_EXIT_FAIL_ENTRY:
		vm_request_stop(v->vm, VM_STOP_CRASH, 0, "KVM could not enter vCPU %u (hardware reason 0x%llx)",
				v->index,
				(unsigned long long)run->fail_entry.hardware_entry_failure_reason);
		return false;
	case KVM_EXIT_INTERNAL_ERROR:
		vm_request_stop(v->vm, VM_STOP_CRASH, 0, "KVM internal error on vCPU %u (suberror %u)",
				v->index, run->internal.suberror);
		return false;
	default:
		vm_request_stop(v->vm, VM_STOP_CRASH, 0, "unexpected KVM exit %u on vCPU %u",
				run->exit_reason, v->index);
		return false;
	}
}

/* Confine this thread, report at the gate, wait for it to open. False: the thread must end. */
static bool vcpu_pass_gate(struct vcpu *v)
{
	struct vm *vm = v->vm;
	int err = vm->vcpu_confine ? seccomp_confine(vm->vcpu_confine) : 0;

	pthread_mutex_lock(&vm->gate_lock);
	vm->gate_ready++;
	if (err && !vm->gate_err)
		vm->gate_err = err;
	pthread_cond_broadcast(&vm->gate_cond);
	while (!vm->gate_open)
		pthread_cond_wait(&vm->gate_cond, &vm->gate_lock);
	pthread_mutex_unlock(&vm->gate_lock);
	return err == 0;
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	char name[16];
	snprintf(name, sizeof(name), "vcpu%u", v->index);
	(void)pthread_setname_np(pthread_self(), name);
	sigset_t kick;
	sigemptyset(&kick);
	sigaddset(&kick, VCPU_KICK_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &kick, NULL);
	if (!vcpu_pass_gate(v))
		return NULL;

	struct gdb_stub *gdb = v->vm->gdb;
	if (gdb)
		gdb_stub_vcpu_start(gdb, v);
	if (v->index == 0)
		v->vm->t_first_run = vm_now_ns();
	while (!atomic_load(&v->vm->stopping)) {
		if (ioctl(v->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				/* Cleared before the debugger's pause flag is read: a kick after this still lands. */
				__atomic_store_n(&v->run->immediate_exit, 0, __ATOMIC_SEQ_CST);
				vcpu_state_answer(v); /* kicked for the state report? */
				if (gdb)
					gdb_stub_vcpu_interrupted(gdb, v);
				continue;
			}
			vm_request_stop(v->vm, VM_STOP_ERROR, 0, "KVM_RUN on vCPU %u: %s", v->index,
					strerror(errno));
			break;
		}
		if (!vcpu_handle_exit(v))
			break;
	}
	return NULL;
}

int vcpus_start(struct vm *vm, const struct seccomp_confinement *confine)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = vcpu_kick_handler; /* no SA_RESTART: KVM_RUN must return EINTR */
	if (sigaction(VCPU_KICK_SIGNAL, &sa, NULL) < 0)
		return -errno;
	vm->vcpu_confine = confine;
	unsigned int started = 0;
	int ret = 0;
	for (unsigned int i = 0; i < vm->nr_cpus && !ret; i++) {
		struct vcpu *v = &vm->vcpus[i];
		ret = -pthread_create(&v->thread, NULL, vcpu_thread, v);
		if (!ret) {
			v->started = true;
			started++;
		}
	}
	pthread_mutex_lock(&vm->gate_lock);
	while (vm->gate_ready < started)
		pthread_cond_wait(&vm->gate_cond, &vm->gate_lock);
	if (!ret)
		ret = vm->gate_err;
	pthread_mutex_unlock(&vm->gate_lock);
	return ret;
}

void vcpus_go(struct vm *vm)
{
	pthread_mutex_lock(&vm->gate_lock);
	vm->gate_open = true;
	pthread_cond_broadcast(&vm->gate_cond);
	pthread_mutex_unlock(&vm->gate_lock);
}

void vcpu_kick(struct vcpu *v, pthread_t thread)
{
	/*
	 * immediate_exit covers a vCPU that is between its checks and KVM_RUN (KVM_RUN then returns
	 * EINTR at once, after completing a pending I/O); the signal covers one already inside KVM_RUN
	 * (halted vCPUs included).
	 */
	__atomic_store_n(&v->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	pthread_kill(thread, VCPU_KICK_SIGNAL);
}

void vcpus_stop(struct vm *vm)
{
	atomic_store(&vm->stopping, true);
	vcpus_go(vm); /* threads still at the gate see `stopping` and end */
	for (unsigned int i = 0; vm->vcpus && i < vm->nr_cpus; i++) {
		struct vcpu *v = &vm->vcpus[i];
		if (v->started)
			vcpu_kick(v, v->thread);
	}
	for (unsigned int i = 0; vm->vcpus && i < vm->nr_cpus; i++) {
		struct vcpu *v = &vm->vcpus[i];
		if (v->started)
			pthread_join(v->thread, NULL);
		v->started = false;
		if (v->run)
			munmap(v->run, (size_t)vm->run_size);
		v->run = NULL;
		if (v->fd >= 0)
			close(v->fd);
		v->fd = -1;
	}
}
