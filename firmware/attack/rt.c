/* rt.c: the attack payloads' runtime: console, exit port, verdicts, TSC deadlines, RAM, command line. */
#include "firmware/attack/rt.h"

#include "guest/protocol.h"
#include "vmm/layout.h"

void *memcpy(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	while (n--)
		*d++ = *s++;
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	uint8_t *d = dst;
	while (n--)
		*d++ = (uint8_t)c;
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const uint8_t *x = a, *y = b;
	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b)
			return (uint8_t)*a - (uint8_t)*b;
		if (!*a)
			return 0;
	}
	return 0;
}

void rt_puts(const char *s)
{
	while (*s)
		outb(LAYOUT_PORT_COM1, (uint8_t)*s++);
}

void rt_puthex(uint64_t v)
{
	char buf[19];
	int i = 18;
	buf[i] = 0;
	do {
		buf[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	buf[--i] = 'x';
	buf[--i] = '0';
	rt_puts(buf + i);
}

void rt_putdec(uint64_t v)
{
	char buf[21];
	int i = 20;
	buf[i] = 0;
	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	rt_puts(buf + i);
}

void rt_exit(uint8_t status)
{
	outb(RINGVM_EXIT_PORT, status);
	for (;;)
		__asm__ volatile("hlt");
}

const char *rt_case = "?";

void rt_fail(const char *why, uint64_t value)
{
	rt_puts("attack: FAIL ");
	rt_puts(rt_case);
	rt_puts(": ");
	rt_puts(why);
	rt_puts(" (");
	rt_puthex(value);
	rt_puts(")\n");
	rt_exit(ATTACK_FAIL);
}

void rt_note(const char *what)
{
	rt_puts("attack: ");
	rt_puts(rt_case);
	rt_puts(": ");
	rt_puts(what);
	rt_puts("\n");
}

uint64_t rt_now(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

uint64_t rt_deadline_ms(uint64_t ms)
{
	return rt_now() + ms * 3000000ULL;
}

bool rt_past(uint64_t deadline)
{
	return (int64_t)(rt_now() - deadline) > 0;
}

void rt_relax(void)
{
	__asm__ volatile("pause" ::: "memory");
}

struct rt_ram rt_ram;

#define RT_HEAP_START 0x1000000ULL
static uint64_t rt_heap = RT_HEAP_START;

void *rt_alloc(size_t len, size_t align)
{
	uint64_t p = (rt_heap + align - 1) & ~(uint64_t)(align - 1);
	CHECK(p + len <= rt_ram.low_end, "out of guest RAM for buffers", len);
	rt_heap = p + len;
	memset((void *)p, 0, len);
	return (void *)p;
}

/* The PVH start info (version 1) and its memory map entries. */
struct rt_start_info {
	uint32_t magic, version, flags, nr_modules;
	uint64_t modlist_paddr, cmdline_paddr, rsdp_paddr, memmap_paddr;
	uint32_t memmap_entries, reserved;
};
struct rt_memmap_entry {
	uint64_t addr, size;
	uint32_t type, reserved;
};

static const char *rt_cmdline = "";

bool rt_cmdline_get(const char *key, char *out, size_t outlen)
{
	size_t klen = strlen(key);
	const char *p = rt_cmdline;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!strncmp(p, key, klen) && p[klen] == '=') {
			p += klen + 1;
			size_t n = 0;
			while (p[n] && p[n] != ' ' && n + 1 < outlen) {
				out[n] = p[n];
				n++;
			}
			out[n] = 0;
			return true;
		}
		while (*p && *p != ' ')
			p++;
	}
	return false;
}

/* Called by main before the case runs. */
void rt_init(uint64_t start_info);
void rt_init(uint64_t start_info)
{
	const struct rt_start_info *si = (const struct rt_start_info *)start_info;
	rt_cmdline = (const char *)si->cmdline_paddr;
	const struct rt_memmap_entry *m = (const struct rt_memmap_entry *)si->memmap_paddr;
	for (uint32_t i = 0; i < si->memmap_entries; i++) {
		if (m[i].type != 1)
			continue;
		uint64_t end = m[i].addr + m[i].size;
		if (m[i].addr >= LAYOUT_MMIO_HOLE_END) {
			rt_ram.high_start = m[i].addr;
			rt_ram.high_end = end;
		} else if (end > rt_ram.low_end) {
			rt_ram.low_end = end;
		}
	}
}
