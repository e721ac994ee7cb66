/* gdb_x86.c: the x86-64 side of the gdb stub: registers in gdb's order, target.xml, debug registers. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/kvm.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arch/x86/pagewalk.h"
#include "vmm/gdb_arch.h"

/* Which KVM register set a register lives in; each is fetched and written back as a whole. */
enum reg_set { SET_REGS = 1, SET_SREGS = 2, SET_FPU = 4 };

struct gdb_arch_regs {
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct kvm_fpu fpu;
	unsigned int dirty; /* enum reg_set bits changed since the last load or flush */
};

/* Where a register comes from (the switch in reg_ptr() knows each kind). */
enum reg_src {
	SRC_GPR,      /* kvm_regs field at `off` */
	SRC_EFLAGS,   /* low 32 bits of rflags */
	SRC_SEL,      /* kvm_sregs segment at `off`: its selector (read-only) */
	SRC_SEG_BASE, /* kvm_sregs segment at `off`: its base */
	SRC_SREG,     /* kvm_sregs 64-bit field at `off` (control registers, EFER) */
	SRC_ST,       /* x87 ST(idx), 80 bits */
	SRC_FPU16,    /* kvm_fpu 16-bit field at `off` (fcw, fsw, fop) */
	SRC_FTAG,     /* the full tag word, built from the abridged one */
	SRC_FIP_LO,   /* fioff / fooff: low half of last_ip / last_dp at `off` */
	SRC_FIP_HI,   /* fiseg / foseg: in 64-bit mode, the high half (as gdb's amd64 reads FXSAVE) */
	SRC_XMM,      /* xmm(idx) */
	SRC_MXCSR,
};

/* gdb's features: the first three are gdb's own names, which its amd64 support looks for. */
static const char *const features[] = {
	"org.gnu.gdb.i386.core",
	"org.gnu.gdb.i386.sse",
	"org.gnu.gdb.i386.segments",
	"org.ringvm.x86.control", /* ours: control registers and EFER, for a kernel developer */
};

struct x86_reg {
	const char *name;
	unsigned char size; /* bytes on the wire */
	unsigned char feature;
	unsigned char src;
	unsigned char idx;
	unsigned short off;
	const char *type;
	const char *group; /* NULL: gdb's default for the type */
};

#define GPR(n, f, t) { #n, 8, 0, SRC_GPR, 0, offsetof(struct kvm_regs, f), t, NULL }
#define SEL(n) { #n, 4, 0, SRC_SEL, 0, offsetof(struct kvm_sregs, n), "int32", NULL }
#define ST(i) { "st" #i, 10, 0, SRC_ST, i, 0, "i387_ext", NULL }
#define XMM(i) { "xmm" #i, 16, 1, SRC_XMM, i, 0, "vec128", NULL }
#define CR(n, f) { #n, 8, 3, SRC_SREG, 0, offsetof(struct kvm_sregs, f), "int64", "system" }

/* The order is the wire order of the 'g' packet and the regnum of each register. */
static const struct x86_reg regs[] = {
	GPR(rax, rax, "int64"), GPR(rbx, rbx, "int64"), GPR(rcx, rcx, "int64"),
	GPR(rdx, rdx, "int64"), GPR(rsi, rsi, "int64"), GPR(rdi, rdi, "int64"),
	GPR(rbp, rbp, "data_ptr"), GPR(rsp, rsp, "data_ptr"), GPR(r8, r8, "int64"),
	GPR(r9, r9, "int64"), GPR(r10, r10, "int64"), GPR(r11, r11, "int64"),
	GPR(r12, r12, "int64"), GPR(r13, r13, "int64"), GPR(r14, r14, "int64"),
	GPR(r15, r15, "int64"), GPR(rip, rip, "code_ptr"),
	{ "eflags", 4, 0, SRC_EFLAGS, 0, 0, "i386_eflags", NULL },
	SEL(cs), SEL(ss), SEL(ds), SEL(es), SEL(fs), SEL(gs),
	ST(0), ST(1), ST(2), ST(3), ST(4), ST(5), ST(6), ST(7),
	{ "fctrl", 4, 0, SRC_FPU16, 0, offsetof(struct kvm_fpu, fcw), "int", "float" },
	{ "fstat", 4, 0, SRC_FPU16, 0, offsetof(struct kvm_fpu, fsw), "int", "float" },
	{ "ftag", 4, 0, SRC_FTAG, 0, 0, "int", "float" },
	{ "fiseg", 4, 0, SRC_FIP_HI, 0, offsetof(struct kvm_fpu, last_ip), "int", "float" },
	{ "fioff", 4, 0, SRC_FIP_LO, 0, offsetof(struct kvm_fpu, last_ip), "int", "float" },
	{ "foseg", 4, 0, SRC_FIP_HI, 0, offsetof(struct kvm_fpu, last_dp), "int", "float" },
	{ "fooff", 4, 0, SRC_FIP_LO, 0, offsetof(struct kvm_fpu, last_dp), "int", "float" },
	{ "fop", 4, 0, SRC_FPU16, 0, offsetof(struct kvm_fpu, last_opcode), "int", "float" },
	XMM(0), XMM(1), XMM(2), XMM(3), XMM(4), XMM(5), XMM(6), XMM(7),
	XMM(8), XMM(9), XMM(10), XMM(11), XMM(12), XMM(13), XMM(14), XMM(15),
	{ "mxcsr", 4, 1, SRC_MXCSR, 0, 0, "int", "vector" },
	{ "fs_base", 8, 2, SRC_SEG_BASE, 0, offsetof(struct kvm_sregs, fs), "int", NULL },
	{ "gs_base", 8, 2, SRC_SEG_BASE, 0, offsetof(struct kvm_sregs, gs), "int", NULL },
	CR(cr0, cr0), CR(cr2, cr2), CR(cr3, cr3), CR(cr4, cr4), CR(cr8, cr8), CR(efer, efer),
};
#define NR_REGS (sizeof(regs) / sizeof(regs[0]))

const uint8_t gdb_arch_sw_bp[GDB_ARCH_SW_BP_LEN] = { 0xcc }; /* int3 */

struct gdb_arch_regs *gdb_arch_regs_new(void)
{
	return calloc(1, sizeof(struct gdb_arch_regs));
}

void gdb_arch_regs_free(struct gdb_arch_regs *r)
{
	free(r);
}

int gdb_arch_regs_load(struct gdb_arch_regs *r, int vcpu_fd)
{
	if (ioctl(vcpu_fd, KVM_GET_REGS, &r->regs) < 0 || ioctl(vcpu_fd, KVM_GET_SREGS, &r->sregs) < 0 ||
	    ioctl(vcpu_fd, KVM_GET_FPU, &r->fpu) < 0)
		return -errno;
	r->dirty = 0;
	return 0;
}

int gdb_arch_regs_flush(struct gdb_arch_regs *r, int vcpu_fd)
{
	if ((r->dirty & SET_REGS) && ioctl(vcpu_fd, KVM_SET_REGS, &r->regs) < 0)
		return -errno;
	if ((r->dirty & SET_SREGS) && ioctl(vcpu_fd, KVM_SET_SREGS, &r->sregs) < 0)
		return -errno;
	if ((r->dirty & SET_FPU) && ioctl(vcpu_fd, KVM_SET_FPU, &r->fpu) < 0)
		return -errno;
	r->dirty = 0;
	return 0;
}

unsigned int gdb_arch_nr_regs(void)
{
	return NR_REGS;
}

size_t gdb_arch_regs_size(void)
{
	size_t n = 0;
	for (unsigned int i = 0; i < NR_REGS; i++)
		n += regs[i].size;
	return n;
}

/*
 * The x87 tag of physical register p, 0 valid, 1 zero, 2 special, 3 empty (Intel SDM vol. 1,
 * 8.1.7), from FXSAVE's abridged tag (1 bit: not empty) and the register's contents. FXSAVE keeps
 * registers in stack order: physical p is ST((p - TOP) mod 8).
 */
static unsigned int x87_tag(const struct kvm_fpu *f, unsigned int p)
{
	if (!(f->ftwx & (1u << p)))
		return 3;
	unsigned int top = (f->fsw >> 11) & 7;
	const uint8_t *st = f->fpr[(p - top) & 7];
	uint64_t mant;
	uint16_t exp;
	memcpy(&mant, st, 8);
	memcpy(&exp, st + 8, 2);
	exp &= 0x7fff;
	if (exp == 0x7fff)
		return 2;
	if (exp == 0)
		return mant ? 2 : 1;
	return (mant >> 63) ? 0 : 2;
}

static void get_field(const void *base, size_t off, size_t size, uint8_t *out)
{
	memcpy(out, (const uint8_t *)base + off, size);
}

int gdb_arch_reg_get(const struct gdb_arch_regs *r, unsigned int regno, uint8_t *out)
{
	if (regno >= NR_REGS)
		return -EINVAL;
	const struct x86_reg *d = &regs[regno];
	uint32_t v32 = 0;
	uint64_t v64;
	memset(out, 0, d->size);
	switch (d->src) {
	case SRC_GPR:
		get_field(&r->regs, d->off, 8, out);
		break;
	case SRC_EFLAGS:
		v32 = (uint32_t)r->regs.rflags;
		memcpy(out, &v32, 4);
		break;
	case SRC_SEL:
		v32 = ((const struct kvm_segment *)((const uint8_t *)&r->sregs + d->off))->selector;
		memcpy(out, &v32, 4);
		break;
	case SRC_SEG_BASE:
		get_field((const uint8_t *)&r->sregs + d->off, offsetof(struct kvm_segment, base), 8, out);
		break;
	case SRC_SREG:
		get_field(&r->sregs, d->off, 8, out);
		break;
	case SRC_ST:
		memcpy(out, r->fpu.fpr[d->idx], 10);
		break;
	case SRC_FPU16:
		get_field(&r->fpu, d->off, 2, out);
		break;
	case SRC_FTAG:
		for (unsigned int p = 0; p < 8; p++)
			v32 |= x87_tag(&r->fpu, p) << (2 * p);
		memcpy(out, &v32, 4);
		break;
	case SRC_FIP_LO:
	case SRC_FIP_HI:
		memcpy(&v64, (const uint8_t *)&r->fpu + d->off, 8);
		v32 = (uint32_t)(d->src == SRC_FIP_LO ? v64 : v64 >> 32);
		memcpy(out, &v32, 4);
		break;
	case SRC_XMM:
		memcpy(out, r->fpu.xmm[d->idx], 16);
		break;
	case SRC_MXCSR:
		memcpy(out, &r->fpu.mxcsr, 4);
		break;
	}
	return d->size;
}

int gdb_arch_reg_set(struct gdb_arch_regs *r, unsigned int regno, const uint8_t *val, size_t len)
{
	if (regno >= NR_REGS || len != regs[regno].size)
		return -EINVAL;
	const struct x86_reg *d = &regs[regno];
	uint32_t v32;
	uint64_t v64;
	memcpy(&v32, val, 4);
	switch (d->src) {
	case SRC_GPR:
		memcpy((uint8_t *)&r->regs + d->off, val, 8);
		r->dirty |= SET_REGS;
		break;
	case SRC_EFLAGS:
		r->regs.rflags = (r->regs.rflags & ~0xffffffffULL) | v32;
		r->dirty |= SET_REGS;
		break;
	case SRC_SEL:
		/* Writing back the value it has (a 'G' packet does) is fine; changing it is not. */
		if (v32 != ((struct kvm_segment *)((uint8_t *)&r->sregs + d->off))->selector)
			return -EPERM;
		break;
	case SRC_SEG_BASE:
		memcpy((uint8_t *)&r->sregs + d->off + offsetof(struct kvm_segment, base), val, 8);
		r->dirty |= SET_SREGS;
		break;
	case SRC_SREG:
		memcpy((uint8_t *)&r->sregs + d->off, val, 8);
		r->dirty |= SET_SREGS;
		break;
	case SRC_ST:
		memcpy(r->fpu.fpr[d->idx], val, 10);
		r->dirty |= SET_FPU;
		break;
	case SRC_FPU16:
		memcpy((uint8_t *)&r->fpu + d->off, val, 2);
		r->dirty |= SET_FPU;
		break;
	case SRC_FTAG:
		r->fpu.ftwx = 0;
		for (unsigned int p = 0; p < 8; p++)
			if (((v32 >> (2 * p)) & 3) != 3)
				r->fpu.ftwx |= (uint8_t)(1u << p);
		r->dirty |= SET_FPU;
		break;
	case SRC_FIP_LO:
	case SRC_FIP_HI:
		memcpy(&v64, (uint8_t *)&r->fpu + d->off, 8);
		if (d->src == SRC_FIP_LO)
			v64 = (v64 & ~0xffffffffULL) | v32;
		else
			v64 = (v64 & 0xffffffffULL) | (uint64_t)v32 << 32;
		memcpy((uint8_t *)&r->fpu + d->off, &v64, 8);
		r->dirty |= SET_FPU;
		break;
	case SRC_XMM:
		memcpy(r->fpu.xmm[d->idx], val, 16);
		r->dirty |= SET_FPU;
		break;
	case SRC_MXCSR:
		r->fpu.mxcsr = v32;
		r->dirty |= SET_FPU;
		break;
	}
	return 0;
}

uint64_t gdb_arch_pc(const struct gdb_arch_regs *r)
{
	return r->regs.rip;
}

void gdb_arch_set_pc(struct gdb_arch_regs *r, uint64_t pc)
{
	r->regs.rip = pc;
	r->dirty |= SET_REGS;
}

int gdb_arch_va_to_pa(const struct guest_mem *gm, const struct gdb_arch_regs *r, uint64_t va, uint64_t *gpa,
		      uint64_t *left)
{
	struct x86_mmu mmu = { .cr0 = r->sregs.cr0, .cr3 = r->sregs.cr3, .cr4 = r->sregs.cr4,
			       .efer = r->sregs.efer };
	return x86_gva_to_gpa(gm, &mmu, va, gpa, left);
}

/* Types gdb's amd64 description uses that are not built into gdb: EFLAGS' bits and vec128. */
static const char xml_types[] =
	"<flags id=\"i386_eflags\" size=\"4\">"
	"<field name=\"CF\" start=\"0\" end=\"0\"/><field name=\"\" start=\"1\" end=\"1\"/>"
	"<field name=\"PF\" start=\"2\" end=\"2\"/><field name=\"AF\" start=\"4\" end=\"4\"/>"
	"<field name=\"ZF\" start=\"6\" end=\"6\"/><field name=\"SF\" start=\"7\" end=\"7\"/>"
	"<field name=\"TF\" start=\"8\" end=\"8\"/><field name=\"IF\" start=\"9\" end=\"9\"/>"
	"<field name=\"DF\" start=\"10\" end=\"10\"/><field name=\"OF\" start=\"11\" end=\"11\"/>"
	"<field name=\"NT\" start=\"14\" end=\"14\"/><field name=\"RF\" start=\"16\" end=\"16\"/>"
	"<field name=\"VM\" start=\"17\" end=\"17\"/><field name=\"AC\" start=\"18\" end=\"18\"/>"
	"<field name=\"VIF\" start=\"19\" end=\"19\"/><field name=\"VIP\" start=\"20\" end=\"20\"/>"
	"<field name=\"ID\" start=\"21\" end=\"21\"/></flags>\n";
static const char xml_sse_types[] =
	"<vector id=\"v4f\" type=\"ieee_single\" count=\"4\"/>"
	"<vector id=\"v2d\" type=\"ieee_double\" count=\"2\"/>"
	"<vector id=\"v16i8\" type=\"int8\" count=\"16\"/>"
	"<vector id=\"v8i16\" type=\"int16\" count=\"8\"/>"
	"<vector id=\"v4i32\" type=\"int32\" count=\"4\"/>"
	"<vector id=\"v2i64\" type=\"int64\" count=\"2\"/>"
	"<union id=\"vec128\"><field name=\"v4_float\" type=\"v4f\"/>"
	"<field name=\"v2_double\" type=\"v2d\"/><field name=\"v16_int8\" type=\"v16i8\"/>"
	"<field name=\"v8_int16\" type=\"v8i16\"/><field name=\"v4_int32\" type=\"v4i32\"/>"
	"<field name=\"v2_int64\" type=\"v2i64\"/><field name=\"uint128\" type=\"uint128\"/></union>\n";

ssize_t gdb_arch_target_xml(char *buf, size_t len)
{
	size_t o = 0;
	int n;
#define EMIT(...)                                                   \
	do {                                                        \
		n = snprintf(buf + o, len - o, __VA_ARGS__);        \
		if (n < 0 || (size_t)n >= len - o)                  \
			return -ENOSPC;                             \
		o += (size_t)n;                                     \
	} while (0)
	EMIT("<?xml version=\"1.0\"?>\n<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n"
	     "<target version=\"1.0\">\n<architecture>i386:x86-64</architecture>\n");
	for (unsigned int f = 0; f < sizeof(features) / sizeof(features[0]); f++) {
		EMIT("<feature name=\"%s\">\n%s", features[f], f == 0 ? xml_types : f == 1 ? xml_sse_types : "");
		for (unsigned int i = 0; i < NR_REGS; i++) {
			if (regs[i].feature != f)
				continue;
			EMIT("<reg name=\"%s\" bitsize=\"%u\" type=\"%s\" regnum=\"%u\"", regs[i].name,
			     regs[i].size * 8u, regs[i].type, i);
			if (regs[i].group)
				EMIT(" group=\"%s\"", regs[i].group);
			EMIT("/>\n");
		}
		EMIT("</feature>\n");
	}
	EMIT("</target>\n");
#undef EMIT
	return (ssize_t)o;
}

/* DR7 (Intel SDM vol. 3B, 17.2.4): enable, R/W and LEN fields of slot n. */
#define DR7_GE (1u << 9)
#define DR7_FIXED1 (1u << 10)
#define DR7_G(n) (2u << ((n) * 2))
#define DR7_RW_SHIFT(n) (16 + (n) * 4)
#define DR7_LEN_SHIFT(n) (18 + (n) * 4)
#define DR7_RW_EXEC 0u
#define DR7_RW_WRITE 1u
#define DR7_RW_ACCESS 3u
#define DR6_BS (1u << 14)

int gdb_arch_hw_point_check(enum gdb_point_type type, uint64_t addr, unsigned int len)
{
	if (type == GDB_POINT_HW)
		return 0;
	if (type < GDB_POINT_WRITE || type > GDB_POINT_ACCESS)
		return -EINVAL;
	if (len != 1 && len != 2 && len != 4 && len != 8)
		return -EINVAL;
	return addr % len ? -EINVAL : 0;
}

static unsigned int dr7_len(unsigned int len)
{
	switch (len) {
	case 2: return 1;
	case 8: return 2;
	case 4: return 3;
	default: return 0;
	}
}

int gdb_arch_debug_apply(int vcpu_fd, bool sw_bp, const struct gdb_hw_point hw[GDB_HW_POINTS], bool step,
			 bool block_irq)
{
	struct kvm_guest_debug dbg;
	memset(&dbg, 0, sizeof(dbg));
	uint64_t dr7 = DR7_GE | DR7_FIXED1;
	bool any_hw = false;
	for (unsigned int n = 0; n < GDB_HW_POINTS; n++) {
		if (!hw[n].used)
			continue;
		any_hw = true;
		unsigned int rw = hw[n].type == GDB_POINT_HW	 ? DR7_RW_EXEC :
				  hw[n].type == GDB_POINT_WRITE ? DR7_RW_WRITE :
								  DR7_RW_ACCESS;
		unsigned int len = hw[n].type == GDB_POINT_HW ? 0 : dr7_len(hw[n].len);
		dbg.arch.debugreg[n] = hw[n].addr;
		dr7 |= DR7_G(n) | (uint64_t)rw << DR7_RW_SHIFT(n) | (uint64_t)len << DR7_LEN_SHIFT(n);
	}
	if (sw_bp)
		dbg.control |= KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_SW_BP;
	if (any_hw) {
		dbg.control |= KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_HW_BP;
		dbg.arch.debugreg[7] = dr7;
	}
	if (step)
		dbg.control |= KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_SINGLESTEP |
			       (block_irq ? KVM_GUESTDBG_BLOCKIRQ : 0);
	return ioctl(vcpu_fd, KVM_SET_GUEST_DEBUG, &dbg) < 0 ? -errno : 0;
}

bool gdb_arch_can_block_irq(int kvm_fd)
{
	int mask = ioctl(kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SET_GUEST_DEBUG2);
	return mask > 0 && (mask & KVM_GUESTDBG_BLOCKIRQ);
}

#define X86_VEC_DB 1
#define X86_VEC_BP 3

void gdb_arch_debug_decode(const struct kvm_run *run, const struct gdb_hw_point hw[GDB_HW_POINTS], bool stepping,
			   struct gdb_arch_hit *hit)
{
	const struct kvm_debug_exit_arch *a = &run->debug.arch;
	hit->pc = a->pc;
	hit->slot = 0;
	hit->kind = GDB_HIT_FOREIGN;
	if (a->exception == X86_VEC_BP) {
		hit->kind = GDB_HIT_SWBREAK;
		return;
	}
	if (a->exception != X86_VEC_DB)
		return;
	/* A data breakpoint hit during a step is the more interesting news: report it first. */
	for (unsigned int n = 0; n < GDB_HW_POINTS; n++) {
		if (hw[n].used && (a->dr6 & (1u << n))) {
			hit->kind = hw[n].type == GDB_POINT_HW ? GDB_HIT_HWBREAK : GDB_HIT_WATCH;
			hit->slot = n;
			return;
		}
	}
	if (stepping)
		hit->kind = GDB_HIT_STEP; /* DR6.BS, or a #DB with no hit bit while we stepped */
}

int gdb_arch_reinject(int vcpu_fd, const struct kvm_run *run)
{
	const struct kvm_debug_exit_arch *a = &run->debug.arch;
	if (a->exception == X86_VEC_DB) {
		/* The guest's handler reads DR6 to learn why it trapped. */
		struct kvm_debugregs dr;
		if (ioctl(vcpu_fd, KVM_GET_DEBUGREGS, &dr) < 0)
			return -errno;
		dr.dr6 = a->dr6;
		if (ioctl(vcpu_fd, KVM_SET_DEBUGREGS, &dr) < 0)
			return -errno;
	}
	struct kvm_vcpu_events ev;
	if (ioctl(vcpu_fd, KVM_GET_VCPU_EVENTS, &ev) < 0)
		return -errno;
	ev.flags = 0; /* change the exception only: NMI, SIPI, shadow and SMM state stay as they are */
	ev.exception.injected = 1;
	ev.exception.nr = (uint8_t)a->exception;
	ev.exception.has_error_code = 0;
	ev.exception.error_code = 0;
	return ioctl(vcpu_fd, KVM_SET_VCPU_EVENTS, &ev) < 0 ? -errno : 0;
}
