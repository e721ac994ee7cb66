/* gdb_cmds.c: the gdb stub's packets, served while every vCPU is parked (GDB manual, "Packets"). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vmm/gdb_session.h"
#include "vmm/machine.h"

/* Error replies carry an errno-like number in hex; gdb only shows it. */
#define E_INVAL "E16"
#define E_FAULT "E0e"
#define E_NOSPC "E1c"
#define E_IO "E05"
#define E_PERM "E01"

/* The largest memory read or write a packet can carry as hex. */
#define GDB_MEM_MAX ((GDB_PACKET_MAX - 8) / 2)

/* "tid" as gdb writes it without the multiprocess extension: -1 all, 0 any, N the (N-1)th vCPU.
   Returns the vCPU index, -1 for "all or any", -2 for a bad or unknown thread. */
static int parse_thread(struct gdb_stub *s, const char **p)
{
	if ((*p)[0] == '-' && (*p)[1] == '1') {
		*p += 2;
		return -1;
	}
	uint64_t t;
	if (gdb_parse_hex(p, &t))
		return -2;
	if (t == 0)
		return -1;
	return t <= s->nr_vcpus ? (int)(t - 1) : -2;
}

/* "ADDR,LEN" then `end` (':' for M and X, '\0' for m). */
static int parse_addr_len(const char **p, uint64_t *addr, uint64_t *len, char end)
{
	if (gdb_parse_hex(p, addr) || **p != ',')
		return -EINVAL;
	(*p)++;
	if (gdb_parse_hex(p, len) || **p != end)
		return -EINVAL;
	return 0;
}

/*
 * Copy between buf and guest-virtual [va, va + len) one page at a time, through the page walk and
 * gm_ptr. Software breakpoints are invisible: a read shows the bytes they replaced; a write under
 * one changes the saved byte and leaves the trap in place. Returns the bytes done before the
 * first address that does not translate.
 */
static size_t mem_access(struct gdb_stub *s, const struct gdb_arch_regs *regs, uint64_t va, uint8_t *buf,
			 size_t len, bool write)
{
	const struct guest_mem *gm = &s->vm->mem;
	size_t done = 0;
	while (done < len) {
		uint64_t gpa, left;
		if (gdb_arch_va_to_pa(gm, regs, va + done, &gpa, &left))
			break;
		size_t chunk = len - done < left ? len - done : (size_t)left;
		uint8_t *p = gm_ptr(gm, gpa, chunk);
		if (!p)
			break;
		if (write)
			memcpy(p, buf + done, chunk);
		else
			memcpy(buf + done, p, chunk);
		for (unsigned int i = 0; i < GDB_MAX_SW_POINTS; i++) {
			struct gdb_sw_point *sp = &s->sw[i];
			for (unsigned int k = 0; sp->used && k < GDB_ARCH_SW_BP_LEN; k++) {
				uint64_t at = sp->gpa + k;
				if (at < gpa || at - gpa >= chunk)
					continue;
				if (write) {
					sp->saved[k] = p[at - gpa];
					p[at - gpa] = gdb_arch_sw_bp[k];
				} else {
					buf[done + (at - gpa)] = sp->saved[k];
				}
			}
		}
		done += chunk;
	}
	return done;
}

static struct gdb_arch_regs *g_regs(struct gdb_stub *s)
{
	return gdb_vcpu_regs(s, s->g_vcpu);
}

static void cmd_read_mem(struct gdb_stub *s, const char *args)
{
	uint64_t addr, len;
	if (parse_addr_len(&args, &addr, &len, '\0')) {
		gdb_send_str(s, E_INVAL);
		return;
	}
	if (len > GDB_MEM_MAX)
		len = GDB_MEM_MAX; /* gdb takes a short read and asks for the rest */
	struct gdb_arch_regs *regs = g_regs(s);
	if (!regs) {
		gdb_send_str(s, E_IO);
		return;
	}
	uint8_t *buf = s->scratch;
	size_t got = mem_access(s, regs, addr, buf, (size_t)len, false);
	if (got == 0 && len) {
		gdb_send_str(s, E_FAULT);
		return;
	}
	gdb_hex_encode(buf, got, s->reply);
	gdb_send(s, s->reply, 2 * got);
}

/* M (hex data) and X (binary data, '}'-escaped). */
static void cmd_write_mem(struct gdb_stub *s, const char *args, size_t args_len, bool binary)
{
	const char *p = args;
	uint64_t addr, len;
	if (parse_addr_len(&p, &addr, &len, ':')) {
		gdb_send_str(s, E_INVAL);
		return;
	}
	p++;
	size_t data_len = args_len - (size_t)(p - args);
	uint8_t *buf = s->scratch;
	ssize_t n = binary ? gdb_unescape(p, data_len, buf, sizeof(s->scratch))
			   : gdb_hex_decode(p, data_len, buf, sizeof(s->scratch));
	if (n < 0 || (uint64_t)n != len) {
		gdb_send_str(s, E_INVAL);
		return;
	}
	if (len == 0) /* gdb probes X support with an empty write */ {
		gdb_send_str(s, "OK");
		return;
	}
	struct gdb_arch_regs *regs = g_regs(s);
	if (!regs) {
		gdb_send_str(s, E_IO);
		return;
	}
	size_t done = mem_access(s, regs, addr, buf, (size_t)len, true);
	gdb_send_str(s, done == len ? "OK" : E_FAULT);
}

static void cmd_read_regs(struct gdb_stub *s)
{
	struct gdb_arch_regs *regs = g_regs(s);
	if (!regs) {
		gdb_send_str(s, E_IO);
		return;
	}
	size_t o = 0;
	uint8_t v[16];
	for (unsigned int i = 0; i < gdb_arch_nr_regs(); i++) {
		int n = gdb_arch_reg_get(regs, i, v);
		if (n < 0) {
			gdb_send_str(s, E_IO);
			return;
		}
		gdb_hex_encode(v, (size_t)n, s->reply + o);
		o += 2 * (size_t)n;
	}
	gdb_send(s, s->reply, o);
}

/* After a refused write the cache no longer matches the vCPU: fetch it again next time. */
static void regs_flush(struct gdb_stub *s)
{
	struct gdb_arch_regs *regs = g_regs(s);
	if (gdb_arch_regs_flush(regs, gdb_vcpu_fd(s, s->g_vcpu))) {
		s->vcpus[s->g_vcpu].regs_valid = false;
		gdb_send_str(s, E_IO);
		return;
	}
	gdb_send_str(s, "OK");
}

static void cmd_write_regs(struct gdb_stub *s, const char *hex, size_t len)
{
	struct gdb_arch_regs *regs = g_regs(s);
	uint8_t *buf = s->scratch;
	if (!regs) {
		gdb_send_str(s, E_IO);
		return;
	}
	if (len != 2 * gdb_arch_regs_size() || gdb_hex_decode(hex, len, buf, sizeof(s->scratch)) < 0) {
		gdb_send_str(s, E_INVAL);
		return;
	}
	size_t o = 0;
	uint8_t v[16];
	for (unsigned int i = 0; i < gdb_arch_nr_regs(); i++) {
		int n = gdb_arch_reg_get(regs, i, v); /* the size of register i */
		if (n < 0 || gdb_arch_reg_set(regs, i, buf + o, (size_t)n)) {
			s->vcpus[s->g_vcpu].regs_valid = false;
			gdb_send_str(s, E_PERM);
			return;
		}
		o += (size_t)n;
	}
	regs_flush(s);
}

static void cmd_read_reg(struct gdb_stub *s, const char *args)
{
	uint64_t regno;
	uint8_t v[16];
	struct gdb_arch_regs *regs = g_regs(s);
	if (!regs) {
		gdb_send_str(s, E_IO);
		return;
	}
	if (gdb_parse_hex(&args, &regno) || *args || regno >= gdb_arch_nr_regs()) {
		gdb_send_str(s, E_INVAL);
		return;
	}
	int n = gdb_arch_reg_get(regs, (unsigned int)regno, v);
	if (n < 0) {
		gdb_send_str(s, E_INVAL);
		return;
	}
	gdb_hex_encode(v, (size_t)n, s->reply);
	gdb_send(s, s->reply, 2 * (size_t)n);
}

static void cmd_write_reg(struct gdb_stub *s, const char *args)
{
	uint64_t regno;
	uint8_t v[16];
	struct gdb_arch_regs *regs = g_regs(s);
	if (!regs) {
		gdb_send_str(s, E_IO);
		return;
	}
	if (gdb_parse_hex(&args, &regno) || *args != '=' || regno >= gdb_arch_nr_regs()) {
		gdb_send_str(s, E_INVAL);
		return;
	}
	args++;
	ssize_t n = gdb_hex_decode(args, strlen(args), v, sizeof(v));
	if (n < 0) {
		gdb_send_str(s, E_INVAL);
		return;
	}
	int ret = gdb_arch_reg_set(regs, (unsigned int)regno, v, (size_t)n);
	if (ret) {
		gdb_send_str(s, ret == -EPERM ? E_PERM : E_INVAL);
		return;
	}
	regs_flush(s);
}

/* Insert or remove the software breakpoint at addr: the reply. Both are idempotent, as gdb expects. */
static const char *sw_point(struct gdb_stub *s, bool insert, uint64_t addr)
{
	struct gdb_sw_point *free_slot = NULL;
	for (unsigned int i = 0; i < GDB_MAX_SW_POINTS; i++) {
		struct gdb_sw_point *sp = &s->sw[i];
		if (sp->used && sp->addr == addr) {
			void *p = insert ? NULL : gm_ptr(&s->vm->mem, sp->gpa, GDB_ARCH_SW_BP_LEN);
			if (p)
				memcpy(p, sp->saved, GDB_ARCH_SW_BP_LEN);
			sp->used = insert;
			return "OK";
		}
		if (!sp->used && !free_slot)
			free_slot = sp;
	}
	if (!insert)
		return "OK";
	if (!free_slot)
		return E_NOSPC;
	struct gdb_arch_regs *regs = g_regs(s);
	uint64_t gpa, left;
	uint8_t *p;
	if (!regs || gdb_arch_va_to_pa(&s->vm->mem, regs, addr, &gpa, &left) || left < GDB_ARCH_SW_BP_LEN ||
	    !(p = gm_ptr(&s->vm->mem, gpa, GDB_ARCH_SW_BP_LEN)))
		return E_FAULT;
	*free_slot = (struct gdb_sw_point){ .used = true, .addr = addr, .gpa = gpa };
	memcpy(free_slot->saved, p, GDB_ARCH_SW_BP_LEN);
	memcpy(p, gdb_arch_sw_bp, GDB_ARCH_SW_BP_LEN);
	return "OK";
}

/* The same for a debug-register point; it is armed on every vCPU when the guest resumes. */
static const char *hw_point(struct gdb_stub *s, bool insert, const struct gdb_hw_point *want)
{
	if (gdb_arch_hw_point_check(want->type, want->addr, want->len))
		return E_INVAL;
	struct gdb_hw_point *free_slot = NULL;
	for (unsigned int n = 0; n < GDB_HW_POINTS; n++) {
		struct gdb_hw_point *h = &s->hw[n];
		if (h->used && h->type == want->type && h->addr == want->addr && h->len == want->len) {
			h->used = insert;
			return "OK";
		}
		if (!h->used && !free_slot)
			free_slot = h;
	}
	if (!insert)
		return "OK";
	if (!free_slot)
		return E_NOSPC;
	*free_slot = *want;
	return "OK";
}

/* Z/z TYPE,ADDR,KIND: insert or remove a breakpoint or watchpoint. */
static void cmd_point(struct gdb_stub *s, const char *args, bool insert)
{
	uint64_t type, addr, kind;
	if (gdb_parse_hex(&args, &type) || *args++ != ',' || gdb_parse_hex(&args, &addr) || *args++ != ',' ||
	    gdb_parse_hex(&args, &kind) || (*args && *args != ';')) {
		gdb_send_str(s, E_INVAL);
		return;
	}
	if (type > GDB_POINT_ACCESS) {
		gdb_send_str(s, ""); /* not a kind we know: unsupported */
		return;
	}
	if (type == GDB_POINT_SW) {
		gdb_send_str(s, sw_point(s, insert, addr));
		return;
	}
	struct gdb_hw_point want = { .used = true, .type = (enum gdb_point_type)type, .addr = addr,
				     .len = type == GDB_POINT_HW ? 1 : (unsigned int)(kind <= 8 ? kind : 0) };
	gdb_send_str(s, hw_point(s, insert, &want));
}

/* c/s [ADDR], C/S SIG[;ADDR]: the signal means nothing to a machine and is dropped. */
static void cmd_resume_legacy(struct gdb_stub *s, char op, const char *args)
{
	uint64_t sig, addr;
	if ((op == 'C' || op == 'S') && *args) {
		if (gdb_parse_hex(&args, &sig)) {
			gdb_send_str(s, E_INVAL);
			return;
		}
		if (*args == ';')
			args++;
	}
	if (*args) {
		struct gdb_arch_regs *regs = gdb_vcpu_regs(s, s->c_vcpu);
		if (gdb_parse_hex(&args, &addr) || *args || !regs) {
			gdb_send_str(s, E_INVAL);
			return;
		}
		gdb_arch_set_pc(regs, addr);
		if (gdb_arch_regs_flush(regs, gdb_vcpu_fd(s, s->c_vcpu))) {
			gdb_send_str(s, E_IO);
			return;
		}
	}
	gdb_resume(s, op == 's' || op == 'S' ? (int)s->c_vcpu : -1);
}

/* vCont;ACTION[:TID]...: the first thread told to step is stepped alone; otherwise all continue. */
static void cmd_vcont(struct gdb_stub *s, const char *args)
{
	int step = -1;
	while (*args == ';') {
		args++;
		char a = *args++;
		uint64_t sig;
		if (a == 'C' || a == 'S') {
			if (gdb_parse_hex(&args, &sig)) {
				gdb_send_str(s, E_INVAL);
				return;
			}
		} else if (a != 'c' && a != 's') {
			gdb_send_str(s, E_INVAL);
			return; /* 't' and 'r' are not offered */
		}
		int t = -1;
		if (*args == ':') {
			args++;
			t = parse_thread(s, &args);
			if (t == -2) {
				gdb_send_str(s, E_INVAL);
				return;
			}
		}
		if ((a == 's' || a == 'S') && step < 0)
			step = t >= 0 ? t : (int)s->c_vcpu;
	}
	if (*args) {
		gdb_send_str(s, E_INVAL);
		return;
	}
	gdb_resume(s, step);
}

static void cmd_thread_list(struct gdb_stub *s)
{
	size_t o = 0;
	s->reply[o++] = 'm';
	for (unsigned int i = 0; i < s->nr_vcpus; i++)
		o += (size_t)snprintf(s->reply + o, sizeof(s->reply) - o, "%s%x", i ? "," : "", i + 1);
	gdb_send(s, s->reply, o);
}

/* qXfer:features:read:ANNEX:OFFSET,LENGTH */
static void cmd_xfer_features(struct gdb_stub *s, const char *args)
{
	static const char annex[] = "target.xml:";
	if (strncmp(args, annex, sizeof(annex) - 1)) {
		gdb_send_str(s, "E00");
		return;
	}
	args += sizeof(annex) - 1;
	uint64_t off, len;
	if (parse_addr_len(&args, &off, &len, '\0')) {
		gdb_send_str(s, E_INVAL);
		return;
	}
	if (off > s->xml_len) {
		gdb_send_str(s, E_INVAL);
		return;
	}
	if (len > GDB_PACKET_MAX - 1)
		len = GDB_PACKET_MAX - 1;
	size_t n = s->xml_len - off < len ? s->xml_len - (size_t)off : (size_t)len;
	s->reply[0] = off + n < s->xml_len ? 'm' : 'l';
	memcpy(s->reply + 1, s->xml + off, n);
	gdb_send(s, s->reply, n + 1);
}

static void cmd_query(struct gdb_stub *s, const char *q)
{
	if (!strncmp(q, "qSupported", 10)) {
		s->client_swbreak = strstr(q, "swbreak+") && strstr(q, "hwbreak+");
		snprintf(s->reply, sizeof(s->reply),
			 "PacketSize=%x;qXfer:features:read+;swbreak+;hwbreak+;vContSupported+;QStartNoAckMode+",
			 GDB_PACKET_MAX);
		gdb_send_str(s, s->reply);
		return;
	}
	if (!strncmp(q, "qXfer:features:read:", 20)) {
		cmd_xfer_features(s, q + 20);
		return;
	}
	if (!strcmp(q, "qfThreadInfo")) {
		cmd_thread_list(s);
		return;
	}
	if (!strcmp(q, "qsThreadInfo")) {
		gdb_send_str(s, "l");
		return;
	}
	if (!strcmp(q, "qC")) {
		snprintf(s->reply, sizeof(s->reply), "QC%x", s->g_vcpu + 1);
		gdb_send_str(s, s->reply);
		return;
	}
	if (!strcmp(q, "qAttached")) {
		gdb_send_str(s, "1");
		return; /* the machine existed before us: quitting detaches */
	}
	if (!strncmp(q, "qThreadExtraInfo,", 17)) {
		const char *p = q + 17;
		int t = parse_thread(s, &p);
		if (t < 0 || *p) {
			gdb_send_str(s, E_INVAL);
			return;
		}
		char name[32];
		int n = snprintf(name, sizeof(name), "vCPU %d", t);
		gdb_hex_encode(name, (size_t)n, s->reply);
		gdb_send_str(s, s->reply);
		return;
	}
	if (!strncmp(q, "qSymbol:", 8)) {
		gdb_send_str(s, "OK");
		return;
	}
	gdb_send_str(s, "");
}

static void cmd_kill(struct gdb_stub *s, bool reply)
{
	vm_request_stop(s->vm, VM_STOP_HOST, 128 + 9, "killed by the debugger");
	if (reply)
		gdb_send_str(s, "OK");
	gdb_detach(s);
}

void gdb_cmd_dispatch(struct gdb_stub *s, char *pkt, size_t len)
{
	const char *args = pkt + 1;
	int t;
	switch (pkt[0]) {
	case '?':
		gdb_send_stop_reply(s);
		return;
	case 'g':
		cmd_read_regs(s);
		return;
	case 'G':
		cmd_write_regs(s, args, len - 1);
		return;
	case 'p':
		cmd_read_reg(s, args);
		return;
	case 'P':
		cmd_write_reg(s, args);
		return;
	case 'm':
		cmd_read_mem(s, args);
		return;
	case 'M':
	case 'X':
		cmd_write_mem(s, args, len - 1, pkt[0] == 'X');
		return;
	case 'Z':
	case 'z':
		cmd_point(s, args, pkt[0] == 'Z');
		return;
	case 'c':
	case 'C':
	case 's':
	case 'S':
		cmd_resume_legacy(s, pkt[0], args);
		return;
	case 'H':
		if ((args[0] != 'g' && args[0] != 'c') || !args[1]) {
			gdb_send_str(s, E_INVAL);
			return;
		}
		args++;
		t = parse_thread(s, &args);
		if (t == -2 || *args) {
			gdb_send_str(s, E_INVAL);
			return;
		}
		if (t >= 0 && pkt[1] == 'g')
			s->g_vcpu = (unsigned int)t;
		else if (t >= 0)
			s->c_vcpu = (unsigned int)t;
		gdb_send_str(s, "OK");
		return;
	case 'T':
		t = parse_thread(s, &args);
		gdb_send_str(s, t >= 0 && !*args ? "OK" : E_INVAL);
		return;
	case 'q':
		cmd_query(s, pkt);
		return;
	case 'Q':
		if (!strcmp(pkt, "QStartNoAckMode")) {
			gdb_send_str(s, "OK");
			s->no_ack = true; /* after the OK, which is still acknowledged */
			return;
		}
		gdb_send_str(s, "");
		return;
	case 'v':
		if (!strcmp(pkt, "vCont?")) {
			gdb_send_str(s, "vCont;c;C;s;S");
			return;
		}
		if (!strncmp(pkt, "vCont;", 6)) {
			cmd_vcont(s, pkt + 5);
			return;
		}
		if (!strncmp(pkt, "vKill", 5)) {
			cmd_kill(s, true);
			return;
		}
		gdb_send_str(s, "");
		return;
	case 'D':
		gdb_send_str(s, "OK");
		gdb_detach(s);
		return;
	case 'k':
		cmd_kill(s, false);
		return;
	default:
		gdb_send_str(s, "");
		return;
	}
}
