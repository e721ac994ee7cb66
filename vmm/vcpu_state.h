/* vcpu_state.h: the vCPUs' and interrupt controllers' part of the state report (SIGUSR2; README "Tests"). */
#ifndef RINGVM_VCPU_STATE_H
#define RINGVM_VCPU_STATE_H

#include <stdbool.h>

#include "vmm/machine.h"

/*
 * KVM lets only a vCPU's own thread issue its ioctls (another thread would wait on the vCPU's mutex
 * for as long as it sits in KVM_RUN, halted included). So the main thread asks and kicks
 * (vcpu_kick: KVM_RUN returns EINTR, a halted vCPU too), and each vCPU thread answers between two
 * KVM_RUNs, then goes back into the guest: its lines are the vCPU as it was when kicked out. The
 * lines (README): mp_state, rip, rflags, TSC and APIC base; the local APIC (ID, TPR, PPR, SVR, the
 * vectors set in IRR, ISR and TMR, the LVT timer, TMICT, TMCCT, TDCR, the TSC deadline MSR and its
 * distance from the TSC, LINT0/1); the pending and injected events (interrupt, NMI, exception).
 */

/*
 * Main thread: ask every started vCPU for report seq (written to fd) and kick it. Returns the
 * number asked. seq must not be 0.
 */
unsigned int vcpus_state_request(struct vm *vm, unsigned int seq, int fd);

/* The vCPUs asked for seq that have not answered; with say_who one "no answer" line each on fd. */
unsigned int vcpus_state_pending(struct vm *vm, unsigned int seq, int fd, bool say_who);

/* vCPU thread, after KVM_RUN returned EINTR: answer a request made since its last answer. */
void vcpu_state_answer(struct vcpu *v);

/* Any thread allowed KVM_GET_IRQCHIP (the main thread): the PICs' and the IOAPIC's lines. */
void vm_state_irqchip(struct vm *vm, unsigned int seq, int fd);

#endif
