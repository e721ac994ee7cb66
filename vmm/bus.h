/* bus.h: port-I/O and MMIO address decoding from vCPU exits to device callbacks. */
#ifndef RINGVM_BUS_H
#define RINGVM_BUS_H

#include <stdint.h>

/*
 * A device's register window. Called on the vCPU thread that trapped, possibly on several vCPUs at
 * once: a device protects its own state. offset is relative to the window base; len is 1, 2, 4 or 8.
 * A read must fill all len bytes of data (little-endian register value).
 */
struct bus_ops {
	void (*read)(void *opaque, uint64_t offset, void *data, uint32_t len);
	void (*write)(void *opaque, uint64_t offset, const void *data, uint32_t len);
};

struct bus_range {
	uint64_t base;
	uint64_t len;
	const struct bus_ops *ops;
	void *opaque;
};

#define BUS_MAX_RANGES 64

/* Ranges are added before the first vCPU runs and never change after, so lookups take no lock. */
struct bus {
	struct bus_range ranges[BUS_MAX_RANGES];
	unsigned int nr;
};

/* Add [base, base+len). -EEXIST if it overlaps a range, -ENOSPC when full, -EINVAL if len is 0. */
__attribute__((warn_unused_result)) int bus_add(struct bus *bus, uint64_t base, uint64_t len,
						const struct bus_ops *ops, void *opaque);

/* Dispatch an access. Returns 0, or -ENOENT when nothing is mapped there (reads then return ~0). */
int bus_read(const struct bus *bus, uint64_t addr, void *data, uint32_t len);
int bus_write(const struct bus *bus, uint64_t addr, const void *data, uint32_t len);

#endif
