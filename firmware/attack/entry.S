/* entry.S: PVH entry of the attack payloads: 32-bit protected mode -> long mode -> attack_main(). */

/*
 * PVH hands us 32-bit protected mode, paging off, %ebx = the hvm_start_info. The C code runs in
 * long mode (64-bit code runs natively on this host's PVM /dev/kvm, 32-bit code is emulated), so:
 * identity-map the first 8 GiB with 2 MiB pages (RAM, the MMIO hole with the virtio windows, and
 * RAM above 4 GiB when the machine has it), enable PAE + LME + paging, far-jump into 64-bit code.
 */
#define PT_PRESENT_RW 0x3
#define PT_HUGE 0x80
#define MAP_GIB 8

	.code32
	.text
	.globl _start
_start:
	cli
	mov %ebx, %esi			/* start info: survives into long mode as attack_main's arg */
	/* PML4[0] -> PDPT */
	lea pt_pdpt, %eax
	or $PT_PRESENT_RW, %eax
	mov %eax, pt_pml4
	/* PDPT[i] -> PD page i, for each GiB */
	xor %ecx, %ecx
1:	mov %ecx, %eax
	shl $12, %eax
	lea pt_pd(%eax), %eax
	or $PT_PRESENT_RW, %eax
	mov %eax, pt_pdpt(,%ecx,8)
	inc %ecx
	cmp $MAP_GIB, %ecx
	jne 1b
	/* PD entry j maps j * 2 MiB: the low dword carries bits 21..31, the high dword bits 32.. */
	xor %ecx, %ecx
2:	mov %ecx, %eax
	shl $21, %eax
	or $(PT_PRESENT_RW | PT_HUGE), %eax
	mov %eax, pt_pd(,%ecx,8)
	mov %ecx, %eax
	shr $11, %eax
	mov %eax, pt_pd+4(,%ecx,8)
	inc %ecx
	cmp $(MAP_GIB * 512), %ecx
	jne 2b

	lea pt_pml4, %eax
	mov %eax, %cr3
	mov %cr4, %eax
	or $0x20, %eax			/* PAE */
	mov %eax, %cr4
	mov $0xc0000080, %ecx		/* EFER */
	rdmsr
	or $0x100, %eax			/* LME */
	wrmsr
	mov %cr0, %eax
	or $0x80000001, %eax		/* PG | PE */
	mov %eax, %cr0
	lgdt gdt_desc
	ljmp $0x08, $long_mode

	.code64
long_mode:
	mov $0x10, %ax
	mov %ax, %ds
	mov %ax, %es
	mov %ax, %ss
	mov %ax, %fs
	mov %ax, %gs
	lea stack_top(%rip), %rsp
	mov %esi, %edi			/* zero-extends: the upper halves are undefined after the switch */
	call attack_main
3:	hlt
	jmp 3b

	.section .rodata
	.align 8
gdt:
	.quad 0
	.quad 0x00af9a000000ffff	/* 0x08: 64-bit code */
	.quad 0x00cf92000000ffff	/* 0x10: data */
gdt_desc:
	.word gdt_desc - gdt - 1
	.long gdt

	.bss
	.align 4096
pt_pml4:	.skip 4096
pt_pdpt:	.skip 4096
pt_pd:		.skip 4096 * MAP_GIB
stack:		.skip 65536
stack_top:

/* The PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY) that tells ringvm where to start. */
	.section .note.Xen, "a", @note
	.align 4
	.long 4, 4, 18
	.asciz "Xen"
	.long _start

	.section .note.GNU-stack, "", @progbits
