/* test_cli_parse.c: sizes and vCPU counts from the command line. */
#include <stdint.h>

#include "tests/unit/tap.h"
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

int main(void)
{
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
