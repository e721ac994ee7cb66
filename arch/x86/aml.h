/* aml.h: a small builder for ACPI Machine Language (the DSDT's byte code), ACPI 6.5 chapter 20. */
#ifndef RINGVM_AML_H
#define RINGVM_AML_H

#include <stddef.h>
#include <stdint.h>

/*
 * An AML byte stream being written into a caller-owned buffer.
 *
 * Errors are sticky: the first failure (-ENOSPC when the buffer is full, -EINVAL for a bad name or
 * value) is kept in err, every later call does nothing, and aml_finish() reports it. So a sequence of
 * calls needs one check at the end. Nothing is ever written at or past data[cap].
 *
 * Constructs whose PkgLength is only known at their end (Scope, Device, Package, Buffer) are opened
 * with an aml_*_begin() call, which returns a mark, and closed with aml_end(mark) or
 * aml_buffer_end(mark). Closing inserts the PkgLength in its minimal encoding (1 to 4 bytes) by moving
 * the body up, so a buffer of exactly the final size is always enough: no scratch room is needed.
 */
struct aml {
	uint8_t *data;
	size_t cap;
	size_t len;
	int err;
};

/* Start an empty stream over data[0..cap). */
void aml_init(struct aml *a, void *data, size_t cap);

/* Bytes written so far, or the first error (negative errno). */
__attribute__((warn_unused_result)) long aml_finish(const struct aml *a);

/*
 * PkgLength (ACPI 6.5 section 20.2.4): encode total, the length of a package counted from the first
 * PkgLength byte to its end, into out[0..4). Returns the number of bytes used (1-4), or 0 if total
 * cannot be encoded (it needs more than 28 bits, or is too small to hold its own encoding).
 */
unsigned int aml_pkglen_encode(uint32_t total, uint8_t out[4]);

/* The PkgLength bytes needed in front of a body of body_len bytes (1-4), or 0 if it is too long. */
unsigned int aml_pkglen_size(size_t body_len);

/*
 * EISA ID compression ("PNP0501" -> 0x0105d041, the DWord that EisaId() produces): three upper-case
 * letters and four hex digits. Returns 0 and sets *id, or -EINVAL.
 */
__attribute__((warn_unused_result)) int aml_eisaid(const char *str, uint32_t *id);

/* Raw bytes (resource descriptor fields, pre-encoded objects). */
void aml_bytes(struct aml *a, const void *bytes, size_t n);

/*
 * A NameString: an optional leading '\' (root) or '^'s (parent), then dot-separated segments of 1-4
 * characters ([A-Z_] then [A-Z0-9_]), each padded with '_' to four: "\\_SB.V000", "_HID", "^COM1".
 */
void aml_name_path(struct aml *a, const char *path);

/* ComputationalData: the shortest of Zero, One, Ones (for ~0), BytePrefix .. QWordPrefix. */
void aml_integer(struct aml *a, uint64_t value);

/* A String object: printable ASCII without NUL (the spec allows 0x01-0x7f). */
void aml_string(struct aml *a, const char *str);

/* An EISA ID as the DWord integer iasl emits for EisaId("PNP0501"). */
void aml_eisaid_integer(struct aml *a, const char *str);

/* DefName: Name (path, <object>): follow with exactly one data object. */
void aml_name(struct aml *a, const char *path);

/* DefScope / DefDevice: the body is whatever follows until aml_end(mark). */
__attribute__((warn_unused_result)) size_t aml_scope_begin(struct aml *a, const char *path);
__attribute__((warn_unused_result)) size_t aml_device_begin(struct aml *a, const char *path);

/* DefPackage with nr_elements data objects to follow, then aml_end(mark). */
__attribute__((warn_unused_result)) size_t aml_package_begin(struct aml *a, uint8_t nr_elements);

/* Close a Scope, Device or Package opened at mark. */
void aml_end(struct aml *a, size_t mark);

/*
 * DefBuffer: bytes follow until aml_buffer_end(mark), which prepends the BufferSize. A resource
 * template is a buffer of aml_res_*() descriptors ended with aml_res_end_tag().
 */
__attribute__((warn_unused_result)) size_t aml_buffer_begin(struct aml *a);
void aml_buffer_end(struct aml *a, size_t mark);

/* Resource descriptors (ACPI 6.5 section 6.4). */

/* I/O Port Descriptor, 16-bit decode, fixed at base: IO (Decode16, base, base, 1, len). */
void aml_res_io(struct aml *a, uint16_t base, uint8_t len);

/* Memory32Fixed (ReadWrite or ReadOnly, base, size). */
void aml_res_mem32_fixed(struct aml *a, int writable, uint32_t base, uint32_t size);

/* Extended Interrupt Descriptor, ResourceConsumer, one interrupt number. */
enum aml_irq_flags {
	AML_IRQ_LEVEL = 0,
	AML_IRQ_EDGE = 1u << 1,
	AML_IRQ_ACTIVE_HIGH = 0,
	AML_IRQ_ACTIVE_LOW = 1u << 2,
	AML_IRQ_EXCLUSIVE = 0,
	AML_IRQ_SHARED = 1u << 3,
};
void aml_res_interrupt(struct aml *a, unsigned int flags, uint32_t gsi);

/* End Tag, closing a resource template (checksum 0: "treat as valid", section 6.4.2.9). */
void aml_res_end_tag(struct aml *a);

#endif
