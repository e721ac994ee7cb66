/* cli_tree.h: `ringvm run --kernel TREE` and `ringvm kconfig`: a kernel build tree as the guest's kernel. */
#ifndef RINGVM_CLI_TREE_H
#define RINGVM_CLI_TREE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

struct cli_tree {
	char dir[PATH_MAX];     /* the tree, absolute */
	char image[PATH_MAX];   /* vmlinux if CONFIG_PVH=y (booted through PVH), else bzImage, else vmlinux */
	char release[128];      /* include/config/kernel.release */
	char *config;           /* the .config text (or the image's embedded one); malloc'd */
	size_t config_len;
	bool modules;           /* CONFIG_MODULES=y and the tree has modules.order */
	char out[PATH_MAX];     /* what tree-initramfs.sh made: OUT/initramfs.img, OUT/root/lib/modules */
	char initrd[PATH_MAX];
	char moddir[PATH_MAX];  /* OUT/root/lib/modules/RELEASE */
	char mod_guest_dir[160]; /* /lib/modules/RELEASE: where moddir is shared, read-only */
};

struct ringvm_config;
struct ringvm_share;

/* Is path a directory (a tree rather than an image file)? */
bool cli_is_tree(const char *path);

/*
 * Find the tree's image, release and configuration (.config, else the config embedded in the image,
 * read with the tree's own scripts/extract-ikconfig). 0 or -errno with a one-line err.
 */
__attribute__((warn_unused_result)) int cli_tree_open(const char *dir, struct cli_tree *t, char *err,
						      size_t errlen);

/* Refuse a configuration that lacks what a run of cfg needs (the machine's options and those of
   each device kind cfg uses, vmm/kconfig.h; cfg NULL: every kind's): -ENOEXEC and a line naming
   the missing options. */
__attribute__((warn_unused_result)) int cli_tree_check(const struct cli_tree *t, const struct ringvm_config *cfg,
						       char *err, size_t errlen);

/*
 * Make (or reuse) the tree's initramfs and modules directory with `helper` (tree-initramfs.sh) and
 * PID 1 `init`, in ${XDG_CACHE_HOME:-$HOME/.cache}/ringvm/trees/. Reused, without running the
 * helper, while its key file names the same release and the same times and sizes of the tree's
 * modules.order, .config, images, init and helper. 0 or -errno with a one-line err.
 */
__attribute__((warn_unused_result)) int cli_tree_prepare(struct cli_tree *t, const char *helper,
							 const char *init, char *err, size_t errlen);

/*
 * The whole of `run --kernel TREE` for the CLI: open and check the tree, make its initramfs (unless
 * initrd_given), then point cfg at the image and initramfs, make --root / the default, and add to
 * shares[*nr_shares..max) the modules directory and (with another root) the tree at its own path,
 * read-only (they point into t). cfg (its root, disks, command) and initrd_given are what the user
 * asked; the tree's kernel must have what the devices of cfg need (cli_tree_check). 0 or -errno
 * with a one-line err.
 *
 * The shares are the tree's business, not fs's: which host directories a tree's guest needs (its
 * modules, its own source) and the host's userland as the root follow from booting a tree; they
 * are written with the public struct ringvm_share, as an embedder would.
 */
__attribute__((warn_unused_result)) int cli_tree_setup(struct cli_tree *t, const char *dir,
						       struct ringvm_config *cfg, bool initrd_given,
						       struct ringvm_share *shares,
						       unsigned int *nr_shares, unsigned int max,
						       const char *helper, const char *init, char *err,
						       size_t errlen);

void cli_tree_close(struct cli_tree *t);

/* `ringvm kconfig [--apply TREE]`: print the fragment, or merge it into TREE's .config with the
   tree's scripts/kconfig/merge_config.sh and check the result. Returns the exit status. */
int cli_kconfig(int argc, char **argv);

#endif
