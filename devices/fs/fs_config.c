/* fs_config.c: parsing --share and --root values into a struct fs_config (pure, no file access). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/fs/fs_budget.h"
#include "devices/fs/virtio_fs.h"

/* Copy [s, s+n) into dst[cap] with a NUL; false when it does not fit. */
static bool fs_copy(char *dst, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		return false;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return true;
}

static void fs_default_tag(struct fs_config *c)
{
	const char *g = c->guest_dir;
	size_t i, n;

	while (*g == '/')
		g++;
	if (!*g) {
		strcpy(c->tag, "root");
		return;
	}
	n = strlen(g);
	if (n > FS_TAG_MAX)
		n = FS_TAG_MAX;
	for (i = 0; i < n; i++)
		c->tag[i] = g[i] == '/' ? '_' : g[i];
	c->tag[n] = '\0';
}

static void fs_defaults(struct fs_config *c)
{
	memset(c, 0, sizeof(*c));
	c->cache = FS_CACHE_AUTO;
	c->queues = 1;
}

/* One ",option" of --share / --root. */
static int fs_option(struct fs_config *c, const char *opt, size_t n, bool *tag_set,
		     const char **err)
{
	if (n == 8 && !memcmp(opt, "readonly", 8)) {
		c->readonly = true;
	} else if (n == 2 && !memcmp(opt, "ro", 2)) {
		c->readonly = true;
	} else if (n > 6 && !memcmp(opt, "cache=", 6)) {
		opt += 6;
		n -= 6;
		if (n == 4 && !memcmp(opt, "auto", 4))
			c->cache = FS_CACHE_AUTO;
		else if (n == 6 && !memcmp(opt, "always", 6))
			c->cache = FS_CACHE_ALWAYS;
		else if (n == 5 && !memcmp(opt, "never", 5))
			c->cache = FS_CACHE_NEVER;
		else
			goto bad_cache;
	} else if (n == 6 && !memcmp(opt, "cache=", 6)) {
		goto bad_cache;
	} else if (n >= 4 && !memcmp(opt, "tag=", 4)) {
		size_t i;

		if (n == 4 || n - 4 > FS_TAG_MAX) {
			*err = "tag= must be 1..36 characters";
			return -EINVAL;
		}
		for (i = 4; i < n; i++) {
			/* The tag travels on the kernel command line (ringvm.mount=TAG:PATH). */
			if (opt[i] == ':' || opt[i] == ',' || opt[i] == ' ' || opt[i] == '\0' ||
			    (unsigned char)opt[i] < 0x21 || (unsigned char)opt[i] > 0x7e) {
				*err = "tag= may not contain ':', ',' or spaces";
				return -EINVAL;
			}
		}
		(void)fs_copy(c->tag, sizeof(c->tag), opt + 4, n - 4);
		*tag_set = true;
	} else if (n == 3 && !memcmp(opt, "dev", 3)) {
		c->dev = true;
	} else if (n == 4 && !memcmp(opt, "suid", 4)) {
		c->suid = true;
	} else if (n == 15 && !memcmp(opt, "allow_direct_io", 15)) {
		c->allow_direct_io = true;
	} else if (n > 6 && !memcmp(opt, "xattr=", 6)) {
		static const struct {
			const char *name;
			enum fs_xattr_policy p;
		} pol[] = { { "user", FS_XATTR_USER },
			    { "none", FS_XATTR_NONE },
			    { "security", FS_XATTR_SECURITY },
			    { "all", FS_XATTR_ALL } };
		size_t i;

		for (i = 0; i < sizeof(pol) / sizeof(pol[0]); i++)
			if (strlen(pol[i].name) == n - 6 && !memcmp(opt + 6, pol[i].name, n - 6))
				break;
		if (i == sizeof(pol) / sizeof(pol[0])) {
			*err = "xattr= must be user, none, security or all";
			return -EINVAL;
		}
		c->xattr = pol[i].p;
	} else if (n > 7 && !memcmp(opt, "queues=", 7)) {
		char num[8];
		char *end;
		long q;

		if (!fs_copy(num, sizeof(num), opt + 7, n - 7))
			goto bad_queues;
		q = strtol(num, &end, 10);
		if (*end || q < 1 || q > FS_MAX_QUEUES)
			goto bad_queues;
		c->queues = (unsigned int)q;
	} else {
		*err = "unknown option (readonly, cache=, tag=, queues=, dev, suid, xattr=, allow_direct_io)";
		return -EINVAL;
	}
	return 0;
bad_cache:
	*err = "cache= must be auto, always or never";
	return -EINVAL;
bad_queues:
	*err = "queues= must be 1..16";
	return -EINVAL;
}

/* Options after the first ',' of rest (or none). */
static int fs_options(struct fs_config *c, const char *rest, bool *tag_set, const char **err)
{
	while (rest && *rest == ',') {
		const char *opt = rest + 1, *next = strchr(opt, ',');
		size_t n = next ? (size_t)(next - opt) : strlen(opt);
		int e = fs_option(c, opt, n, tag_set, err);

		if (e)
			return e;
		rest = next;
	}
	return 0;
}

int fs_parse_spec(const char *spec, struct fs_config *out, const char **err)
{
	const char *colon, *comma;
	bool tag_set = false;
	int e;

	fs_defaults(out);
	colon = strchr(spec, ':');
	if (!colon || colon == spec) {
		*err = "expected HOSTDIR:GUESTDIR[,options]";
		return -EINVAL;
	}
	comma = strchr(colon + 1, ',');
	if (!fs_copy(out->host_dir, sizeof(out->host_dir), spec, (size_t)(colon - spec)) ||
	    !fs_copy(out->guest_dir, sizeof(out->guest_dir), colon + 1,
		     comma ? (size_t)(comma - colon - 1) : strlen(colon + 1))) {
		*err = "path too long";
		return -EINVAL;
	}
	if (out->guest_dir[0] != '/') {
		*err = "GUESTDIR must be an absolute path";
		return -EINVAL;
	}
	e = fs_options(out, comma, &tag_set, err);
	if (e)
		return e;
	if (!tag_set)
		fs_default_tag(out);
	return 0;
}

int fs_parse_root(const char *spec, struct fs_config *out, const char **err)
{
	const char *comma = strchr(spec, ',');
	size_t n = comma ? (size_t)(comma - spec) : strlen(spec);

	fs_defaults(out);
	out->readonly = true;
	strcpy(out->guest_dir, "/");
	strcpy(out->tag, "root");
	if (n == 0 || !fs_copy(out->host_dir, sizeof(out->host_dir), spec, n)) {
		*err = "expected HOSTDIR[,rw]";
		return -EINVAL;
	}
	if (comma && !strcmp(comma, ",rw"))
		out->readonly = false;
	else if (comma) {
		*err = "the only --root option is ,rw";
		return -EINVAL;
	}
	return 0;
}

/* One "name=N" of --fs-limits, N in 1..2^30. */
static bool fs_limit_value(const char *opt, size_t n, const char *name, size_t *out)
{
	size_t k = strlen(name);
	char num[16], *end;
	long long v;

	if (n <= k + 1 || memcmp(opt, name, k) || opt[k] != '=' || !fs_copy(num, sizeof(num), opt + k + 1, n - k - 1))
		return false;
	v = strtoll(num, &end, 10);
	if (*end || num[0] == '-' || v < 1 || v > (1LL << 30))
		return false;
	*out = (size_t)v;
	return true;
}

int fs_parse_limits(const char *spec, struct fs_limits *out, const char **err)
{
	const char *opt = spec;

	memset(out, 0, sizeof(*out));
	while (*opt) {
		const char *next = strchr(opt, ',');
		size_t n = next ? (size_t)(next - opt) : strlen(opt);

		if (!fs_limit_value(opt, n, "fds", &out->max_fds) &&
		    !fs_limit_value(opt, n, "dir_buffers", &out->max_dir_buffers)) {
			*err = "expected fds=N,dir_buffers=N with N in 1..1073741824";
			return -EINVAL;
		}
		if (!next)
			break;
		opt = next + 1;
	}
	if (!out->max_fds && !out->max_dir_buffers) {
		*err = "expected fds=N,dir_buffers=N with N in 1..1073741824";
		return -EINVAL;
	}
	return 0;
}
