/* bus.c: port-I/O and MMIO address decoding. A handful of ranges: a linear scan beats a tree. */
#include "bus.h"

#include <errno.h>
#include <string.h>

int bus_add(struct bus *bus, uint64_t base, uint64_t len, const struct bus_ops *ops, void *opaque)
{
	if (len == 0 || base + len < base)
		return -EINVAL;
	for (unsigned int i = 0; i < bus->nr; i++) {
		const struct bus_range *r = &bus->ranges[i];
		if (base < r->base + r->len && r->base < base + len)
			return -EEXIST;
	}
	if (bus->nr == BUS_MAX_RANGES)
		return -ENOSPC;
	bus->ranges[bus->nr++] = (struct bus_range){ base, len, ops, opaque };
	return 0;
}

static const struct bus_range *bus_find(const struct bus *bus, uint64_t addr, uint32_t len)
{
	for (unsigned int i = 0; i < bus->nr; i++) {
		const struct bus_range *r = &bus->ranges[i];
		if (addr >= r->base && addr - r->base < r->len && len <= r->len - (addr - r->base))
			return r;
	}
	return NULL;
}

int bus_read(const struct bus *bus, uint64_t addr, void *data, uint32_t len)
{
	const struct bus_range *r = bus_find(bus, addr, len);
	if (!r || !r->ops->read) {
		memset(data, 0xff, len);
		return -ENOENT;
	}
	r->ops->read(r->opaque, addr - r->base, data, len);
	return 0;
}

int bus_write(const struct bus *bus, uint64_t addr, const void *data, uint32_t len)
{
	const struct bus_range *r = bus_find(bus, addr, len);
	if (!r || !r->ops->write)
		return -ENOENT;
	r->ops->write(r->opaque, addr - r->base, data, len);
	return 0;
}
