/* vcpu_state.c: each vCPU reports its own LAPIC, MP state and events; the main thread the irqchip. */
#define _GNU_SOURCE
#include "vmm/vcpu_state.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "arch/x86/msr.h"

/* Local APIC register offsets (Intel SDM vol. 3, table 11-1), in struct kvm_lapic_state's regs. */
#define APIC_ID 0x20
#define APIC_TPR 0x80
#define APIC_PPR 0xa0
#define APIC_SVR 0xf0
#define APIC_ISR 0x100
#define APIC_TMR 0x180
#define APIC_IRR 0x200
#define APIC_LVTT 0x320
#define APIC_LVT0 0x350
#define APIC_LVT1 0x360
#define APIC_TMICT 0x380
#define APIC_TMCCT 0x390
#define APIC_TDCR 0x3e0

/* One line "ringvm-state: #SEQ ..." in one write(2), so lines of different threads never mix. */
__attribute__((format(printf, 3, 4))) static void say(int fd, unsigned int seq, const char *fmt, ...)
{
	char line[768];
	int n = snprintf(line, sizeof(line), "ringvm-state: #%u ", seq);
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	size_t len = (size_t)n + ((size_t)m < sizeof(line) - (size_t)n - 1 ? (size_t)m
									   : sizeof(line) - (size_t)n - 2);
	line[len++] = '\n';
	if (write(fd, line, len) < 0) {
		/* nowhere to say it */
	}
}

static uint32_t apic_reg(const struct kvm_lapic_state *l, unsigned int off)
{
	uint32_t v;
	memcpy(&v, &l->regs[off], sizeof(v));
	return v;
}

/* The vectors set in a 256-bit APIC register (8 words, 16 bytes apart): "0x30,0xec" or "-". */
static void apic_vectors(const struct kvm_lapic_state *l, unsigned int base, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (unsigned int v = 0; v < 256; v++) {
		if (!(apic_reg(l, base + (v / 32) * 0x10) & (1u << (v % 32))))
			continue;
		int n = snprintf(buf + used, len - used, "%s0x%x", used ? "," : "", v);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
	if (!used)
		snprintf(buf, len, "-");
}

static const char *mp_state_name(uint32_t s)
{
	static const char *const names[] = {
		[KVM_MP_STATE_RUNNABLE] = "runnable",	  [KVM_MP_STATE_UNINITIALIZED] = "uninitialized",
		[KVM_MP_STATE_INIT_RECEIVED] = "init-received", [KVM_MP_STATE_HALTED] = "halted",
		[KVM_MP_STATE_SIPI_RECEIVED] = "sipi-received", [KVM_MP_STATE_STOPPED] = "stopped",
	};
	return s < sizeof(names) / sizeof(names[0]) && names[s] ? names[s] : "other";
}

static const char *lvtt_mode(uint32_t lvtt)
{
	static const char *const modes[4] = { "oneshot", "periodic", "tsc-deadline", "reserved" };
	return modes[(lvtt >> 17) & 3];
}

/* The vCPU's run state, and the MSRs the timer needs; msr[] gets TSC, APIC base, TSC deadline. */
static void vcpu_say_cpu(struct vcpu *v, unsigned int seq, int fd, uint64_t msr[3], int *nr_msrs)
{
	struct kvm_mp_state mp;
	struct kvm_regs regs;
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e[3];
	} m;
	memset(&m, 0, sizeof(m));
	m.hdr.nmsrs = 3;
	m.e[0].index = MSR_IA32_TSC;
	m.e[1].index = MSR_IA32_APIC_BASE;
	m.e[2].index = MSR_IA32_TSC_DEADLINE; /* last: KVM stops at the first MSR it cannot read */
	*nr_msrs = ioctl(v->fd, KVM_GET_MSRS, &m);
	for (int i = 0; i < 3; i++)
		msr[i] = i < *nr_msrs ? m.e[i].data : 0;

	bool have_mp = ioctl(v->fd, KVM_GET_MP_STATE, &mp) == 0;
	bool have_regs = ioctl(v->fd, KVM_GET_REGS, &regs) == 0;
	say(fd, seq, "vcpu %u mp_state=%s rip=0x%llx rflags=0x%llx if=%d tsc=%llu apic_base=0x%llx",
	    v->index, have_mp ? mp_state_name(mp.mp_state) : "?",
	    have_regs ? (unsigned long long)regs.rip : 0ULL,
	    have_regs ? (unsigned long long)regs.rflags : 0ULL,
	    have_regs ? (int)((regs.rflags >> 9) & 1) : -1, (unsigned long long)msr[0],
	    (unsigned long long)msr[1]);
}

static void vcpu_say_lapic(struct vcpu *v, unsigned int seq, int fd, const uint64_t msr[3],
			   int nr_msrs)
{
	struct kvm_lapic_state l;
	if (ioctl(v->fd, KVM_GET_LAPIC, &l) < 0) {
		say(fd, seq, "vcpu %u lapic error=%s", v->index, strerror(errno));
		return;
	}
	char irr[128], isr[128], tmr[128], deadline[64];
	apic_vectors(&l, APIC_IRR, irr, sizeof(irr));
	apic_vectors(&l, APIC_ISR, isr, sizeof(isr));
	apic_vectors(&l, APIC_TMR, tmr, sizeof(tmr));
	uint32_t lvtt = apic_reg(&l, APIC_LVTT);
	/* How far the deadline lies ahead of the TSC read just before (negative: already due). */
	if (nr_msrs >= 3)
		snprintf(deadline, sizeof(deadline), "%llu deadline_minus_tsc=%lld",
			 (unsigned long long)msr[2], msr[2] ? (long long)(msr[2] - msr[0]) : 0LL);
	else
		snprintf(deadline, sizeof(deadline), "?");
	say(fd, seq,
	    "vcpu %u lapic id=%u tpr=0x%x ppr=0x%x svr=0x%x irr=%s isr=%s tmr=%s lvt_timer=0x%x "
	    "timer_mode=%s timer_vector=0x%x timer_masked=%d timer_pending=%d tmict=%u tmcct=%u "
	    "tdcr=0x%x tsc_deadline=%s lint0=0x%x lint1=0x%x",
	    v->index, apic_reg(&l, APIC_ID) >> 24, apic_reg(&l, APIC_TPR), apic_reg(&l, APIC_PPR),
	    apic_reg(&l, APIC_SVR), irr, isr, tmr, lvtt, lvtt_mode(lvtt), lvtt & 0xff,
	    (int)((lvtt >> 16) & 1), (int)((lvtt >> 12) & 1), apic_reg(&l, APIC_TMICT),
	    apic_reg(&l, APIC_TMCCT), apic_reg(&l, APIC_TDCR), deadline, apic_reg(&l, APIC_LVT0),
	    apic_reg(&l, APIC_LVT1));
}

static void vcpu_say_events(struct vcpu *v, unsigned int seq, int fd)
{
	struct kvm_vcpu_events e;
	if (ioctl(v->fd, KVM_GET_VCPU_EVENTS, &e) < 0) {
		say(fd, seq, "vcpu %u events error=%s", v->index, strerror(errno));
		return;
	}
	say(fd, seq,
	    "vcpu %u events irq_injected=%u irq_nr=0x%x irq_soft=%u irq_shadow=%u nmi_injected=%u "
	    "nmi_pending=%u nmi_masked=%u exc_injected=%u exc_pending=%u exc_nr=%u",
	    v->index, e.interrupt.injected, e.interrupt.nr, e.interrupt.soft, e.interrupt.shadow,
	    e.nmi.injected, e.nmi.pending, e.nmi.masked, e.exception.injected, e.exception.pending,
	    e.exception.nr);
}

void vcpu_state_answer(struct vcpu *v)
{
	unsigned int seq = __atomic_load_n(&v->state_asked, __ATOMIC_ACQUIRE);
	if (seq == __atomic_load_n(&v->state_done, __ATOMIC_RELAXED))
		return;
	int fd = __atomic_load_n(&v->state_out, __ATOMIC_RELAXED);
	uint64_t msr[3];
	int nr_msrs;
	vcpu_say_cpu(v, seq, fd, msr, &nr_msrs);
	vcpu_say_lapic(v, seq, fd, msr, nr_msrs);
	vcpu_say_events(v, seq, fd);
	__atomic_store_n(&v->state_done, seq, __ATOMIC_RELEASE);
}

unsigned int vcpus_state_request(struct vm *vm, unsigned int seq, int fd)
{
	unsigned int asked = 0;
	for (unsigned int i = 0; vm->vcpus && i < vm->nr_cpus; i++) {
		struct vcpu *v = &vm->vcpus[i];
		if (!v->started)
			continue;
		__atomic_store_n(&v->state_out, fd, __ATOMIC_RELAXED);
		/* Release, before the kick: the vCPU that sees seq sees the fd. */
		__atomic_store_n(&v->state_asked, seq, __ATOMIC_RELEASE);
		vcpu_kick(v, v->thread);
		asked++;
	}
	return asked;
}

unsigned int vcpus_state_pending(struct vm *vm, unsigned int seq, int fd, bool say_who)
{
	unsigned int pending = 0;
	for (unsigned int i = 0; vm->vcpus && i < vm->nr_cpus; i++) {
		struct vcpu *v = &vm->vcpus[i];
		if (!v->started || __atomic_load_n(&v->state_asked, __ATOMIC_ACQUIRE) != seq ||
		    __atomic_load_n(&v->state_done, __ATOMIC_ACQUIRE) == seq)
			continue;
		pending++;
		if (say_who)
			say(fd, seq, "vcpu %u no answer (not out of KVM_RUN or its exit since the kick)",
			    i);
	}
	return pending;
}

static void say_pic(struct vm *vm, unsigned int seq, int fd, unsigned int chip, const char *name)
{
	struct kvm_irqchip c;
	memset(&c, 0, sizeof(c));
	c.chip_id = chip;
	if (ioctl(vm->vm_fd, KVM_GET_IRQCHIP, &c) < 0) {
		say(fd, seq, "%s error=%s", name, strerror(errno));
		return;
	}
	say(fd, seq, "%s irr=0x%02x imr=0x%02x isr=0x%02x irq_base=0x%x elcr=0x%02x", name,
	    c.chip.pic.irr, c.chip.pic.imr, c.chip.pic.isr, c.chip.pic.irq_base, c.chip.pic.elcr);
}

void vm_state_irqchip(struct vm *vm, unsigned int seq, int fd)
{
	say_pic(vm, seq, fd, KVM_IRQCHIP_PIC_MASTER, "pic-master");
	say_pic(vm, seq, fd, KVM_IRQCHIP_PIC_SLAVE, "pic-slave");
	struct kvm_irqchip c;
	memset(&c, 0, sizeof(c));
	c.chip_id = KVM_IRQCHIP_IOAPIC;
	if (ioctl(vm->vm_fd, KVM_GET_IRQCHIP, &c) < 0) {
		say(fd, seq, "ioapic error=%s", strerror(errno));
		return;
	}
	/* Only the pins a driver set up (unmasked) or that hold something (remote IRR, irr). */
	char pins[512];
	size_t used = 0;
	pins[0] = '\0';
	for (unsigned int i = 0; i < KVM_IOAPIC_NUM_PINS; i++) {
		const struct kvm_ioapic_state *io = &c.chip.ioapic;
		if (io->redirtbl[i].fields.mask && !io->redirtbl[i].fields.remote_irr &&
		    !(io->irr & (1u << i)))
			continue;
		int n = snprintf(pins + used, sizeof(pins) - used,
				 " pin%u=vector:0x%x,%s,%s,remote_irr:%u,dest:%u", i,
				 io->redirtbl[i].fields.vector, io->redirtbl[i].fields.trig_mode ? "level" : "edge",
				 io->redirtbl[i].fields.mask ? "masked" : "unmasked",
				 io->redirtbl[i].fields.remote_irr, io->redirtbl[i].fields.dest_id);
		if (n < 0 || (size_t)n >= sizeof(pins) - used)
			break;
		used += (size_t)n;
	}
	say(fd, seq, "ioapic irr=0x%x%s", c.chip.ioapic.irr, pins);
}
