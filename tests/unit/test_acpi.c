/* test_acpi.c: unit tests for acpi_build(): pointers, lengths, checksums, MADT contents, sizes. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/acpi.h"
#include "tests/unit/tap.h"
#include "vmm/layout.h"

/* Offsets from ACPI 6.5 chapter 5, read independently of acpi.c's structs. */
#define HDR_LENGTH 4
#define HDR_REVISION 8
#define HDR_SIZE 36
#define RSDP_REVISION 15
#define RSDP_RSDT 16
#define RSDP_LENGTH 20
#define RSDP_XSDT 24
#define FADT_DSDT32 40
#define FADT_SCI_INT 46
#define FADT_BOOT_ARCH 109
#define FADT_FLAGS 112
#define FADT_RESET_REG 116
#define FADT_RESET_VALUE 128
#define FADT_X_DSDT 140
#define FADT_SLEEP_CONTROL 244
#define FADT_SLEEP_STATUS 256
#define FADT_HYPERVISOR_ID 268
#define MADT_LAPIC_ADDR 36
#define MADT_FLAGS 40
#define MADT_ENTRIES 44

#define FADT_HW_REDUCED (1u << 20)
#define FADT_RESET_REG_SUP (1u << 10)
#define BOOT_ARCH_8042 (1u << 1)
#define BOOT_ARCH_NO_VGA (1u << 2)
#define BOOT_ARCH_NO_CMOS_RTC (1u << 5)

#define GPA LAYOUT_ACPI_START
#define BIG (64 * 1024)

static const uint8_t *tbl;
static size_t tbl_used;

static uint64_t le(size_t off, unsigned int n)
{
	uint64_t v = 0;
	for (unsigned int i = 0; i < n; i++)
		v |= (uint64_t)tbl[off + i] << (8 * i);
	return v;
}

static int sums_to_zero(size_t off, size_t len)
{
	uint8_t sum = 0;
	for (size_t i = 0; i < len; i++)
		sum = (uint8_t)(sum + tbl[off + i]);
	return sum == 0;
}

/* Offset of the table at guest address addr, if its header and whole length lie in the output. */
static long table_at(uint64_t addr, const char *sig)
{
	if (addr < GPA || addr - GPA + HDR_SIZE > tbl_used)
		return -1;
	size_t off = (size_t)(addr - GPA);
	uint64_t len = le(off + HDR_LENGTH, 4);
	if (memcmp(tbl + off, sig, 4) != 0 || len < HDR_SIZE || len > tbl_used - off)
		return -1;
	return (long)off;
}

static int gas_is_io_byte(size_t off, uint64_t port)
{
	return tbl[off] == 1 && tbl[off + 1] == 8 && tbl[off + 2] == 0 && tbl[off + 3] == 1 &&
	       le(off + 4, 8) == port;
}

/* Count DSDT bytes equal to the string (without its NUL). */
static unsigned int count_in(size_t off, size_t len, const char *s)
{
	size_t n = strlen(s);
	unsigned int count = 0;
	for (size_t i = 0; i + n <= len; i++)
		count += memcmp(tbl + off + i, s, n) == 0;
	return count;
}

static void sample_devs(struct acpi_mmio_dev *devs, unsigned int n)
{
	static const uint32_t gsis[] = LAYOUT_GSI_VIRTIO;
	for (unsigned int i = 0; i < n; i++)
		devs[i] = (struct acpi_mmio_dev){ .base = LAYOUT_VIRTIO_MMIO_START + i * LAYOUT_VIRTIO_MMIO_SIZE,
						  .size = LAYOUT_VIRTIO_MMIO_SIZE,
						  .gsi = gsis[i % LAYOUT_GSI_VIRTIO_COUNT] };
}

static void check_machine(unsigned int nr_cpus, unsigned int nr_devs)
{
	static uint8_t buf[BIG];
	struct acpi_mmio_dev devs[32];
	sample_devs(devs, nr_devs);
	struct acpi_config cfg = { .nr_cpus = nr_cpus, .mmio_devs = devs, .nr_mmio_devs = nr_devs };
	char what[128];
#define CHECK(cond, fmt)                                                             \
	do {                                                                         \
		snprintf(what, sizeof(what), "%u cpus, %u devs: " fmt, nr_cpus, nr_devs); \
		TAP_CHECK(cond, what);                                               \
	} while (0)

	memset(buf, 0xa5, sizeof(buf));
	int used = acpi_build(&cfg, buf, sizeof(buf), GPA);
	CHECK(used > 0, "builds");
	if (used <= 0)
		return;
	tbl = buf;
	tbl_used = (size_t)used;
	int untouched = 1;
	for (size_t i = tbl_used; i < sizeof(buf); i++)
		untouched &= buf[i] == 0xa5;
	CHECK(untouched, "nothing written past the size returned");

	CHECK(!memcmp(tbl, "RSD PTR ", 8) && tbl[RSDP_REVISION] == 2 && le(RSDP_LENGTH, 4) == 36 &&
		      le(RSDP_RSDT, 4) == 0 && !memcmp(tbl + 9, "RINGVM", 6),
	      "RSDP revision 2, length 36, OEM RINGVM, XSDT only");
	CHECK(sums_to_zero(0, 20) && sums_to_zero(0, 36), "RSDP checksum and extended checksum");

	long xsdt = table_at(le(RSDP_XSDT, 8), "XSDT");
	CHECK(xsdt >= 0 && sums_to_zero((size_t)xsdt, le((size_t)xsdt + HDR_LENGTH, 4)),
	      "XSDT found from the RSDP, checksum 0");
	if (xsdt < 0)
		return;
	uint64_t xlen = le((size_t)xsdt + HDR_LENGTH, 4);
	CHECK(xlen == HDR_SIZE + 2 * 8, "XSDT lists two tables");
	long fadt = -1, madt = -1;
	for (uint64_t e = HDR_SIZE; e + 8 <= xlen; e += 8) {
		uint64_t addr = le((size_t)xsdt + e, 8);
		if (table_at(addr, "FACP") >= 0)
			fadt = table_at(addr, "FACP");
		if (table_at(addr, "APIC") >= 0)
			madt = table_at(addr, "APIC");
	}
	CHECK(fadt >= 0 && madt >= 0, "XSDT points at the FADT and the MADT");
	if (fadt < 0 || madt < 0)
		return;

	size_t f = (size_t)fadt;
	CHECK(le(f + HDR_LENGTH, 4) == 276 && tbl[f + HDR_REVISION] == 6 && sums_to_zero(f, 276),
	      "FADT revision 6, 276 bytes, checksum 0");
	uint32_t flags = (uint32_t)le(f + FADT_FLAGS, 4);
	CHECK((flags & FADT_HW_REDUCED) && (flags & FADT_RESET_REG_SUP), "FADT: HW_REDUCED_ACPI, RESET_REG_SUP");
	uint32_t arch = (uint32_t)le(f + FADT_BOOT_ARCH, 2);
	CHECK((arch & BOOT_ARCH_NO_VGA) && (arch & BOOT_ARCH_NO_CMOS_RTC) && !(arch & BOOT_ARCH_8042),
	      "FADT: no VGA, no CMOS RTC, no 8042");
	CHECK(gas_is_io_byte(f + FADT_SLEEP_CONTROL, LAYOUT_PORT_ACPI_SLEEP_CTL) &&
		      gas_is_io_byte(f + FADT_SLEEP_STATUS, LAYOUT_PORT_ACPI_SLEEP_STS),
	      "FADT: sleep control/status are 8-bit I/O registers at the layout ports");
	CHECK(gas_is_io_byte(f + FADT_RESET_REG, LAYOUT_PORT_ACPI_RESET) &&
		      tbl[f + FADT_RESET_VALUE] == LAYOUT_ACPI_RESET_VALUE,
	      "FADT: reset register and value");
	CHECK(le(f + FADT_SCI_INT, 2) == 0 && !memcmp(tbl + f + FADT_HYPERVISOR_ID, "RINGVM", 6),
	      "FADT: no SCI, hypervisor RINGVM");

	long dsdt = table_at(le(f + FADT_X_DSDT, 8), "DSDT");
	CHECK(dsdt >= 0 && le(f + FADT_DSDT32, 4) == 0, "FADT X_DSDT points at the DSDT");
	if (dsdt >= 0) {
		size_t d = (size_t)dsdt, dlen = le(d + HDR_LENGTH, 4);
		CHECK(sums_to_zero(d, dlen) && tbl[d + HDR_REVISION] == 2, "DSDT revision 2, checksum 0");
		CHECK(count_in(d, dlen, "LNRO0005") == nr_devs && count_in(d, dlen, "_S5_") == 1 &&
			      count_in(d, dlen, "COM1") == 1,
		      "DSDT has _S5, COM1 and one LNRO0005 per device");
		/* Name (\_S5, Package (4) { BytePrefix LAYOUT_ACPI_S5_TYPE, ... }) */
		const char s5[] = { '\\', '_', 'S', '5', '_', 0x12, 0x07, 0x04, 0x0a, LAYOUT_ACPI_S5_TYPE, 0 };
		CHECK(count_in(d, dlen, s5) == 1, "DSDT: \\_S5 starts with SLP_TYP LAYOUT_ACPI_S5_TYPE");
		/* Memory32Fixed (ReadWrite, base, size) then Interrupt (Consumer, Edge, ActiveHigh,
		 * Exclusive) { gsi }, for every device. */
		unsigned int found = 0;
		for (unsigned int i = 0; i < nr_devs; i++) {
			const uint8_t want[21] = {
				0x86, 0x09, 0x00, 0x01, (uint8_t)devs[i].base, (uint8_t)(devs[i].base >> 8),
				(uint8_t)(devs[i].base >> 16), (uint8_t)(devs[i].base >> 24),
				(uint8_t)devs[i].size, (uint8_t)(devs[i].size >> 8),
				(uint8_t)(devs[i].size >> 16), (uint8_t)(devs[i].size >> 24),
				0x89, 0x06, 0x00, 0x03, 0x01, (uint8_t)devs[i].gsi, 0, 0, 0,
			};
			for (size_t j = 0; j + sizeof(want) <= dlen; j++)
				found += memcmp(tbl + d + j, want, sizeof(want)) == 0;
		}
		CHECK(found == nr_devs, "DSDT: each device's window and edge/high/exclusive GSI");
	}

	size_t m = (size_t)madt, mlen = le(m + HDR_LENGTH, 4);
	CHECK(sums_to_zero(m, mlen) && le(m + MADT_LAPIC_ADDR, 4) == LAYOUT_LAPIC_ADDR &&
		      le(m + MADT_FLAGS, 4) == 1,
	      "MADT checksum 0, LAPIC address, PCAT_COMPAT");
	unsigned int lapics = 0, ioapics = 0, isos = 0, nmis = 0, bad = 0;
	for (size_t e = MADT_ENTRIES; e < mlen;) {
		uint8_t type = tbl[m + e], len = tbl[m + e + 1];
		if (len < 2 || e + len > mlen) {
			bad++;
			break;
		}
		const uint8_t *p = tbl + m + e;
		if (type == 0 && len == 8) {
			bad += p[2] != lapics || p[3] != lapics || le(m + e + 4, 4) != 1;
			lapics++;
		} else if (type == 1 && len == 12) {
			bad += p[2] != 0 || le(m + e + 4, 4) != LAYOUT_IOAPIC_ADDR || le(m + e + 8, 4) != 0;
			ioapics++;
		} else if (type == 2 && len == 10) {
			bad += p[2] != 0 || p[3] != 0 || le(m + e + 4, 4) != 2;
			isos++;
		} else if (type == 4 && len == 6) {
			bad += p[2] != 0xff || p[5] != 1;
			nmis++;
		} else {
			bad++;
		}
		e += len;
	}
	CHECK(lapics == nr_cpus && !bad, "MADT: one enabled LAPIC per vCPU, IDs 0..n-1");
	CHECK(ioapics == 1 && isos == 1 && nmis == 1, "MADT: one IOAPIC, IRQ0->GSI2 override, LINT1 NMI");

	/* The same config at another address: pointers move, nothing else does. */
	static uint8_t moved[BIG];
	int used2 = acpi_build(&cfg, moved, sizeof(moved), GPA + 0x1000);
	uint64_t moved_xsdt = 0;
	for (unsigned int i = 0; i < 8; i++)
		moved_xsdt |= (uint64_t)moved[RSDP_XSDT + i] << (8 * i);
	CHECK(used2 == used && moved_xsdt == le(RSDP_XSDT, 8) + 0x1000,
	      "tables built for another address point there");
#undef CHECK
}

static void test_exact_sizes(unsigned int nr_cpus, unsigned int nr_devs)
{
	struct acpi_mmio_dev devs[32];
	sample_devs(devs, nr_devs);
	struct acpi_config cfg = { .nr_cpus = nr_cpus, .mmio_devs = devs, .nr_mmio_devs = nr_devs };
	static uint8_t ref[BIG];
	int need = acpi_build(&cfg, ref, sizeof(ref), GPA);
	if (need <= 0) {
		TAP_CHECK(0, "reference build");
		return;
	}
	int all_enospc = 1, exact_ok = 0;
	/* Exact-size heap buffers: ASan reports any byte written past len. */
	for (int len = 0; len <= need; len++) {
		uint8_t *buf = malloc(len ? (size_t)len : 1);
		if (!buf)
			return;
		int got = acpi_build(&cfg, buf, (size_t)len, GPA);
		if (len < need && got != -ENOSPC) {
			printf("# len %d: got %d\n", len, got);
			all_enospc = 0;
		}
		if (len == need)
			exact_ok = got == need && memcmp(buf, ref, (size_t)need) == 0;
		free(buf);
	}
	char what[96];
	snprintf(what, sizeof(what), "%u cpus, %u devs: every len below %d gives -ENOSPC", nr_cpus, nr_devs,
		 need);
	TAP_CHECK(all_enospc, what);
	snprintf(what, sizeof(what), "%u cpus, %u devs: exactly %d bytes suffice", nr_cpus, nr_devs, need);
	TAP_CHECK(exact_ok, what);
}

static void test_bad_configs(void)
{
	static uint8_t buf[BIG];
	struct acpi_mmio_dev dev = { .base = LAYOUT_VIRTIO_MMIO_START, .size = 0x1000, .gsi = 16 };
	struct acpi_config ok = { .nr_cpus = 1, .mmio_devs = &dev, .nr_mmio_devs = 1 };
	struct acpi_config c;

	memset(buf, 0x5a, sizeof(buf));
	c = ok;
	c.nr_cpus = 0;
	TAP_CHECK(acpi_build(&c, buf, sizeof(buf), GPA) == -EINVAL && buf[0] == 0x5a,
		  "0 CPUs: -EINVAL, buffer untouched");
	c.nr_cpus = 256;
	TAP_CHECK(acpi_build(&c, buf, sizeof(buf), GPA) == -EINVAL, "256 CPUs: -EINVAL");
	c.nr_cpus = 255;
	TAP_CHECK(acpi_build(&c, buf, sizeof(buf), GPA) > 0, "255 CPUs: fine");
	TAP_CHECK(acpi_build(&ok, buf, sizeof(buf), GPA + 8) == -EINVAL, "unaligned address: -EINVAL");
	TAP_CHECK(acpi_build(NULL, buf, sizeof(buf), GPA) == -EINVAL, "no config: -EINVAL");

	c = ok;
	c.mmio_devs = NULL;
	TAP_CHECK(acpi_build(&c, buf, sizeof(buf), GPA) == -EINVAL, "devices counted but absent: -EINVAL");

	static const struct acpi_mmio_dev bad[] = {
		{ .base = 0x100000000ULL, .size = 0x1000, .gsi = 16 },
		{ .base = 0xfffff000ULL, .size = 0x2000, .gsi = 16 },
		{ .base = 0, .size = 0x100000000ULL, .gsi = 16 },
		{ .base = LAYOUT_VIRTIO_MMIO_START, .size = 0, .gsi = 16 },
		{ .base = LAYOUT_VIRTIO_MMIO_START, .size = 0x1000, .gsi = LAYOUT_GSI_MAX + 1 },
	};
	static const char *const why[] = { "window above 4 GiB", "window crossing 4 GiB",
					   "4 GiB window", "empty window", "GSI beyond the IOAPIC" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c = ok;
		c.mmio_devs = &bad[i];
		char what[64];
		snprintf(what, sizeof(what), "%s: -EINVAL", why[i]);
		TAP_CHECK(acpi_build(&c, buf, sizeof(buf), GPA) == -EINVAL, what);
	}
	struct acpi_mmio_dev top = { .base = 0xfffff000ULL, .size = 0x1000, .gsi = LAYOUT_GSI_MAX };
	c = ok;
	c.mmio_devs = &top;
	TAP_CHECK(acpi_build(&c, buf, sizeof(buf), GPA) > 0, "window ending at 4 GiB, last GSI: fine");
}

int main(void)
{
	check_machine(1, 0);
	check_machine(2, 3);
	check_machine(64, 32);
	check_machine(255, 1);
	test_exact_sizes(2, 3);
	test_exact_sizes(64, 0);
	test_bad_configs();
	return tap_done();
}
