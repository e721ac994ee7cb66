/* devices.c: create each kind's devices from the kind table and attach each on virtio-mmio, in table order. */
#include "vmm/devices.h"

#include <errno.h>
#include <string.h>

#include "devices/virtio/mmio.h"
#include "vmm/errmsg.h"
#include "vmm/kcmdline.h"
#include "vmm/privilege.h"

/* Instance i of kind: create it, put it on a virtio-mmio transport of the VM (windows go out in
   call order), and list it. */
static int devices_add(struct ringvm_devices *d, struct vm *vm, const struct device_kind *kind,
		       unsigned int i, char *err, size_t errlen)
{
	struct ringvm_device *e = &d->dev[d->n];
	struct virtio_dev *vdev;
	void *dev;
	int ret = kind->create(&d->ctx, i, &dev, &vdev, err, errlen);
	if (ret)
		return ret;
	ret = virtio_mmio_create(vm, vdev, &e->transport);
	if (ret) {
		kind->attach_error(&d->ctx, dev, ret, err, errlen);
		kind->destroy(dev);
		return ret;
	}
	e->kind = kind;
	e->dev = dev;
	e->confine = (struct seccomp_confinement){ .role = kind->role, .unlink_dirfd = -1 };
	d->n++;
	return 0;
}

int ringvm_devices_create(struct ringvm_devices *d, struct vm *vm, const struct device_kind *const *kinds,
			  unsigned int nr_kinds, const struct device_kind_ctx *ctx, char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	d->kinds = kinds;
	d->nr_kinds = nr_kinds;
	d->ctx = *ctx;
	/* Counted one by one: a sum could wrap. */
	unsigned int total = 0;
	for (unsigned int k = 0; k < nr_kinds; k++) {
		unsigned int n = kinds[k]->count(ctx);
		if (n > RINGVM_DEVICES_SLOTS - total)
			return errmsg(err, errlen, -E2BIG, "at most %d devices (disks, shares and the root together)",
				      RINGVM_MAX_DEVICES);
		total += n;
	}
	int ret = 0;
	for (unsigned int k = 0; k < nr_kinds && !ret; k++) {
		if (kinds[k]->prepare)
			kinds[k]->prepare(ctx);
		unsigned int n = kinds[k]->count(ctx);
		for (unsigned int i = 0; i < n && !ret; i++)
			ret = devices_add(d, vm, kinds[k], i, err, errlen);
	}
	if (ret)
		ringvm_devices_destroy(d);
	return ret;
}

void *ringvm_devices_find(const struct ringvm_devices *d, const struct device_kind *kind, unsigned int i)
{
	for (unsigned int j = 0; j < d->n; j++)
		if (d->dev[j].kind == kind && i-- == 0)
			return d->dev[j].dev;
	return NULL;
}

struct virtio_core *ringvm_devices_core(struct ringvm_devices *d, unsigned int i)
{
	return i < d->n ? virtio_mmio_core(d->dev[i].transport) : NULL;
}

void ringvm_devices_priv_need(const struct ringvm_devices *d, struct priv_need *need)
{
	memset(need, 0, sizeof(*need));
	for (unsigned int j = 0; j < d->n; j++)
		if (d->dev[j].kind->priv_need)
			d->dev[j].kind->priv_need(d->dev[j].dev, need);
}

int ringvm_devices_guest_cmdline(const struct ringvm_devices *d, struct kcmdline *out, char *err,
				 size_t errlen)
{
	void *devs[RINGVM_DEVICES_SLOTS];
	for (unsigned int k = 0; k < d->nr_kinds; k++) {
		const struct device_kind *kind = d->kinds[k];
		unsigned int n = 0;
		for (unsigned int j = 0; j < d->n; j++)
			if (d->dev[j].kind == kind)
				devs[n++] = d->dev[j].dev;
		if (n == 0 || !kind->guest_cmdline)
			continue;
		int ret = kind->guest_cmdline(&d->ctx, devs, n, out);
		if (ret)
			return errmsg(err, errlen, ret, "kernel command line too long (%s)", kind->what_too_long);
	}
	return 0;
}

int ringvm_devices_start(struct ringvm_devices *d, enum seccomp_mode mode)
{
	/* Queues start serving when the guest's driver sets DRIVER_OK (devices/virtio/core.c), on
	   workers made here, while threads and rings may still be made. */
	int ret = 0;
	for (unsigned int j = 0; j < d->n && !ret; j++) {
		d->dev[j].confine.mode = mode;
		ret = virtio_mmio_prepare(d->dev[j].transport, seccomp_confine_hook, &d->dev[j].confine);
	}
	return ret;
}

void ringvm_devices_destroy(struct ringvm_devices *d)
{
	/* Transports first: destroying one stops its queue workers, whose in-flight I/O still uses
	   the device's backend (file, inode table). */
	for (unsigned int j = 0; j < d->n; j++) {
		virtio_mmio_destroy(d->dev[j].transport);
		d->dev[j].transport = NULL;
	}
	for (unsigned int j = d->n; j-- > 0;) {
		d->dev[j].kind->destroy(d->dev[j].dev);
		d->dev[j] = (struct ringvm_device){ 0 };
	}
	d->n = 0;
}
