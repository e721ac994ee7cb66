/* cli_parse.c: option values from the command line into the library's structs; every malformed value is refused, none guessed. */
#include "vmm/cli_parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cli_parse_size(const char *s, uint64_t *out, const char **err)
{
	if (!s || !isdigit((unsigned char)s[0])) {
		*err = "not a size (expected a number with an optional K, M, G or T suffix)";
		return -EINVAL;
	}
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno == ERANGE) {
		*err = "too large";
		return -EINVAL;
	}
	unsigned int shift = 0;
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default:
		*err = "unknown suffix (expected K, M, G or T)";
		return -EINVAL;
	}
	/* Accept "512M" and "512MiB"/"512MB" spellings, nothing else after the suffix. */
	if (shift && (*end == 'i' || *end == 'I'))
		end++;
	if (shift && (*end == 'b' || *end == 'B'))
		end++;
	if (*end != '\0') {
		*err = "trailing characters after the size";
		return -EINVAL;
	}
	if (v == 0) {
		*err = "must not be zero";
		return -EINVAL;
	}
	if (shift && v > (UINT64_MAX >> shift)) {
		*err = "too large";
		return -EINVAL;
	}
	*out = (uint64_t)v << shift;
	return 0;
}

int cli_parse_cpus(const char *s, unsigned int *out, const char **err)
{
	if (!s || !isdigit((unsigned char)s[0])) {
		*err = "not a number";
		return -EINVAL;
	}
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*end != '\0' || errno == ERANGE) {
		*err = "not a number";
		return -EINVAL;
	}
	if (v < 1 || v > 255) {
		*err = "must be between 1 and 255";
		return -EINVAL;
	}
	*out = (unsigned int)v;
	return 0;
}

/* Decimal digits only, lo..hi: 0 or -EINVAL. */
static int cli_uint(const char *s, unsigned long long lo, unsigned long long hi, unsigned long long *out)
{
	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || errno == ERANGE || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

static int cli_bad(const char **err, const char *msg)
{
	*err = msg;
	return -EINVAL;
}

/* The next ",option" of a spec, cut at its end; NULL after the last. */
static char *cli_next_option(char **rest)
{
	char *opt = *rest;
	if (!opt)
		return NULL;
	char *comma = strchr(opt, ',');
	if (comma)
		*comma = '\0';
	*rest = comma ? comma + 1 : NULL;
	return opt;
}

static int cli_disk_option(char *opt, struct ringvm_disk *d, const char **err)
{
	unsigned long long v;
	if (!strcmp(opt, "readonly")) {
		d->readonly = true;
	} else if (!strncmp(opt, "queues=", 7)) {
		if (cli_uint(opt + 7, 1, RINGVM_MAX_QUEUES, &v))
			return cli_bad(err, "queues= must be a number from 1 to 16");
		d->queues = (unsigned int)v;
	} else if (!strncmp(opt, "poll_us=", 8)) {
		if (cli_uint(opt + 8, 0, RINGVM_MAX_POLL_US, &v))
			return cli_bad(err, "poll_us= must be a number from 0 to 1000");
		d->poll_us = (unsigned int)v;
		d->poll_us_set = true; /* 0 too: it overrides serve's --poll-us */
	} else if (!strcmp(opt, "direct=on") || !strcmp(opt, "direct=off")) {
		d->direct = opt[8] == 'n';
	} else if (!strncmp(opt, "direct=", 7)) {
		return cli_bad(err, "direct= must be on or off");
	} else if (!strncmp(opt, "id=", 3)) {
		d->id = opt + 3; /* its characters are ringvm_config_check's */
	} else if (!opt[0]) {
		return cli_bad(err, "empty option (two commas in a row?)");
	} else {
		return cli_bad(err, "unknown option (expected readonly, queues=N, direct=on|off, "
				    "id=STRING, poll_us=N)");
	}
	return 0;
}

int cli_parse_disk(char *spec, struct ringvm_disk *out, const char **err)
{
	memset(out, 0, sizeof(*out));
	char *rest = spec;
	char *path = cli_next_option(&rest);
	if (!path[0])
		return cli_bad(err, "missing file name (PATH[,readonly][,queues=N][,direct=on|off]"
				    "[,id=STRING][,poll_us=N])");
	out->path = path;
	for (char *opt; (opt = cli_next_option(&rest));) {
		int ret = cli_disk_option(opt, out, err);
		if (ret)
			return ret;
	}
	return 0;
}

/* name=VALUE among a table of names: the index, or -1. */
static int cli_pick(const char *value, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(value, names[i]))
			return i;
	return -1;
}

static int cli_share_option(char *opt, struct ringvm_share *s, const char **err)
{
	/* In the order of enum ringvm_cache and enum ringvm_xattr. */
	static const char *const caches[] = { "auto", "always", "never" };
	static const char *const xattrs[] = { "user", "none", "security", "all" };
	unsigned long long v;
	int i;
	if (!strcmp(opt, "readonly") || !strcmp(opt, "ro")) {
		s->readonly = true;
	} else if (!strncmp(opt, "cache=", 6)) {
		if ((i = cli_pick(opt + 6, caches, 3)) < 0)
			return cli_bad(err, "cache= must be auto, always or never");
		s->cache = (enum ringvm_cache)i;
	} else if (!strncmp(opt, "tag=", 4)) {
		s->tag = opt + 4; /* its characters are ringvm_config_check's */
	} else if (!strcmp(opt, "dev")) {
		s->dev = true;
	} else if (!strcmp(opt, "suid")) {
		s->suid = true;
	} else if (!strcmp(opt, "allow_direct_io")) {
		s->allow_direct_io = true;
	} else if (!strncmp(opt, "xattr=", 6)) {
		if ((i = cli_pick(opt + 6, xattrs, 4)) < 0)
			return cli_bad(err, "xattr= must be user, none, security or all");
		s->xattr = (enum ringvm_xattr)i;
	} else if (!strncmp(opt, "queues=", 7)) {
		if (cli_uint(opt + 7, 1, RINGVM_MAX_QUEUES, &v))
			return cli_bad(err, "queues= must be 1..16");
		s->queues = (unsigned int)v;
	} else {
		return cli_bad(err, "unknown option (readonly, cache=, tag=, queues=, dev, suid, xattr=, "
				    "allow_direct_io)");
	}
	return 0;
}

int cli_parse_share(char *spec, struct ringvm_share *out, const char **err)
{
	memset(out, 0, sizeof(*out));
	char *colon = strchr(spec, ':');
	if (!colon || colon == spec)
		return cli_bad(err, "expected HOSTDIR:GUESTDIR[,options]");
	*colon = '\0';
	out->host_dir = spec;
	char *rest = colon + 1;
	out->guest_dir = cli_next_option(&rest);
	if (out->guest_dir[0] != '/')
		return cli_bad(err, "GUESTDIR must be an absolute path");
	for (char *opt; (opt = cli_next_option(&rest));) {
		int ret = cli_share_option(opt, out, err);
		if (ret)
			return ret;
	}
	return 0;
}

int cli_parse_root(char *spec, struct ringvm_root *out, const char **err)
{
	memset(out, 0, sizeof(*out));
	char *rest = spec;
	out->host_dir = cli_next_option(&rest);
	if (!out->host_dir[0])
		return cli_bad(err, "expected HOSTDIR[,rw]");
	if (rest && !strcmp(rest, "rw"))
		out->writable = true;
	else if (rest)
		return cli_bad(err, "the only --root option is ,rw");
	return 0;
}

int cli_parse_fs_limits(const char *spec, struct ringvm_fs_limits *out, const char **err)
{
	static const char usage[] = "expected fds=N,dir_buffers=N with N in 1..1073741824";
	memset(out, 0, sizeof(*out));
	const char *opt = spec;
	while (*opt) {
		const char *next = strchr(opt, ',');
		size_t n = next ? (size_t)(next - opt) : strlen(opt);
		char buf[32];
		if (n >= sizeof(buf))
			return cli_bad(err, usage);
		memcpy(buf, opt, n);
		buf[n] = '\0';
		unsigned long long v;
		if (!strncmp(buf, "fds=", 4) && !cli_uint(buf + 4, 1, RINGVM_MAX_FS_LIMIT, &v))
			out->fds = v;
		else if (!strncmp(buf, "dir_buffers=", 12) && !cli_uint(buf + 12, 1, RINGVM_MAX_FS_LIMIT, &v))
			out->dir_buffers = v;
		else
			return cli_bad(err, usage);
		if (!next)
			break;
		opt = next + 1;
	}
	if (!out->fds && !out->dir_buffers)
		return cli_bad(err, usage);
	return 0;
}

/* A decimal id: digits only, below 2^32 - 1 (the kernel's "unchanged"); end is where it stops. */
static int cli_id(const char *s, const char *end, uint32_t *out)
{
	if (s == end || !isdigit((unsigned char)*s))
		return -EINVAL;
	char *stop;
	errno = 0;
	unsigned long long v = strtoull(s, &stop, 10);
	if (errno == ERANGE || stop != end || v >= UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int cli_parse_id(const char *s, uint32_t *out, const char **err)
{
	if (!s || cli_id(s, s + strlen(s), out) < 0) {
		*err = s && isdigit((unsigned char)s[0]) ? "not an id (0 to 4294967294)"
							  : "not a number (a numeric id)";
		return -EINVAL;
	}
	return 0;
}

int cli_parse_user(const char *s, uint32_t *uid, uint32_t *gid, const char **err)
{
	const char *colon = s ? strchr(s, ':') : NULL;
	const char *end = s ? s + strlen(s) : NULL;
	if (!s || cli_id(s, colon ? colon : end, uid) < 0 ||
	    (colon && cli_id(colon + 1, end, gid) < 0)) {
		*err = "want UID[:GID] in decimal (names are not looked up)";
		return -EINVAL;
	}
	if (!colon)
		*gid = *uid;
	return 0;
}

int cli_parse_seconds(const char *s, unsigned int *out, const char **err)
{
	uint32_t v;
	if (!s || cli_id(s, s + strlen(s), &v) < 0 || v < 1 || v > CLI_MAX_TIMEOUT_S) {
		*err = "want whole seconds, 1 to 10000000";
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int cli_parse_stop_timeout(const char *s, unsigned int *ms, const char **err)
{
	uint32_t v;
	if (!s || cli_id(s, s + strlen(s), &v) < 0 || v > CLI_MAX_STOP_TIMEOUT_S) {
		*err = "want whole seconds, 0 to 1000000";
		return -EINVAL;
	}
	*ms = v * 1000;
	return 0;
}
