/* aml.c: writes AML byte code (ACPI 6.5 chapter 20) into a bounded buffer, for the DSDT. */
#include "arch/x86/aml.h"

#include <errno.h>
#include <string.h>

/* Opcodes and prefixes, ACPI 6.5 section 20.2. */
#define AML_ZERO_OP 0x00
#define AML_ONE_OP 0x01
#define AML_NAME_OP 0x08
#define AML_BYTE_PREFIX 0x0a
#define AML_WORD_PREFIX 0x0b
#define AML_DWORD_PREFIX 0x0c
#define AML_STRING_PREFIX 0x0d
#define AML_QWORD_PREFIX 0x0e
#define AML_SCOPE_OP 0x10
#define AML_BUFFER_OP 0x11
#define AML_PACKAGE_OP 0x12
#define AML_DUAL_NAME_PREFIX 0x2e
#define AML_MULTI_NAME_PREFIX 0x2f
#define AML_EXT_OP_PREFIX 0x5b
#define AML_DEVICE_OP 0x82 /* after AML_EXT_OP_PREFIX */
#define AML_ROOT_CHAR '\\'
#define AML_PARENT_PREFIX_CHAR '^'
#define AML_ONES_OP 0xff

/* Resource descriptor tags, ACPI 6.5 section 6.4. */
#define AML_RES_IO_PORT 0x47   /* small item 0x08, length 7 */
#define AML_RES_END_TAG 0x79   /* small item 0x0f, length 1 */
#define AML_RES_MEM32_FIXED 0x86
#define AML_RES_EXT_IRQ 0x89
#define AML_RES_IRQ_CONSUMER 0x01

/* A PkgLength holds at most 28 bits (section 20.2.4). */
#define AML_PKGLEN_MAX ((1u << 28) - 1)
/* NameString segment counts beyond this are not ours to emit (MultiNamePrefix holds a byte). */
#define AML_MAX_SEGS 255

void aml_init(struct aml *a, void *data, size_t cap)
{
	a->data = data;
	a->cap = cap;
	a->len = 0;
	a->err = 0;
}

long aml_finish(const struct aml *a)
{
	return a->err ? a->err : (long)a->len;
}

static void aml_fail(struct aml *a, int err)
{
	if (!a->err)
		a->err = err;
}

void aml_bytes(struct aml *a, const void *bytes, size_t n)
{
	if (a->err)
		return;
	if (n > a->cap - a->len) {
		aml_fail(a, -ENOSPC);
		return;
	}
	memcpy(a->data + a->len, bytes, n);
	a->len += n;
}

static void aml_byte(struct aml *a, uint8_t b)
{
	aml_bytes(a, &b, 1);
}

static void aml_le(struct aml *a, uint64_t v, unsigned int n)
{
	uint8_t le[8];
	for (unsigned int i = 0; i < n; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	aml_bytes(a, le, n);
}

/* Open a gap of n bytes at off (moving what follows up) and fill it: how a late PkgLength goes in. */
static void aml_insert(struct aml *a, size_t off, const void *bytes, size_t n)
{
	if (a->err)
		return;
	if (off > a->len) {
		aml_fail(a, -EINVAL); /* a mark that this stream never handed out */
		return;
	}
	if (n > a->cap - a->len) {
		aml_fail(a, -ENOSPC);
		return;
	}
	memmove(a->data + off + n, a->data + off, a->len - off);
	memcpy(a->data + off, bytes, n);
	a->len += n;
}

unsigned int aml_pkglen_encode(uint32_t total, uint8_t out[4])
{
	/* One byte holds 6 bits; a lead byte with N follow bytes holds 4 + 8N bits. A PkgLength
	 * counts its own bytes, so 0 is never valid. */
	if (total < 1)
		return 0;
	if (total < (1u << 6)) {
		out[0] = (uint8_t)total;
		return 1;
	}
	if (total > AML_PKGLEN_MAX)
		return 0;
	unsigned int follow = total < (1u << 12) ? 1 : total < (1u << 20) ? 2 : 3;
	out[0] = (uint8_t)((follow << 6) | (total & 0x0f));
	for (unsigned int i = 1; i <= follow; i++)
		out[i] = (uint8_t)(total >> (4 + 8 * (i - 1)));
	return follow + 1;
}

unsigned int aml_pkglen_size(size_t body_len)
{
	/* The encoding counts its own bytes, so the size is the smallest n with body_len + n in range. */
	for (unsigned int n = 1; n <= 4; n++) {
		size_t limit = n == 1 ? (1u << 6) : (size_t)1 << (4 + 8 * (n - 1));
		if (body_len < limit - n)
			return n;
	}
	return 0;
}

/* Insert the PkgLength of everything from mark to the end of the stream at mark. */
static void aml_close_pkg(struct aml *a, size_t mark)
{
	if (a->err)
		return;
	if (mark > a->len) {
		aml_fail(a, -EINVAL);
		return;
	}
	size_t body = a->len - mark;
	unsigned int n = aml_pkglen_size(body);
	uint8_t enc[4];
	if (n == 0 || aml_pkglen_encode((uint32_t)(body + n), enc) != n) {
		aml_fail(a, -E2BIG);
		return;
	}
	aml_insert(a, mark, enc, n);
}

int aml_eisaid(const char *str, uint32_t *id)
{
	if (strlen(str) != 7)
		return -EINVAL;
	uint32_t v = 0;
	for (int i = 0; i < 3; i++) {
		if (str[i] < 'A' || str[i] > 'Z')
			return -EINVAL;
		v = (v << 5) | (uint32_t)(str[i] - 'A' + 1); /* 'A' is 1 */
	}
	for (int i = 3; i < 7; i++) {
		char c = str[i];
		uint32_t d;
		if (c >= '0' && c <= '9')
			d = (uint32_t)(c - '0');
		else if (c >= 'A' && c <= 'F')
			d = (uint32_t)(c - 'A' + 10);
		else
			return -EINVAL;
		v = (v << 4) | d;
	}
	/* The 15 name bits and 16 product bits are stored big-endian in the DWord. */
	*id = __builtin_bswap32(v);
	return 0;
}

static int aml_seg_char_ok(char c, int first)
{
	if ((c >= 'A' && c <= 'Z') || c == '_')
		return 1;
	return !first && c >= '0' && c <= '9';
}

void aml_name_path(struct aml *a, const char *path)
{
	if (a->err)
		return;
	const char *p = path;
	if (*p == AML_ROOT_CHAR) {
		aml_byte(a, AML_ROOT_CHAR);
		p++;
	} else {
		while (*p == AML_PARENT_PREFIX_CHAR) {
			aml_byte(a, AML_PARENT_PREFIX_CHAR);
			p++;
		}
	}

	/* Validate and count the segments before writing the prefix that carries their count. */
	size_t nr_segs = 0;
	for (const char *s = p; *s;) {
		size_t n = 0;
		while (s[n] && s[n] != '.') {
			if (n >= 4 || !aml_seg_char_ok(s[n], n == 0)) {
				aml_fail(a, -EINVAL);
				return;
			}
			n++;
		}
		if (n == 0 || (s[n] == '.' && !s[n + 1])) {
			aml_fail(a, -EINVAL); /* empty segment */
			return;
		}
		nr_segs++;
		s += n + (s[n] == '.');
	}
	if (nr_segs > AML_MAX_SEGS || (nr_segs == 0 && p == path)) {
		aml_fail(a, -EINVAL);
		return;
	}

	if (nr_segs == 0)
		aml_byte(a, AML_ZERO_OP); /* NullName: only a bare '\' or '^' is valid */
	else if (nr_segs == 2)
		aml_byte(a, AML_DUAL_NAME_PREFIX);
	else if (nr_segs > 2) {
		aml_byte(a, AML_MULTI_NAME_PREFIX);
		aml_byte(a, (uint8_t)nr_segs);
	}
	while (*p) {
		char seg[4] = { '_', '_', '_', '_' };
		size_t n = 0;
		while (p[n] && p[n] != '.') {
			seg[n] = p[n];
			n++;
		}
		aml_bytes(a, seg, sizeof(seg));
		p += n + (p[n] == '.');
	}
}

void aml_integer(struct aml *a, uint64_t value)
{
	if (value == 0)
		aml_byte(a, AML_ZERO_OP);
	else if (value == 1)
		aml_byte(a, AML_ONE_OP);
	else if (value == UINT64_MAX)
		aml_byte(a, AML_ONES_OP);
	else if (value <= UINT8_MAX) {
		aml_byte(a, AML_BYTE_PREFIX);
		aml_le(a, value, 1);
	} else if (value <= UINT16_MAX) {
		aml_byte(a, AML_WORD_PREFIX);
		aml_le(a, value, 2);
	} else if (value <= UINT32_MAX) {
		aml_byte(a, AML_DWORD_PREFIX);
		aml_le(a, value, 4);
	} else {
		aml_byte(a, AML_QWORD_PREFIX);
		aml_le(a, value, 8);
	}
}

void aml_string(struct aml *a, const char *str)
{
	for (const char *c = str; *c; c++) {
		if ((unsigned char)*c > 0x7f) {
			aml_fail(a, -EINVAL);
			return;
		}
	}
	aml_byte(a, AML_STRING_PREFIX);
	aml_bytes(a, str, strlen(str) + 1); /* with its NUL */
}

void aml_eisaid_integer(struct aml *a, const char *str)
{
	uint32_t id;
	int err = aml_eisaid(str, &id);
	if (err) {
		aml_fail(a, err);
		return;
	}
	/* Always DWord-prefixed, as iasl does, so the decompiler shows EisaId() again. */
	aml_byte(a, AML_DWORD_PREFIX);
	aml_le(a, id, 4);
}

void aml_name(struct aml *a, const char *path)
{
	aml_byte(a, AML_NAME_OP);
	aml_name_path(a, path);
}

size_t aml_scope_begin(struct aml *a, const char *path)
{
	aml_byte(a, AML_SCOPE_OP);
	size_t mark = a->len;
	aml_name_path(a, path);
	return mark;
}

size_t aml_device_begin(struct aml *a, const char *path)
{
	aml_byte(a, AML_EXT_OP_PREFIX);
	aml_byte(a, AML_DEVICE_OP);
	size_t mark = a->len;
	aml_name_path(a, path);
	return mark;
}

size_t aml_package_begin(struct aml *a, uint8_t nr_elements)
{
	aml_byte(a, AML_PACKAGE_OP);
	size_t mark = a->len;
	aml_byte(a, nr_elements);
	return mark;
}

void aml_end(struct aml *a, size_t mark)
{
	aml_close_pkg(a, mark);
}

size_t aml_buffer_begin(struct aml *a)
{
	aml_byte(a, AML_BUFFER_OP);
	return a->len;
}

void aml_buffer_end(struct aml *a, size_t mark)
{
	if (a->err)
		return;
	if (mark > a->len) {
		aml_fail(a, -EINVAL);
		return;
	}
	/* BufferSize is an integer object in front of the bytes: encode it aside, then insert. */
	uint8_t size_enc[9];
	struct aml size = { 0 };
	aml_init(&size, size_enc, sizeof(size_enc));
	aml_integer(&size, a->len - mark);
	aml_insert(a, mark, size_enc, size.len);
	aml_close_pkg(a, mark);
}

void aml_res_io(struct aml *a, uint16_t base, uint8_t len)
{
	/* Section 6.4.2.5: information bit 0 = 16-bit decode; min = max = base, alignment 1. */
	const uint8_t d[8] = {
		AML_RES_IO_PORT, 0x01,
		(uint8_t)base, (uint8_t)(base >> 8),
		(uint8_t)base, (uint8_t)(base >> 8),
		0x01, len,
	};
	aml_bytes(a, d, sizeof(d));
}

void aml_res_mem32_fixed(struct aml *a, int writable, uint32_t base, uint32_t size)
{
	/* Section 6.4.3.4: length field 9 counts the bytes after it; information bit 0 = read/write. */
	aml_byte(a, AML_RES_MEM32_FIXED);
	aml_le(a, 9, 2);
	aml_byte(a, writable ? 0x01 : 0x00);
	aml_le(a, base, 4);
	aml_le(a, size, 4);
}

void aml_res_interrupt(struct aml *a, unsigned int flags, uint32_t gsi)
{
	/* Section 6.4.3.6: flags byte, table length 1, one DWord interrupt number; length 6. */
	if (flags & ~(unsigned int)(AML_IRQ_EDGE | AML_IRQ_ACTIVE_LOW | AML_IRQ_SHARED)) {
		aml_fail(a, -EINVAL);
		return;
	}
	aml_byte(a, AML_RES_EXT_IRQ);
	aml_le(a, 6, 2);
	aml_byte(a, (uint8_t)(flags | AML_RES_IRQ_CONSUMER));
	aml_byte(a, 1);
	aml_le(a, gsi, 4);
}

void aml_res_end_tag(struct aml *a)
{
	const uint8_t d[2] = { AML_RES_END_TAG, 0x00 };
	aml_bytes(a, d, sizeof(d));
}
