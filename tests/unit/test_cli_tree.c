/* test_cli_tree.c: what `run --kernel TREE` finds in a tree (image, release, configuration, modules)
   and what it adds to the run (root, shares), on stand-in trees in a scratch directory. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/tree.h"
#include "tests/unit/tap.h"
#include "vmm/cli_tree.h"
#include "vmm/kconfig.h"
#include "include/ringvm.h"

static char root[64];

/* Write text to root/rel (making its directories), with mode. */
static void put(const char *rel, const char *text, mode_t mode)
{
	char path[256], cmd[300];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	if (system(cmd) != 0)
		abort();
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0 || chmod(path, mode) != 0)
		abort();
}

static void drop(const char *rel)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	unlink(path);
}

/* The options every run needs, as `ringvm kconfig` would have them. */
static const char good_config[] =
	"CONFIG_64BIT=y\nCONFIG_ACPI=y\nCONFIG_PCI=y\nCONFIG_BLK_DEV_INITRD=y\nCONFIG_BINFMT_ELF=y\n"
	"CONFIG_X86_IOPL_IOPERM=y\nCONFIG_TTY=y\nCONFIG_SERIAL_8250=y\nCONFIG_SERIAL_8250_CONSOLE=y\n"
	"CONFIG_PROC_FS=y\nCONFIG_SYSFS=y\nCONFIG_DEVTMPFS=y\nCONFIG_TMPFS=y\nCONFIG_VIRTIO_MENU=y\n"
	"CONFIG_VIRTIO_MMIO=y\nCONFIG_MODULES=y\nCONFIG_FUSE_FS=m\nCONFIG_VIRTIO_FS=m\nCONFIG_OVERLAY_FS=m\n";

int main(void)
{
	struct cli_tree t;
	char err[512], want[256];
	snprintf(root, sizeof(root), "/tmp/ringvm-test-tree.XXXXXX");
	if (!mkdtemp(root))
		return 1;
	char tree[80];
	snprintf(tree, sizeof(tree), "%s/linux", root);

	TAP_CHECK(!cli_is_tree("/nonexistent") && !cli_is_tree("/proc/self/status") && cli_is_tree(root),
		  "a tree is a directory; a file or nothing is not");

	put("linux/include/config/kernel.release", "6.1.0-test\n", 0644);
	int ret = cli_tree_open(tree, &t, err, sizeof(err));
	TAP_CHECK(ret == -ENOENT && strstr(err, "neither arch/x86/boot/bzImage nor vmlinux") && !strchr(err, '\n'),
		  "no image: refused in one line naming both");
	cli_tree_close(&t);

	put("linux/vmlinux", "ELF", 0644);
	put("linux/.config", good_config, 0644);
	ret = cli_tree_open(tree, &t, err, sizeof(err));
	snprintf(want, sizeof(want), "%s/vmlinux", tree);
	TAP_CHECK(ret == 0 && !strcmp(t.image, want) && !strcmp(t.release, "6.1.0-test"),
		  "vmlinux alone is the image; the release is read without its newline");
	TAP_CHECK(ret == 0 && t.config_len == strlen(good_config) && !t.modules,
		  "the .config is read; CONFIG_MODULES=y without modules.order is no modules");
	cli_tree_close(&t);

	put("linux/arch/x86/boot/bzImage", "MZ", 0644);
	put("linux/modules.order", "fs/fuse/fuse.ko\n", 0644);
	ret = cli_tree_open(tree, &t, err, sizeof(err));
	snprintf(want, sizeof(want), "%s/arch/x86/boot/bzImage", tree);
	TAP_CHECK(ret == 0 && !strcmp(t.image, want) && t.modules, "bzImage wins over vmlinux; modules.order means modules");
	cli_tree_close(&t);

	char pvh_config[sizeof(good_config) + 16];
	snprintf(pvh_config, sizeof(pvh_config), "%sCONFIG_PVH=y\n", good_config);
	put("linux/.config", pvh_config, 0644);
	ret = cli_tree_open(tree, &t, err, sizeof(err));
	snprintf(want, sizeof(want), "%s/vmlinux", tree);
	TAP_CHECK(ret == 0 && !strcmp(t.image, want), "built with CONFIG_PVH=y: vmlinux wins, booted through PVH");
	cli_tree_close(&t);
	put("linux/.config", good_config, 0644);

	/* A path with a trailing slash and a dot is the same tree, made absolute. */
	char odd[120];
	snprintf(odd, sizeof(odd), "%s/./linux/", root);
	ret = cli_tree_open(odd, &t, err, sizeof(err));
	TAP_CHECK(ret == 0 && !strcmp(t.dir, tree), "the tree's path is made canonical");
	cli_tree_close(&t);

	put("linux/include/config/kernel.release", "../../etc\n", 0644);
	ret = cli_tree_open(tree, &t, err, sizeof(err));
	TAP_CHECK(ret == -EINVAL && strstr(err, "bad kernel.release"), "a release with a '/' is refused");
	cli_tree_close(&t);
	put("linux/include/config/kernel.release", "", 0644);
	ret = cli_tree_open(tree, &t, err, sizeof(err));
	TAP_CHECK(ret == -ENOENT && strstr(err, "kernel.release"), "an empty release is refused");
	cli_tree_close(&t);
	put("linux/include/config/kernel.release", "6.1.0-test\n", 0644);

	/* No .config: the image's own, through the tree's scripts/extract-ikconfig. */
	drop("linux/.config");
	ret = cli_tree_open(tree, &t, err, sizeof(err));
	TAP_CHECK(ret == -ENOENT && strstr(err, "no .config") && !strchr(err, '\n'),
		  "no .config and no extract-ikconfig: refused in one line");
	cli_tree_close(&t);
	put("linux/scripts/extract-ikconfig", "#!/bin/sh\n[ \"${1##*/}\" = bzImage ] && echo CONFIG_ACPI=y\n", 0755);
	ret = cli_tree_open(tree, &t, err, sizeof(err));
	TAP_CHECK(ret == 0 && t.config && !strcmp(t.config, "CONFIG_ACPI=y\n"),
		  "no .config: extract-ikconfig on the image gives the configuration");
	TAP_CHECK(ret == 0 && !t.modules, "... and without CONFIG_MODULES=y in it, no modules");
	struct ringvm_config empty;
	memset(&empty, 0, sizeof(empty)); /* no device: the machine's options alone */
	ret = cli_tree_check(&t, &empty, err, sizeof(err));
	TAP_CHECK(ret == -ENOEXEC && strstr(err, "CONFIG_SERIAL_8250=y") && !strstr(err, "CONFIG_ACPI=y") &&
			  strstr(err, "ringvm kconfig --apply") && !strchr(err, '\n'),
		  "the check names what is missing, not what is there, and how to add it, in one line");
	cli_tree_close(&t);
	put("linux/scripts/extract-ikconfig", "#!/bin/sh\nexit 1\n", 0755);
	ret = cli_tree_open(tree, &t, err, sizeof(err));
	TAP_CHECK(ret == -ENOENT && !t.config, "an image without an embedded configuration is refused");
	cli_tree_close(&t);
	put("linux/.config", good_config, 0644);

	/* Setup with the user's own initramfs: no helper runs; root and shares as the run needs. */
	struct ringvm_config cfg;
	struct ringvm_share shares[4];
	unsigned int nr = 0;
	memset(&cfg, 0, sizeof(cfg)); /* cli_tree_setup reads root and sets kernel, initrd */
	cfg.initrd = "/boot/initrd";
	ret = cli_tree_setup(&t, tree, &cfg, true, shares, &nr, 4, NULL, NULL, err, sizeof(err));
	snprintf(want, sizeof(want), "%s/arch/x86/boot/bzImage", tree);
	TAP_CHECK(ret == 0 && !strcmp(cfg.root.host_dir, "/") && !cfg.root.writable && !strcmp(cfg.kernel, want) && !strcmp(cfg.initrd, "/boot/initrd") &&
			  nr == 0,
		  "--root / is the default; with --initrd given, no modules share and the tree is already at its path");
	cli_tree_close(&t);

	nr = 0;
	memset(&cfg, 0, sizeof(cfg)); /* cli_tree_setup reads root and sets kernel, initrd */
	cfg.root.host_dir = "/srv/rootfs";
	ret = cli_tree_setup(&t, tree, &cfg, true, shares, &nr, 4, NULL, NULL, err, sizeof(err));
	TAP_CHECK(ret == 0 && nr == 1 && !strcmp(shares[0].host_dir, tree) && !strcmp(shares[0].guest_dir, tree) &&
			  shares[0].readonly,
		  "under another --root the tree is shared at its own path, read-only");
	cli_tree_close(&t);

	nr = 0;
	memset(&cfg, 0, sizeof(cfg)); /* cli_tree_setup reads root and sets kernel, initrd */
	cfg.nr_disks = 1; /* counted, never read: the check asks each kind what cfg uses */
	ret = cli_tree_setup(&t, tree, &cfg, true, shares, &nr, 4, NULL, NULL, err, sizeof(err));
	TAP_CHECK(ret == -ENOEXEC && strstr(err, "CONFIG_VIRTIO_BLK=y|m"), "with a disk, virtio-blk is asked for");
	cli_tree_close(&t);

	nr = 0;
	memset(&cfg, 0, sizeof(cfg)); /* cli_tree_setup reads root and sets kernel, initrd */
	/* A command without a terminal: its streams go over virtio-console. */
	cfg.argc = 1;
	cfg.console.tty = RINGVM_TTY_OFF;
	ret = cli_tree_setup(&t, tree, &cfg, true, shares, &nr, 4, NULL, NULL, err, sizeof(err));
	TAP_CHECK(ret == -ENOEXEC && strstr(err, "CONFIG_VIRTIO_CONSOLE=y|m"),
		  "a command's streams over virtio-console: its driver is asked for");
	cli_tree_close(&t);

	nr = 0;
	memset(&cfg, 0, sizeof(cfg)); /* cli_tree_setup reads root and sets kernel, initrd */
	ret = cli_tree_setup(&t, tree, &cfg, false, shares, &nr, 4, NULL, NULL, err, sizeof(err));
	TAP_CHECK(ret == -ENOENT && strstr(err, "not built"), "without ringvm's guest files: refused, nothing run");
	cli_tree_close(&t);

	nr = 3;
	memset(&cfg, 0, sizeof(cfg)); /* cli_tree_setup reads root and sets kernel, initrd */
	cfg.root.host_dir = "/srv/rootfs";
	ret = cli_tree_setup(&t, tree, &cfg, true, shares, &nr, 4, NULL, NULL, err, sizeof(err));
	TAP_CHECK(ret == -E2BIG && nr == 3, "no room left for the tree's shares: refused, nothing written past max");
	cli_tree_close(&t);

	/* The cache: a stand-in helper that counts its runs and makes OUT as the real one does. */
	put("helper.sh",
	    "#!/bin/sh\necho run >>\"$4.runs\"\nmkdir -p \"$4\"\n: >\"$4/initramfs.img\"\n"
	    "echo \"$5\" >\"$4/key\"\n",
	    0755);
	put("init", "pid 1\n", 0755);
	char helper[128], init[128], cache[128], runs[PATH_MAX + 8];
	snprintf(helper, sizeof(helper), "%s/helper.sh", root);
	snprintf(init, sizeof(init), "%s/init", root);
	snprintf(cache, sizeof(cache), "%s/cache", root);
	setenv("XDG_CACHE_HOME", cache, 1);
	unsigned int made[3];
	for (unsigned int i = 0; i < 3; i++) {
		if (i == 2)
			put("init", "another pid 1\n", 0755); /* a new size: the key changes */
		memset(&cfg, 0, sizeof(cfg));
		nr = 0;
		ret = cli_tree_setup(&t, tree, &cfg, false, shares, &nr, 4, helper, init, err, sizeof(err));
		snprintf(runs, sizeof(runs), "%s.runs", t.out);
		struct stat st;
		made[i] = ret == 0 && stat(runs, &st) == 0 ? (unsigned int)st.st_size / 4 : 0;
		cli_tree_close(&t);
	}
	printf("# helper runs after each of three setups: %u %u %u\n", made[0], made[1], made[2]);
	TAP_CHECK(made[0] == 1 && made[1] == 1 && made[2] == 2,
		  "the tree's initramfs is made once, reused without running the helper, made again when an input "
		  "changes");

	if (tree_discard(root) != 0)
		return 1;
	return tap_done();
}
