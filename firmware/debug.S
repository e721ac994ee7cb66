/*
 * debug.S: a PVH guest with symbols, for the gdb stub's tests. It switches to long mode with its own
 * page tables and runs in the upper half (0xffffffff80000000 + physical, 4 KiB pages), so that
 * reading memory by a symbol's address goes through a real page-table walk:
 *
 *   main64: print `message`; call tick() 10 times (each adds 1 to `watched`); if `self_trap` is set,
 *   execute one int3 of its own (its IDT handler counts it in `guest_traps`); spin until `release`
 *   is non-zero; then write `exit_code` (42) to the exit port, or 99 if `guest_traps` is not
 *   `self_trap`. A debugger can change `exit_code`, `release` and `self_trap` to show that its
 *   writes land, and that the guest's own int3 reaches the guest while breakpoints are armed.
 *   (PVM cannot deliver an exception through a guest IDT: self_trap is 0 unless a test sets it.)
 */
#include "guest/protocol.h"
#include "vmm/layout.h"

#define KERNEL_VMA 0xffffffff80000000
#define PTE_P 0x1
#define PTE_RW 0x2
#define PTE_PS 0x80
#define CR0_PG 0x80000000
#define CR4_PAE 0x20
#define MSR_EFER 0xc0000080
#define EFER_LME 0x100

	.section .boot, "ax"
	.code32
	.globl _start
_start:
	/*
	 * The six tables are in .boot.bss, which the loader zeroes (no rep stosl: the gdb tests may
	 * single-step from here to main64, and a string instruction traps once per iteration).
	 * Identity: PML4[0] -> pdpt_lo[0] -> 2 MiB pages 0..2 (covers this code and its stack). */
	lea pdpt_lo, %eax
	or $(PTE_P | PTE_RW), %eax
	mov %eax, pml4
	lea pd_lo, %eax
	or $(PTE_P | PTE_RW), %eax
	mov %eax, pdpt_lo
	movl $(0x000000 | PTE_P | PTE_RW | PTE_PS), pd_lo
	movl $(0x200000 | PTE_P | PTE_RW | PTE_PS), pd_lo + 8
	/* Upper half: PML4[511] -> pdpt_hi[510] -> pd_hi[0] -> pt_hi[256..271]: 4 KiB pages for the
	   64 KiB from 1 MiB, which hold the payload. */
	lea pdpt_hi, %eax
	or $(PTE_P | PTE_RW), %eax
	mov %eax, pml4 + 511 * 8
	lea pd_hi, %eax
	or $(PTE_P | PTE_RW), %eax
	mov %eax, pdpt_hi + 510 * 8
	lea pt_hi, %eax
	or $(PTE_P | PTE_RW), %eax
	mov %eax, pd_hi
	lea pt_hi, %edi
	mov $(0x100000 | PTE_P | PTE_RW), %eax
	add $(0x100 * 8), %edi
	mov $16, %ecx
1:	mov %eax, (%edi)
	movl $0, 4(%edi)
	add $4096, %eax
	add $8, %edi
	loop 1b

	lea pml4, %eax
	mov %eax, %cr3
	mov %cr4, %eax
	or $CR4_PAE, %eax
	mov %eax, %cr4
	mov $MSR_EFER, %ecx
	rdmsr
	or $EFER_LME, %eax
	wrmsr
	mov %cr0, %eax
	or $CR0_PG, %eax
	mov %eax, %cr0
	lgdt gdt_ptr
	ljmp $0x08, $long_entry

	.code64
long_entry:
	mov $0x10, %ax
	mov %ax, %ds
	mov %ax, %es
	mov %ax, %ss
	movabs $main64, %rax
	jmp *%rax

	.align 8
gdt:
	.quad 0
	.quad 0x00af9a000000ffff /* 0x08: 64-bit code */
	.quad 0x00cf92000000ffff /* 0x10: data */
gdt_end:
gdt_ptr:
	.word gdt_end - gdt - 1
	.long gdt

/* The PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY): a physical address. */
	.section .note.Xen, "a", @note
	.align 4
	.long 4, 4, 18
	.asciz "Xen"
	.long _start

	.section .boot.bss, "aw", @nobits
	.align 4096
pml4:	.skip 4096
pdpt_lo: .skip 4096
pd_lo:	.skip 4096
pdpt_hi: .skip 4096
pd_hi:	.skip 4096
pt_hi:	.skip 4096

/* Everything below runs in the upper half. */
	.text
	.globl main64, tick, int3_handler, spin, spin_end
main64:
	lea stack_top(%rip), %rsp
	call idt_setup
	lea message(%rip), %rsi
	mov $LAYOUT_PORT_COM1, %dx
1:	lodsb
	test %al, %al
	jz 2f
	out %al, (%dx)
	jmp 1b
2:	xor %ebx, %ebx
3:	call tick
	inc %ebx
	cmp $10, %ebx
	jne 3b
	cmpq $0, self_trap(%rip)
	je spin
	int3                         /* the guest's own: must reach int3_handler, debugger or not */
spin:
	cmpb $0, release(%rip)
	jne 5f
	pause
	jmp spin
spin_end:
5:	movzbl exit_code(%rip), %eax
	mov guest_traps(%rip), %rcx
	cmp self_trap(%rip), %rcx
	je 6f
	mov $99, %eax
6:	mov $RINGVM_EXIT_PORT, %dx
	out %al, (%dx)
7:	hlt
	jmp 7b

tick:
	incq watched(%rip)
	ret

int3_handler:
	incq guest_traps(%rip)
	iretq

/* An IDT with vector 3 only (limit covers 0..3): a 64-bit interrupt gate to int3_handler. */
idt_setup:
	lea int3_handler(%rip), %rax
	lea idt + 3 * 16(%rip), %rdi
	mov %ax, (%rdi)                /* offset 15:0 */
	movw $0x08, 2(%rdi)            /* selector */
	movw $0x8e00, 4(%rdi)          /* present, DPL 0, 64-bit interrupt gate */
	shr $16, %rax
	mov %ax, 6(%rdi)               /* offset 31:16 */
	shr $16, %rax
	mov %eax, 8(%rdi)              /* offset 63:32 */
	movl $0, 12(%rdi)
	lidt idt_ptr(%rip)
	ret

	.data
	.globl message, exit_code, release, watched, guest_traps, self_trap
message:
	.asciz "hello from the debug payload\n"
exit_code:
	.byte 42
release:
	.byte 1
	.align 8
watched:
	.quad 0
guest_traps:
	.quad 0
self_trap:
	.quad 0
idt_ptr:
	.word 4 * 16 - 1
	.quad idt

	.bss
	.align 16
idt:
	.skip 4 * 16
	.align 16
stack:
	.skip 4096
stack_top:
