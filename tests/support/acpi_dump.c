/* acpi_dump.c: writes the ACPI tables of a sample machine to files, found by following their pointers. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/acpi.h"
#include "vmm/layout.h"

/* Offsets from the ACPI 6.5 table layouts, kept apart from acpi.c so a mistake there shows here. */
#define RSDP_XSDT_ADDRESS 24
#define HDR_LENGTH 4
#define HDR_SIZE 36
#define FADT_X_DSDT 140
#define NR_SAMPLE_DEVS 3

static uint8_t dump_buf[LAYOUT_ACPI_SIZE];
static int dump_used;

static uint64_t dump_le(size_t off, unsigned int n)
{
	uint64_t v = 0;
	for (unsigned int i = 0; i < n; i++)
		v |= (uint64_t)dump_buf[off + i] << (8 * i);
	return v;
}

/* Offset in dump_buf of the guest address addr, with room for len bytes there, or -1. */
static long dump_offset(uint64_t addr, uint64_t len)
{
	if (addr < LAYOUT_ACPI_START || addr - LAYOUT_ACPI_START > (uint64_t)dump_used ||
	    len > (uint64_t)dump_used - (addr - LAYOUT_ACPI_START))
		return -1;
	return (long)(addr - LAYOUT_ACPI_START);
}

static int dump_write(const char *dir, const char *name, size_t off, size_t len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		return -errno;
	size_t n = fwrite(dump_buf + off, 1, len, f);
	if (fclose(f) != 0 || n != len)
		return -EIO;
	return 0;
}

/* Write the table at addr to DIR/<signature>.dat; returns its offset in dump_buf, or -1. */
static long dump_table(const char *dir, uint64_t addr)
{
	long off = dump_offset(addr, HDR_SIZE);
	if (off < 0)
		return -1;
	uint64_t len = dump_le((size_t)off + HDR_LENGTH, 4);
	if (len < HDR_SIZE || dump_offset(addr, len) < 0)
		return -1;
	char name[16];
	snprintf(name, sizeof(name), "%.4s.dat", (const char *)dump_buf + off);
	for (char *c = name; *c; c++)
		*c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
	if (dump_write(dir, name, (size_t)off, (size_t)len) < 0)
		return -1;
	return off;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s DIR [NR_CPUS]\n", argv[0]);
		return 2;
	}
	const char *dir = argv[1];
	unsigned int nr_cpus = argc == 3 ? (unsigned int)strtoul(argv[2], NULL, 0) : 2;

	static const uint32_t gsis[] = LAYOUT_GSI_VIRTIO;
	struct acpi_mmio_dev devs[NR_SAMPLE_DEVS];
	for (unsigned int i = 0; i < NR_SAMPLE_DEVS; i++)
		devs[i] = (struct acpi_mmio_dev){ .base = LAYOUT_VIRTIO_MMIO_START + i * LAYOUT_VIRTIO_MMIO_SIZE,
						  .size = LAYOUT_VIRTIO_MMIO_SIZE,
						  .gsi = gsis[i % LAYOUT_GSI_VIRTIO_COUNT] };
	struct acpi_config cfg = { .nr_cpus = nr_cpus, .mmio_devs = devs, .nr_mmio_devs = NR_SAMPLE_DEVS };

	dump_used = acpi_build(&cfg, dump_buf, sizeof(dump_buf), LAYOUT_ACPI_START);
	if (dump_used < 0) {
		fprintf(stderr, "acpi_build: %s\n", strerror(-dump_used));
		return 1;
	}
	if (dump_write(dir, "all.bin", 0, (size_t)dump_used) < 0 || dump_write(dir, "rsdp.dat", 0, 36) < 0)
		goto fail;

	long xsdt = dump_table(dir, dump_le(RSDP_XSDT_ADDRESS, 8));
	if (xsdt < 0)
		goto fail;
	uint64_t xsdt_len = dump_le((size_t)xsdt + HDR_LENGTH, 4);
	for (uint64_t e = HDR_SIZE; e + 8 <= xsdt_len; e += 8) {
		long t = dump_table(dir, dump_le((size_t)xsdt + e, 8));
		if (t < 0)
			goto fail;
		if (!memcmp(dump_buf + t, "FACP", 4) &&
		    dump_table(dir, dump_le((size_t)t + FADT_X_DSDT, 8)) < 0)
			goto fail;
	}
	printf("%d bytes at 0x%llx\n", dump_used, (unsigned long long)LAYOUT_ACPI_START);
	return 0;
fail:
	fprintf(stderr, "acpi-dump: a table pointer leads outside the tables, or a write failed\n");
	return 1;
}
