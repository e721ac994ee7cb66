/* payload.S: a tiny PVH guest for ringvm's boot tests: prints on COM1, then ends the way MODE says. */
#include "guest/protocol.h"
#include "vmm/layout.h"

#define MODE_EXIT 1     /* print, then write status 42 to the exit port */
#define MODE_PANIC 2    /* print a kernel panic line, then reset */
#define MODE_TRIPLE 3   /* triple fault */
#define MODE_POWEROFF 4 /* ACPI S5 */
#define MODE_RESET 5    /* ACPI reset register */
#define MODE_HALT 6     /* print, then halt forever (the host inspects the running VMM) */
#define MODE_WAIT 7     /* print, then poll COM1 until a byte arrives, then write status 42 (the
			   host looks at the running VMM, then lets the guest end; no interrupts:
			   PVM delivers none to such a guest) */

	.code32
	.text
	.globl _start
_start:
	mov $LAYOUT_PORT_COM1, %dx
	lea msg, %esi
1:	lodsb
	test %al, %al
	jz 2f
	out %al, (%dx)
	jmp 1b
2:
#if MODE == MODE_EXIT
	mov $RINGVM_EXIT_PORT, %dx
	mov $42, %al
	out %al, (%dx)
#elif MODE == MODE_PANIC || MODE == MODE_RESET
	mov $LAYOUT_PORT_ACPI_RESET, %dx
	mov $LAYOUT_ACPI_RESET_VALUE, %al
	out %al, (%dx)
#elif MODE == MODE_TRIPLE
	lidt null_idt
	int $3
#elif MODE == MODE_WAIT
	mov $(LAYOUT_PORT_COM1 + 5), %dx
4:	pause
	in (%dx), %al
	test $1, %al /* LSR: data ready */
	jz 4b
	mov $RINGVM_EXIT_PORT, %dx
	mov $42, %al
	out %al, (%dx)
#elif MODE == MODE_POWEROFF
	mov $LAYOUT_PORT_ACPI_SLEEP_CTL, %dx
	mov $((LAYOUT_ACPI_S5_TYPE << 2) | 0x20), %al
	out %al, (%dx)
#endif
3:	hlt
	jmp 3b

	.data
null_idt:
	.word 0
	.long 0
msg:
#if MODE == MODE_PANIC
	.asciz "Kernel panic - not syncing: firmware test\n"
#else
	.asciz "hello from firmware\n"
#endif

/* The PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY) that tells ringvm where to start. */
	.section .note.Xen, "a", @note
	.align 4
	.long 4, 4, 18
	.asciz "Xen"
	.long _start
