/* acpi.c: lays out ringvm's ACPI tables (ACPI 6.5 chapter 5) and the DSDT that names its devices. */
#include "arch/x86/acpi.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "arch/x86/aml.h"
#include "vmm/layout.h"

/* The tables are written field by field through packed structs: they are little-endian, as we are. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "ACPI tables are little-endian");

#define ACPI_OEM_ID "RINGVM"
#define ACPI_OEM_TABLE_ID "RINGVM  "
#define ACPI_OEM_REVISION 1
#define ACPI_CREATOR_ID "RVMM"
#define ACPI_CREATOR_REVISION 1

/* Section 5.2.5.3: RSDP, ACPI 2.0+ form. */
struct acpi_rsdp {
	char signature[8];
	uint8_t checksum; /* over the first 20 bytes (the ACPI 1.0 part) */
	char oem_id[6];
	uint8_t revision;
	uint32_t rsdt_address;
	uint32_t length;
	uint64_t xsdt_address;
	uint8_t extended_checksum; /* over all of it */
	uint8_t reserved[3];
} __attribute__((packed));
_Static_assert(sizeof(struct acpi_rsdp) == 36, "RSDP");
#define ACPI_RSDP_V1_LEN 20
#define ACPI_RSDP_REVISION 2

/* Section 5.2.6: the header every other table starts with. */
struct acpi_header {
	char signature[4];
	uint32_t length;
	uint8_t revision;
	uint8_t checksum; /* all bytes of the table sum to 0 */
	char oem_id[6];
	char oem_table_id[8];
	uint32_t oem_revision;
	char creator_id[4];
	uint32_t creator_revision;
} __attribute__((packed));
_Static_assert(sizeof(struct acpi_header) == 36, "SDT header");

/* Section 5.2.3.2: Generic Address Structure. */
struct acpi_gas {
	uint8_t space_id;
	uint8_t bit_width;
	uint8_t bit_offset;
	uint8_t access_size;
	uint64_t address;
} __attribute__((packed));
_Static_assert(sizeof(struct acpi_gas) == 12, "GAS");
#define ACPI_GAS_SYSTEM_IO 1
#define ACPI_GAS_ACCESS_BYTE 1

/* Section 5.2.9, Table 5.9: FADT revision 6. Fields a hardware-reduced platform leaves 0 are kept
 * by name so the offsets can be checked against the table. */
struct acpi_fadt {
	struct acpi_header header;
	uint32_t firmware_ctrl;
	uint32_t dsdt;
	uint8_t reserved0;
	uint8_t preferred_pm_profile;
	uint16_t sci_int;
	uint32_t smi_cmd;
	uint8_t acpi_enable, acpi_disable, s4bios_req, pstate_cnt;
	uint32_t pm1a_evt_blk, pm1b_evt_blk, pm1a_cnt_blk, pm1b_cnt_blk;
	uint32_t pm2_cnt_blk, pm_tmr_blk, gpe0_blk, gpe1_blk;
	uint8_t pm1_evt_len, pm1_cnt_len, pm2_cnt_len, pm_tmr_len;
	uint8_t gpe0_blk_len, gpe1_blk_len, gpe1_base, cst_cnt;
	uint16_t p_lvl2_lat, p_lvl3_lat, flush_size, flush_stride;
	uint8_t duty_offset, duty_width, day_alrm, mon_alrm, century;
	uint16_t iapc_boot_arch;
	uint8_t reserved1;
	uint32_t flags;
	struct acpi_gas reset_reg;
	uint8_t reset_value;
	uint16_t arm_boot_arch;
	uint8_t minor_version;
	uint64_t x_firmware_ctrl;
	uint64_t x_dsdt;
	struct acpi_gas x_pm1a_evt_blk, x_pm1b_evt_blk, x_pm1a_cnt_blk, x_pm1b_cnt_blk;
	struct acpi_gas x_pm2_cnt_blk, x_pm_tmr_blk, x_gpe0_blk, x_gpe1_blk;
	struct acpi_gas sleep_control_reg;
	struct acpi_gas sleep_status_reg;
	char hypervisor_vendor_id[8];
} __attribute__((packed));
_Static_assert(sizeof(struct acpi_fadt) == 276, "FADT revision 6");
_Static_assert(offsetof(struct acpi_fadt, iapc_boot_arch) == 109, "FADT IAPC_BOOT_ARCH");
_Static_assert(offsetof(struct acpi_fadt, flags) == 112, "FADT flags");
_Static_assert(offsetof(struct acpi_fadt, x_dsdt) == 140, "FADT X_DSDT");
_Static_assert(offsetof(struct acpi_fadt, sleep_control_reg) == 244, "FADT SLEEP_CONTROL_REG");
#define ACPI_FADT_REVISION 6
#define ACPI_FADT_MINOR_VERSION 5

/* Table 5.10, IA-PC boot architecture flags. The 8042 bit stays clear: only its reset command is
 * emulated, and a clear bit keeps Linux's i8042 driver from probing a controller that is not there. */
#define ACPI_IAPC_NO_VGA (1u << 2)
#define ACPI_IAPC_NO_MSI (1u << 3)  /* there is no PCI at all */
#define ACPI_IAPC_NO_ASPM (1u << 4)
#define ACPI_IAPC_NO_CMOS_RTC (1u << 5)

/* Table 5.11, fixed feature flags. Without fixed power/sleep buttons, bits 4 and 5 say so. */
#define ACPI_FADT_PWR_BUTTON (1u << 4)
#define ACPI_FADT_SLP_BUTTON (1u << 5)
#define ACPI_FADT_RESET_REG_SUP (1u << 10)
#define ACPI_FADT_HW_REDUCED_ACPI (1u << 20)

/* Section 5.2.12: MADT and the entries we use. */
struct acpi_madt {
	struct acpi_header header;
	uint32_t lapic_address;
	uint32_t flags;
} __attribute__((packed));
#define ACPI_MADT_REVISION 5
#define ACPI_MADT_PCAT_COMPAT 1u

struct acpi_madt_lapic { /* 5.2.12.2 */
	uint8_t type, length, processor_uid, apic_id;
	uint32_t flags;
} __attribute__((packed));
#define ACPI_MADT_TYPE_LAPIC 0
#define ACPI_MADT_LAPIC_ENABLED 1u

struct acpi_madt_ioapic { /* 5.2.12.3 */
	uint8_t type, length, ioapic_id, reserved;
	uint32_t address;
	uint32_t gsi_base;
} __attribute__((packed));
#define ACPI_MADT_TYPE_IOAPIC 1

struct acpi_madt_irq_override { /* 5.2.12.5 */
	uint8_t type, length, bus, source;
	uint32_t gsi;
	uint16_t flags;
} __attribute__((packed));
#define ACPI_MADT_TYPE_IRQ_OVERRIDE 2
#define ACPI_MADT_BUS_ISA 0
#define ACPI_MADT_MPS_INTI_CONFORMS 0 /* polarity and trigger as the bus defines: ISA edge, high */

struct acpi_madt_lapic_nmi { /* 5.2.12.7 */
	uint8_t type, length, processor_uid;
	uint16_t flags;
	uint8_t lint;
} __attribute__((packed));
#define ACPI_MADT_TYPE_LAPIC_NMI 4
#define ACPI_MADT_ALL_PROCESSORS 0xff

/*
 * KVM's in-kernel IOAPIC resets its ID register to 0. x86-64 Linux only requires IOAPIC IDs to be
 * unique among IOAPICs (io_apic_unique_id()), not distinct from LAPIC IDs, and never rewrites the
 * register, so the MADT says 0 to agree with what the hardware reports.
 */
#define ACPI_IOAPIC_ID 0
#define ACPI_PIT_IRQ 0
#define ACPI_PIT_GSI 2 /* the in-kernel PIT drives IOAPIC pin 2, as on every PC */

#define ACPI_DSDT_REVISION 2 /* 2 and above: AML integers are 64 bits */
#define ACPI_MAX_CPUS 255    /* xAPIC IDs: 0xff is the broadcast ID */
#define ACPI_TABLE_ALIGN 16

/* Appends zeroed, aligned room to buf; the one place that checks we stay inside it. */
struct acpi_cursor {
	uint8_t *buf;
	size_t len;
	size_t off;
};

static void *acpi_take(struct acpi_cursor *c, size_t size, size_t align)
{
	size_t start = (c->off + align - 1) & ~(align - 1);
	if (start > c->len || size > c->len - start)
		return NULL;
	memset(c->buf + c->off, 0, start - c->off + size);
	c->off = start + size;
	return c->buf + start;
}

static uint8_t acpi_checksum(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint8_t sum = 0;
	for (size_t i = 0; i < len; i++)
		sum = (uint8_t)(sum + p[i]);
	return (uint8_t)-sum;
}

static void acpi_header_init(struct acpi_header *h, const char sig[4], uint32_t len, uint8_t rev)
{
	memcpy(h->signature, sig, sizeof(h->signature));
	h->length = len;
	h->revision = rev;
	memcpy(h->oem_id, ACPI_OEM_ID, sizeof(h->oem_id));
	memcpy(h->oem_table_id, ACPI_OEM_TABLE_ID, sizeof(h->oem_table_id));
	h->oem_revision = ACPI_OEM_REVISION;
	memcpy(h->creator_id, ACPI_CREATOR_ID, sizeof(h->creator_id));
	h->creator_revision = ACPI_CREATOR_REVISION;
}

/* The last step for a table: its length is final, so the checksum can cover it. */
static void acpi_header_seal(struct acpi_header *h)
{
	h->checksum = 0;
	h->checksum = acpi_checksum(h, h->length);
}

static struct acpi_gas acpi_io_byte_reg(uint16_t port)
{
	return (struct acpi_gas){
		.space_id = ACPI_GAS_SYSTEM_IO,
		.bit_width = 8,
		.bit_offset = 0,
		.access_size = ACPI_GAS_ACCESS_BYTE,
		.address = port,
	};
}

static void acpi_fill_fadt(struct acpi_fadt *f, uint64_t dsdt_gpa)
{
	acpi_header_init(&f->header, "FACP", sizeof(*f), ACPI_FADT_REVISION);
	f->minor_version = ACPI_FADT_MINOR_VERSION;
	/* Hardware-reduced (section 4.1): no SCI, no PM1 blocks, no FACS; sleep and reset go through
	 * the registers below, which ringvm serves as plain I/O ports. */
	f->flags = ACPI_FADT_HW_REDUCED_ACPI | ACPI_FADT_RESET_REG_SUP | ACPI_FADT_PWR_BUTTON |
		   ACPI_FADT_SLP_BUTTON;
	f->iapc_boot_arch = ACPI_IAPC_NO_VGA | ACPI_IAPC_NO_MSI | ACPI_IAPC_NO_ASPM |
			    ACPI_IAPC_NO_CMOS_RTC;
	f->reset_reg = acpi_io_byte_reg(LAYOUT_PORT_ACPI_RESET);
	f->reset_value = LAYOUT_ACPI_RESET_VALUE;
	f->x_dsdt = dsdt_gpa; /* the 32-bit DSDT field stays 0: ACPICA prefers X_DSDT when both exist */
	f->sleep_control_reg = acpi_io_byte_reg(LAYOUT_PORT_ACPI_SLEEP_CTL);
	f->sleep_status_reg = acpi_io_byte_reg(LAYOUT_PORT_ACPI_SLEEP_STS);
	memcpy(f->hypervisor_vendor_id, "RINGVM\0\0", sizeof(f->hypervisor_vendor_id));
	acpi_header_seal(&f->header);
}

/* Each table builder appends its table at the cursor and reports where it starts in *off. */
static int acpi_build_madt(struct acpi_cursor *c, unsigned int nr_cpus, size_t *off)
{
	struct acpi_madt *madt = acpi_take(c, sizeof(*madt), ACPI_TABLE_ALIGN);
	if (!madt)
		return -ENOSPC;
	size_t start = (size_t)((uint8_t *)madt - c->buf);
	madt->lapic_address = (uint32_t)LAYOUT_LAPIC_ADDR;
	/* The in-kernel 8259s exist too; PCAT_COMPAT tells the OS to mask them. */
	madt->flags = ACPI_MADT_PCAT_COMPAT;

	for (unsigned int i = 0; i < nr_cpus; i++) {
		struct acpi_madt_lapic *l = acpi_take(c, sizeof(*l), 1);
		if (!l)
			return -ENOSPC;
		*l = (struct acpi_madt_lapic){ .type = ACPI_MADT_TYPE_LAPIC, .length = sizeof(*l),
					       .processor_uid = (uint8_t)i, .apic_id = (uint8_t)i,
					       .flags = ACPI_MADT_LAPIC_ENABLED };
	}

	struct acpi_madt_ioapic *io = acpi_take(c, sizeof(*io), 1);
	if (!io)
		return -ENOSPC;
	*io = (struct acpi_madt_ioapic){ .type = ACPI_MADT_TYPE_IOAPIC, .length = sizeof(*io),
					 .ioapic_id = ACPI_IOAPIC_ID,
					 .address = (uint32_t)LAYOUT_IOAPIC_ADDR, .gsi_base = 0 };

	struct acpi_madt_irq_override *iso = acpi_take(c, sizeof(*iso), 1);
	if (!iso)
		return -ENOSPC;
	*iso = (struct acpi_madt_irq_override){ .type = ACPI_MADT_TYPE_IRQ_OVERRIDE,
						.length = sizeof(*iso), .bus = ACPI_MADT_BUS_ISA,
						.source = ACPI_PIT_IRQ, .gsi = ACPI_PIT_GSI,
						.flags = ACPI_MADT_MPS_INTI_CONFORMS };

	/* KVM delivers NMIs to every vCPU's LINT1, as the PC wiring does. */
	struct acpi_madt_lapic_nmi *nmi = acpi_take(c, sizeof(*nmi), 1);
	if (!nmi)
		return -ENOSPC;
	*nmi = (struct acpi_madt_lapic_nmi){ .type = ACPI_MADT_TYPE_LAPIC_NMI, .length = sizeof(*nmi),
					     .processor_uid = ACPI_MADT_ALL_PROCESSORS,
					     .flags = ACPI_MADT_MPS_INTI_CONFORMS, .lint = 1 };

	acpi_header_init(&madt->header, "APIC", (uint32_t)(c->off - start), ACPI_MADT_REVISION);
	acpi_header_seal(&madt->header);
	*off = start;
	return 0;
}

/* Name (_CRS, ResourceTemplate () { Memory32Fixed (...), Interrupt (...) }) for a virtio-mmio device. */
static void acpi_dsdt_crs_mmio(struct aml *a, const struct acpi_mmio_dev *d)
{
	aml_name(a, "_CRS");
	size_t buf = aml_buffer_begin(a);
	aml_res_mem32_fixed(a, 1, (uint32_t)d->base, (uint32_t)d->size);
	/* virtio_mmio requests its IRQ as IRQF_SHARED but is alone on its pin; irqfds pulse the
	 * IOAPIC pin, which is an edge. */
	aml_res_interrupt(a, AML_IRQ_EDGE | AML_IRQ_ACTIVE_HIGH | AML_IRQ_EXCLUSIVE, d->gsi);
	aml_res_end_tag(a);
	aml_buffer_end(a, buf);
}

static void acpi_dsdt_com1(struct aml *a)
{
	size_t dev = aml_device_begin(a, "COM1");
	aml_name(a, "_HID");
	aml_eisaid_integer(a, "PNP0501"); /* 16550A-compatible UART: 8250_pnp binds it */
	aml_name(a, "_UID");
	aml_integer(a, 0);
	aml_name(a, "_CRS");
	size_t buf = aml_buffer_begin(a);
	aml_res_io(a, LAYOUT_PORT_COM1, 8);
	/* An Extended Interrupt descriptor gives the trigger mode explicitly; Linux takes it as is,
	 * where an ISA IRQ() descriptor would be checked against MADT overrides. */
	aml_res_interrupt(a, AML_IRQ_EDGE | AML_IRQ_ACTIVE_HIGH | AML_IRQ_EXCLUSIVE, LAYOUT_GSI_COM1);
	aml_res_end_tag(a);
	aml_buffer_end(a, buf);
	aml_end(a, dev);
}

/* QEMU's pvpanic on an I/O port: Linux's pvpanic-mmio binds QEMU0001 (IO or memory resource). */
static void acpi_dsdt_pvpanic(struct aml *a)
{
	size_t dev = aml_device_begin(a, "PEVT");
	aml_name(a, "_HID");
	aml_string(a, "QEMU0001");
	aml_name(a, "_CRS");
	size_t buf = aml_buffer_begin(a);
	aml_res_io(a, LAYOUT_PORT_PVPANIC, 1);
	aml_res_end_tag(a);
	aml_buffer_end(a, buf);
	aml_end(a, dev);
}

/* The DSDT body: \_S5, and under \_SB the UART, pvpanic and one LNRO0005 device per virtio-mmio
   window. */
static void acpi_dsdt_body(struct aml *a, const struct acpi_config *cfg)
{
	/* \_S5 (section 7.4.2.4): SLP_TYPa, SLP_TYPb, two reserved. Only SLP_TYPa reaches the
	 * hardware-reduced sleep control register. */
	aml_name(a, "\\_S5");
	size_t pkg = aml_package_begin(a, 4);
	aml_integer(a, LAYOUT_ACPI_S5_TYPE);
	aml_integer(a, 0);
	aml_integer(a, 0);
	aml_integer(a, 0);
	aml_end(a, pkg);

	size_t sb = aml_scope_begin(a, "\\_SB");
	acpi_dsdt_com1(a);
	acpi_dsdt_pvpanic(a);
	for (unsigned int i = 0; i < cfg->nr_mmio_devs; i++) {
		char name[5]; /* i < ACPI_MAX_MMIO_DEVS: three hex digits */
		snprintf(name, sizeof(name), "V%03X", i & 0xfffu);
		size_t dev = aml_device_begin(a, name);
		aml_name(a, "_HID");
		aml_string(a, "LNRO0005"); /* virtio_mmio's ACPI match */
		aml_name(a, "_UID");
		aml_integer(a, i);
		acpi_dsdt_crs_mmio(a, &cfg->mmio_devs[i]);
		aml_end(a, dev);
	}
	aml_end(a, sb);
}

static int acpi_build_dsdt(struct acpi_cursor *c, const struct acpi_config *cfg, size_t *off)
{
	struct acpi_header *h = acpi_take(c, sizeof(*h), ACPI_TABLE_ALIGN);
	if (!h)
		return -ENOSPC;
	*off = (size_t)((uint8_t *)h - c->buf);
	struct aml a;
	aml_init(&a, c->buf + c->off, c->len - c->off);
	acpi_dsdt_body(&a, cfg);
	long body = aml_finish(&a);
	if (body < 0)
		return (int)body;
	if ((size_t)body > UINT32_MAX - sizeof(*h))
		return -ENOSPC;
	c->off += (size_t)body;
	acpi_header_init(h, "DSDT", (uint32_t)(sizeof(*h) + (size_t)body), ACPI_DSDT_REVISION);
	acpi_header_seal(h);
	return 0;
}

static int acpi_check_config(const struct acpi_config *cfg, uint64_t gpa)
{
	if (!cfg || cfg->nr_cpus < 1 || cfg->nr_cpus > ACPI_MAX_CPUS)
		return -EINVAL;
	if (gpa % ACPI_TABLE_ALIGN || gpa > UINT64_MAX - INT_MAX)
		return -EINVAL;
	if (cfg->nr_mmio_devs > ACPI_MAX_MMIO_DEVS || (cfg->nr_mmio_devs && !cfg->mmio_devs))
		return -EINVAL;
	for (unsigned int i = 0; i < cfg->nr_mmio_devs; i++) {
		const struct acpi_mmio_dev *d = &cfg->mmio_devs[i];
		if (d->size == 0 || d->size > UINT32_MAX || d->base > UINT32_MAX ||
		    d->size > UINT32_MAX - d->base + 1)
			return -EINVAL; /* Memory32Fixed: the window must end at or below 4 GiB */
		if (d->gsi > LAYOUT_GSI_MAX)
			return -EINVAL;
	}
	return 0;
}

int acpi_build(const struct acpi_config *cfg, void *buf, size_t len, uint64_t gpa)
{
	int err = acpi_check_config(cfg, gpa);
	if (err)
		return err;
	if (len > INT_MAX)
		len = INT_MAX; /* the size is returned as an int */
	struct acpi_cursor c = { .buf = buf, .len = len, .off = 0 };

	struct acpi_rsdp *rsdp = acpi_take(&c, sizeof(*rsdp), ACPI_TABLE_ALIGN);
	if (!rsdp)
		return -ENOSPC;

	/* XSDT with two entries: FADT and MADT (the FADT leads to the DSDT). */
	enum { XSDT_FADT, XSDT_MADT, XSDT_ENTRIES };
	size_t xsdt_len = sizeof(struct acpi_header) + XSDT_ENTRIES * sizeof(uint64_t);
	struct acpi_header *xsdt = acpi_take(&c, xsdt_len, ACPI_TABLE_ALIGN);
	if (!xsdt)
		return -ENOSPC;
	struct acpi_fadt *fadt = acpi_take(&c, sizeof(*fadt), ACPI_TABLE_ALIGN);
	if (!fadt)
		return -ENOSPC;
	size_t madt_off, dsdt_off;
	err = acpi_build_madt(&c, cfg->nr_cpus, &madt_off);
	if (err)
		return err;
	err = acpi_build_dsdt(&c, cfg, &dsdt_off);
	if (err)
		return err;

	acpi_fill_fadt(fadt, gpa + dsdt_off);

	uint64_t entries[XSDT_ENTRIES] = {
		[XSDT_FADT] = gpa + (size_t)((uint8_t *)fadt - c.buf),
		[XSDT_MADT] = gpa + madt_off,
	};
	acpi_header_init(xsdt, "XSDT", (uint32_t)xsdt_len, 1);
	memcpy(xsdt + 1, entries, sizeof(entries));
	acpi_header_seal(xsdt);

	memcpy(rsdp->signature, "RSD PTR ", sizeof(rsdp->signature));
	memcpy(rsdp->oem_id, ACPI_OEM_ID, sizeof(rsdp->oem_id));
	rsdp->revision = ACPI_RSDP_REVISION;
	rsdp->rsdt_address = 0; /* XSDT only: every ACPI 2.0+ OS uses it */
	rsdp->length = sizeof(*rsdp);
	rsdp->xsdt_address = gpa + (size_t)((uint8_t *)xsdt - c.buf);
	rsdp->checksum = acpi_checksum(rsdp, ACPI_RSDP_V1_LEN);
	rsdp->extended_checksum = acpi_checksum(rsdp, sizeof(*rsdp));
	return (int)c.off;
}
