/* gdb_cmds.c: the gdb stub's packets, served while every vCPU is parked (GDB manual, "Packets"). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vmm/gdb_session.h"
#include "vmm/machine.h"

/*
 * Each cmd_*() returns the reply to send ("OK", an error, "" for unsupported), or NULL when it
 * sent a reply of its own (data) or let the guest run (the stop reply comes later).
 */

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

/* Send n bytes as hex (a data reply). */
static const char *send_hex(struct gdb_stub *s, const void *data, size_t n)
{
	gdb_hex_encode(data, n, s->reply);
	gdb_send(s, s->reply, 2 * n);
	return NULL;
}

static const char *cmd_read_mem(struct gdb_stub *s, const char *args)
{
	uint64_t addr, len;
	if (parse_addr_len(&args, &addr, &len, '\0'))
		return E_INVAL;
	if (len > GDB_MEM_MAX)
		len = GDB_MEM_MAX; /* gdb takes a short read and asks for the rest */
	struct gdb_arch_regs *regs = g_regs(s);
	if (!regs)
		return E_IO;
	size_t got = mem_access(s, regs, addr, s->scratch, (size_t)len, false);
	if (got == 0 && len)
		return E_FAULT;
	return send_hex(s, s->scratch, got);
}

/* M (hex data) and X (binary data, '}'-escaped). */
static const char *cmd_write_mem(struct gdb_stub *s, const char *args, size_t args_len, bool binary)
{
	const char *p = args;
	uint64_t addr, len;
	if (parse_addr_len(&p, &addr, &len, ':'))
		return E_INVAL;
	p++;
	size_t data_len = args_len - (size_t)(p - args);
	ssize_t n = binary ? gdb_unescape(p, data_len, s->scratch, sizeof(s->scratch))
			   : gdb_hex_decode(p, data_len, s->scratch, sizeof(s->scratch));
	if (n < 0 || (uint64_t)n != len)
		return E_INVAL;
	if (len == 0) /* gdb probes X support with an empty write */
		return "OK";
	struct gdb_arch_regs *regs = g_regs(s);
	if (!regs)
		return E_IO;
	return mem_access(s, regs, addr, s->scratch, (size_t)len, true) == len ? "OK" : E_FAULT;
}

static const char *cmd_read_regs(struct gdb_stub *s)
{
	struct gdb_arch_regs *regs = g_regs(s);
	if (!regs)
		return E_IO;
	size_t o = 0;
	for (unsigned int i = 0; i < gdb_arch_nr_regs(); i++) {
		int n = gdb_arch_reg_get(regs, i, s->scratch + o);
		if (n < 0)
			return E_IO;
		o += (size_t)n;
	}
	return send_hex(s, s->scratch, o);
}

/* Write the changed registers to KVM; after a refusal the cache is fetched again next time. */
static const char *regs_flush(struct gdb_stub *s, struct gdb_arch_regs *regs)
{
	if (gdb_arch_regs_flush(regs, gdb_vcpu_fd(s, s->g_vcpu))) {
		s->vcpus[s->g_vcpu].regs_valid = false;
		return E_IO;
	}
	return "OK";
}

static const char *cmd_write_regs(struct gdb_stub *s, const char *hex, size_t len)
{
	struct gdb_arch_regs *regs = g_regs(s);
	if (!regs)
		return E_IO;
	if (len != 2 * gdb_arch_regs_size() || gdb_hex_decode(hex, len, s->scratch, sizeof(s->scratch)) < 0)
		return E_INVAL;
	size_t o = 0;
	uint8_t v[16];
	for (unsigned int i = 0; i < gdb_arch_nr_regs(); i++) {
		int n = gdb_arch_reg_get(regs, i, v); /* the size of register i */
		if (n < 0 || gdb_arch_reg_set(regs, i, s->scratch + o, (size_t)n)) {
			s->vcpus[s->g_vcpu].regs_valid = false;
			return E_PERM;
		}
		o += (size_t)n;
	}
	return regs_flush(s, regs);
}

static const char *cmd_read_reg(struct gdb_stub *s, const char *args)
{
	uint64_t regno;
	uint8_t v[16];
	struct gdb_arch_regs *regs = g_regs(s);
	if (!regs)
		return E_IO;
	if (gdb_parse_hex(&args, &regno) || *args || regno >= gdb_arch_nr_regs())
		return E_INVAL;
	int n = gdb_arch_reg_get(regs, (unsigned int)regno, v);
	return n < 0 ? E_INVAL : send_hex(s, v, (size_t)n);
}

static const char *cmd_write_reg(struct gdb_stub *s, const char *args)
{
	uint64_t regno;
	uint8_t v[16];
	struct gdb_arch_regs *regs = g_regs(s);
	if (!regs)
		return E_IO;
	if (gdb_parse_hex(&args, &regno) || *args != '=' || regno >= gdb_arch_nr_regs())
		return E_INVAL;
	args++;
	ssize_t n = gdb_hex_decode(args, strlen(args), v, sizeof(v));
	if (n < 0)
		return E_INVAL;
	int ret = gdb_arch_reg_set(regs, (unsigned int)regno, v, (size_t)n);
	if (ret)
		return ret == -EPERM ? E_PERM : E_INVAL;
	return regs_flush(s, regs);
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
static const char *cmd_point(struct gdb_stub *s, const char *args, bool insert)
{
	uint64_t type, addr, kind;
	if (gdb_parse_hex(&args, &type) || *args++ != ',' || gdb_parse_hex(&args, &addr) || *args++ != ',' ||
	    gdb_parse_hex(&args, &kind) || (*args && *args != ';'))
		return E_INVAL;
	if (type > GDB_POINT_ACCESS)
		return ""; /* not a kind we know: unsupported */
	if (type == GDB_POINT_SW)
		return sw_point(s, insert, addr);
	struct gdb_hw_point want = { .used = true, .type = (enum gdb_point_type)type, .addr = addr,
				     .len = type == GDB_POINT_HW ? 1 : (unsigned int)(kind <= 8 ? kind : 0) };
	return hw_point(s, insert, &want);
}

/* c/s [ADDR], C/S SIG[;ADDR]: the signal means nothing to a machine and is dropped. */
static const char *cmd_resume_legacy(struct gdb_stub *s, char op, const char *args)
{
	uint64_t sig, addr;
	if ((op == 'C' || op == 'S') && *args) {
		if (gdb_parse_hex(&args, &sig))
			return E_INVAL;
		if (*args == ';')
			args++;
	}
	if (*args) {
		struct gdb_arch_regs *regs = gdb_vcpu_regs(s, s->c_vcpu);
		if (gdb_parse_hex(&args, &addr) || *args || !regs)
			return E_INVAL;
		gdb_arch_set_pc(regs, addr);
		if (gdb_arch_regs_flush(regs, gdb_vcpu_fd(s, s->c_vcpu)))
			return E_IO;
	}
	gdb_resume(s, op == 's' || op == 'S' ? (int)s->c_vcpu : -1);
	return NULL;
}

/* vCont;ACTION[:TID]...: the first thread told to step is stepped alone; otherwise all continue. */
static const char *cmd_vcont(struct gdb_stub *s, const char *args)
{
	int step = -1;
	while (*args == ';') {
		args++;
		char a = *args++;
		uint64_t sig;
		if ((a == 'C' || a == 'S') && gdb_parse_hex(&args, &sig))
			return E_INVAL;
		if (a != 'c' && a != 's' && a != 'C' && a != 'S')
			return E_INVAL; /* 't' and 'r' are not offered */
		int t = -1;
		if (*args == ':') {
			args++;
			t = parse_thread(s, &args);
			if (t == -2)
				return E_INVAL;
		}
		if ((a == 's' || a == 'S') && step < 0)
			step = t >= 0 ? t : (int)s->c_vcpu;
	}
	if (*args)
		return E_INVAL;
	gdb_resume(s, step);
	return NULL;
}

/* Hg/Hc TID: the thread later packets act on (g, m, ...) or step (s). */
static const char *cmd_set_thread(struct gdb_stub *s, const char *args)
{
	char op = *args++;
	if (op != 'g' && op != 'c')
		return E_INVAL;
	int t = parse_thread(s, &args);
	if (t == -2 || *args)
		return E_INVAL;
	if (t >= 0 && op == 'g')
		s->g_vcpu = (unsigned int)t;
	else if (t >= 0)
		s->c_vcpu = (unsigned int)t;
	return "OK";
}

/* qXfer:features:read:ANNEX:OFFSET,LENGTH */
static const char *cmd_xfer_features(struct gdb_stub *s, const char *args)
{
	static const char annex[] = "target.xml:";
	if (strncmp(args, annex, sizeof(annex) - 1))
		return "E00";
	args += sizeof(annex) - 1;
	uint64_t off, len;
	if (parse_addr_len(&args, &off, &len, '\0') || off > s->xml_len)
		return E_INVAL;
	if (len > GDB_PACKET_MAX - 1)
		len = GDB_PACKET_MAX - 1;
	size_t n = s->xml_len - off < len ? s->xml_len - (size_t)off : (size_t)len;
	s->reply[0] = off + n < s->xml_len ? 'm' : 'l';
	memcpy(s->reply + 1, s->xml + off, n);
	gdb_send(s, s->reply, n + 1);
	return NULL;
}

static const char *cmd_query(struct gdb_stub *s, const char *q)
{
	if (!strncmp(q, "qSupported", 10)) {
		s->client_swbreak = strstr(q, "swbreak+") && strstr(q, "hwbreak+");
		snprintf(s->reply, sizeof(s->reply),
			 "PacketSize=%x;qXfer:features:read+;swbreak+;hwbreak+;vContSupported+;QStartNoAckMode+",
			 GDB_PACKET_MAX);
		return s->reply;
	}
	if (!strncmp(q, "qXfer:features:read:", 20))
		return cmd_xfer_features(s, q + 20);
	if (!strcmp(q, "qfThreadInfo")) {
		size_t o = 0;
		s->reply[o++] = 'm';
		/* At most 255 vCPUs (",ff" each) fit many times over; the bound keeps o inside anyway. */
		for (unsigned int i = 0; i < s->nr_vcpus && o + 16 < sizeof(s->reply); i++)
			o += (size_t)snprintf(s->reply + o, sizeof(s->reply) - o, "%s%x", i ? "," : "", i + 1);
		return s->reply;
	}
	if (!strcmp(q, "qsThreadInfo"))
		return "l";
	if (!strcmp(q, "qC")) {
		snprintf(s->reply, sizeof(s->reply), "QC%x", s->g_vcpu + 1);
		return s->reply;
	}
	if (!strcmp(q, "qAttached"))
		return "1"; /* the machine existed before us: quitting detaches */
	if (!strncmp(q, "qThreadExtraInfo,", 17)) {
		const char *p = q + 17;
		int t = parse_thread(s, &p);
		if (t < 0 || *p)
			return E_INVAL;
		char name[32];
		int n = snprintf(name, sizeof(name), "vCPU %d", t);
		gdb_hex_encode(name, (size_t)n, s->reply);
		return s->reply;
	}
	if (!strncmp(q, "qSymbol:", 8))
		return "OK";
	return "";
}

static const char *cmd_kill(struct gdb_stub *s, bool reply)
{
	vm_request_stop(s->vm, VM_STOP_HOST, 128 + 9, "killed by the debugger");
	if (reply)
		gdb_send_str(s, "OK");
	gdb_detach(s);
	return NULL;
}

static const char *cmd_v(struct gdb_stub *s, const char *pkt)
{
	if (!strcmp(pkt, "vCont?"))
		return "vCont;c;C;s;S";
	if (!strncmp(pkt, "vCont;", 6))
		return cmd_vcont(s, pkt + 5);
	if (!strncmp(pkt, "vKill", 5))
		return cmd_kill(s, true);
	return "";
}

static const char *dispatch(struct gdb_stub *s, const char *pkt, size_t len)
{
	const char *args = pkt + 1;
	int t;
	switch (pkt[0]) {
	case '?':
		gdb_send_stop_reply(s);
		return NULL;
	case 'g':
		return cmd_read_regs(s);
	case 'G':
		return cmd_write_regs(s, args, len - 1);
	case 'p':
		return cmd_read_reg(s, args);
	case 'P':
		return cmd_write_reg(s, args);
	case 'm':
		return cmd_read_mem(s, args);
	case 'M':
	case 'X':
		return cmd_write_mem(s, args, len - 1, pkt[0] == 'X');
	case 'Z':
	case 'z':
		return cmd_point(s, args, pkt[0] == 'Z');
	case 'c':
	case 'C':
	case 's':
	case 'S':
		return cmd_resume_legacy(s, pkt[0], args);
	case 'H':
		return cmd_set_thread(s, args);
	case 'T':
		t = parse_thread(s, &args);
		return t >= 0 && !*args ? "OK" : E_INVAL;
	case 'q':
		return cmd_query(s, pkt);
	case 'Q':
		if (strcmp(pkt, "QStartNoAckMode"))
			return "";
		gdb_send_str(s, "OK");
		s->no_ack = true; /* after the OK, which is still acknowledged */
		return NULL;
	case 'v':
		return cmd_v(s, pkt);
	case 'D':
		gdb_send_str(s, "OK");
		gdb_detach(s);
		return NULL;
	case 'k':
		return cmd_kill(s, false);
	default:
		return "";
	}
}

void gdb_cmd_dispatch(struct gdb_stub *s, char *pkt, size_t len)
{
	const char *reply = dispatch(s, pkt, len);
	if (reply)
		gdb_send_str(s, reply);
}
