/* rt.h: the freestanding runtime of the attack payloads: memory, console, verdicts, time, RAM map. */
#ifndef ATTACK_RT_H
#define ATTACK_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A payload runs one case (named on the kernel command line as attack=NAME) on one vCPU, in long
 * mode with the first 8 GiB identity-mapped, interrupts off. It reports through the exit port
 * (guest/protocol.h): ringvm then exits with that byte as its status.
 *
 *   ATTACK_PASS    every check of the case held
 *   ATTACK_FAIL    a check failed: the case printed "attack: FAIL <case>: <why>" on COM1
 *   ATTACK_UNKNOWN no case of that name (the list is printed)
 */
#define ATTACK_PASS 80
#define ATTACK_FAIL 81
#define ATTACK_UNKNOWN 82

void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strncmp(const char *a, const char *b, size_t n);

/* COM1 output: a string, a number in hex or decimal. */
void rt_puts(const char *s);
void rt_puthex(uint64_t v);
void rt_putdec(uint64_t v);

/* Write the status byte to the exit port; ringvm stops the VM there. Never returns. */
__attribute__((noreturn)) void rt_exit(uint8_t status);

/* The running case's name (for messages) and the verdict helpers. */
extern const char *rt_case;
/* Print "attack: FAIL <case>: <why> (value)" and exit ATTACK_FAIL. */
__attribute__((noreturn)) void rt_fail(const char *why, uint64_t value);
/* A check: fail with `why` and the value when cond is false. */
#define CHECK(cond, why, value)                                                                    \
	do {                                                                                       \
		if (!(cond))                                                                       \
			rt_fail(why, (uint64_t)(value));                                           \
	} while (0)
/* A progress note on the console ("attack: <case>: <what>"): the host shows it on failure. */
void rt_note(const char *what);

/* Time from the TSC, assumed to tick at most 3 GHz: deadlines only ever come late, never early. */
uint64_t rt_now(void);
uint64_t rt_deadline_ms(uint64_t ms);
bool rt_past(uint64_t deadline);
void rt_relax(void);

/* Guest RAM as the PVH memory map says: low RAM ends at low_end; high RAM (above 4 GiB) is
   [high_start, high_end), empty when the machine has none. */
struct rt_ram {
	uint64_t low_end;
	uint64_t high_start, high_end;
};
extern struct rt_ram rt_ram;

/*
 * A bump allocator over guest RAM from 16 MiB (the payload sits at 1 MiB), zeroed, aligned to
 * `align` (a power of two). Fails the case when RAM runs out.
 */
void *rt_alloc(size_t len, size_t align);

/* The value of KEY=VALUE on the command line, copied into out (NUL-terminated); false if absent. */
bool rt_cmdline_get(const char *key, char *out, size_t outlen);

/* Memory-mapped I/O of every width (volatile, exactly one access each). */
static inline uint8_t mmio_r8(uint64_t a) { return *(volatile uint8_t *)a; }
static inline uint16_t mmio_r16(uint64_t a) { return *(volatile uint16_t *)a; }
static inline uint32_t mmio_r32(uint64_t a) { return *(volatile uint32_t *)a; }
static inline uint64_t mmio_r64(uint64_t a) { return *(volatile uint64_t *)a; }
static inline void mmio_w8(uint64_t a, uint8_t v) { *(volatile uint8_t *)a = v; }
static inline void mmio_w16(uint64_t a, uint16_t v) { *(volatile uint16_t *)a = v; }
static inline void mmio_w32(uint64_t a, uint32_t v) { *(volatile uint32_t *)a = v; }
static inline void mmio_w64(uint64_t a, uint64_t v) { *(volatile uint64_t *)a = v; }

/* A compiler and CPU barrier between ring writes and the notify. */
static inline void rt_mb(void) { __asm__ volatile("mfence" ::: "memory"); }

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" ::"a"(v), "Nd"(port));
}

#endif
