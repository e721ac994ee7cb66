/* test_virtio_console.c: end to end: a fake driver brings up virtio-console over MMIO, host side on pipes. */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>

#include "devices/console/virtio_console.h"
#include "tests/support/fake_vm.h"
#include "devices/virtio/mmio.h"
#include "tests/support/mmio_driver.h"
#include "tests/unit/tap.h"
#include "vmm/seccomp.h"

#define NPORTS 3
#define NQ (2 * (NPORTS + 1)) /* = MD_MAX_QUEUES */
#define QSIZE 128
#define RAM (64u << 20)
#define CTRL_RX 2
#define CTRL_TX 3
#define Q_IN 0	/* port 0 (stdin) receiveq */
#define Q_OUT 5 /* port 1 (stdout) transmitq */
#define Q_ERR 7 /* port 2 (stderr) transmitq */
#define CTRL_BUFS 16

/* The queue workers run under their real seccomp filter, in kill mode: a call the console's
   workers make outside SECCOMP_ROLE_WORKER_CONSOLE ends this test with SIGSYS. */
static struct seccomp_confinement worker_role = { SECCOMP_MODE_KILL, SECCOMP_ROLE_WORKER_CONSOLE,
						  -1 };

/* One guest: the device on a fake VM, the host side of its three ports on pipes. */
struct rig {
	struct vm *vm;
	struct vcon_dev *dev;
	struct virtio_mmio *mmio;
	struct mmio_driver d;
	int in_w;	       /* the test writes the port 0 stream here */
	int out_r, err_r;      /* and reads ports 1 and 2 here */
	uint64_t gpa[NQ][QSIZE]; /* writable buffer of each chain head sent, per queue */
};

/* sticky_eof: the stdin port answers every buffer after EOF (vcon_port_config). */
static int rig_up(struct rig *g, bool nonblock_out, bool sticky_eof)
{
	int in[2], out[2], err[2];

	memset(g, 0, sizeof(*g));
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		return -1;
	if (nonblock_out)
		fcntl(out[1], F_SETFL, O_NONBLOCK);
	struct vcon_port_config ports[NPORTS] = {
		{ "ringvm.stdin", in[0], true, sticky_eof },
		{ "ringvm.stdout", out[1], false, false },
		{ "ringvm.stderr", err[1], false, false },
	};
	if (vcon_create(ports, NPORTS, &g->dev))
		return -2;
	/* The device has its own duplicates: ours go, so the test sees EOF when the device closes. */
	close(in[0]);
	close(out[1]);
	close(err[1]);
	g->in_w = in[1];
	g->out_r = out[0];
	g->err_r = err[0];
	g->vm = fake_vm_create(RAM);
	if (!g->vm || virtio_mmio_create(g->vm, vcon_virtio_dev(g->dev), &g->mmio) ||
	    virtio_mmio_prepare(g->mmio, seccomp_confine_hook, &worker_role))
		return -3;
	if (md_bring_up(&g->d, g->vm, NQ, QSIZE, 1ULL << VIRTIO_CONSOLE_F_MULTIPORT))
		return -4;
	return 0;
}

static void rig_down(struct rig *g)
{
	virtio_mmio_destroy(g->mmio);
	vcon_destroy(g->dev);
	fake_vm_destroy(g->vm);
	close(g->in_w);
	close(g->out_r);
	close(g->err_r);
}

/* The driver posts a writable buffer of cap bytes on queue q (a receiveq). */
static void post(struct rig *g, unsigned int q, uint32_t cap)
{
	uint64_t gpa;
	uint16_t head = md_send(&g->d, q, NULL, 0, NULL, cap, NULL, &gpa);

	g->gpa[q][head % QSIZE] = gpa;
}

/* The driver sends a control message (and waits for it to come back, as Linux does). */
static bool ctrl_send(struct rig *g, uint32_t id, uint16_t event, uint16_t value)
{
	struct virtio_console_control m = { htole32(id), htole16(event), htole16(value) };

	return md_roundtrip(&g->d, CTRL_TX, &m, sizeof(m), NULL, 0, NULL, NULL) == 0;
}

/* The next control message from the device (its buffer is replaced); false after 10 s. */
static bool ctrl_recv(struct rig *g, uint32_t *id, uint16_t *event, uint16_t *value, char *name)
{
	uint32_t head, len;
	struct virtio_console_control m;

	if (!md_wait_used(&g->d, CTRL_RX, &head, &len) || len < sizeof(m))
		return false;
	const uint8_t *p = md_host(&g->d, g->gpa[CTRL_RX][head % QSIZE]);
	memcpy(&m, p, sizeof(m));
	*id = le32toh(m.id);
	*event = le16toh(m.event);
	*value = le16toh(m.value);
	if (name) {
		memcpy(name, p + sizeof(m), len - sizeof(m));
		name[len - sizeof(m)] = '\0';
	}
	post(g, CTRL_RX, 4096);
	return true;
}

/* What Linux's driver does up to the point where every port is known by name. */
static bool bring_up_ports(struct rig *g)
{
	uint32_t id;
	uint16_t ev, val;
	char name[256];
	bool ok = true;

	for (int i = 0; i < CTRL_BUFS; i++)
		post(g, CTRL_RX, 4096);
	ok &= ctrl_send(g, VIRTIO_CONSOLE_BAD_ID, VIRTIO_CONSOLE_DEVICE_READY, 1);
	for (uint32_t i = 0; i < NPORTS; i++)
		ok &= ctrl_recv(g, &id, &ev, &val, NULL) && id == i && ev == VIRTIO_CONSOLE_PORT_ADD;
	for (uint32_t i = 0; i < NPORTS; i++) {
		ok &= ctrl_send(g, i, VIRTIO_CONSOLE_PORT_READY, 1);
		ok &= ctrl_recv(g, &id, &ev, &val, NULL) && id == i &&
		      ev == VIRTIO_CONSOLE_PORT_OPEN && val == 1;
		ok &= ctrl_recv(g, &id, &ev, &val, name) && id == i &&
		      ev == VIRTIO_CONSOLE_PORT_NAME;
		ok &= strcmp(name, i == 0 ? "ringvm.stdin" : i == 1 ? "ringvm.stdout" : "ringvm.stderr") == 0;
	}
	return ok;
}

/* No used element on q for ms milliseconds (a bug would have had that long to show). */
static bool quiet(struct rig *g, unsigned int q, unsigned int ms)
{
	usleep(ms * 1000);
	return fake_ring_used_idx(&g->d.rings[q]) == g->d.rings[q].used_seen;
}

/* Read exactly n bytes from fd (10 s at most). */
static bool read_all(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, 10000) <= 0)
			return false;
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 11));
}

static void test_bring_up_and_input(void)
{
	struct rig g;
	uint32_t head, len;

	TAP_CHECK(rig_up(&g, false, false) == 0, "virtio-console with 3 ports comes up over virtio-mmio");
	TAP_CHECK(bring_up_ports(&g), "DEVICE_READY -> PORT_ADD x3; PORT_READY -> PORT_OPEN(1) then PORT_NAME");

	/* Data before the guest opened the port must wait (Linux would drop it). */
	post(&g, Q_IN, 4096);
	TAP_CHECK(write(g.in_w, "hello", 5) == 5, "the host writes 5 bytes of stdin");
	TAP_CHECK(quiet(&g, Q_IN, 100), "nothing is read into a port the guest has not opened");
	TAP_CHECK(ctrl_send(&g, 0, VIRTIO_CONSOLE_PORT_OPEN, 1), "the guest opens port 0");
	TAP_CHECK(md_wait_used(&g.d, Q_IN, &head, &len) && len == 5 &&
			  memcmp(md_host(&g.d, g.gpa[Q_IN][head % QSIZE]), "hello", 5) == 0,
		  "then the buffer gets exactly those 5 bytes");

	/* 1 MiB through 4 KiB buffers, in order. */
	static uint8_t want[1 << 20], got[1 << 20];
	fill(want, sizeof(want), 1);
	size_t have = 0;
	bool ok = true;
	for (int i = 0; i < 8; i++)
		post(&g, Q_IN, 4096);
	pid_t writer = fork();
	if (writer == 0) {
		_exit(write(g.in_w, want, sizeof(want)) == (ssize_t)sizeof(want) ? 0 : 1);
	}
	while (ok && have < sizeof(want)) {
		ok = md_wait_used(&g.d, Q_IN, &head, &len) && len > 0 && len <= 4096;
		if (ok) {
			memcpy(got + have, md_host(&g.d, g.gpa[Q_IN][head % QSIZE]), len);
			have += len;
			post(&g, Q_IN, 4096);
		}
	}
	TAP_CHECK(ok && have == sizeof(want) && memcmp(got, want, sizeof(want)) == 0,
		  "1 MiB of stdin arrives byte-exact and in order through 4 KiB buffers");
	int st;
	waitpid(writer, &st, 0);

	close(g.in_w);
	g.in_w = -1;
	TAP_CHECK(md_wait_used(&g.d, Q_IN, &head, &len) && len == 0,
		  "host EOF: one buffer comes back empty (the guest's read returns 0)");
	TAP_CHECK(quiet(&g, Q_IN, 100), "and the port takes no buffer after it");
	rig_down(&g);
}

/* One read of the host side serves several receive buffers: what it read waits for the next ones. */
static void test_input_held(void)
{
	struct rig g;
	uint32_t head, len;
	static uint8_t want[20000], got[20000];
	size_t have = 0;
	bool ok = true;

	TAP_CHECK(rig_up(&g, false, false) == 0 && bring_up_ports(&g), "a fresh device with its ports");
	TAP_CHECK(ctrl_send(&g, 0, VIRTIO_CONSOLE_PORT_OPEN, 1), "the guest opens port 0");
	fill(want, sizeof(want), 7);
	TAP_CHECK(write(g.in_w, want, sizeof(want)) == (ssize_t)sizeof(want), "the host writes 20000 bytes");
	close(g.in_w); /* and ends: the EOF must come after every byte read before it */
	g.in_w = -1;
	post(&g, Q_IN, 4096);
	ok = md_wait_used(&g.d, Q_IN, &head, &len) && len == 4096;
	if (ok) {
		memcpy(got, md_host(&g.d, g.gpa[Q_IN][head % QSIZE]), len);
		have = len;
	}
	TAP_CHECK(ok, "one receive buffer: filled whole");
	TAP_CHECK(quiet(&g, Q_IN, 100), "no buffer posted, nothing more comes back");
	for (int i = 0; i < 3; i++)
		post(&g, Q_IN, 4096);
	post(&g, Q_IN, 8192);
	for (int i = 0; i < 4 && ok; i++) {
		ok = md_wait_used(&g.d, Q_IN, &head, &len) && len > 0 && have + len <= sizeof(got);
		if (ok) {
			memcpy(got + have, md_host(&g.d, g.gpa[Q_IN][head % QSIZE]), len);
			have += len;
		}
	}
	TAP_CHECK(ok && have == sizeof(want) && memcmp(got, want, sizeof(want)) == 0,
		  "the buffers posted later get the rest, byte-exact and in order");
	post(&g, Q_IN, 4096);
	TAP_CHECK(md_wait_used(&g.d, Q_IN, &head, &len) && len == 0,
		  "then the host's EOF: an empty buffer");
	rig_down(&g);
}

/*
 * The stdin port as the command's own fd 0 (sticky_eof): after the host's EOF every buffer comes
 * back empty, the ones posted before it and the ones re-posted after each read, so each read() of
 * the port returns 0 as on a pipe whose writer left; never before the last byte.
 */
static void test_input_sticky_eof(void)
{
	struct rig g;
	uint32_t head, len;
	unsigned int empty = 0;
	bool ok;

	TAP_CHECK(rig_up(&g, false, true) == 0 && bring_up_ports(&g), "a device whose stdin port's EOF sticks");
	TAP_CHECK(ctrl_send(&g, 0, VIRTIO_CONSOLE_PORT_OPEN, 1), "the guest opens port 0");
	TAP_CHECK(write(g.in_w, "last", 4) == 4, "the host writes 4 bytes");
	close(g.in_w);
	g.in_w = -1;
	for (int i = 0; i < 3; i++)
		post(&g, Q_IN, 4096);
	ok = md_wait_used(&g.d, Q_IN, &head, &len) && len == 4 &&
	     memcmp(md_host(&g.d, g.gpa[Q_IN][head % QSIZE]), "last", 4) == 0;
	TAP_CHECK(ok, "the bytes first");
	for (int i = 0; i < 2; i++)
		empty += md_wait_used(&g.d, Q_IN, &head, &len) && len == 0;
	TAP_CHECK(empty == 2, "then EOF: both buffers posted before it come back empty");
	for (int i = 0; i < 5; i++) {
		post(&g, Q_IN, 4096);
		empty += md_wait_used(&g.d, Q_IN, &head, &len) && len == 0;
	}
	TAP_CHECK(empty == 7, "and each buffer posted after it, at once: every read() is EOF");
	rig_down(&g);
}

static void test_output(void)
{
	struct rig g;
	uint32_t head, len;
	static uint8_t want[4 << 20], got[4 << 20];

	TAP_CHECK(rig_up(&g, false, false) == 0 && bring_up_ports(&g), "a fresh device with its ports");
	TAP_CHECK(!vcon_port_guest_open(g.dev, 1) && !vcon_port_guest_open(g.dev, 2),
		  "vcon_port_guest_open: not before the guest's PORT_OPEN");
	TAP_CHECK(ctrl_send(&g, 1, VIRTIO_CONSOLE_PORT_OPEN, 1) &&
			  ctrl_send(&g, 2, VIRTIO_CONSOLE_PORT_OPEN, 1),
		  "the guest opens stdout and stderr");
	TAP_CHECK(vcon_port_guest_open(g.dev, 1) && vcon_port_guest_open(g.dev, 2) &&
			  !vcon_port_guest_open(g.dev, 0) && !vcon_port_guest_open(g.dev, VCON_MAX_PORTS + 1),
		  "vcon_port_guest_open: the two opened ports, not the others, not one out of range");
	TAP_CHECK(md_roundtrip(&g.d, Q_OUT, "out\n", 4, NULL, 0, NULL, NULL) == 0 &&
			  md_roundtrip(&g.d, Q_ERR, "err\n", 4, NULL, 0, NULL, NULL) == 0,
		  "a write on each port comes back");
	char b[8];
	TAP_CHECK(read_all(g.out_r, b, 4) && memcmp(b, "out\n", 4) == 0,
		  "stdout's bytes are on the stdout pipe");
	TAP_CHECK(read_all(g.err_r, b, 4) && memcmp(b, "err\n", 4) == 0,
		  "stderr's bytes are on the stderr pipe, not mixed");

	/* 4 MiB in 32 KiB writes (Linux's largest), 32 queued (96 descriptors of 128), each over 3 descriptors. */
	fill(want, sizeof(want), 2);
	pid_t reader = fork();
	if (reader == 0) {
		/* A slow reader: small reads with pauses, so the device keeps waiting on the pipe. */
		size_t n = 0;
		while (n < sizeof(got)) {
			ssize_t r = read(g.out_r, got + n, 5000);
			if (r <= 0)
				_exit(2);
			n += (size_t)r;
			if ((n / 5000) % 64 == 0)
				usleep(1000);
		}
		_exit(memcmp(got, want, sizeof(want)) == 0 ? 0 : 1);
	}
	const uint32_t chunk = 32768, split[] = { 100, 20000, 0 };
	unsigned int sent = 0, back = 0;
	bool ok = true;
	while (ok && back < sizeof(want) / chunk) {
		while (sent < sizeof(want) / chunk && sent - back < 32)
			md_send(&g.d, Q_OUT, want + (size_t)sent++ * chunk, chunk, split, 0, NULL, NULL);
		ok = md_wait_used(&g.d, Q_OUT, &head, &len);
		back += ok;
	}
	int st = -1;
	waitpid(reader, &st, 0);
	TAP_CHECK(ok && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "4 MiB in 32 KiB buffers, 32 in flight, to a slow reader: byte-exact and in order");

	/* Close after drain: writes queued, then the guest closes; EOF only after all of them. */
	fill(want, 8 * chunk, 3);
	for (unsigned int i = 0; i < 8; i++)
		md_send(&g.d, Q_ERR, want + (size_t)i * chunk, chunk, NULL, 0, NULL, NULL);
	TAP_CHECK(ctrl_send(&g, 2, VIRTIO_CONSOLE_PORT_OPEN, 0) && !vcon_port_guest_open(g.dev, 2),
		  "the guest closes stderr right after (vcon_port_guest_open says so)");
	ok = read_all(g.err_r, got, 8 * chunk) && memcmp(got, want, 8 * chunk) == 0;
	ssize_t r = read(g.err_r, got, 1);
	TAP_CHECK(ok && r == 0,
		  "the host reader gets every byte written before the close, then EOF");
	uint32_t id;
	uint16_t ev, val;
	TAP_CHECK(ctrl_recv(&g, &id, &ev, &val, NULL) && id == 2 &&
			  ev == VIRTIO_CONSOLE_PORT_OPEN && val == 0,
		  "and the guest is told the host side of stderr is closed");

	/* The reader goes away: EPIPE, the guest hears PORT_OPEN(0), later writes are dropped. */
	close(g.out_r);
	g.out_r = -1;
	TAP_CHECK(md_roundtrip(&g.d, Q_OUT, "lost", 4, NULL, 0, NULL, NULL) == 0,
		  "a write to a pipe with no reader still comes back (no SIGPIPE: we are alive)");
	TAP_CHECK(ctrl_recv(&g, &id, &ev, &val, NULL) && id == 1 &&
			  ev == VIRTIO_CONSOLE_PORT_OPEN && val == 0,
		  "the guest is told PORT_OPEN(1, 0): its poll() sees POLLHUP");
	TAP_CHECK(md_roundtrip(&g.d, Q_OUT, "more", 4, NULL, 0, NULL, NULL) == 0,
		  "later writes are dropped, not stuck");
	rig_down(&g);
}

static void test_nonblocking_and_drain(void)
{
	struct rig g;
	uint32_t head, len;
	static uint8_t want[256 << 10], got[256 << 10];

	/* A non-blocking host stdout (O_NONBLOCK shared by the duplicate): EAGAIN means poll. */
	TAP_CHECK(rig_up(&g, true, false) == 0 && bring_up_ports(&g), "a device whose stdout is O_NONBLOCK");
	TAP_CHECK(ctrl_send(&g, 1, VIRTIO_CONSOLE_PORT_OPEN, 1), "the guest opens stdout");
	fill(want, sizeof(want), 4);
	for (unsigned int i = 0; i < 8; i++)
		md_send(&g.d, Q_OUT, want + (size_t)i * 32768, 32768, NULL, 0, NULL, NULL);
	/* 256 KiB against a 64 KiB pipe: the device must wait on the pipe, not give up. */
	bool ok = read_all(g.out_r, got, sizeof(want)) && memcmp(got, want, sizeof(want)) == 0;
	unsigned int n = 0;
	while (n < 8 && md_wait_used(&g.d, Q_OUT, &head, &len))
		n++;
	TAP_CHECK(ok && n == 8, "256 KiB to a full non-blocking pipe: all of it, after waiting (EAGAIN -> poll)");

	/* vcon_drain: returns once what the guest queued is on the host fd. */
	fill(want, 4 * 32768, 5);
	for (unsigned int i = 0; i < 4; i++)
		md_send(&g.d, Q_OUT, want + (size_t)i * 32768, 32768, NULL, 0, NULL, NULL);
	pid_t reader = fork();
	if (reader == 0) {
		usleep(300 * 1000); /* the drain has to wait for this reader */
		_exit(read_all(g.out_r, got, 4 * 32768) && memcmp(got, want, 4 * 32768) == 0 ? 0 : 1);
	}
	int r = vcon_drain(g.dev, -1, 5000, true);
	/* Drained means written: every buffer is back in the used ring already, no waiting. */
	uint16_t back = (uint16_t)(fake_ring_used_idx(&g.d.rings[Q_OUT]) - g.d.rings[Q_OUT].used_seen);
	int st = -1;
	waitpid(reader, &st, 0);
	TAP_CHECK(r == 0 && back == 4 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "vcon_drain waits for a slow reader and returns once all queued output is written");
	while (fake_ring_used(&g.d.rings[Q_OUT], &head, &len)) {
	}

	/* A write stuck on a pipe nobody reads: the drain ends on its abort fd, not never. */
	for (unsigned int i = 0; i < 4; i++)
		md_send(&g.d, Q_OUT, want, 32768, NULL, 0, NULL, NULL);
	int efd = eventfd(1, EFD_CLOEXEC);
	r = vcon_drain(g.dev, efd, 60000, true);
	TAP_CHECK(r == -EINTR, "a drain stuck on an unread pipe ends when its abort fd is readable");
	close(efd);
	/* The same stuck write, watched from outside and drained impatiently (ringvm was signalled). */
	uint64_t moved, moved2;
	bool writing;
	/* (The abort fd was readable from the start: the worker may not have begun the write yet.) */
	vcon_output_progress(g.dev, &moved, &writing);
	for (int i = 0; i < 5000 && !writing; i++) {
		usleep(1000);
		vcon_output_progress(g.dev, &moved, &writing);
	}
	TAP_CHECK(writing && moved > 0, "vcon_output_progress: a write is waiting, bytes moved before");
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = vcon_drain(g.dev, -1, 300, false);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	vcon_output_progress(g.dev, &moved2, &writing);
	TAP_CHECK(r == -ETIMEDOUT && ms >= 300 && writing && moved2 >= moved,
		  "an impatient drain gives up on a reader that took nothing for stall_ms");
	rig_down(&g); /* the stuck write is cancelled: destroy does not hang (the runner's timeout) */
}

static void test_hostile(void)
{
	struct rig g;
	uint32_t head, len;

	TAP_CHECK(rig_up(&g, false, false) == 0, "a fresh device");
	/* A bad control message is reported and ignored; the device keeps working. */
	uint8_t junk[3] = { 1, 2, 3 };
	TAP_CHECK(md_roundtrip(&g.d, CTRL_TX, junk, sizeof(junk), NULL, 0, NULL, NULL) == 0,
		  "a 3-byte control message comes back (ignored)");
	TAP_CHECK(ctrl_send(&g, 77, VIRTIO_CONSOLE_PORT_OPEN, 1), "PORT_OPEN for port 77 comes back");
	TAP_CHECK(!(md_rd32(&g.d, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET),
		  "bad messages do not break the device");
	/* A control receive buffer smaller than a message is a driver bug: NEEDS_RESET. */
	md_send(&g.d, CTRL_RX, NULL, 0, NULL, 4, NULL, NULL);
	TAP_CHECK(ctrl_send(&g, VIRTIO_CONSOLE_BAD_ID, VIRTIO_CONSOLE_DEVICE_READY, 1),
		  "DEVICE_READY with only a 4-byte control receive buffer posted");
	bool reset = false;
	for (int i = 0; i < 5000 && !reset; i++) {
		reset = md_rd32(&g.d, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET;
		usleep(1000);
	}
	TAP_CHECK(reset, "a 4-byte control receive buffer sets NEEDS_RESET");
	/* The driver resets; the device comes up again from scratch. */
	md_wr32(&g.d, VIRTIO_MMIO_STATUS, 0);
	TAP_CHECK(md_bring_up(&g.d, g.vm, NQ, QSIZE, 1ULL << VIRTIO_CONSOLE_F_MULTIPORT) == 0 &&
			  bring_up_ports(&g),
		  "after a reset the ports come up again");
	/* The worker's event read is re-armed for the new run: the guest opening stdin wakes it. */
	post(&g, Q_IN, 4096);
	TAP_CHECK(write(g.in_w, "again", 5) == 5 && quiet(&g, Q_IN, 100),
		  "after the reset, stdin waits for the guest to open its port");
	TAP_CHECK(ctrl_send(&g, 0, VIRTIO_CONSOLE_PORT_OPEN, 1) && md_wait_used(&g.d, Q_IN, &head, &len) &&
			  len == 5 && memcmp(md_host(&g.d, g.gpa[Q_IN][head % QSIZE]), "again", 5) == 0,
		  "and flows once it is open (the open wakes the stdin worker of the new run)");
	/* Writes to the input port go nowhere but come back. */
	TAP_CHECK(md_roundtrip(&g.d, 1, "x", 1, NULL, 0, NULL, NULL) == 0,
		  "a write to the stdin port is dropped and comes back");
	/* A receive buffer on an output port is never filled. */
	post(&g, 4, 4096);
	TAP_CHECK(quiet(&g, 4, 100), "stdout's receive queue keeps its buffers");
	rig_down(&g);

	/* No MULTIPORT: the device refuses to activate (its ports cannot exist without it). */
	struct rig h;
	int in[2];
	TAP_CHECK(pipe2(in, O_CLOEXEC) == 0, "a pipe");
	struct vcon_port_config one = { "p", in[0], true, false };
	h.vm = fake_vm_create(RAM);
	bool made = h.vm && vcon_create(&one, 1, &h.dev) == 0 &&
		    virtio_mmio_create(h.vm, vcon_virtio_dev(h.dev), &h.mmio) == 0;
	TAP_CHECK(made && md_bring_up(&h.d, h.vm, 4, QSIZE, 0) == -6,
		  "a driver without MULTIPORT gets NEEDS_RESET at DRIVER_OK");
	virtio_mmio_destroy(h.mmio);
	vcon_destroy(h.dev);
	fake_vm_destroy(h.vm);
	close(in[0]);
	close(in[1]);

	struct vcon_dev *bad;
	struct vcon_port_config none = { "p", -1, true, false };
	TAP_CHECK(vcon_create(&none, 1, &bad) == -EINVAL, "a port without an fd is refused");
	TAP_CHECK(vcon_create(&none, 0, &bad) == -EINVAL, "zero ports are refused");
}

int main(void)
{
	/* SIGPIPE keeps its default action: a device write to a pipe without a reader must not kill us. */
	test_bring_up_and_input();
	test_input_held();
	test_input_sticky_eof();
	test_output();
	test_nonblocking_and_drain();
	test_hostile();
	return tap_done();
}
