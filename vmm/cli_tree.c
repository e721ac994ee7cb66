/* cli_tree.c: a kernel build tree as --kernel (its image, release, .config and modules), and `ringvm kconfig`. */
#define _GNU_SOURCE
#include "vmm/cli_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "devices/kind.h"
#include "vmm/errmsg.h"
#include "vmm/kconfig.h"
#include "include/ringvm.h"

#define CONFIG_MAX (16u << 20) /* a distribution's .config is ~300 KiB */

/* snprintf for paths: -ENAMETOOLONG instead of a truncated path. */
static int pathf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

bool cli_is_tree(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Read a whole descriptor (at most max bytes) into a NUL-terminated malloc'd buffer. */
static int read_fd(int fd, char **out, size_t *len, size_t max)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (n == cap) {
			if (cap >= max) {
				free(buf);
				return -EFBIG;
			}
			cap *= 2;
			char *b = realloc(buf, cap + 1);
			if (!b) {
				free(buf);
				return -ENOMEM;
			}
			buf = b;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;
			free(buf);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

static int read_path(const char *path, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int ret = read_fd(fd, out, len, CONFIG_MAX);
	close(fd);
	return ret;
}

/*
 * Run argv (in cwd when not NULL) and wait. With capture, its stdout is returned in *out (malloc'd);
 * else with quiet it goes to /dev/null. Returns its exit status (128+N for signal N) or -errno.
 */
static int run(char *const argv[], const char *cwd, bool quiet, char **out, size_t *out_len)
{
	int pfd[2] = { -1, -1 };
	if (out && pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = -errno;
		if (out) {
			close(pfd[0]);
			close(pfd[1]);
		}
		return e;
	}
	if (pid == 0) {
		if (out)
			dup2(pfd[1], STDOUT_FILENO);
		else if (quiet) {
			int dn = open("/dev/null", O_WRONLY);
			if (dn >= 0)
				dup2(dn, STDOUT_FILENO);
		}
		if (cwd && chdir(cwd) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	int ret = 0;
	if (out) {
		close(pfd[1]);
		ret = read_fd(pfd[0], out, out_len, CONFIG_MAX);
		close(pfd[0]);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	if (ret < 0)
		return ret;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int cli_tree_open(const char *dir, struct cli_tree *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	char path[PATH_MAX + 64];
	if (!realpath(dir, t->dir))
		return errmsg(err, errlen, -errno, "kernel tree %s: %s", dir, strerror(errno));
	if (pathf(t->image, sizeof(t->image), "%s/arch/x86/boot/bzImage", t->dir))
		return errmsg(err, errlen, -ENAMETOOLONG, "kernel tree %s: path too long", t->dir);
	if (!is_file(t->image)) {
		if (pathf(t->image, sizeof(t->image), "%s/vmlinux", t->dir) || !is_file(t->image))
			return errmsg(err, errlen, -ENOENT,
				    "kernel tree %s has neither arch/x86/boot/bzImage nor vmlinux: build it first "
				    "(make -C %s)",
				    t->dir, t->dir);
	}
	snprintf(path, sizeof(path), "%s/include/config/kernel.release", t->dir);
	char *rel;
	size_t rel_len;
	if (read_path(path, &rel, &rel_len) < 0)
		return errmsg(err, errlen, -ENOENT, "kernel tree %s has no include/config/kernel.release", t->dir);
	if (rel_len == 0 || rel_len >= sizeof(t->release)) {
		free(rel);
		return errmsg(err, errlen, -ENOENT, "kernel tree %s: include/config/kernel.release is empty or too long",
			      t->dir);
	}
	rel[strcspn(rel, "\n")] = '\0';
	snprintf(t->release, sizeof(t->release), "%s", rel);
	free(rel);
	if (!t->release[0] || strchr(t->release, '/'))
		return errmsg(err, errlen, -EINVAL, "kernel tree %s: bad kernel.release", t->dir);

	snprintf(path, sizeof(path), "%s/.config", t->dir);
	int ret = read_path(path, &t->config, &t->config_len);
	if (ret == -ENOENT) {
		/* No .config: the one built into the image (CONFIG_IKCONFIG), read by the tree's own tool. */
		char tool[PATH_MAX + 64];
		snprintf(tool, sizeof(tool), "%s/scripts/extract-ikconfig", t->dir);
		char *argv[] = { tool, t->image, NULL };
		ret = is_file(tool) ? run(argv, NULL, false, &t->config, &t->config_len) : -ENOENT;
		if (ret != 0 || t->config_len == 0) {
			free(t->config);
			t->config = NULL;
			return errmsg(err, errlen, -ENOENT,
				    "kernel tree %s has no .config and its image has no embedded configuration",
				    t->dir);
		}
	} else if (ret < 0) {
		return errmsg(err, errlen, ret, "kernel tree %s: reading .config: %s", t->dir, strerror(-ret));
	}
	/*
	 * A kernel built with the PVH entry boots from its vmlinux: the bzImage's decompressor is
	 * skipped, which is real time wherever the guest's CPU is emulated or nested.
	 */
	char vmlinux[sizeof(t->image)];
	if (kconfig_value(t->config, t->config_len, "PVH") == 'y' &&
	    !pathf(vmlinux, sizeof(vmlinux), "%s/vmlinux", t->dir) && is_file(vmlinux))
		memcpy(t->image, vmlinux, sizeof(vmlinux));
	snprintf(path, sizeof(path), "%s/modules.order", t->dir);
	t->modules = kconfig_value(t->config, t->config_len, "MODULES") == 'y' && is_file(path);
	return 0;
}

int cli_tree_check(const struct cli_tree *t, const struct ringvm_config *cfg, char *err, size_t errlen)
{
	char missing[1024];
	if (kconfig_check(t->config, t->config_len, device_kinds, nr_device_kinds, cfg, missing, sizeof(missing)) == 0)
		return 0;
	return errmsg(err, errlen, -ENOEXEC,
		    "kernel tree %s cannot find ringvm's machine: its .config lacks %s (ringvm kconfig --apply %s)",
		    t->dir, missing, t->dir);
}

/* mkdir -p */
static int mkdirs(const char *path)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(buf, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

/*
 * What a cache directory was made from: the release, then " MTIME.NSEC.SIZE" of each input that
 * exists (the tree's modules.order, .config, bzImage and vmlinux, PID 1, the helper itself).
 */
static int tree_key(const struct cli_tree *t, const char *helper, const char *init, char *key, size_t len)
{
	char paths[4][PATH_MAX + 64];
	static const char *const in_tree[] = { "modules.order", ".config", "arch/x86/boot/bzImage", "vmlinux" };
	for (unsigned int i = 0; i < 4; i++)
		if (pathf(paths[i], sizeof(paths[i]), "%s/%s", t->dir, in_tree[i]))
			return -ENAMETOOLONG;
	const char *inputs[] = { paths[0], paths[1], paths[2], paths[3], init, helper };
	int n = snprintf(key, len, "%s", t->release);
	for (unsigned int i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		struct stat st;
		if (n < 0 || (size_t)n >= len)
			return -ENAMETOOLONG;
		if (stat(inputs[i], &st) < 0)
			continue;
		n += snprintf(key + n, len - (size_t)n, " %lld.%09ld.%lld", (long long)st.st_mtim.tv_sec,
			      (long)st.st_mtim.tv_nsec, (long long)st.st_size);
	}
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Does OUT hold an initramfs made from exactly key? */
static bool tree_cache_current(const char *out, const char *key)
{
	char path[PATH_MAX + 64];
	if (pathf(path, sizeof(path), "%s/initramfs.img", out) || !is_file(path) ||
	    pathf(path, sizeof(path), "%s/key", out))
		return false;
	char *have;
	size_t len;
	if (read_path(path, &have, &len) < 0)
		return false;
	have[strcspn(have, "\n")] = '\0';
	bool same = strcmp(have, key) == 0;
	free(have);
	return same;
}

int cli_tree_prepare(struct cli_tree *t, const char *helper, const char *init, char *err, size_t errlen)
{
	char base[PATH_MAX];
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;
	if (xdg && *xdg == '/')
		n = snprintf(base, sizeof(base), "%s/ringvm/trees", xdg);
	else if (home && *home == '/')
		n = snprintf(base, sizeof(base), "%s/.cache/ringvm/trees", home);
	else
		n = snprintf(base, sizeof(base), "/tmp/ringvm-trees-%u", (unsigned int)getuid());
	if (n < 0 || (size_t)n >= sizeof(base))
		return errmsg(err, errlen, -ENAMETOOLONG, "cache directory path too long");
	int ret = mkdirs(base);
	if (ret)
		return errmsg(err, errlen, ret, "cannot create %s: %s", base, strerror(-ret));
	/* One directory per tree, named after its path. */
	char name[PATH_MAX];
	snprintf(name, sizeof(name), "%s", t->dir + 1);
	for (char *p = name; *p; p++)
		if (*p == '/')
			*p = '_';
	n = snprintf(t->out, sizeof(t->out), "%s/%s", base, name);
	if (n < 0 || (size_t)n >= sizeof(t->out) - 64 - sizeof(t->release))
		return errmsg(err, errlen, -ENAMETOOLONG, "cache directory path too long");

	char helper_path[PATH_MAX], init_path[PATH_MAX];
	if (pathf(helper_path, sizeof(helper_path), "%s", helper) || pathf(init_path, sizeof(init_path), "%s", init))
		return errmsg(err, errlen, -ENAMETOOLONG, "path too long");
	/*
	 * Freshness is checked here, not by the helper: a run whose cache is current starts no process
	 * (a shell and its stat(1)s cost more than the rest of the start-up under an emulated CPU).
	 */
	char key[sizeof(t->release) + 6 * 64];
	if (tree_key(t, helper_path, init_path, key, sizeof(key)))
		return errmsg(err, errlen, -ENAMETOOLONG, "kernel tree %s: path too long", t->dir);
	char *argv[] = { helper_path, t->dir, t->release, init_path, t->out, key, NULL };
	ret = tree_cache_current(t->out, key) ? 0 : run(argv, NULL, true, NULL, NULL);
	if (ret != 0)
		return errmsg(err, errlen, ret < 0 ? ret : -EIO, "preparing an initramfs for kernel tree %s failed (%s: %s)",
			    t->dir, helper, ret < 0 ? strerror(-ret) : "see above");
	if (pathf(t->initrd, sizeof(t->initrd), "%s/initramfs.img", t->out) ||
	    pathf(t->moddir, sizeof(t->moddir), "%s/root/lib/modules/%s", t->out, t->release) ||
	    pathf(t->mod_guest_dir, sizeof(t->mod_guest_dir), "/lib/modules/%s", t->release))
		return errmsg(err, errlen, -ENAMETOOLONG, "cache directory path too long");
	return 0;
}

int cli_tree_setup(struct cli_tree *t, const char *dir, struct ringvm_config *cfg, bool initrd_given, struct ringvm_share *shares, unsigned int *nr_shares, unsigned int max,
		   const char *helper, const char *init, char *err, size_t errlen)
{
	int ret = cli_tree_open(dir, t, err, errlen);
	if (ret)
		return ret;
	/* A tree boots with the host's userland, as virtme-ng does: writes go to a tmpfs overlay. */
	if (!cfg->root.host_dir)
		cfg->root.host_dir = "/";
	/* What the kernel must have is what the run's devices need (each kind's kconfig_uses of cfg),
	   the root's included. */
	ret = cli_tree_check(t, cfg, err, errlen);
	if (ret)
		return ret;
	if (!initrd_given) {
		if (!helper || !init)
			return errmsg(err, errlen, -ENOENT,
				    "ringvm's guest files (tree-initramfs.sh, init) are not built (run make)");
		ret = cli_tree_prepare(t, helper, init, err, errlen);
		if (ret)
			return ret;
		cfg->initrd = t->initrd;
	}
	cfg->kernel = t->image;
	if (*nr_shares + 2 > max)
		return errmsg(err, errlen, -E2BIG, "--share: too many shares with a kernel tree");
	if (t->modules && !initrd_given)
		shares[(*nr_shares)++] = (struct ringvm_share){ .host_dir = t->moddir,
								.guest_dir = t->mod_guest_dir,
								.readonly = true };
	/* Under --root / the tree is already at its own path; under another root it is shared there. */
	if (strcmp(cfg->root.host_dir, "/"))
		shares[(*nr_shares)++] = (struct ringvm_share){ .host_dir = t->dir, .guest_dir = t->dir,
								.readonly = true };
	return 0;
}

void cli_tree_close(struct cli_tree *t)
{
	free(t->config);
	t->config = NULL;
}

static int kconfig_apply(const char *dir)
{
	struct cli_tree t;
	memset(&t, 0, sizeof(t));
	if (!realpath(dir, t.dir)) {
		fprintf(stderr, "ringvm: kconfig --apply %s: %s\n", dir, strerror(errno));
		return 125;
	}
	char merge[PATH_MAX + 64], config[PATH_MAX + 64];
	snprintf(merge, sizeof(merge), "%s/scripts/kconfig/merge_config.sh", t.dir);
	snprintf(config, sizeof(config), "%s/.config", t.dir);
	if (!is_file(merge)) {
		fprintf(stderr, "ringvm: kconfig --apply %s: not a kernel source tree (no scripts/kconfig/merge_config.sh)\n",
			t.dir);
		return 125;
	}
	char frag[] = "/tmp/ringvm-kconfig.XXXXXX";
	int fd = mkstemp(frag);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		fprintf(stderr, "ringvm: kconfig --apply: cannot write a fragment: %s\n", strerror(errno));
		return 125;
	}
	kconfig_print_fragment(f, device_kinds, nr_device_kinds);
	fclose(f);
	/* Without a .config the fragment is the whole base: every other option takes its default. */
	char *argv[] = { merge, is_file(config) ? config : frag, frag, NULL };
	int ret = run(argv, t.dir, false, NULL, NULL);
	unlink(frag);
	if (ret != 0) {
		fprintf(stderr, "ringvm: kconfig --apply %s: merge_config.sh failed (status %d)\n", t.dir, ret);
		return 125;
	}
	ret = read_path(config, &t.config, &t.config_len);
	if (ret < 0) {
		fprintf(stderr, "ringvm: kconfig --apply %s: no .config after merging: %s\n", t.dir, strerror(-ret));
		return 125;
	}
	char missing[1024];
	int n = kconfig_check(t.config, t.config_len, device_kinds, nr_device_kinds, NULL, missing, sizeof(missing));
	free(t.config);
	if (n) {
		fprintf(stderr, "ringvm: %s still lacks %s after merging (unmet dependencies?)\n", config, missing);
		return 1;
	}
	fprintf(stderr, "ringvm: %s has what ringvm needs; build it with make -C %s\n", config, t.dir);
	return 0;
}

int cli_kconfig(int argc, char **argv)
{
	if (argc == 1) {
		kconfig_print_fragment(stdout, device_kinds, nr_device_kinds);
		return 0;
	}
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: ringvm kconfig [--apply TREE]\n\n"
		       "Print the kernel configuration fragment a kernel needs to boot under ringvm, or merge it\n"
		       "into TREE/.config with the tree's scripts/kconfig/merge_config.sh.\n");
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--apply"))
		return kconfig_apply(argv[2]);
	fprintf(stderr, "ringvm: usage: ringvm kconfig [--apply TREE]\n");
	return 125;
}
