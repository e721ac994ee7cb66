/* boot.c: load a Linux bzImage or PVH vmlinux into guest RAM and write its boot information. */
#include "boot.h"

#include <asm/bootparam.h>
#include <asm/e820.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/image.h"
#include "vmm/layout.h"

/* Offsets into a bzImage file (Documentation/arch/x86/boot.rst, "The real-mode kernel header"). */
#define BZ_SETUP_HDR_OFF 0x1f1
#define BZ_HDR_JUMP_OFF 0x201 /* the byte after the 2-byte jump: setup header ends at 0x202 + it */
#define BZ_MIN_VERSION 0x020c /* 2.12: xloadflags, so XLF_KERNEL_64 can be checked */
#define BZ_HEADER_MAGIC 0x53726448 /* "HdrS" */

/*
 * The PVH start info (xen/include/public/arch-x86/hvm/start_info.h, version 1): Linux's
 * pvh_start_xen reads it from EBX. Not in any uapi header, so it is spelled out here.
 */
#define PVH_START_MAGIC 0x336ec578
#define PVH_NOTE_PHYS32_ENTRY 18 /* XEN_ELFNOTE_PHYS32_ENTRY */
struct pvh_start_info {
	uint32_t magic;
	uint32_t version;
	uint32_t flags;
	uint32_t nr_modules;
	uint64_t modlist_paddr;
	uint64_t cmdline_paddr;
	uint64_t rsdp_paddr;
	uint64_t memmap_paddr;
	uint32_t memmap_entries;
	uint32_t reserved;
};
struct pvh_modlist_entry {
	uint64_t paddr;
	uint64_t size;
	uint64_t cmdline_paddr;
	uint64_t reserved;
};
struct pvh_memmap_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
	uint32_t reserved;
};

static uint64_t low_ram_end(const struct guest_mem *gm)
{
	/* gm_create() puts region 0 at gpa 0; it ends at RAM's end or at the MMIO hole. */
	return gm->regions[0].size;
}

static int load_bzimage(const struct guest_mem *gm, const struct img *image, struct x86_kernel *out)
{
	/* The setup header, read whole: the jump in it (at BZ_HDR_JUMP_OFF) says how long it really is. */
	struct setup_header hdr;
	uint8_t head[sizeof(hdr)];
	_Static_assert(BZ_HDR_JUMP_OFF - BZ_SETUP_HDR_OFF < sizeof(hdr), "the jump lies in the setup header");
	if (image->size < BZ_SETUP_HDR_OFF + sizeof(hdr))
		return -ENOEXEC;
	int ret = img_read(image, head, sizeof(head), BZ_SETUP_HDR_OFF);
	if (ret)
		return ret;
	memcpy(&hdr, head, sizeof(hdr));
	if (hdr.boot_flag != 0xaa55 || hdr.header != BZ_HEADER_MAGIC)
		return -ENOEXEC;
	if (hdr.version < BZ_MIN_VERSION || !(hdr.xloadflags & XLF_KERNEL_64))
		return -EINVAL; /* a bzImage, but one without a 64-bit entry point */

	uint64_t size = image->size;
	size_t setup_sects = hdr.setup_sects ? hdr.setup_sects : 4;
	size_t payload_off = (setup_sects + 1) * 512;
	size_t hdr_len = 0x202 + (size_t)head[BZ_HDR_JUMP_OFF - BZ_SETUP_HDR_OFF] - BZ_SETUP_HDR_OFF;
	if (payload_off >= size || hdr_len > sizeof(hdr) + 64 || BZ_SETUP_HDR_OFF + hdr_len > size)
		return -EINVAL;

	uint64_t payload = size - payload_off;
	/* syssize counts 16-byte paragraphs of protected-mode code: a truncated file falls short. */
	if ((uint64_t)hdr.syssize * 16 > payload)
		return -EINVAL;
	uint8_t *dst = gm_ptr(gm, LAYOUT_HIGH_MEM_START, payload);
	if (!dst)
		return -ENOMEM;
	ret = img_read(image, dst, payload, payload_off);
	if (ret)
		return ret;

	/*
	 * The decompressor moves itself to pref_address (aligned up, at least LOAD_PHYSICAL_ADDR) and
	 * needs init_size bytes there: keep the initrd clear of all of it.
	 */
	uint64_t end = LAYOUT_HIGH_MEM_START + payload;
	uint64_t run_end = hdr.pref_address + hdr.init_size;
	if (run_end > end)
		end = run_end;
	if (end > low_ram_end(gm))
		return -ENOMEM;

	*out = (struct x86_kernel){
		.kind = X86_ENTRY_LINUX64,
		/* startup_64 sits 0x200 past the 32-bit entry at the load address. */
		.entry = LAYOUT_HIGH_MEM_START + 0x200,
		.end = end,
		.cmdline_max = hdr.cmdline_size,
		.initrd_max = hdr.initrd_addr_max,
		.setup_hdr = hdr,
		.setup_hdr_len = hdr_len < sizeof(hdr) ? hdr_len : sizeof(hdr),
	};
	return 0;
}

/* Scan one PT_NOTE segment for the PVH entry note; 0 when absent. */
static uint64_t pvh_find_entry(const uint8_t *note, size_t len)
{
	size_t off = 0;
	while (len - off >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		memcpy(&nh, note + off, sizeof(nh));
		off += sizeof(nh);
		size_t name_len = ((size_t)nh.n_namesz + 3) & ~(size_t)3;
		size_t desc_len = ((size_t)nh.n_descsz + 3) & ~(size_t)3;
		if (name_len > len - off || desc_len > len - off - name_len)
			return 0;
		const uint8_t *name = note + off;
		const uint8_t *desc = note + off + name_len;
		if (nh.n_type == PVH_NOTE_PHYS32_ENTRY && nh.n_namesz == 4 && !memcmp(name, "Xen", 4)) {
			/* Linux emits the entry as _ASM_PTR: 8 bytes on x86-64, 4 on older builds. */
			if (nh.n_descsz == 8) {
				uint64_t e;
				memcpy(&e, desc, 8);
				return e;
			}
			if (nh.n_descsz == 4) {
				uint32_t e;
				memcpy(&e, desc, 4);
				return e;
			}
			return 0;
		}
		off += name_len + desc_len;
	}
	return 0;
}

/*
 * *entry = the PVH entry in a PT_NOTE segment (0: none). A segment larger than PVH_NOTE_MAX is not
 * read (a vmlinux's notes, Xen's and the build ID, take a few hundred bytes). 0 or -errno.
 */
#define PVH_NOTE_MAX (1u << 20)
static int pvh_note_entry(const struct img *image, const Elf64_Phdr *ph, uint64_t *entry)
{
	if (ph->p_filesz == 0 || ph->p_filesz > PVH_NOTE_MAX)
		return 0;
	uint8_t *note = malloc(ph->p_filesz);
	if (!note)
		return -ENOMEM;
	int ret = img_read(image, note, ph->p_filesz, ph->p_offset);
	if (!ret)
		*entry = pvh_find_entry(note, ph->p_filesz);
	free(note);
	return ret;
}

static int load_elf_pvh(const struct guest_mem *gm, const struct img *image, struct x86_kernel *out)
{
	Elf64_Ehdr eh;
	uint64_t size = image->size;
	if (size < sizeof(eh))
		return -ENOEXEC;
	int ret = img_read(image, &eh, sizeof(eh), 0);
	if (ret)
		return ret;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return -ENOEXEC;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0)
		return -EINVAL;
	if (eh.e_phoff > size || (size - eh.e_phoff) / sizeof(Elf64_Phdr) < eh.e_phnum)
		return -EINVAL;

	uint64_t entry = 0, end = 0;
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		ret = img_read(image, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph));
		if (ret)
			return ret;
		if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset)
			return -EINVAL;
		if (ph.p_type == PT_NOTE && !entry && (ret = pvh_note_entry(image, &ph, &entry)) != 0)
			return ret;
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_filesz > ph.p_memsz)
			return -EINVAL;
		uint8_t *dst = gm_ptr(gm, ph.p_paddr, ph.p_memsz);
		if (!dst)
			return -ENOMEM;
		ret = img_read(image, dst, ph.p_filesz, ph.p_offset);
		if (ret)
			return ret;
		memset(dst + ph.p_filesz, 0, ph.p_memsz - ph.p_filesz);
		if (ph.p_paddr + ph.p_memsz > end)
			end = ph.p_paddr + ph.p_memsz;
	}
	if (!entry)
		return -EINVAL; /* an ELF kernel, but without a PVH entry point */
	*out = (struct x86_kernel){
		.kind = X86_ENTRY_PVH,
		.entry = entry,
		.end = end,
		.cmdline_max = 2047, /* x86 COMMAND_LINE_SIZE - 1; ELF images do not say */
		.initrd_max = 0x7fffffff,
	};
	return 0;
}

int x86_load_kernel(const struct guest_mem *gm, const struct img *image, struct x86_kernel *out)
{
	int ret = load_bzimage(gm, image, out);
	if (ret != -ENOEXEC)
		return ret;
	return load_elf_pvh(gm, image, out);
}

uint64_t x86_initrd_addr(const struct guest_mem *gm, const struct x86_kernel *k, uint64_t size)
{
	uint64_t top = low_ram_end(gm);
	if (k->initrd_max && (uint64_t)k->initrd_max + 1 < top)
		top = (uint64_t)k->initrd_max + 1;
	if (size > top)
		return 0;
	uint64_t addr = (top - size) & ~0xfffULL;
	if (addr < k->end)
		return 0;
	return addr;
}

unsigned int x86_e820_build(const struct guest_mem *gm, struct boot_e820_entry *tab, unsigned int max)
{
	struct boot_e820_entry e[4];
	unsigned int n = 0;
	e[n++] = (struct boot_e820_entry){ 0, LAYOUT_EBDA_START, E820_RAM };
	/* EBDA, VGA hole and BIOS area; the ACPI tables live here too. */
	e[n++] = (struct boot_e820_entry){ LAYOUT_EBDA_START, LAYOUT_HIGH_MEM_START - LAYOUT_EBDA_START,
					   E820_RESERVED };
	e[n++] = (struct boot_e820_entry){ LAYOUT_HIGH_MEM_START, low_ram_end(gm) - LAYOUT_HIGH_MEM_START,
					   E820_RAM };
	if (gm->nr_regions > 1)
		e[n++] = (struct boot_e820_entry){ gm->regions[1].gpa, gm->regions[1].size, E820_RAM };
	if (n > max)
		n = max;
	memcpy(tab, e, n * sizeof(e[0]));
	return n;
}

static int write_cmdline(const struct guest_mem *gm, const struct x86_kernel *k, const char *cmdline)
{
	size_t len = strlen(cmdline);
	if (len > k->cmdline_max || len >= LAYOUT_CMDLINE_MAX)
		return -E2BIG;
	return gm_write(gm, LAYOUT_CMDLINE, cmdline, len + 1);
}

static int write_boot_params(const struct guest_mem *gm, const struct x86_kernel *k,
			     const struct x86_boot_info *info)
{
	struct boot_params bp;
	memset(&bp, 0, sizeof(bp));
	memcpy(&bp.hdr, &k->setup_hdr, k->setup_hdr_len);
	bp.hdr.type_of_loader = 0xff; /* "undefined" loader */
	bp.hdr.loadflags |= CAN_USE_HEAP | LOADED_HIGH;
	bp.hdr.heap_end_ptr = 0xfe00;
	bp.hdr.cmd_line_ptr = (uint32_t)LAYOUT_CMDLINE;
	bp.hdr.ramdisk_image = (uint32_t)info->initrd_addr;
	bp.hdr.ramdisk_size = (uint32_t)info->initrd_size;
	bp.ext_ramdisk_image = (uint32_t)(info->initrd_addr >> 32);
	bp.ext_ramdisk_size = (uint32_t)(info->initrd_size >> 32);
	bp.acpi_rsdp_addr = info->rsdp_addr;
	bp.e820_entries = (uint8_t)x86_e820_build(gm, bp.e820_table, E820_MAX_ENTRIES_ZEROPAGE);
	return gm_write(gm, LAYOUT_ZERO_PAGE, &bp, sizeof(bp));
}

static int write_pvh_start_info(const struct guest_mem *gm, const struct x86_boot_info *info)
{
	struct boot_e820_entry e820[LAYOUT_PVH_MEMMAP_MAX];
	unsigned int n = x86_e820_build(gm, e820, LAYOUT_PVH_MEMMAP_MAX);
	for (unsigned int i = 0; i < n; i++) {
		struct pvh_memmap_entry m = { e820[i].addr, e820[i].size, e820[i].type, 0 };
		int ret = gm_write(gm, LAYOUT_PVH_MEMMAP + i * sizeof(m), &m, sizeof(m));
		if (ret)
			return ret;
	}
	struct pvh_start_info si = {
		.magic = PVH_START_MAGIC,
		.version = 1,
		.cmdline_paddr = LAYOUT_CMDLINE,
		.rsdp_paddr = info->rsdp_addr,
		.memmap_paddr = LAYOUT_PVH_MEMMAP,
		.memmap_entries = n,
	};
	if (info->initrd_size) {
		struct pvh_modlist_entry mod = { info->initrd_addr, info->initrd_size, 0, 0 };
		int ret = gm_write(gm, LAYOUT_PVH_MODLIST, &mod, sizeof(mod));
		if (ret)
			return ret;
		si.nr_modules = 1;
		si.modlist_paddr = LAYOUT_PVH_MODLIST;
	}
	return gm_write(gm, LAYOUT_PVH_START_INFO, &si, sizeof(si));
}

int x86_write_boot_info(const struct guest_mem *gm, const struct x86_kernel *k,
			const struct x86_boot_info *info)
{
	int ret = write_cmdline(gm, k, info->cmdline);
	if (ret)
		return ret;
	if (k->kind == X86_ENTRY_PVH)
		return write_pvh_start_info(gm, info);
	return write_boot_params(gm, k, info);
}
