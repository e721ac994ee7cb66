/* test_cli_parse.c: sizes, vCPU counts and the --disk/--share/--root/--fs-limits specs from the command line. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/tap.h"
#include "devices/blk/blk_cli.h"
#include "devices/fs/fs_cli.h"
#include "vmm/cli_parse.h"

static int size_is(const char *s, uint64_t want)
{
	uint64_t v = 0;
	const char *err = NULL;
	return cli_parse_size(s, &v, &err) == 0 && v == want;
}

static int size_bad(const char *s)
{
	uint64_t v = 0;
	const char *err = NULL;
	return cli_parse_size(s, &v, &err) < 0 && err && *err;
}

static void test_specs(void)
{
	char spec[256];
	const char *err = NULL;
	struct ringvm_share sh;
	snprintf(spec, sizeof(spec), "/srv/data:/data,readonly,cache=never,queues=4,tag=t1,dev,suid,xattr=all,allow_direct_io");
	TAP_CHECK(fs_cli_parse_share(spec, &sh, &err) == 0 && !strcmp(sh.host_dir, "/srv/data") &&
			  !strcmp(sh.guest_dir, "/data") && sh.readonly && sh.cache == RINGVM_CACHE_NEVER &&
			  sh.queues == 4 && !strcmp(sh.tag, "t1") && sh.dev && sh.suid &&
			  sh.xattr == RINGVM_XATTR_ALL && sh.allow_direct_io,
		  "--share: every option lands in its field");
	snprintf(spec, sizeof(spec), "/a:/b");
	TAP_CHECK(fs_cli_parse_share(spec, &sh, &err) == 0 && !sh.tag && sh.queues == 0 && !sh.readonly &&
			  sh.cache == RINGVM_CACHE_AUTO && sh.xattr == RINGVM_XATTR_USER,
		  "--share: defaults are the zeroed struct's");
	static const char *const bad_shares[] = { "/a", ":/b", "/a:b", "/a:/b,cache=sometimes",
						  "/a:/b,queues=0", "/a:/b,queues=17", "/a:/b,xattr=",
						  "/a:/b,devs", "/a:/b,", "/a:/b,xattr=trusted" };
	bool all = true;
	for (size_t i = 0; i < sizeof(bad_shares) / sizeof(bad_shares[0]); i++) {
		snprintf(spec, sizeof(spec), "%s", bad_shares[i]);
		err = NULL;
		if (fs_cli_parse_share(spec, &sh, &err) != -EINVAL || !err) {
			printf("# accepted: %s\n", bad_shares[i]);
			all = false;
		}
	}
	TAP_CHECK(all, "--share: malformed specs refused with a reason");

	struct ringvm_root r;
	snprintf(spec, sizeof(spec), "/srv,rw");
	TAP_CHECK(fs_cli_parse_root(spec, &r, &err) == 0 && !strcmp(r.host_dir, "/srv") && r.writable,
		  "--root HOSTDIR,rw");
	snprintf(spec, sizeof(spec), "/");
	TAP_CHECK(fs_cli_parse_root(spec, &r, &err) == 0 && !r.writable, "--root read-only by default");
	snprintf(spec, sizeof(spec), "/srv,xx");
	TAP_CHECK(fs_cli_parse_root(spec, &r, &err) == -EINVAL && err, "--root bad option refused");
	snprintf(spec, sizeof(spec), ",rw");
	TAP_CHECK(fs_cli_parse_root(spec, &r, &err) == -EINVAL && err, "--root without a directory refused");

	struct ringvm_disk d;
	snprintf(spec, sizeof(spec), "/a/b.img,readonly,queues=4,direct=on,id=disk-1,poll_us=7");
	TAP_CHECK(blk_cli_parse_disk(spec, &d, &err) == 0 && !strcmp(d.path, "/a/b.img") && d.readonly &&
			  d.queues == 4 && d.direct && !strcmp(d.id, "disk-1") && d.poll_us == 7,
		  "--disk: every option lands in its field");

	struct ringvm_fs_limits l;
	TAP_CHECK(fs_cli_parse_limits("fds=5000,dir_buffers=64", &l, &err) == 0 && l.fds == 5000 &&
			  l.dir_buffers == 64,
		  "--fs-limits fds=5000,dir_buffers=64");
	TAP_CHECK(fs_cli_parse_limits("dir_buffers=1", &l, &err) == 0 && l.fds == 0 && l.dir_buffers == 1,
		  "--fs-limits dir_buffers=1 alone");
	TAP_CHECK(fs_cli_parse_limits("fds=1073741824", &l, &err) == 0 && l.fds == 1ULL << 30,
		  "--fs-limits 2^30 is the largest");
	TAP_CHECK(fs_cli_parse_limits("fds=0", &l, &err) == -EINVAL && err &&
			  fs_cli_parse_limits("fds=-1", &l, &err) == -EINVAL &&
			  fs_cli_parse_limits("fds=1x", &l, &err) == -EINVAL &&
			  fs_cli_parse_limits("fds=1073741825", &l, &err) == -EINVAL &&
			  fs_cli_parse_limits("files=3", &l, &err) == -EINVAL &&
			  fs_cli_parse_limits("", &l, &err) == -EINVAL,
		  "bad --fs-limits values refused");
}

int main(void)
{
	test_specs();
	TAP_CHECK(size_is("65536", 65536), "plain bytes");
	TAP_CHECK(size_is("512M", 512ULL << 20) && size_is("512m", 512ULL << 20), "M suffix, either case");
	TAP_CHECK(size_is("2G", 2ULL << 30) && size_is("4k", 4096) && size_is("1T", 1ULL << 40), "K, G, T");
	TAP_CHECK(size_is("1GiB", 1ULL << 30) && size_is("1GB", 1ULL << 30), "GiB and GB spellings");
	TAP_CHECK(size_bad("") && size_bad("M") && size_bad("-1G") && size_bad(" 1G"), "no number");
	TAP_CHECK(size_bad("12Q") && size_bad("1G5") && size_bad("1Gx"), "bad suffix or trailing text");
	TAP_CHECK(size_bad("0") && size_bad("0M"), "zero");
	TAP_CHECK(size_bad("99999999999999999999") && size_bad("17179869184T"), "overflow");
	unsigned int c;
	const char *err;
	unsigned int n = 0;
	TAP_CHECK(cli_parse_count("1", 16, &n) == 0 && n == 1 && cli_parse_count("16", 16, &n) == 0 && n == 16 &&
			  cli_parse_count("+3", 16, &n) == 0 && n == 3,
		  "serve's counts: 1..max, strtoul's sign as ever");
	TAP_CHECK(cli_parse_count("0", 16, &n) < 0 && cli_parse_count("17", 16, &n) < 0 &&
			  cli_parse_count("-1", 16, &n) < 0 && cli_parse_count("", 16, &n) < 0 &&
			  cli_parse_count("2x", 16, &n) < 0 && cli_parse_count("99999999999999999999", 16, &n) < 0,
		  "... 0, past max, negative, empty, trailing junk and overflow refused");
	TAP_CHECK(cli_parse_cpus("1", &c, &err) == 0 && c == 1 && cli_parse_cpus("255", &c, &err) == 0 &&
			  c == 255,
		  "cpus 1 and 255");
	TAP_CHECK(cli_parse_cpus("0", &c, &err) < 0 && cli_parse_cpus("256", &c, &err) < 0 &&
			  cli_parse_cpus("2x", &c, &err) < 0 && cli_parse_cpus("", &c, &err) < 0 &&
			  cli_parse_cpus("-1", &c, &err) < 0,
		  "cpus out of range or malformed");
	uint32_t id = 7;
	TAP_CHECK(cli_parse_id("0", &id, &err) == 0 && id == 0 &&
			  cli_parse_id("4294967294", &id, &err) == 0 && id == 4294967294u,
		  "ids 0 and 2^32-2");
	TAP_CHECK(cli_parse_id("4294967295", &id, &err) < 0 && cli_parse_id("-1", &id, &err) < 0 &&
			  cli_parse_id("", &id, &err) < 0 && cli_parse_id("65534x", &id, &err) < 0 &&
			  cli_parse_id("nobody", &id, &err) < 0 &&
			  cli_parse_id("99999999999999999999", &id, &err) < 0,
		  "ids: -1 (the kernel's 'unchanged'), names, trailing text, overflow refused");
	uint32_t uid = 7, gid = 7;
	TAP_CHECK(cli_parse_user("1000", &uid, &gid, &err) == 0 && uid == 1000 && gid == 1000,
		  "--user 1000: gid defaults to the uid");
	TAP_CHECK(cli_parse_user("0:5", &uid, &gid, &err) == 0 && uid == 0 && gid == 5, "--user 0:5");
	TAP_CHECK(cli_parse_user("nobody", &uid, &gid, &err) < 0 && cli_parse_user("1:", &uid, &gid, &err) < 0 &&
			  cli_parse_user(":1", &uid, &gid, &err) < 0 && cli_parse_user("1:2:3", &uid, &gid, &err) < 0 &&
			  cli_parse_user("-1", &uid, &gid, &err) < 0 && cli_parse_user("4294967295", &uid, &gid, &err) < 0 &&
			  cli_parse_user("", &uid, &gid, &err) < 0 && cli_parse_user("1 ", &uid, &gid, &err) < 0,
		  "--user: names, empty parts, negative, (uid_t)-1, trailing text refused");
	unsigned int sec;
	TAP_CHECK(cli_parse_seconds("1", &sec, &err) == 0 && sec == 1 &&
			  cli_parse_seconds("10000000", &sec, &err) == 0 && sec == 10000000,
		  "--timeout 1 and 10000000");
	TAP_CHECK(cli_parse_seconds("0", &sec, &err) < 0 && cli_parse_seconds("1.5", &sec, &err) < 0 &&
			  cli_parse_seconds("10000001", &sec, &err) < 0 && cli_parse_seconds("5s", &sec, &err) < 0,
		  "--timeout 0, fractions, too large, suffixes refused");
	unsigned int ms = 12345;
	TAP_CHECK(cli_parse_stop_timeout("0", &ms, &err) == 0 && ms == 0 &&
			  cli_parse_stop_timeout("10", &ms, &err) == 0 && ms == 10000 &&
			  cli_parse_stop_timeout("1000000", &ms, &err) == 0 && ms == 1000000000u,
		  "--stop-timeout 0, 10, 1000000: milliseconds");
	ms = 777;
	err = NULL;
	TAP_CHECK(cli_parse_stop_timeout("1000001", &ms, &err) < 0 && cli_parse_stop_timeout("-1", &ms, &err) < 0 &&
			  cli_parse_stop_timeout("2.5", &ms, &err) < 0 && cli_parse_stop_timeout("", &ms, &err) < 0 &&
			  cli_parse_stop_timeout("10s", &ms, &err) < 0 && cli_parse_stop_timeout(NULL, &ms, &err) < 0 &&
			  cli_parse_stop_timeout("99999999999999999999", &ms, &err) < 0 && ms == 777 && err,
		  "--stop-timeout: too large, negative, fractions, empty, suffixes, overflow refused, value untouched");
	return tap_done();
}
