/* test_boot.c: bzImage and PVH loading, e820 layout, boot_params and start-info contents. */
#include <asm/bootparam.h>
#include <asm/e820.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch/x86/boot.h"
#include "tests/unit/tap.h"
#include "vmm/layout.h"

static struct guest_mem gm;
static uint8_t *ram;

static void ram_setup(uint64_t low, uint64_t high)
{
	free(ram);
	ram = calloc(1, low + high);
	struct gm_region r[2] = { { .gpa = 0, .size = low, .host = ram },
				  { .gpa = LAYOUT_MMIO_HOLE_END, .size = high, .host = ram + low } };
	if (gm_init_from(&gm, r, high ? 2 : 1))
		abort();
}

/* Load a kernel from a buffer (the file source has tests of its own, test_image_file). */
static int load(const uint8_t *image, size_t size, struct x86_kernel *k)
{
	struct img src = img_mem(image, size);
	return x86_load_kernel(&gm, &src, k);
}

/* A minimal well-formed bzImage: setup sectors, header, and `payload` bytes of protected-mode code. */
static uint8_t *make_bzimage(size_t payload, size_t *size)
{
	size_t setup_sects = 4;
	*size = (setup_sects + 1) * 512 + payload;
	uint8_t *img = calloc(1, *size);
	struct setup_header h;
	memset(&h, 0, sizeof(h));
	h.setup_sects = (uint8_t)setup_sects;
	h.boot_flag = 0xaa55;
	h.header = 0x53726448;
	h.version = 0x020f;
	h.xloadflags = XLF_KERNEL_64;
	h.syssize = (uint32_t)(payload / 16);
	h.cmdline_size = 2047;
	h.initrd_addr_max = 0x7fffffff;
	h.pref_address = 0x1000000;
	h.init_size = 0x800000;
	memcpy(img + 0x1f1, &h, sizeof(h));
	img[0x201] = 0x66; /* setup header length - 0x202 + 0x1f1... as real kernels: ends at 0x268 */
	for (size_t i = 0; i < payload; i++)
		img[(setup_sects + 1) * 512 + i] = (uint8_t)(i * 7);
	return img;
}

static void test_bzimage(void)
{
	ram_setup(256 << 20, 0);
	size_t size;
	uint8_t *img = make_bzimage(64 * 1024, &size);
	struct x86_kernel k;
	TAP_CHECK(load(img, size, &k) == 0, "bzImage loads");
	TAP_CHECK(k.kind == X86_ENTRY_LINUX64 && k.entry == LAYOUT_HIGH_MEM_START + 0x200,
		  "bzImage: 64-bit entry at load address + 0x200");
	TAP_CHECK(memcmp(ram + LAYOUT_HIGH_MEM_START, img + 5 * 512, 64 * 1024) == 0,
		  "bzImage: protected-mode code copied to 1 MiB");
	TAP_CHECK(k.end >= 0x1000000 + 0x800000, "bzImage: kernel end covers pref_address + init_size");

	struct x86_boot_info info = { .cmdline = "console=ttyS0 hello", .initrd_addr = 0x4000000,
				      .initrd_size = 12345, .rsdp_addr = LAYOUT_ACPI_START };
	TAP_CHECK(x86_write_boot_info(&gm, &k, &info) == 0, "boot_params written");
	struct boot_params bp;
	memcpy(&bp, ram + LAYOUT_ZERO_PAGE, sizeof(bp));
	TAP_CHECK(bp.hdr.header == 0x53726448 && bp.hdr.type_of_loader == 0xff,
		  "boot_params: setup header copied, loader type set");
	TAP_CHECK(bp.hdr.cmd_line_ptr == LAYOUT_CMDLINE &&
			  strcmp((char *)ram + LAYOUT_CMDLINE, "console=ttyS0 hello") == 0,
		  "boot_params: command line pointer and text");
	TAP_CHECK(bp.hdr.ramdisk_image == 0x4000000 && bp.hdr.ramdisk_size == 12345,
		  "boot_params: initrd address and size");
	TAP_CHECK(bp.acpi_rsdp_addr == LAYOUT_ACPI_START, "boot_params: RSDP address");
	TAP_CHECK(bp.e820_entries == 3, "boot_params: 3 e820 entries below the hole");

	char longline[3000];
	memset(longline, 'x', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = 0;
	info.cmdline = longline;
	TAP_CHECK(x86_write_boot_info(&gm, &k, &info) == -E2BIG, "command line longer than cmdline_size refused");

	/* Corruptions. */
	uint8_t *bad = malloc(size);
	memcpy(bad, img, size);
	bad[0x1fe] = 0;
	TAP_CHECK(load(bad, size, &k) == -ENOEXEC, "bzImage without boot flag: not a kernel");
	memcpy(bad, img, size);
	bad[0x236] = 0; /* xloadflags */
	TAP_CHECK(load(bad, size, &k) == -EINVAL, "bzImage without a 64-bit entry refused");
	TAP_CHECK(load(img, size - 4096, &k) == -EINVAL, "truncated bzImage refused (syssize)");
	TAP_CHECK(load(img, 0x200, &k) == -ENOEXEC, "file shorter than the header");
	memcpy(bad, img, size);
	bad[0x1f1] = 0xff; /* setup_sects past the end of the file */
	TAP_CHECK(load(bad, size, &k) == -EINVAL, "setup_sects past the end refused");
	free(bad);

	ram_setup(16 << 20, 0); /* smaller than pref_address + init_size */
	TAP_CHECK(load(img, size, &k) == -ENOMEM, "bzImage that does not fit: -ENOMEM");
	free(img);
}

static size_t make_pvh_elf(uint8_t *buf, uint64_t paddr, uint64_t memsz, int with_note)
{
	memset(buf, 0, 4096);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_machine = EM_X86_64;
	eh->e_phoff = sizeof(*eh);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = 2;
	Elf64_Phdr *ph = (Elf64_Phdr *)(buf + sizeof(*eh));
	ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_offset = 1024, .p_paddr = paddr, .p_filesz = 16,
			      .p_memsz = memsz };
	memset(buf + 1024, 0xcc, 16);
	uint32_t note[6] = { 4, 8, with_note ? 18 : 17, 0 };
	memcpy(&note[3], "Xen", 4);
	uint64_t entry = paddr + 4;
	memcpy(&note[4], &entry, 8);
	memcpy(buf + 2048, note, sizeof(note));
	ph[1] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = 2048, .p_filesz = sizeof(note) };
	return 4096;
}

static void test_pvh(void)
{
	ram_setup(64 << 20, 0);
	uint8_t buf[4096];
	struct x86_kernel k;
	size_t n = make_pvh_elf(buf, 0x1000000, 4096, 1);
	TAP_CHECK(load(buf, n, &k) == 0 && k.kind == X86_ENTRY_PVH && k.entry == 0x1000004,
		  "PVH ELF: entry from the Xen PHYS32_ENTRY note");
	TAP_CHECK(ram[0x1000000] == 0xcc && ram[0x1000010] == 0 && k.end == 0x1001000,
		  "PVH ELF: segment copied, bss zeroed");
	struct x86_boot_info info = { .cmdline = "x", .initrd_addr = 0x2000000, .initrd_size = 99,
				      .rsdp_addr = LAYOUT_ACPI_START };
	TAP_CHECK(x86_write_boot_info(&gm, &k, &info) == 0, "PVH start info written");
	uint32_t magic, nr_modules;
	uint64_t modlist, rsdp, memmap_paddr;
	memcpy(&magic, ram + LAYOUT_PVH_START_INFO, 4);
	memcpy(&nr_modules, ram + LAYOUT_PVH_START_INFO + 12, 4);
	memcpy(&modlist, ram + LAYOUT_PVH_START_INFO + 16, 8);
	memcpy(&rsdp, ram + LAYOUT_PVH_START_INFO + 32, 8);
	memcpy(&memmap_paddr, ram + LAYOUT_PVH_START_INFO + 40, 8);
	TAP_CHECK(magic == 0x336ec578 && nr_modules == 1 && modlist == LAYOUT_PVH_MODLIST &&
			  rsdp == LAYOUT_ACPI_START && memmap_paddr == LAYOUT_PVH_MEMMAP,
		  "PVH start info: magic, module list, RSDP, memory map");

	n = make_pvh_elf(buf, 0x1000000, 4096, 0);
	TAP_CHECK(load(buf, n, &k) == -EINVAL, "ELF without a PVH note refused");
	n = make_pvh_elf(buf, 0x3fff000, 0x2000, 1);
	TAP_CHECK(load(buf, n, &k) == -ENOMEM, "ELF segment past the end of RAM refused");
	n = make_pvh_elf(buf, UINT64_MAX - 8, 16, 1);
	TAP_CHECK(load(buf, n, &k) == -ENOMEM, "ELF segment address overflow refused");
	n = make_pvh_elf(buf, 0x1000000, 4096, 1);
	((Elf64_Ehdr *)buf)->e_phnum = 60000;
	TAP_CHECK(load(buf, n, &k) == -EINVAL, "program headers past the file refused");
	n = make_pvh_elf(buf, 0x1000000, 4, 1);
	TAP_CHECK(load(buf, n, &k) == -EINVAL, "filesz > memsz refused");
}

static void test_e820_and_initrd(void)
{
	struct boot_e820_entry e[8];
	ram_setup(512 << 20, 0);
	unsigned int n = x86_e820_build(&gm, e, 8);
	TAP_CHECK(n == 3 && e[0].addr == 0 && e[0].size == LAYOUT_EBDA_START && e[0].type == E820_RAM,
		  "e820: low RAM below the EBDA");
	TAP_CHECK(e[1].type == E820_RESERVED && e[1].addr <= LAYOUT_ACPI_START &&
			  e[1].addr + e[1].size >= LAYOUT_ACPI_START + LAYOUT_ACPI_SIZE,
		  "e820: ACPI tables in a reserved range");
	TAP_CHECK(e[2].addr == LAYOUT_HIGH_MEM_START && e[2].addr + e[2].size == 512 << 20,
		  "e820: RAM from 1 MiB to the end");

	ram_setup(LAYOUT_MMIO_HOLE_START, 1 << 20);
	n = x86_e820_build(&gm, e, 8);
	TAP_CHECK(n == 4 && e[2].addr + e[2].size == LAYOUT_MMIO_HOLE_START && e[3].addr == 1ULL << 32 &&
			  e[3].size == 1 << 20,
		  "e820: RAM split around the MMIO hole");
	TAP_CHECK(x86_e820_build(&gm, e, 2) == 2, "e820: never more entries than room");

	ram_setup(256 << 20, 0);
	struct x86_kernel k = { .end = 64 << 20, .initrd_max = 0x7fffffff };
	uint64_t a = x86_initrd_addr(&gm, &k, 10 << 20);
	TAP_CHECK(a && a % 4096 == 0 && a + (10 << 20) <= 256 << 20 && a >= k.end,
		  "initrd: page-aligned at the top of RAM above the kernel");
	TAP_CHECK(x86_initrd_addr(&gm, &k, 200 << 20) == 0, "initrd overlapping the kernel: no room");
	TAP_CHECK(x86_initrd_addr(&gm, &k, UINT64_MAX) == 0, "initrd of absurd size: no room");
	k.initrd_max = (100 << 20) - 1;
	a = x86_initrd_addr(&gm, &k, 1 << 20);
	TAP_CHECK(a + (1 << 20) <= 100 << 20, "initrd: honours initrd_addr_max");
}

/* A temporary file holding data[0..size); its path in path (unlinked by the caller). */
static void write_temp(char *path, const void *data, size_t size)
{
	strcpy(path, "/tmp/ringvm-test-boot.XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
}

/* The file source: what ringvm_build uses, pread straight into guest RAM. */
static void test_image_file(void)
{
	char path[64];
	struct img f;
	struct x86_kernel k;
	size_t size;
	uint8_t *img = make_bzimage(256 * 1024, &size);

	ram_setup(256 << 20, 0);
	write_temp(path, img, size);
	TAP_CHECK(img_open(path, &f) == 0 && f.fd >= 0 && f.size == size, "image file: opened with its size");
	TAP_CHECK(x86_load_kernel(&gm, &f, &k) == 0 && k.kind == X86_ENTRY_LINUX64, "image file: bzImage loads");
	TAP_CHECK(memcmp(ram + LAYOUT_HIGH_MEM_START, img + 5 * 512, 256 * 1024) == 0,
		  "image file: payload read into guest RAM at 1 MiB");
	TAP_CHECK(memcmp(&k.setup_hdr, img + 0x1f1, k.setup_hdr_len) == 0 && k.setup_hdr_len > 0,
		  "image file: the setup header kept as the file had it");
	uint8_t b[16];
	TAP_CHECK(img_read(&f, b, 16, size - 16) == 0 && memcmp(b, img + size - 16, 16) == 0,
		  "image file: the last bytes read");
	TAP_CHECK(img_read(&f, b, 17, size - 16) == -EINVAL, "image file: a read past the end refused");
	TAP_CHECK(img_read(&f, b, 1, UINT64_MAX) == -EINVAL, "image file: an offset past the end refused");
	TAP_CHECK(img_read(&f, b, SIZE_MAX, 1) == -EINVAL, "image file: a length that would wrap refused");
	/* The file shrinks after it was opened (a rebuild writing it anew): an error, not stale RAM. */
	if (truncate(path, 4096) < 0)
		abort();
	TAP_CHECK(x86_load_kernel(&gm, &f, &k) == -EIO, "image file shrunk after opening: -EIO");
	img_close(&f);
	TAP_CHECK(f.fd == -1, "image file: closed");
	img_close(&f); /* twice: nothing */
	unlink(path);

	uint8_t elf[4096];
	size_t n = make_pvh_elf(elf, 0x1000000, 8192, 1);
	ram_setup(64 << 20, 0);
	memset(ram + 0x1000000, 0x55, 8192); /* the bss must be zeroed, not left as found */
	write_temp(path, elf, n);
	TAP_CHECK(img_open(path, &f) == 0 && x86_load_kernel(&gm, &f, &k) == 0 && k.kind == X86_ENTRY_PVH &&
			  k.entry == 0x1000004,
		  "image file: PVH vmlinux loads, entry from its note");
	TAP_CHECK(ram[0x1000000] == 0xcc && ram[0x100000f] == 0xcc && ram[0x1000010] == 0 && ram[0x1001fff] == 0,
		  "image file: PVH segment read into place, bss zeroed");
	img_close(&f);
	unlink(path);

	write_temp(path, "", 0);
	TAP_CHECK(img_open(path, &f) == -ENODATA && f.fd == -1, "image file: an empty file refused");
	unlink(path);
	TAP_CHECK(img_open("/tmp", &f) == -EISDIR, "image file: a directory refused");
	TAP_CHECK(img_open("/dev/null", &f) == -EINVAL, "image file: a device refused");
	TAP_CHECK(img_open("/nonexistent/ringvm-kernel", &f) == -ENOENT, "image file: a missing file: -ENOENT");
	free(img);
}

int main(void)
{
	test_bzimage();
	test_pvh();
	test_e820_and_initrd();
	test_image_file();
	free(ram);
	return tap_done();
}
