/* test_devices.c: vmm/devices.c over a test-only table of fake device kinds: order, attach, roles, guest parameters, unwinding. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_ids.h>

#include "tests/support/fake_vm.h"
#include "devices/virtio/mmio.h"
#include "tap.h"
#include "vmm/devices.h"
#include "vmm/kcmdline.h"
#include "vmm/privilege.h"

/* How a fake kind behaves in the current case: instances, and which one (if any) fails where. */
struct fake_kind {
	const struct device_kind *kind;
	unsigned int count;
	int fail_create;      /* instance whose create fails, or -1 */
	int fail_attach;      /* instance that hands the transport a device it refuses, or -1 */
	unsigned int prepared; /* prepare calls */
};

/* A fake device: a virtio device with one queue, and who made it. */
struct fake_dev {
	struct virtio_dev vdev;
	struct fake_kind *fk;
	unsigned int i;
};

/* What happened, in order: "+a0" created, "-a0" destroyed, "!b1" its attach error reported. */
static char events[512];
/* ioeventfds and irqfds still registered (some transport alive) when each device was destroyed,
   in destroy order. */
static unsigned int registered_at_destroy[64], nr_destroyed;
static struct vm *vm;

static void event(char what, const struct fake_dev *d)
{
	size_t n = strlen(events);
	snprintf(events + n, sizeof(events) - n, "%c%s%u", what, d->fk->kind->name, d->i);
}

static int fake_handle(struct virtio_dev *d, struct vq_worker *w, struct vq_req *req)
{
	vq_worker_done(w, req, 0);
	return VQ_REQ_PENDING;
}

static void fake_complete(struct virtio_dev *d, struct vq_worker *w, struct vq_req *req, int res)
{
}

static void fake_config_read(struct virtio_dev *d, uint32_t off, void *data, uint32_t len)
{
	memset(data, 0, len);
}

static int fake_activate(struct virtio_dev *d, uint64_t features)
{
	return 0;
}

static const struct virtio_dev_ops fake_ops = { .config_read = fake_config_read, .activate = fake_activate };
static const struct vq_handler_ops fake_qops = { .handle = fake_handle, .complete = fake_complete };

static int fake_create(struct fake_kind *fk, unsigned int i, void **dev, struct virtio_dev **vdev, char *err,
		       size_t errlen)
{
	if ((int)i == fk->fail_create) {
		snprintf(err, errlen, "%s %u: cannot", fk->kind->name, i);
		return -EIO;
	}
	struct fake_dev *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->fk = fk;
	d->i = i;
	d->vdev = (struct virtio_dev){
		.device_id = VIRTIO_ID_CONSOLE,
		.features = 1,
		.nr_queues = 1,
		/* Not a power of two: the transport refuses it. */
		.queue_max_size = (int)i == fk->fail_attach ? 12 : 8,
		.ops = &fake_ops,
		.queue_ops = &fake_qops,
	};
	event('+', d);
	*dev = d;
	*vdev = &d->vdev;
	return 0;
}

static void fake_attach_error(const struct device_kind_ctx *ctx, void *dev, int ret, char *err, size_t errlen)
{
	const struct fake_dev *d = dev;
	event('!', d);
	snprintf(err, errlen, "%s %u: attach: %s", d->fk->kind->name, d->i, strerror(-ret));
}

static void fake_destroy(void *dev)
{
	const struct fake_vm_ioeventfd *ev;
	const struct fake_vm_irqfd *irq;
	if (nr_destroyed < 64)
		registered_at_destroy[nr_destroyed++] = fake_vm_ioeventfds(vm, &ev) + fake_vm_irqfds(vm, &irq);
	event('-', dev);
	free(dev);
}

/* Kind b's devices need device nodes on a writable share. */
static void fake_priv_need(const void *dev, struct priv_need *need)
{
	need->share = need->share_writable = need->share_dev = true;
}

/* " NAME=I,I,..." for the instances, in the order they came. */
static int fake_guest_cmdline(const struct device_kind_ctx *ctx, void *const *devs, unsigned int n,
			      struct kcmdline *out)
{
	const struct fake_dev *d = devs[0];
	int ret = kcmdline_add(out, " %s=", d->fk->kind->name);
	for (unsigned int i = 0; i < n && !ret; i++)
		ret = kcmdline_add(out, "%s%u", i ? "," : "", ((const struct fake_dev *)devs[i])->i);
	return ret;
}

/* Three fake kinds: a (plain), b (tells the guest, needs privileges), c (often has no instance). */
static struct fake_kind fa, fb, fc;

#define FAKE_KIND_OPS(x)                                                                          \
	static unsigned int count_##x(const struct device_kind_ctx *ctx)                          \
	{                                                                                         \
		return f##x.count;                                                                \
	}                                                                                         \
	static void prepare_##x(const struct device_kind_ctx *ctx)                                \
	{                                                                                         \
		f##x.prepared++;                                                                  \
	}                                                                                         \
	static int create_##x(const struct device_kind_ctx *ctx, unsigned int i, void **dev,      \
			      struct virtio_dev **vdev, char *err, size_t errlen)                 \
	{                                                                                         \
		return fake_create(&f##x, i, dev, vdev, err, errlen);                             \
	}
FAKE_KIND_OPS(a)
FAKE_KIND_OPS(b)
FAKE_KIND_OPS(c)

static const struct device_kind kind_a = {
	.name = "a", .role = SECCOMP_ROLE_WORKER, .count = count_a, .prepare = prepare_a,
	.create = create_a, .attach_error = fake_attach_error, .destroy = fake_destroy,
};
static const struct device_kind kind_b = {
	.name = "b", .role = SECCOMP_ROLE_WORKER_FS, .count = count_b, .prepare = prepare_b,
	.create = create_b, .attach_error = fake_attach_error, .destroy = fake_destroy,
	.priv_need = fake_priv_need, .guest_cmdline = fake_guest_cmdline, .what_too_long = "kind b",
};
static const struct device_kind kind_c = {
	.name = "c", .role = SECCOMP_ROLE_WORKER_CONSOLE, .count = count_c, .prepare = prepare_c,
	.create = create_c, .attach_error = fake_attach_error, .destroy = fake_destroy,
	.guest_cmdline = fake_guest_cmdline, .what_too_long = "kind c",
};
static const struct device_kind *const table[] = { &kind_a, &kind_b, &kind_c };

/* Whether devices from..nr_destroyed were destroyed with no transport left on the VM. */
static bool destroyed_after_transports(unsigned int from)
{
	for (unsigned int i = from; i < nr_destroyed; i++)
		if (registered_at_destroy[i])
			return false;
	return true;
}

/* A fresh case on a fresh VM (its windows are never given back): counts for a, b and c, nothing
   failing, no events. */
static void reset(unsigned int na, unsigned int nb, unsigned int nc)
{
	fake_vm_destroy(vm);
	vm = fake_vm_create(1 << 20);
	if (!vm) {
		printf("Bail out! no memory\n");
		exit(1);
	}
	fa = (struct fake_kind){ &kind_a, na, -1, -1, 0 };
	fb = (struct fake_kind){ &kind_b, nb, -1, -1, 0 };
	fc = (struct fake_kind){ &kind_c, nc, -1, -1, 0 };
	events[0] = '\0';
	nr_destroyed = 0;
}

static const struct device_kind_ctx ctx = { .nr_cpus = 1 };

static void test_order_and_roles(void)
{
	struct ringvm_devices d;
	char err[128] = "", line[256];
	reset(2, 2, 0);
	TAP_CHECK(ringvm_devices_create(&d, vm, table, 3, &ctx, err, sizeof(err)) == 0,
		  "two kinds' instances created");
	TAP_CHECK(!strcmp(events, "+a0+a1+b0+b1"), "in table order, instances in order");
	TAP_CHECK(fa.prepared == 1 && fb.prepared == 1 && fc.prepared == 1,
		  "each kind prepared once, one without instances too");
	bool ordered = d.n == 4;
	for (unsigned int j = 1; j < d.n && ordered; j++)
		ordered = virtio_mmio_base(d.dev[j].transport) > virtio_mmio_base(d.dev[j - 1].transport);
	TAP_CHECK(ordered, "each on its own transport, windows in attach order");
	TAP_CHECK(d.dev[0].kind == &kind_a && d.dev[1].kind == &kind_a && d.dev[2].kind == &kind_b &&
			  d.dev[3].kind == &kind_b,
		  "listed in attach order with their kinds");
	TAP_CHECK(d.dev[1].confine.role == SECCOMP_ROLE_WORKER && d.dev[2].confine.role == SECCOMP_ROLE_WORKER_FS,
		  "each device's workers get its kind's seccomp role");
	struct fake_dev *b1 = ringvm_devices_find(&d, &kind_b, 1);
	TAP_CHECK(b1 && b1->fk == &fb && b1->i == 1, "find: instance 1 of kind b");
	TAP_CHECK(!ringvm_devices_find(&d, &kind_b, 2) && !ringvm_devices_find(&d, &kind_c, 0),
		  "find: NULL past the last instance, and for a kind without any");

	struct priv_need need = { .share_dev = true };
	ringvm_devices_priv_need(&d, &need);
	TAP_CHECK(need.share && need.share_writable && need.share_dev, "priv_need: kind b's needs");
	fa.count = 1;
	fb.count = 0;
	struct ringvm_devices only_a;
	TAP_CHECK(ringvm_devices_create(&only_a, vm, table, 3, &ctx, err, sizeof(err)) == 0, "kind a alone");
	need = (struct priv_need){ .share = true };
	ringvm_devices_priv_need(&only_a, &need);
	TAP_CHECK(!need.share && !need.share_writable && !need.share_dev,
		  "priv_need: nothing when no kind asks (and what was in it is cleared)");
	ringvm_devices_destroy(&only_a);

	struct kcmdline c;
	kcmdline_init(&c, line, sizeof(line));
	TAP_CHECK(ringvm_devices_guest_cmdline(&d, &c, err, sizeof(err)) == 0 && !strcmp(line, " b=0,1"),
		  "guest parameters: kind b's, for its instances; none from a kind without instances");
	kcmdline_init(&c, line, 5);
	TAP_CHECK(ringvm_devices_guest_cmdline(&d, &c, err, sizeof(err)) == -E2BIG &&
			  !strcmp(err, "kernel command line too long (kind b)"),
		  "a line too long names the kind's piece");

	TAP_CHECK(ringvm_devices_start(&d, SECCOMP_MODE_OFF) == 0 && d.dev[3].confine.mode == SECCOMP_MODE_OFF,
		  "start makes every queue's worker");
	events[0] = '\0';
	nr_destroyed = 0;
	ringvm_devices_destroy(&d);
	TAP_CHECK(!strcmp(events, "-b1-b0-a1-a0"), "destroy: every device, last made first");
	TAP_CHECK(nr_destroyed == 4 && destroyed_after_transports(0),
		  "every transport gone before the first device is destroyed");
	TAP_CHECK(d.n == 0, "the set is empty");
	ringvm_devices_destroy(&d);
	TAP_CHECK(!strcmp(events, "-b1-b0-a1-a0"), "destroying twice is harmless");
}

static void test_failures(void)
{
	struct ringvm_devices d;
	char err[128] = "";

	reset(2, 3, 1);
	fb.fail_create = 1;
	TAP_CHECK(ringvm_devices_create(&d, vm, table, 3, &ctx, err, sizeof(err)) == -EIO,
		  "a create failing part-way fails the whole");
	TAP_CHECK(!strcmp(err, "b 1: cannot"), "with the kind's own message");
	TAP_CHECK(!strcmp(events, "+a0+a1+b0-b0-a1-a0"), "everything made so far destroyed, nothing after");
	TAP_CHECK(nr_destroyed == 3 && destroyed_after_transports(0) && d.n == 0, "transports first, none left");
	TAP_CHECK(fc.prepared == 0, "kinds after the failure not even prepared");

	reset(1, 0, 2);
	fc.fail_attach = 1;
	err[0] = '\0';
	TAP_CHECK(ringvm_devices_create(&d, vm, table, 3, &ctx, err, sizeof(err)) == -EINVAL,
		  "an attach failing part-way fails the whole");
	TAP_CHECK(!strcmp(err, "c 1: attach: Invalid argument"), "the kind names the instance");
	TAP_CHECK(!strcmp(events, "+a0+c0+c1!c1-c1-c0-a0"),
		  "the refused device destroyed by its kind, then everything made before it");
	TAP_CHECK(nr_destroyed == 3 && destroyed_after_transports(1) && d.n == 0,
		  "the attached ones destroyed after every transport");
	const struct fake_vm_ioeventfd *ev;
	const struct fake_vm_irqfd *irq;
	TAP_CHECK(fake_vm_ioeventfds(vm, &ev) == 0 && fake_vm_irqfds(vm, &irq) == 0,
		  "no transport left behind");

	reset(RINGVM_DEVICES_SLOTS, 0, 1);
	TAP_CHECK(ringvm_devices_create(&d, vm, table, 3, &ctx, err, sizeof(err)) == -E2BIG &&
			  !strcmp(events, "") && fa.prepared == 0,
		  "more devices than slots: -E2BIG before anything is made");
	reset(RINGVM_DEVICES_SLOTS - 1, 0, 1);
	TAP_CHECK(ringvm_devices_create(&d, vm, table, 3, &ctx, err, sizeof(err)) == 0 && d.n == RINGVM_DEVICES_SLOTS,
		  "exactly as many as the slots fit");
	ringvm_devices_destroy(&d);
}

/* The command line builder the kinds write to: whole pieces or nothing. */
static void test_kcmdline(void)
{
	char buf[32];
	struct kcmdline c;
	kcmdline_init(&c, buf, sizeof(buf));
	const char *argv[] = { "a b", "" };
	TAP_CHECK(kcmdline_add(&c, "x=%d", 1) == 0 && kcmdline_add_argv(&c, "k=", argv, 2) == 0 &&
			  !strcmp(buf, "x=1 k=a%20b,%") && c.len == strlen(buf),
		  "kcmdline: words and encoded arguments appended");
	const char *big[] = { "0123456789012345678901234567890" };
	TAP_CHECK(kcmdline_add_argv(&c, "long=", big, 1) == -E2BIG && !strcmp(buf, "x=1 k=a%20b,%") &&
			  c.len == strlen(buf),
		  "kcmdline: arguments that do not fit leave the line as it was");
	TAP_CHECK(kcmdline_add(&c, " %s", big[0]) == -E2BIG && !strcmp(buf, "x=1 k=a%20b,%"),
		  "kcmdline: a word that does not fit leaves the line as it was");
}

int main(void)
{
	test_kcmdline();
	test_order_and_roles();
	test_failures();
	fake_vm_destroy(vm);
	return tap_done();
}
