/*
 * fuzz_gdb_stub.c: libFuzzer target: what a debugger's bytes reach in the gdb stub: the packet
 * receiver (with frame round trips) and every packet handler of gdb_cmds.c, with the x86 registers,
 * the page walk and guest memory behind them. The run control of gdb_stub.c (threads, KVM) is
 * replaced by the small fakes below, which check what the handlers ask of it.
 *
 * Input: FZ_HEADER bytes choose the machine (vCPU count, paging mode, CR3), the rest is the byte
 * stream from the debugger. Each packet is served as the stub serves it while the guest is stopped;
 * a resume or a detach is taken at once (the guest stops again, a debugger connects again).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/gdb_packet.h"
#include "vmm/gdb_session.h"
#include "vmm/machine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_HEADER 6
#define FZ_RAM (256 * 1024)
#define FZ_MAX_VCPUS 4
/* Paging modes the header picks from (machine_setup()). */
#define FZ_MODES 5

static struct gdb_rx rx, back_rx;
static char frame[2 * GDB_PACKET_MAX + 8];
static uint8_t bin[GDB_PACKET_MAX];
static uint8_t ram[FZ_RAM];
static struct vm vm;
static struct gdb_stub stub;
static struct gdb_vcpu vcpus[FZ_MAX_VCPUS];
static struct gdb_arch_regs *committed; /* what a "KVM_GET_*" gives: the header's state */

/* --- the frame codec on its own --- */

/* Every packet received must frame back into a packet with the same payload, and its other
   decoders must stay inside their buffers and agree with what they return. */
static void fz_packet(const char *p, size_t len)
{
	if (len > GDB_PACKET_MAX || p[len] != '\0')
		__builtin_trap();
	ssize_t n = gdb_frame(p, len, frame, sizeof(frame));
	if (n < 0)
		__builtin_trap(); /* the frame buffer holds any payload, escaped */
	gdb_rx_init(&back_rx);
	enum gdb_rx_event e = GDB_RX_NONE;
	for (ssize_t i = 0; i < n; i++)
		e = gdb_rx_feed(&back_rx, (uint8_t)frame[i]);
	if (e != GDB_RX_PACKET)
		__builtin_trap();
	ssize_t u = gdb_unescape(back_rx.buf, back_rx.len, bin, sizeof(bin));
	if (u != (ssize_t)len || memcmp(bin, p, len) != 0)
		__builtin_trap();
	(void)gdb_unescape(p, len, bin, sizeof(bin));
	ssize_t h = gdb_hex_decode(p, len, bin, sizeof(bin));
	if (h >= 0 && (size_t)h * 2 != len)
		__builtin_trap();
	const char *q = p;
	uint64_t v;
	if (gdb_parse_hex(&q, &v) == 0 && (q == p || q > p + 16))
		__builtin_trap();
}

/* --- the fakes of gdb_stub.c and vm.c that gdb_cmds.c calls --- */

/* A reply must fit the PacketSize we advertise and frame into a packet gdb can check. */
void gdb_send(struct gdb_stub *s, const char *payload, size_t len)
{
	if (len > GDB_PACKET_MAX)
		__builtin_trap();
	ssize_t n = gdb_frame(payload, len, s->last_frame, sizeof(s->last_frame));
	if (n < 0)
		__builtin_trap();
	gdb_rx_init(&back_rx);
	enum gdb_rx_event e = GDB_RX_NONE;
	for (ssize_t i = 0; i < n; i++)
		e = gdb_rx_feed(&back_rx, (uint8_t)s->last_frame[i]);
	if (e != GDB_RX_PACKET)
		__builtin_trap();
	s->last_frame_len = (size_t)n;
}

void gdb_send_str(struct gdb_stub *s, const char *payload)
{
	gdb_send(s, payload, strlen(payload));
}

void gdb_send_stop_reply(struct gdb_stub *s)
{
	gdb_send_str(s, "T05thread:1;");
}

/* The guest runs and stops again at once. */
void gdb_resume(struct gdb_stub *s, int step_vcpu)
{
	if (step_vcpu >= (int)s->nr_vcpus)
		__builtin_trap(); /* a step of a vCPU that does not exist */
	for (unsigned int i = 0; i < s->nr_vcpus; i++)
		s->vcpus[i].regs_valid = false;
	s->state = GDB_RUNNING;
}

/* As gdb_stub.c does: the guest gets its bytes back and nothing stays armed. */
void gdb_detach(struct gdb_stub *s)
{
	for (unsigned int i = 0; i < GDB_MAX_SW_POINTS; i++) {
		void *p = s->sw[i].used ? gm_ptr(&s->vm->mem, s->sw[i].gpa, GDB_ARCH_SW_BP_LEN) : NULL;
		if (p)
			memcpy(p, s->sw[i].saved, GDB_ARCH_SW_BP_LEN);
		s->sw[i].used = false;
	}
	memset(s->hw, 0, sizeof(s->hw));
	s->state = GDB_NO_CLIENT;
}

int gdb_vcpu_fd(struct gdb_stub *s, unsigned int vcpu)
{
	if (vcpu >= s->nr_vcpus)
		__builtin_trap();
	return -1; /* every KVM call fails (EBADF): the handlers must take that */
}

/* "Loading" gives the header's registers; a flush never sticks (its ioctl fails). */
struct gdb_arch_regs *gdb_vcpu_regs(struct gdb_stub *s, unsigned int vcpu)
{
	if (vcpu >= s->nr_vcpus)
		__builtin_trap();
	struct gdb_vcpu *gv = &s->vcpus[vcpu];
	if (!gv->regs_valid) {
		uint8_t v[16];
		for (unsigned int r = 0; r < gdb_arch_nr_regs(); r++) {
			int n = gdb_arch_reg_get(committed, r, v);
			if (n < 0 || gdb_arch_reg_set(gv->regs, r, v, (size_t)n))
				__builtin_trap(); /* selectors too: no packet can change one */
		}
		gv->regs_valid = true;
	}
	return gv->regs;
}

void vm_request_stop(struct vm *v, enum vm_stop_reason reason, int status, const char *fmt, ...)
{
	(void)fmt;
	v->stop_reason = reason;
	v->stop_status = status;
}

/* --- the machine the header describes --- */

/* gdb_x86.c's numbers of the registers that decide the paging mode, from the target description. */
static unsigned int reg_cr0, reg_cr3, reg_cr4, reg_efer;

static unsigned int regno_of(const char *name)
{
	char want[32];
	snprintf(want, sizeof(want), "<reg name=\"%s\"", name);
	const char *p = strstr(stub.xml, want);
	const char *num = p ? strstr(p, "regnum=\"") : NULL;
	if (!num)
		__builtin_trap();
	return (unsigned int)strtoul(num + 8, NULL, 10);
}

static void set_sreg(unsigned int regno, uint64_t v)
{
	uint8_t b[8];
	memcpy(b, &v, 8);
	if (gdb_arch_reg_set(committed, regno, b, 8))
		__builtin_trap();
}

/*
 * 4-level page tables at 0x1000: the first 2 MiB identity-mapped by one large page (RAM ends at
 * 256 KiB: the rest maps nothing), and 0xffffffff80000000 to 0x10000 by 4 KiB pages.
 */
static void build_tables(void)
{
	static const uint64_t e[][2] = {
		{ 0x1000, 0x2003 },		    /* PML4[0] -> PDPT 0x2000 */
		{ 0x1000 + 511 * 8, 0x5003 },	    /* PML4[511] -> PDPT 0x5000 */
		{ 0x2000, 0x3003 },		    /* PDPT[0] -> PD 0x3000 */
		{ 0x3000, 0x0083 },		    /* PD[0]: 2 MiB page at 0 */
		{ 0x5000 + 510 * 8, 0x6003 },	    /* PDPT[510] -> PD 0x6000 */
		{ 0x6000, 0x7003 },		    /* PD[0] -> PT 0x7000 */
		{ 0x7000, 0x10003 },		    /* PT[0]: 0x10000 */
		{ 0x7008, 0x11003 },		    /* PT[1]: 0x11000 */
		{ 0x7010, 0x3ffff003 },		    /* PT[2]: outside RAM */
	};
	for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		memcpy(ram + e[i][0], &e[i][1], 8);
}

static void machine_setup(const uint8_t *h)
{
	memset(ram, 0, sizeof(ram));
	build_tables();
	memset(&stub.sw, 0, sizeof(stub.sw));
	memset(&stub.hw, 0, sizeof(stub.hw));
	stub.nr_vcpus = 1 + h[0] % FZ_MAX_VCPUS;
	for (unsigned int i = 0; i < FZ_MAX_VCPUS; i++)
		vcpus[i].regs_valid = false;
	stub.g_vcpu = stub.c_vcpu = 0;
	stub.no_ack = false;
	stub.client_swbreak = false;
	stub.state = GDB_STOPPED;
	uint32_t cr3;
	memcpy(&cr3, h + 2, 4);
	/* 0 no paging, 1 32-bit, 2 32-bit with PSE, 3 PAE, 4 long mode 4-level, 5 (and more) 5-level */
	unsigned int mode = h[1] % (FZ_MODES + 1);
	set_sreg(reg_cr0, mode ? 0x80000011ULL : 0x11ULL);
	set_sreg(reg_cr3, mode >= 4 && (h[1] & 0x80) ? 0x1000 : cr3);
	set_sreg(reg_cr4, mode == 2 ? 0x10 : mode == 3 || mode == 4 ? 0x20 : mode == 5 ? 0x1020 : 0);
	set_sreg(reg_efer, mode >= 4 ? 0x500 : 0);
}

static void init_once(void)
{
	const struct gm_region region = { .gpa = 0, .size = FZ_RAM, .host = ram };
	if (gm_init_from(&vm.mem, &region, 1))
		__builtin_trap();
	stub.vm = &vm;
	stub.vcpus = vcpus;
	stub.conn_fd = stub.listen_fd = stub.wake_efd = -1;
	ssize_t xl = gdb_arch_target_xml(stub.xml, sizeof(stub.xml));
	if (xl < 0)
		__builtin_trap();
	stub.xml_len = (size_t)xl;
	committed = gdb_arch_regs_new();
	for (unsigned int i = 0; i < FZ_MAX_VCPUS; i++)
		vcpus[i].regs = gdb_arch_regs_new();
	if (!committed || !vcpus[FZ_MAX_VCPUS - 1].regs)
		__builtin_trap();
	reg_cr0 = regno_of("cr0");
	reg_cr3 = regno_of("cr3");
	reg_cr4 = regno_of("cr4");
	reg_efer = regno_of("efer");
}

/* What must hold after every packet. */
static void check_session(void)
{
	if (stub.g_vcpu >= stub.nr_vcpus || stub.c_vcpu >= stub.nr_vcpus)
		__builtin_trap();
	for (unsigned int i = 0; i < GDB_MAX_SW_POINTS; i++) {
		const struct gdb_sw_point *sp = &stub.sw[i];
		if (!sp->used)
			continue;
		/* The trap stays in guest memory whatever the debugger wrote over it. */
		const uint8_t *p = gm_ptr(&vm.mem, sp->gpa, GDB_ARCH_SW_BP_LEN);
		if (!p || memcmp(p, gdb_arch_sw_bp, GDB_ARCH_SW_BP_LEN))
			__builtin_trap();
		for (unsigned int k = i + 1; k < GDB_MAX_SW_POINTS; k++)
			if (stub.sw[k].used && stub.sw[k].addr == sp->addr)
				__builtin_trap(); /* one breakpoint per address */
	}
	for (unsigned int i = 0; i < GDB_HW_POINTS; i++)
		if (stub.hw[i].used && gdb_arch_hw_point_check(stub.hw[i].type, stub.hw[i].addr, stub.hw[i].len))
			__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	if (!ready) {
		init_once();
		ready = 1;
	}
	uint8_t header[FZ_HEADER] = { 0 };
	size_t h = size < FZ_HEADER ? size : FZ_HEADER;
	memcpy(header, data, h);
	machine_setup(header);
	gdb_rx_init(&rx);
	for (size_t i = h; i < size; i++) {
		if (gdb_rx_feed(&rx, data[i]) != GDB_RX_PACKET)
			continue;
		fz_packet(rx.buf, rx.len);
		gdb_cmd_dispatch(&stub, rx.buf, rx.len);
		check_session();
		if (stub.state != GDB_STOPPED) { /* it stopped again, or a debugger connected again */
			stub.state = GDB_STOPPED;
			stub.g_vcpu = stub.c_vcpu = 0;
		}
	}
	return 0;
}
