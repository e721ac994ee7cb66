/* gdb_stub.c: the gdb stub's socket, its thread and run control: who runs, who parks, and why it stopped. */
#define _GNU_SOURCE
#include "vmm/gdb_stub.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/kvm.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "vmm/errmsg.h"
#include "vmm/gdb_session.h"
#include "vmm/machine.h"
#include "vmm/unix_sock.h"

/* A debugger that stops reading for this long is dropped (the guest is then let go). */
#define GDB_SEND_TIMEOUT_MS 5000
#define GDB_MAX_RESENDS 3

/* "HOST:PORT" with HOST numeric IPv4 or [IPv6]; port 0 lets the kernel choose. */
static int listen_tcp(struct gdb_stub *s, const char *spec, char *err, size_t errlen)
{
	char host[64];
	const char *colon = strrchr(spec, ':');
	if (!colon || (size_t)(colon - spec) >= sizeof(host))
		return errmsg(err, errlen, -EINVAL, "--gdb tcp:%s: expected tcp:HOST:PORT", spec);
	memcpy(host, spec, (size_t)(colon - spec));
	host[colon - spec] = '\0';
	char *end;
	errno = 0;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port > 65535)
		return errmsg(err, errlen, -EINVAL, "--gdb tcp:%s: bad port '%s'", spec, colon + 1);

	struct sockaddr_storage ss;
	socklen_t sslen;
	memset(&ss, 0, sizeof(ss));
	size_t hl = strlen(host);
	if (hl > 2 && host[0] == '[' && host[hl - 1] == ']') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		host[hl - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1)
			return errmsg(err, errlen, -EINVAL, "--gdb: '%s' is not an IPv6 address", host + 1);
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		sslen = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return errmsg(err, errlen, -EINVAL, "--gdb: '%s' is not a numeric IPv4 address", host);
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		sslen = sizeof(*a);
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errmsg(err, errlen, -errno, "--gdb: socket: %s", strerror(errno));
	int one = 1;
	/* Replies are small and the debugger waits for each: no Nagle delay (accepted sockets inherit it). */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sslen) < 0 || listen(fd, 1) < 0) {
		int e = errno;
		close(fd);
		return errmsg(err, errlen, -e, "--gdb tcp:%s: %s", spec, strerror(e));
	}
	if (getsockname(fd, (struct sockaddr *)&ss, &sslen) == 0) {
		char txt[INET6_ADDRSTRLEN] = "?";
		if (ss.ss_family == AF_INET6) {
			const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;
			inet_ntop(AF_INET6, &a->sin6_addr, txt, sizeof(txt));
			snprintf(s->address, sizeof(s->address), "tcp:[%s]:%u", txt, ntohs(a->sin6_port));
		} else {
			const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;
			inet_ntop(AF_INET, &a->sin_addr, txt, sizeof(txt));
			snprintf(s->address, sizeof(s->address), "tcp:%s:%u", txt, ntohs(a->sin_port));
		}
	}
	s->listen_fd = fd;
	return 0;
}

static int listen_unix(struct gdb_stub *s, const char *path, char *err, size_t errlen)
{
	int fd = unix_listen("--gdb unix:", path, err, errlen);
	if (fd < 0)
		return fd;
	s->listen_fd = fd;
	snprintf(s->unix_path, sizeof(s->unix_path), "%s", path);
	snprintf(s->address, sizeof(s->address), "unix:%s", path);
	/* Its directory, for the confined thread's unlinkat at the end. */
	s->unix_dir_fd = unix_sock_dir(s->unix_path, &s->unix_name);
	if (s->unix_dir_fd < 0)
		return errmsg(err, errlen, s->unix_dir_fd, "--gdb unix:%s: its directory: %s", path,
			      strerror(-s->unix_dir_fd));
	return 0;
}

int gdb_stub_create(struct vm *vm, const char *addr, bool wait, struct gdb_stub **out, char *err,
		    size_t errlen)
{
	struct gdb_stub *s = calloc(1, sizeof(*s));
	if (!s)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	s->vm = vm;
	s->listen_fd = s->conn_fd = s->wake_efd = s->unix_dir_fd = -1;
	s->wait = wait;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	int ret;
	if (!strncmp(addr, "tcp:", 4))
		ret = listen_tcp(s, addr + 4, err, errlen);
	else if (!strncmp(addr, "unix:", 5))
		ret = listen_unix(s, addr + 5, err, errlen);
	else
		ret = errmsg(err, errlen, -EINVAL, "--gdb %s: expected tcp:HOST:PORT or unix:PATH", addr);
	if (ret)
		goto fail;
	ssize_t xl = gdb_arch_target_xml(s->xml, sizeof(s->xml));
	if (xl < 0) {
		ret = errmsg(err, errlen, (int)xl, "gdb: the target description does not fit");
		goto fail;
	}
	s->xml_len = (size_t)xl;
	s->wake_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->nr_vcpus = vm->nr_cpus;
	s->vcpus = calloc(s->nr_vcpus, sizeof(*s->vcpus));
	if (s->wake_efd < 0 || !s->vcpus) {
		ret = errmsg(err, errlen, -ENOMEM, "gdb: out of memory or eventfds");
		goto fail;
	}
	for (unsigned int i = 0; i < s->nr_vcpus; i++) {
		s->vcpus[i].may_run = !wait;
		s->vcpus[i].regs = gdb_arch_regs_new();
		if (!s->vcpus[i].regs) {
			ret = errmsg(err, errlen, -ENOMEM, "out of memory");
			goto fail;
		}
	}
	s->block_irq = gdb_arch_can_block_irq(vm->kvm_fd);
	s->state = GDB_NO_CLIENT;
	*out = s;
	return 0;
fail:
	gdb_stub_destroy(s);
	return ret;
}

const char *gdb_stub_address(const struct gdb_stub *s)
{
	return s->address;
}

int gdb_vcpu_fd(struct gdb_stub *s, unsigned int vcpu)
{
	return s->vm->vcpus[vcpu].fd;
}

struct gdb_arch_regs *gdb_vcpu_regs(struct gdb_stub *s, unsigned int vcpu)
{
	struct gdb_vcpu *gv = &s->vcpus[vcpu];
	if (!gv->regs_valid) {
		if (gdb_arch_regs_load(gv->regs, gdb_vcpu_fd(s, vcpu)))
			return NULL;
		gv->regs_valid = true;
	}
	return gv->regs;
}

/* --- the wire --- */

static int send_all(struct gdb_stub *s, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(s->conn_fd, buf, len, MSG_NOSIGNAL);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			struct pollfd p = { s->conn_fd, POLLOUT, 0 };
			if (poll(&p, 1, GDB_SEND_TIMEOUT_MS) > 0)
				continue;
			return -ETIMEDOUT;
		}
		return n < 0 ? -errno : -EPIPE;
	}
	return 0;
}

/* A debugger that cannot be written to is dropped at the next safe point (the thread loop detaches). */
static void send_raw(struct gdb_stub *s, const char *buf, size_t len)
{
	if (s->conn_fd >= 0 && send_all(s, buf, len) < 0) {
		shutdown(s->conn_fd, SHUT_RDWR);
		s->broken = true;
	}
}

void gdb_send(struct gdb_stub *s, const char *payload, size_t len)
{
	ssize_t n = gdb_frame(payload, len, s->last_frame, sizeof(s->last_frame));
	if (n < 0) /* our own replies fit by construction; say so rather than send half */
		n = gdb_frame("E01", 3, s->last_frame, sizeof(s->last_frame));
	s->last_frame_len = (size_t)n;
	s->resends = 0;
	send_raw(s, s->last_frame, s->last_frame_len);
}

void gdb_send_str(struct gdb_stub *s, const char *payload)
{
	gdb_send(s, payload, strlen(payload));
}

void gdb_send_stop_reply(struct gdb_stub *s)
{
	static const char *const watch_kind[] = { [GDB_POINT_WRITE] = "watch", [GDB_POINT_READ] = "rwatch",
						  [GDB_POINT_ACCESS] = "awatch" };
	const struct gdb_stop *st = &s->stop;
	char r[128];
	int sig = st->kind == GDB_HIT_INTERRUPT ? GDB_SIGINT : GDB_SIGTRAP;
	int n = snprintf(r, sizeof(r), "T%02xthread:%x;", sig, st->vcpu + 1);
	if (st->kind == GDB_HIT_WATCH && st->watch_type >= GDB_POINT_WRITE && st->watch_type <= GDB_POINT_ACCESS)
		n += snprintf(r + n, sizeof(r) - (size_t)n, "%s:%llx;", watch_kind[st->watch_type],
			      (unsigned long long)st->addr);
	else if (st->kind == GDB_HIT_SWBREAK && s->client_swbreak)
		n += snprintf(r + n, sizeof(r) - (size_t)n, "swbreak:;");
	else if (st->kind == GDB_HIT_HWBREAK && s->client_swbreak)
		n += snprintf(r + n, sizeof(r) - (size_t)n, "hwbreak:;");
	s->g_vcpu = s->c_vcpu = st->vcpu;
	gdb_send(s, r, (size_t)n);
}

/* --- run control --- */

static void park_locked(struct gdb_stub *s, struct gdb_vcpu *gv)
{
	gv->parked = true;
	s->nr_parked++;
	pthread_cond_broadcast(&s->cond);
	while (!gv->may_run && !s->released)
		pthread_cond_wait(&s->cond, &s->lock);
	gv->parked = false;
	s->nr_parked--;
}

/* Every vCPU out of KVM_RUN and parked (or the run is ending). Stub thread. */
static void pause_all(struct gdb_stub *s)
{
	pthread_mutex_lock(&s->lock);
	for (unsigned int i = 0; i < s->nr_vcpus; i++)
		s->vcpus[i].may_run = false;
	while (s->nr_parked < s->nr_vcpus && !atomic_load(&s->vm->stopping)) {
		for (unsigned int i = 0; i < s->nr_vcpus; i++)
			if (s->vcpus[i].present && !s->vcpus[i].parked)
				vcpu_kick(&s->vm->vcpus[i], s->vcpus[i].thread);
		/* A vCPU whose thread has not started yet parks on its own at its start. */
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += 50 * 1000 * 1000;
		if (t.tv_nsec >= 1000000000) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&s->cond, &s->lock, &t);
	}
	pthread_mutex_unlock(&s->lock);
	for (unsigned int i = 0; i < s->nr_vcpus; i++)
		s->vcpus[i].regs_valid = false;
}

static bool any_sw_point(const struct gdb_stub *s)
{
	for (unsigned int i = 0; i < GDB_MAX_SW_POINTS; i++)
		if (s->sw[i].used)
			return true;
	return false;
}

void gdb_resume(struct gdb_stub *s, int step_vcpu)
{
	/* An event a vCPU saw while the others were stopping is reported before anything runs. */
	pthread_mutex_lock(&s->lock);
	for (unsigned int i = 0; i < s->nr_vcpus; i++) {
		struct gdb_vcpu *gv = &s->vcpus[i];
		if (gv->pending.valid && (step_vcpu < 0 || (unsigned int)step_vcpu == i)) {
			s->stop = gv->pending;
			gv->pending.valid = false;
			pthread_mutex_unlock(&s->lock);
			gdb_send_stop_reply(s);
			return;
		}
	}
	pthread_mutex_unlock(&s->lock);

	bool sw = any_sw_point(s);
	for (unsigned int i = 0; i < s->nr_vcpus; i++) {
		bool step = step_vcpu >= 0 && (unsigned int)step_vcpu == i;
		s->vcpus[i].stepping = step;
		if (gdb_arch_debug_apply(gdb_vcpu_fd(s, i), sw, s->hw, step, s->block_irq)) {
			gdb_send_str(s, "E05");
			return;
		}
		s->vcpus[i].regs_valid = false;
	}
	pthread_mutex_lock(&s->lock);
	s->stop.valid = false;
	for (unsigned int i = 0; i < s->nr_vcpus; i++)
		s->vcpus[i].may_run = step_vcpu < 0 || (unsigned int)step_vcpu == i;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	s->state = GDB_RUNNING;
}

void gdb_detach(struct gdb_stub *s)
{
	if (s->state == GDB_RUNNING)
		pause_all(s);
	const struct guest_mem *gm = &s->vm->mem;
	for (unsigned int i = 0; i < GDB_MAX_SW_POINTS; i++) {
		if (!s->sw[i].used)
			continue;
		void *p = gm_ptr(gm, s->sw[i].gpa, GDB_ARCH_SW_BP_LEN);
		if (p)
			memcpy(p, s->sw[i].saved, GDB_ARCH_SW_BP_LEN);
		s->sw[i].used = false;
	}
	memset(s->hw, 0, sizeof(s->hw));
	for (unsigned int i = 0; i < s->nr_vcpus; i++) {
		s->vcpus[i].stepping = false;
		/* Nothing armed is what KVM starts with; if it refuses, a later exit is FOREIGN anyway. */
		if (gdb_arch_debug_apply(gdb_vcpu_fd(s, i), false, s->hw, false, false))
			continue;
	}
	pthread_mutex_lock(&s->lock);
	s->stop.valid = false;
	for (unsigned int i = 0; i < s->nr_vcpus; i++) {
		s->vcpus[i].pending.valid = false;
		s->vcpus[i].may_run = true;
	}
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (s->conn_fd >= 0)
		close(s->conn_fd);
	s->conn_fd = -1;
	s->state = GDB_NO_CLIENT;
	s->broken = false;
}

/* --- the vCPU side --- */

void gdb_stub_vcpu_start(struct gdb_stub *s, struct vcpu *v)
{
	struct gdb_vcpu *gv = &s->vcpus[v->index];
	pthread_mutex_lock(&s->lock);
	gv->thread = pthread_self();
	gv->present = true;
	if (!gv->may_run)
		park_locked(s, gv);
	pthread_mutex_unlock(&s->lock);
}

void gdb_stub_vcpu_interrupted(struct gdb_stub *s, struct vcpu *v)
{
	struct gdb_vcpu *gv = &s->vcpus[v->index];
	pthread_mutex_lock(&s->lock);
	if (!gv->may_run)
		park_locked(s, gv);
	pthread_mutex_unlock(&s->lock);
}

static bool sw_point_at(const struct gdb_stub *s, uint64_t addr)
{
	for (unsigned int i = 0; i < GDB_MAX_SW_POINTS; i++)
		if (s->sw[i].used && s->sw[i].addr == addr)
			return true;
	return false;
}

void gdb_stub_vcpu_debug_exit(struct gdb_stub *s, struct vcpu *v)
{
	struct gdb_vcpu *gv = &s->vcpus[v->index];
	struct gdb_arch_hit hit;
	/* s->sw, s->hw and gv->stepping change only while every vCPU is parked: stable here. */
	gdb_arch_debug_decode(v->run, s->hw, gv->stepping, &hit);
	if (hit.kind == GDB_HIT_SWBREAK && !sw_point_at(s, hit.pc))
		hit.kind = GDB_HIT_FOREIGN; /* the guest's own int3 (a kernel patching its text, kprobes) */
	if (hit.kind == GDB_HIT_FOREIGN) {
		int ret = gdb_arch_reinject(v->fd, v->run);
		if (ret)
			vm_request_stop(v->vm, VM_STOP_ERROR, 0, "gdb: cannot give vCPU %u its exception back: %s",
					v->index, strerror(-ret));
		return;
	}
	struct gdb_stop st = { .valid = true, .kind = hit.kind, .vcpu = v->index, .addr = hit.pc };
	if (hit.kind == GDB_HIT_WATCH) {
		st.addr = s->hw[hit.slot].addr;
		st.watch_type = s->hw[hit.slot].type;
	}
	pthread_mutex_lock(&s->lock);
	if (!s->stop.valid)
		s->stop = st;
	else if (hit.kind == GDB_HIT_WATCH)
		gv->pending = st; /* the access happened: it must not be lost */
	gv->may_run = false;
	pthread_mutex_unlock(&s->lock);
	uint64_t one = 1;
	(void)!write(s->wake_efd, &one, sizeof(one));
	pthread_mutex_lock(&s->lock);
	park_locked(s, gv);
	pthread_mutex_unlock(&s->lock);
}

/* --- the stub's thread --- */

static void client_accept(struct gdb_stub *s)
{
	int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	s->conn_fd = fd;
	gdb_rx_init(&s->rx);
	s->no_ack = false;
	s->client_swbreak = false;
	s->last_frame_len = 0;
	s->broken = false;
	/* A debugger expects a stopped target: stop it as a Ctrl-C would, but report SIGTRAP. */
	pause_all(s);
	pthread_mutex_lock(&s->lock);
	s->stop = (struct gdb_stop){ .valid = true, .kind = GDB_HIT_STEP, .vcpu = 0 };
	pthread_mutex_unlock(&s->lock);
	s->g_vcpu = s->c_vcpu = 0;
	s->state = GDB_STOPPED;
}

static void client_bytes(struct gdb_stub *s, const uint8_t *buf, size_t n)
{
	for (size_t i = 0; i < n && s->conn_fd >= 0 && !s->broken; i++) {
		switch (gdb_rx_feed(&s->rx, buf[i])) {
		case GDB_RX_NONE:
		case GDB_RX_ACK:
			break;
		case GDB_RX_PACKET:
			if (!s->no_ack)
				send_raw(s, "+", 1);
			if (s->state == GDB_STOPPED)
				gdb_cmd_dispatch(s, s->rx.buf, s->rx.len);
			/* While the guest runs, gdb sends nothing but Ctrl-C: anything else is ignored. */
			break;
		case GDB_RX_BAD:
			if (!s->no_ack)
				send_raw(s, "-", 1);
			break;
		case GDB_RX_NACK:
			if (s->last_frame_len && s->resends++ < GDB_MAX_RESENDS)
				send_raw(s, s->last_frame, s->last_frame_len);
			break;
		case GDB_RX_INTERRUPT:
			if (s->state == GDB_RUNNING) {
				pthread_mutex_lock(&s->lock);
				if (!s->stop.valid)
					s->stop = (struct gdb_stop){ .valid = true, .kind = GDB_HIT_INTERRUPT,
								     .vcpu = s->c_vcpu };
				pthread_mutex_unlock(&s->lock);
			}
			break;
		}
	}
}

static void client_read(struct gdb_stub *s)
{
	uint8_t buf[4096];
	ssize_t n = read(s->conn_fd, buf, sizeof(buf));
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		s->broken = true; /* the debugger went away: let the guest go */
		return;
	}
	client_bytes(s, buf, (size_t)n);
}

/* The socket file goes with the thread that listened on it; done once, by whoever comes last. */
static void remove_socket_file(struct gdb_stub *s)
{
	if (s->unix_path[0] && !s->unix_removed && s->unix_dir_fd >= 0)
		(void)unlinkat(s->unix_dir_fd, s->unix_name, 0);
	s->unix_removed = true;
}

static void *gdb_thread(void *arg)
{
	struct gdb_stub *s = arg;
	(void)pthread_setname_np(pthread_self(), "gdb");
	/* Before the first byte of a debugger is read; the vCPUs do not start before this. */
	int err = seccomp_confine(&s->confine);
	pthread_mutex_lock(&s->lock);
	s->confine_done = true;
	s->confine_err = err;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (err)
		return NULL;
	for (;;) {
		struct pollfd p[3];
		int n = 0, i_stop = -1;
		p[n++] = (struct pollfd){ s->wake_efd, POLLIN, 0 };
		if (!s->vm_ended) {
			i_stop = n;
			p[n++] = (struct pollfd){ s->vm->stop_efd, POLLIN, 0 };
		}
		int i_sock = n;
		p[n++] = (struct pollfd){ s->conn_fd >= 0 ? s->conn_fd : s->listen_fd, POLLIN, 0 };
		if (poll(p, (nfds_t)n, -1) < 0 && errno != EINTR)
			break;
		uint64_t v;
		if (p[0].revents & POLLIN)
			(void)!read(s->wake_efd, &v, sizeof(v));

		pthread_mutex_lock(&s->lock);
		bool finishing = s->finishing;
		int code = s->exit_code;
		pthread_mutex_unlock(&s->lock);
		if (finishing) {
			if (s->conn_fd >= 0 && s->state == GDB_RUNNING) {
				char w[8];
				snprintf(w, sizeof(w), "W%02x", code & 0xff);
				gdb_send_str(s, w);
			}
			break;
		}
		if (i_stop >= 0 && (p[i_stop].revents & POLLIN))
			s->vm_ended = true; /* gdb_stub_finish() follows */
		if (p[i_sock].revents) {
			if (s->conn_fd < 0)
				client_accept(s);
			else
				client_read(s);
		}
		if (s->conn_fd >= 0 && s->broken)
			gdb_detach(s);
		if (s->state == GDB_NO_CLIENT) {
			/* Nothing is armed without a debugger; should a stop come anyway, nobody would
			   ever resume it: let the guest go. */
			pthread_mutex_lock(&s->lock);
			if (s->stop.valid) {
				s->stop.valid = false;
				for (unsigned int i = 0; i < s->nr_vcpus; i++)
					s->vcpus[i].may_run = true;
				pthread_cond_broadcast(&s->cond);
			}
			pthread_mutex_unlock(&s->lock);
		}
		if (s->state == GDB_RUNNING && !s->vm_ended) {
			pthread_mutex_lock(&s->lock);
			bool stopped = s->stop.valid;
			pthread_mutex_unlock(&s->lock);
			if (stopped) {
				pause_all(s);
				s->state = GDB_STOPPED;
				gdb_send_stop_reply(s);
			}
		}
	}
	if (s->conn_fd >= 0)
		close(s->conn_fd);
	s->conn_fd = -1;
	remove_socket_file(s);
	return NULL;
}

int gdb_stub_start(struct gdb_stub *s, enum seccomp_mode mode)
{
	s->confine = (struct seccomp_confinement){ mode, SECCOMP_ROLE_GDB, s->unix_dir_fd };
	int ret = pthread_create(&s->thread, NULL, gdb_thread, s);
	if (ret)
		return -ret;
	s->thread_started = true;
	pthread_mutex_lock(&s->lock);
	while (!s->confine_done)
		pthread_cond_wait(&s->cond, &s->lock);
	ret = s->confine_err;
	pthread_mutex_unlock(&s->lock);
	return ret;
}

void gdb_stub_finish(struct gdb_stub *s, int exit_code)
{
	pthread_mutex_lock(&s->lock);
	s->finishing = true;
	s->exit_code = exit_code;
	pthread_mutex_unlock(&s->lock);
	uint64_t one = 1;
	(void)!write(s->wake_efd, &one, sizeof(one));
	if (s->thread_started)
		pthread_join(s->thread, NULL);
	s->thread_started = false;
	pthread_mutex_lock(&s->lock);
	s->released = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

void gdb_stub_destroy(struct gdb_stub *s)
{
	if (!s)
		return;
	if (s->thread_started)
		gdb_stub_finish(s, 0);
	if (s->conn_fd >= 0)
		close(s->conn_fd);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	remove_socket_file(s);
	if (s->unix_dir_fd >= 0)
		close(s->unix_dir_fd);
	if (s->wake_efd >= 0)
		close(s->wake_efd);
	for (unsigned int i = 0; s->vcpus && i < s->nr_vcpus; i++)
		gdb_arch_regs_free(s->vcpus[i].regs);
	free(s->vcpus);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
