/* test_aml.c: unit tests for the AML builder: encodings, nesting, names, and running out of room. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/aml.h"
#include "tests/unit/tap.h"

/* Run fn over a fresh stream of cap bytes; the result (length or error) and bytes land in out. */
static long emit(void (*fn)(struct aml *), uint8_t *out, size_t cap)
{
	struct aml a;
	aml_init(&a, out, cap);
	fn(&a);
	return aml_finish(&a);
}

static int bytes_are(const uint8_t *got, long got_len, const uint8_t *want, size_t want_len)
{
	if (got_len != (long)want_len || memcmp(got, want, want_len) != 0) {
		printf("# got %ld bytes:", got_len);
		for (long i = 0; i < got_len && i < 32; i++)
			printf(" %02x", got[i]);
		printf("\n");
		return 0;
	}
	return 1;
}

/* Decode a PkgLength as the spec defines it, independently of aml.c; returns its byte count. */
static unsigned int decode_pkglen(const uint8_t *p, uint32_t *value)
{
	unsigned int follow = p[0] >> 6;
	if (follow == 0) {
		*value = p[0] & 0x3f;
		return 1;
	}
	uint32_t v = p[0] & 0x0f;
	for (unsigned int i = 0; i < follow; i++)
		v |= (uint32_t)p[1 + i] << (4 + 8 * i);
	*value = v;
	return follow + 1;
}

static void test_pkglen_boundaries(void)
{
	static const struct {
		uint32_t total;
		unsigned int n;
		uint8_t enc[4];
	} cases[] = {
		{ 1, 1, { 0x01 } },
		{ 63, 1, { 0x3f } },
		{ 64, 2, { 0x40, 0x04 } },
		{ 4095, 2, { 0x4f, 0xff } },
		{ 4096, 3, { 0x80, 0x00, 0x01 } },
		{ (1u << 20) - 1, 3, { 0x8f, 0xff, 0xff } },
		{ 1u << 20, 4, { 0xc0, 0x00, 0x00, 0x01 } },
		{ (1u << 28) - 1, 4, { 0xcf, 0xff, 0xff, 0xff } },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t enc[4] = { 0 };
		unsigned int n = aml_pkglen_encode(cases[i].total, enc);
		char what[80];
		snprintf(what, sizeof(what), "PkgLength %u encodes in %u bytes", cases[i].total, cases[i].n);
		TAP_CHECK(n == cases[i].n && memcmp(enc, cases[i].enc, n) == 0, what);
	}
	uint8_t enc[4];
	TAP_CHECK(aml_pkglen_encode(0, enc) == 0, "PkgLength 0 is refused");
	TAP_CHECK(aml_pkglen_encode(1u << 28, enc) == 0, "PkgLength 2^28 is refused");

	/* The size for a body counts the PkgLength's own bytes: 62 + 1 = 63 fits one byte, 63 + 1 not. */
	TAP_CHECK(aml_pkglen_size(62) == 1 && aml_pkglen_size(63) == 2, "body 62/63: 1/2 bytes");
	TAP_CHECK(aml_pkglen_size(4093) == 2 && aml_pkglen_size(4094) == 3, "body 4093/4094: 2/3 bytes");
	TAP_CHECK(aml_pkglen_size((1u << 20) - 4) == 3 && aml_pkglen_size((1u << 20) - 3) == 4,
		  "body 1M-4/1M-3: 3/4 bytes");
	TAP_CHECK(aml_pkglen_size((1u << 28) - 5) == 4 && aml_pkglen_size((1u << 28) - 4) == 0,
		  "body 256M-5 fits, 256M-4 does not");
}

/* A Scope whose body is n bytes, closed around them: its PkgLength must cover exactly the rest. */
static int scope_of(size_t n, uint8_t *buf, size_t cap)
{
	struct aml a;
	aml_init(&a, buf, cap);
	size_t mark = aml_scope_begin(&a, "\\");
	for (size_t i = 0; i + 2 < n; i++) /* root '\' + NullName are 2 of the n bytes */
		aml_bytes(&a, "\xa3", 1);     /* Noop */
	aml_end(&a, mark);
	long len = aml_finish(&a);
	if (len < 0)
		return 0;
	uint32_t v;
	unsigned int k = decode_pkglen(buf + 1, &v);
	return buf[0] == 0x10 && k == aml_pkglen_size(n) && v == (uint32_t)len - 1 &&
	       buf[1 + k] == '\\' && buf[2 + k] == 0x00;
}

static void test_pkglen_in_stream(void)
{
	size_t cap = (1u << 20) + 64;
	uint8_t *buf = malloc(cap);
	if (!buf) {
		TAP_CHECK(0, "malloc");
		return;
	}
	static const size_t sizes[] = { 2, 61, 62, 63, 64, 4092, 4093, 4094, 4095,
					(1u << 20) - 5, (1u << 20) - 4, (1u << 20) - 3 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char what[80];
		snprintf(what, sizeof(what), "Scope with a %zu-byte body: minimal PkgLength, right value",
			 sizes[i]);
		TAP_CHECK(scope_of(sizes[i], buf, cap), what);
	}
	free(buf);
}

static void emit_integers(struct aml *a)
{
	aml_integer(a, 0);
	aml_integer(a, 1);
	aml_integer(a, 2);
	aml_integer(a, 0xff);
	aml_integer(a, 0x100);
	aml_integer(a, 0x10000);
	aml_integer(a, 0x100000000ULL);
	aml_integer(a, UINT64_MAX);
}

static void emit_names(struct aml *a)
{
	aml_name_path(a, "_SB");
	aml_name_path(a, "\\_SB.COM1");
	aml_name_path(a, "\\A.B.C");
	aml_name_path(a, "^FOO");
	aml_name_path(a, "\\");
}

static void emit_device(struct aml *a)
{
	size_t dev = aml_device_begin(a, "COM1");
	aml_name(a, "_UID");
	aml_integer(a, 0);
	aml_end(a, dev);
}

static void emit_resources(struct aml *a)
{
	size_t buf = aml_buffer_begin(a);
	aml_res_io(a, 0x3f8, 8);
	aml_res_mem32_fixed(a, 1, 0xd0000000u, 0x1000);
	aml_res_interrupt(a, AML_IRQ_EDGE | AML_IRQ_ACTIVE_HIGH | AML_IRQ_EXCLUSIVE, 16);
	aml_res_interrupt(a, AML_IRQ_LEVEL | AML_IRQ_ACTIVE_LOW | AML_IRQ_SHARED, 5);
	aml_res_end_tag(a);
	aml_buffer_end(a, buf);
}

static void test_encodings(void)
{
	uint8_t out[128];
	long n;

	static const uint8_t ints[] = { 0x00, 0x01, 0x0a, 0x02, 0x0a, 0xff, 0x0b, 0x00, 0x01,
					0x0c, 0x00, 0x00, 0x01, 0x00, 0x0e, 0x00, 0x00, 0x00,
					0x00, 0x01, 0x00, 0x00, 0x00, 0xff };
	n = emit(emit_integers, out, sizeof(out));
	TAP_CHECK(bytes_are(out, n, ints, sizeof(ints)), "integers take the shortest prefix");

	static const uint8_t names[] = "_SB_"
				       "\\\x2e_SB_COM1"
				       "\\\x2f\x03"
				       "A___B___C___"
				       "^FOO_"
				       "\\\x00";
	n = emit(emit_names, out, sizeof(out));
	TAP_CHECK(bytes_are(out, n, names, sizeof(names) - 1), "name paths: padding, dual, multi, parent, root");

	static const uint8_t dev[] = { 0x5b, 0x82, 0x0b, 'C', 'O', 'M', '1', 0x08, '_', 'U', 'I', 'D', 0x00 };
	n = emit(emit_device, out, sizeof(out));
	TAP_CHECK(bytes_are(out, n, dev, sizeof(dev)), "Device (COM1) { Name (_UID, Zero) }");

	/* Buffer (0x25) { IO, Memory32Fixed, two Interrupts, EndTag }: 8 + 12 + 9 + 9 + 2 = 40 bytes. */
	static const uint8_t res[] = {
		0x11, 0x2b, 0x0a, 0x28,                                     /* Buffer, PkgLength, size */
		0x47, 0x01, 0xf8, 0x03, 0xf8, 0x03, 0x01, 0x08,             /* IO (Decode16, 0x3f8, 8) */
		0x86, 0x09, 0x00, 0x01, 0x00, 0x00, 0x00, 0xd0, 0x00, 0x10, 0x00, 0x00, /* Mem32Fixed */
		0x89, 0x06, 0x00, 0x03, 0x01, 0x10, 0x00, 0x00, 0x00,       /* Interrupt edge/high/excl 16 */
		0x89, 0x06, 0x00, 0x0d, 0x01, 0x05, 0x00, 0x00, 0x00,       /* level/low/shared 5 */
		0x79, 0x00,                                                 /* EndTag */
	};
	n = emit(emit_resources, out, sizeof(out));
	TAP_CHECK(bytes_are(out, n, res, sizeof(res)), "ResourceTemplate with IO, Memory32Fixed, Interrupts");

	uint32_t id = 0;
	TAP_CHECK(aml_eisaid("PNP0501", &id) == 0 && id == 0x0105d041, "EISAID(PNP0501) = 0x0105d041");
	struct aml a;
	aml_init(&a, out, sizeof(out));
	aml_eisaid_integer(&a, "PNP0501");
	static const uint8_t eisa[] = { 0x0c, 0x41, 0xd0, 0x05, 0x01 };
	TAP_CHECK(bytes_are(out, aml_finish(&a), eisa, sizeof(eisa)), "EisaId(PNP0501) bytes 0c 41 d0 05 01");
	TAP_CHECK(aml_eisaid("pnp0501", &id) == -EINVAL && aml_eisaid("PNP050", &id) == -EINVAL &&
			  aml_eisaid("PNP050G", &id) == -EINVAL && aml_eisaid("PNP05011", &id) == -EINVAL,
		  "malformed EISA IDs are refused");

	aml_init(&a, out, sizeof(out));
	aml_string(&a, "LNRO0005");
	TAP_CHECK(bytes_are(out, aml_finish(&a), (const uint8_t *)"\x0dLNRO0005", 10), "String with NUL");
}

static void test_bad_input(void)
{
	static const char *const bad[] = { "", "1ABC", "ABCDE", "A..B", "a", "A.", ".A", "\\^A", "_SB.$" };
	uint8_t out[64];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct aml a;
		aml_init(&a, out, sizeof(out));
		aml_name_path(&a, bad[i]);
		char what[64];
		snprintf(what, sizeof(what), "name path \"%s\" is refused", bad[i]);
		TAP_CHECK(aml_finish(&a) == -EINVAL, what);
	}

	struct aml a;
	aml_init(&a, out, sizeof(out));
	aml_res_interrupt(&a, 1u << 7, 4);
	TAP_CHECK(aml_finish(&a) == -EINVAL && a.len == 0, "unknown interrupt flags are refused");

	aml_init(&a, out, sizeof(out));
	aml_string(&a, "caf\xc3\xa9");
	TAP_CHECK(aml_finish(&a) == -EINVAL, "a non-ASCII string is refused");

	/* Errors stick: once failed, nothing more is written and the first error is reported. */
	aml_init(&a, out, 4);
	aml_bytes(&a, "12345", 5); /* does not fit */
	aml_integer(&a, 0);       /* would fit, but the stream has failed */
	aml_name_path(&a, "1BAD");
	TAP_CHECK(aml_finish(&a) == -ENOSPC && a.len == 0, "the first error sticks, nothing after it");

	aml_init(&a, out, sizeof(out));
	aml_bytes(&a, "ab", 2);
	aml_end(&a, 10); /* a mark past the end was never handed out */
	TAP_CHECK(aml_finish(&a) == -EINVAL, "closing at a bogus mark is refused");
}

/* A nested DSDT-like body: scope, devices, package, resource templates; crosses the 63-byte step. */
static void emit_nested(struct aml *a)
{
	aml_name(a, "\\_S5");
	size_t pkg = aml_package_begin(a, 2);
	aml_integer(a, 5);
	aml_integer(a, 0);
	aml_end(a, pkg);
	size_t sb = aml_scope_begin(a, "\\_SB");
	for (unsigned int i = 0; i < 3; i++) {
		char name[5] = { 'V', '0', '0', (char)('0' + i), 0 };
		size_t dev = aml_device_begin(a, name);
		aml_name(a, "_HID");
		aml_string(a, "LNRO0005");
		aml_name(a, "_CRS");
		emit_resources(a);
		aml_end(a, dev);
	}
	aml_end(a, sb);
}

static void test_exact_sizes(void)
{
	uint8_t ref[1024];
	long need = emit(emit_nested, ref, sizeof(ref));
	TAP_CHECK(need > 64, "nested body builds");
	if (need <= 0)
		return;
	int all_enospc = 1, exact_ok = 0;
	/* Exact-size heap buffers: ASan reports any byte written past cap. */
	for (long cap = 0; cap <= need; cap++) {
		uint8_t *buf = malloc(cap ? (size_t)cap : 1);
		if (!buf)
			return;
		long got = emit(emit_nested, buf, (size_t)cap);
		if (cap < need && got != -ENOSPC) {
			printf("# cap %ld: got %ld\n", cap, got);
			all_enospc = 0;
		}
		if (cap == need)
			exact_ok = got == need && memcmp(buf, ref, (size_t)need) == 0;
		free(buf);
	}
	TAP_CHECK(all_enospc, "every buffer smaller than needed: -ENOSPC, no overflow");
	TAP_CHECK(exact_ok, "a buffer of exactly the final size is enough, same bytes");

	/* The scope's PkgLength covers everything after ScopeOp up to the end. */
	size_t s = 0;
	while (s < (size_t)need && ref[s] != 0x10)
		s++;
	uint32_t v = 0;
	if (s < (size_t)need)
		decode_pkglen(ref + s + 1, &v);
	TAP_CHECK(s < (size_t)need && v == (uint32_t)need - s - 1, "outer Scope's PkgLength spans its body");
}

int main(void)
{
	test_pkglen_boundaries();
	test_pkglen_in_stream();
	test_encodings();
	test_bad_input();
	test_exact_sizes();
	return tap_done();
}
