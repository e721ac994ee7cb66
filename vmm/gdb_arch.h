/* gdb_arch.h: what the gdb stub asks of the architecture: registers, the page walk, debug hardware. */
#ifndef RINGVM_GDB_ARCH_H
#define RINGVM_GDB_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "vmm/guest_mem.h"

/*
 * The seam between vmm/gdb_stub.c (protocol, run control) and one architecture (x86-64:
 * arch/x86/gdb_x86.c). vmm/ names no x86 register or bit; the architecture knows no packet.
 * Every function here is called by the stub's thread while the vCPU in question is parked (not in
 * KVM_RUN), except gdb_arch_debug_decode() and gdb_arch_reinject(), which the vCPU's own thread
 * calls at a KVM_EXIT_DEBUG.
 */

/* Breakpoint and watchpoint kinds, numbered as gdb's Z packets number them (Z0..Z4). */
enum gdb_point_type {
	GDB_POINT_SW = 0,     /* software breakpoint: the stub writes the trap instruction */
	GDB_POINT_HW = 1,     /* hardware breakpoint (debug register, execute) */
	GDB_POINT_WRITE = 2,  /* watchpoint: writes */
	GDB_POINT_READ = 3,   /* watchpoint: reads (x86 has none alone: reads and writes) */
	GDB_POINT_ACCESS = 4, /* watchpoint: reads and writes */
};

/* Hardware breakpoint and watchpoint slots (x86: DR0-DR3). */
#define GDB_HW_POINTS 4

struct gdb_hw_point {
	bool used;
	enum gdb_point_type type; /* GDB_POINT_HW .. GDB_POINT_ACCESS */
	uint64_t addr;            /* linear address */
	unsigned int len;         /* bytes watched: 1, 2, 4 or 8, addr aligned to it; 1 for HW */
};

/* What a debug exit was. */
enum gdb_hit {
	GDB_HIT_FOREIGN,  /* not caused by the debugger: give the exception back to the guest */
	GDB_HIT_SWBREAK,  /* a trap instruction at pc (the stub checks it is one of its own) */
	GDB_HIT_HWBREAK,  /* hardware breakpoint slot `slot` */
	GDB_HIT_WATCH,    /* watchpoint slot `slot` (a trap: the access has happened) */
	GDB_HIT_STEP,     /* a single step ended */
	GDB_HIT_INTERRUPT, /* not from hardware: the debugger's Ctrl-C (used by the stub only) */
};

struct gdb_arch_hit {
	enum gdb_hit kind;
	uint64_t pc;       /* linear address of the instruction (SWBREAK: the trap instruction) */
	unsigned int slot; /* HWBREAK, WATCH */
};

/* One vCPU's registers as fetched from KVM: a cache the stub keeps while the vCPU is parked. */
struct gdb_arch_regs;

/* A zeroed cache, or NULL without memory. */
struct gdb_arch_regs *gdb_arch_regs_new(void);
void gdb_arch_regs_free(struct gdb_arch_regs *r);

/* Fetch every register of the vCPU behind vcpu_fd into r. 0 or -errno. */
__attribute__((warn_unused_result)) int gdb_arch_regs_load(struct gdb_arch_regs *r, int vcpu_fd);

/* Write back whatever gdb_arch_reg_set() changed since the last load or flush. 0 or -errno
   (KVM refused the values: the cache must be reloaded). */
__attribute__((warn_unused_result)) int gdb_arch_regs_flush(struct gdb_arch_regs *r, int vcpu_fd);

/* The number of registers, and the size of all of them in gdb's 'g' packet order. */
unsigned int gdb_arch_nr_regs(void);
size_t gdb_arch_regs_size(void);

/* Register regno's bytes (target order) into out (room for 16); returns its size, or -EINVAL. */
__attribute__((warn_unused_result)) int gdb_arch_reg_get(const struct gdb_arch_regs *r, unsigned int regno,
							  uint8_t *out);

/*
 * Set register regno from len bytes in the cache (and mark it for flushing). -EINVAL for an unknown
 * register or a wrong size, -EPERM for a register that cannot be changed this way (a segment
 * selector: its hidden descriptor would not follow).
 */
__attribute__((warn_unused_result)) int gdb_arch_reg_set(struct gdb_arch_regs *r, unsigned int regno,
							  const uint8_t *val, size_t len);

/* The program counter, as a linear address gdb understands. */
uint64_t gdb_arch_pc(const struct gdb_arch_regs *r);
void gdb_arch_set_pc(struct gdb_arch_regs *r, uint64_t pc);

/*
 * The target description (gdb's "target.xml": architecture, features, every register in order)
 * into buf; returns its length, or -ENOSPC.
 */
__attribute__((warn_unused_result)) ssize_t gdb_arch_target_xml(char *buf, size_t len);

/* Translate linear address va with the vCPU's paging registers, through gm_ptr (see pagewalk.h). */
__attribute__((warn_unused_result)) int gdb_arch_va_to_pa(const struct guest_mem *gm,
							   const struct gdb_arch_regs *r, uint64_t va,
							   uint64_t *gpa, uint64_t *left);

/* The software breakpoint instruction (x86: int3). */
#define GDB_ARCH_SW_BP_LEN 1
extern const uint8_t gdb_arch_sw_bp[GDB_ARCH_SW_BP_LEN];

/* Is a hardware point of this type, address and length possible? 0 or -EINVAL. */
__attribute__((warn_unused_result)) int gdb_arch_hw_point_check(enum gdb_point_type type, uint64_t addr,
								 unsigned int len);

/*
 * Arm the vCPU's debug hardware (KVM_SET_GUEST_DEBUG): trap the software breakpoint instruction
 * when sw_bp, the used hardware points, a single step when step (with interrupts held off during
 * it when block_irq). Nothing armed at all disarms. 0 or -errno.
 */
__attribute__((warn_unused_result)) int gdb_arch_debug_apply(int vcpu_fd, bool sw_bp,
							     const struct gdb_hw_point hw[GDB_HW_POINTS],
							     bool step, bool block_irq);

/* Whether KVM can hold interrupts off during a single step (a check on the /dev/kvm fd). */
bool gdb_arch_can_block_irq(int kvm_fd);

struct kvm_run;
/* Classify a KVM_EXIT_DEBUG against what is armed (vCPU thread). */
void gdb_arch_debug_decode(const struct kvm_run *run, const struct gdb_hw_point hw[GDB_HW_POINTS],
			   bool stepping, struct gdb_arch_hit *hit);

/* Give a GDB_HIT_FOREIGN exception back to the guest, as if KVM had not intercepted it (vCPU
   thread, on its own vCPU). 0 or -errno. */
__attribute__((warn_unused_result)) int gdb_arch_reinject(int vcpu_fd, const struct kvm_run *run);

#endif
