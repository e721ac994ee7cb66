/* test_mounts.c: unit tests for the ringvm.mount= and ringvm.root= parsers (guest/mounts.h). */
#include "guest/mounts.h"
#include "tests/unit/tap.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

static char t_buf[2 * PATH_MAX];

static int t_shares(const char *value, struct mnt_share *shares, size_t max, const char **why)
{
	snprintf(t_buf, sizeof(t_buf), "%s", value);
	*why = NULL;
	return mnt_parse_shares(t_buf, shares, max, why);
}

static int t_root(const char *value, struct mnt_root *root, const char **why)
{
	snprintf(t_buf, sizeof(t_buf), "%s", value);
	*why = NULL;
	return mnt_parse_root(t_buf, root, why);
}

static void t_good_shares(void)
{
	struct mnt_share s[MNT_MAX_SHARES];
	const char *why;

	TAP_CHECK(t_shares("data,/mnt/data,ro", s, MNT_MAX_SHARES, &why) == 1 &&
			  strcmp(s[0].tag, "data") == 0 && strcmp(s[0].path, "/mnt/data") == 0 && s[0].read_only,
		  "one read-only share");
	TAP_CHECK(t_shares("a,/a,rw,b,/x/y/z,ro,c,/c,rw", s, MNT_MAX_SHARES, &why) == 3 && !s[0].read_only &&
			  s[1].read_only && !s[2].read_only && strcmp(s[1].path, "/x/y/z") == 0 &&
			  strcmp(s[2].tag, "c") == 0,
		  "three shares keep their order and modes");
	TAP_CHECK(t_shares("my%20tag,/home/u%2Cv/caf%C3%A9,rw", s, MNT_MAX_SHARES, &why) == 1 &&
			  strcmp(s[0].tag, "my tag") == 0 && strcmp(s[0].path, "/home/u,v/caf\xc3\xa9") == 0,
		  "TAG and PATH are percent-decoded");
	TAP_CHECK(t_shares("t,/a/,ro", s, MNT_MAX_SHARES, &why) == 1 && strcmp(s[0].path, "/a/") == 0,
		  "a trailing slash is kept");
	TAP_CHECK(t_shares("a,/a,ro,b,/b,ro", s, 2, &why) == 2, "exactly maxshares shares fit");
}

static void t_bad_shares(void)
{
	static const struct {
		const char *value, *what;
		int err;
	} bad[] = {
		{ "", "an empty value", -EINVAL },
		{ "tag,/mnt", "two fields", -EINVAL },
		{ "tag,/mnt,ro,x", "four fields", -EINVAL },
		{ "tag,/mnt,ro,tag2,/b", "a trailing partial triple", -EINVAL },
		{ "tag,/mnt,RO", "MODE RO (case matters)", -EINVAL },
		{ "tag,/mnt,r", "MODE r", -EINVAL },
		{ "tag,/mnt,rwx", "MODE rwx", -EINVAL },
		{ "tag,/mnt,%", "an empty MODE", -EINVAL },
		{ "%,/mnt,ro", "an empty TAG", -EINVAL },
		{ "tag,%,ro", "an empty PATH", -EINVAL },
		{ "tag,mnt,ro", "a relative PATH", -EINVAL },
		{ "tag,./mnt,ro", "a ./ PATH", -EINVAL },
		{ "tag,/,ro", "PATH /", -EINVAL },
		{ "tag,//,rw", "PATH //", -EINVAL },
		{ "a,/a,ro,b,b,ro", "a bad second share", -EINVAL },
		{ "tag,/mnt,ro%G1", "a bad %XX", -EINVAL },
		{ "tag,/m%00nt,ro", "a %00 in PATH", -EINVAL },
		{ "tag,,/mnt,ro", "a raw empty field", -EINVAL },
		{ "tag,/m nt,ro", "a raw space", -EINVAL },
	};
	struct mnt_share s[MNT_MAX_SHARES];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char what[128];
		const char *why;
		int n = t_shares(bad[i].value, s, MNT_MAX_SHARES, &why);

		snprintf(what, sizeof(what), "%s is refused with a reason", bad[i].what);
		TAP_CHECK(n == bad[i].err && why != NULL && why[0] != '\0', what);
		if (why != NULL)
			printf("# %s: %s\n", bad[i].value, why);
	}
}

/* "t,/aaa...a,ro" with a PATH of exactly len bytes. */
static const char *t_path_of_len(size_t len)
{
	static char value[2 * PATH_MAX];

	memcpy(value, "t,/", 3);
	memset(value + 3, 'a', len - 1);
	snprintf(value + 2 + len, sizeof(value) - 2 - len, ",ro");
	return value;
}

static void t_limits(void)
{
	static char many[8192];
	struct mnt_share s[MNT_MAX_SHARES];
	const char *why;
	size_t used = 0;

	TAP_CHECK(t_shares("a,/a,ro,b,/b,ro,c,/c,ro", s, 2, &why) == -E2BIG,
		  "more shares than maxshares: -E2BIG");
	TAP_CHECK(t_shares("a,/a,ro", s, 0, &why) == -E2BIG, "maxshares 0 takes nothing");
	for (int i = 0; i < MNT_MAX_SHARES; i++)
		used += (size_t)snprintf(many + used, sizeof(many) - used, "%st%d,/m/%d,rw", i ? "," : "",
					 i, i);
	TAP_CHECK(t_shares(many, s, MNT_MAX_SHARES, &why) == MNT_MAX_SHARES, "MNT_MAX_SHARES shares fit");
	snprintf(many + used, sizeof(many) - used, ",one,/more,ro");
	TAP_CHECK(t_shares(many, s, MNT_MAX_SHARES, &why) < 0, "MNT_MAX_SHARES + 1 shares are refused");
	TAP_CHECK(t_shares(t_path_of_len(PATH_MAX - 1), s, MNT_MAX_SHARES, &why) == 1 &&
			  strlen(s[0].path) == PATH_MAX - 1,
		  "a PATH of PATH_MAX - 1 bytes is taken");
	TAP_CHECK(t_shares(t_path_of_len(PATH_MAX), s, MNT_MAX_SHARES, &why) == -EINVAL,
		  "a PATH of PATH_MAX bytes is refused");
}

static void t_roots(void)
{
	static const char *const bad[] = {
		"", "tag", "tag,ro,x", "tag,RW", "tag,%", "%,ro", "tag,ro,", "t%ag,ro", "tag,ro,rw,ro",
	};
	struct mnt_root r;
	const char *why;

	TAP_CHECK(t_root("rootfs,ro", &r, &why) == 0 && strcmp(r.tag, "rootfs") == 0 && r.read_only,
		  "a read-only root");
	TAP_CHECK(t_root("my%2Croot,rw", &r, &why) == 0 && strcmp(r.tag, "my,root") == 0 && !r.read_only,
		  "a writable root with an encoded TAG");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char what[96];
		int err = t_root(bad[i], &r, &why);

		snprintf(what, sizeof(what), "root value '%s' is refused with a reason", bad[i]);
		TAP_CHECK(err == -EINVAL && why != NULL && why[0] != '\0', what);
		if (why != NULL)
			printf("# %s: %s\n", bad[i], why);
	}
}

int main(void)
{
	t_good_shares();
	t_bad_shares();
	t_limits();
	t_roots();
	return tap_done();
}
