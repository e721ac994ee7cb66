/* fs_config.c: a share's public description (include/ringvm.h) checked and copied into a struct fs_config. */
#include <errno.h>
#include <string.h>

#include "devices/fs/virtio_fs.h"
#include "include/ringvm.h"

_Static_assert(RINGVM_TAG_MAX == FS_TAG_MAX, "share tag length");
_Static_assert(RINGVM_MAX_QUEUES == FS_MAX_QUEUES, "share queue limit");
/* The public enums are the server's, value for value. */
_Static_assert((int)RINGVM_CACHE_AUTO == FS_CACHE_AUTO && (int)RINGVM_CACHE_ALWAYS == FS_CACHE_ALWAYS &&
		       (int)RINGVM_CACHE_NEVER == FS_CACHE_NEVER,
	       "cache modes");
_Static_assert((int)RINGVM_XATTR_USER == FS_XATTR_USER && (int)RINGVM_XATTR_NONE == FS_XATTR_NONE &&
		       (int)RINGVM_XATTR_SECURITY == FS_XATTR_SECURITY &&
		       (int)RINGVM_XATTR_ALL == FS_XATTR_ALL,
	       "xattr policies");

/* Copy s into dst[cap] with a NUL; false when it does not fit. */
static bool fs_copy(char *dst, size_t cap, const char *s)
{
	size_t n = strlen(s);
	if (n >= cap)
		return false;
	memcpy(dst, s, n + 1);
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

static int fs_bad(const char **why, const char *msg)
{
	*why = msg;
	return -EINVAL;
}

/* What a share and the root have in common: the directory and the switches. */
static int fs_common(const struct ringvm_share *s, struct fs_config *out, const char **why)
{
	if (!s->host_dir || !s->host_dir[0])
		return fs_bad(why, "no host directory");
	if (!fs_copy(out->host_dir, sizeof(out->host_dir), s->host_dir))
		return fs_bad(why, "host directory path too long");
	if (s->queues > FS_MAX_QUEUES)
		return fs_bad(why, "queues must be 1..16");
	if ((unsigned int)s->cache > RINGVM_CACHE_NEVER)
		return fs_bad(why, "cache must be auto, always or never");
	if ((unsigned int)s->xattr > RINGVM_XATTR_ALL)
		return fs_bad(why, "xattr must be user, none, security or all");
	out->readonly = s->readonly;
	out->cache = (enum fs_cache)s->cache;
	out->queues = s->queues ? s->queues : 1;
	out->dev = s->dev;
	out->suid = s->suid;
	out->allow_direct_io = s->allow_direct_io;
	out->xattr = (enum fs_xattr_policy)s->xattr;
	return 0;
}

int fs_config_from(const struct ringvm_share *s, struct fs_config *out, const char **why)
{
	memset(out, 0, sizeof(*out));
	int ret = fs_common(s, out, why);
	if (ret)
		return ret;
	if (!s->guest_dir || s->guest_dir[0] != '/')
		return fs_bad(why, "the guest directory must be an absolute path");
	if (!fs_copy(out->guest_dir, sizeof(out->guest_dir), s->guest_dir))
		return fs_bad(why, "guest directory path too long");
	if (!s->tag) {
		fs_default_tag(out);
		return 0;
	}
	size_t n = strlen(s->tag);
	if (n == 0 || n > FS_TAG_MAX)
		return fs_bad(why, "tag must be 1..36 characters");
	for (size_t i = 0; i < n; i++) {
		/* The tag travels on the kernel command line (ringvm.mount=TAG:PATH). */
		unsigned char ch = (unsigned char)s->tag[i];
		if (ch == ':' || ch == ',' || ch < 0x21 || ch > 0x7e)
			return fs_bad(why, "tag may not contain ':', ',' or spaces");
	}
	memcpy(out->tag, s->tag, n + 1);
	return 0;
}

int fs_config_root(const struct ringvm_root *r, struct fs_config *out, const char **why)
{
	struct ringvm_share s = { .host_dir = r->host_dir, .readonly = !r->writable };
	memset(out, 0, sizeof(*out));
	int ret = fs_common(&s, out, why);
	if (ret)
		return ret;
	strcpy(out->guest_dir, "/");
	strcpy(out->tag, "root");
	return 0;
}
