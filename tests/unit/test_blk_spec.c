/* test_blk_spec.c: a disk from a --disk spec (CLI parser, then the library's check) and the backing-file checks. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "devices/blk/blk.h"
#include "include/ringvm.h"
#include "tests/support/spec.h"
#include "devices/blk/blk_cli.h"
#include "tests/unit/tap.h"

static void test_parse(void)
{
	struct blk_config c;
	TAP_CHECK(spec_blk_config("disk.img", &c, NULL) == 0 && !strcmp(c.path, "disk.img") &&
			  !c.readonly && !c.direct && c.queues == 0 && c.id[0] == 0,
		  "plain path, defaults");
	TAP_CHECK(spec_blk_config("/a/b.img,readonly,queues=4,direct=on,id=disk-1", &c, NULL) == 0 &&
			  !strcmp(c.path, "/a/b.img") && c.readonly && c.queues == 4 && c.direct &&
			  !strcmp(c.id, "disk-1"),
		  "all options");
	TAP_CHECK(spec_blk_config("x,direct=off", &c, NULL) == 0 && !c.direct, "direct=off");
	TAP_CHECK(spec_blk_config("x,poll_us=50", &c, NULL) == 0 && c.poll_us == 50, "poll_us=50");
	TAP_CHECK(spec_blk_config("x,queues=16", &c, NULL) == 0 && c.queues == 16,
		  "queues=16 is the maximum");
	TAP_CHECK(spec_blk_config("x,id=12345678901234567890", &c, NULL) == 0 && strlen(c.id) == 20,
		  "id of 20 characters");

	struct {
		const char *spec;
		const char *why;
	} bad[] = {
		{ "", "empty spec" },
		{ ",readonly", "missing path" },
		{ "x,queues=0", "queues=0" },
		{ "x,queues=17", "queues=17" },
		{ "x,queues=", "queues= empty" },
		{ "x,queues=4x", "queues=4x" },
		{ "x,queues=99999999999999999999", "queues overflowing" },
		{ "x,direct=yes", "direct=yes" },
		{ "x,poll_us=1001", "poll_us above 1000" },
		{ "x,poll_us=", "poll_us empty" },
		{ "x,id=", "empty id" },
		{ "x,id=123456789012345678901", "id of 21 characters" },
		{ "x,id=a b", "id with a space" },
		{ "x,,readonly", "empty option" },
		{ "x,readonly,", "trailing comma" },
		{ "x,ro", "unknown option" },
		{ "x,readonlyy", "option with a suffix" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char what[96];
		snprintf(what, sizeof(what), "refused with a message: %s", bad[i].why);
		const char *why = NULL;
		TAP_CHECK(spec_blk_config(bad[i].spec, &c, &why) == -EINVAL && why && why[0], what);
	}
}

/* An embedder fills struct ringvm_disk itself: the library's check is the only one it meets. */
static void test_struct(void)
{
	struct blk_config c;
	const char *why;
	struct ringvm_disk ok = { .path = "x", .queues = 16, .poll_us = 1000, .id = "abc" };
	TAP_CHECK(blk_config_from(&ok, &c, &why) == 0 && c.queues == 16 && c.poll_us == 1000 &&
			  !strcmp(c.id, "abc") && !strcmp(c.path, "x"),
		  "struct: the largest values are copied");
	struct ringvm_disk bad[] = {
		{ .path = NULL },
		{ .path = "" },
		{ .path = "x", .queues = 17 },
		{ .path = "x", .poll_us = 1001 },
		{ .path = "x", .id = "" },
		{ .path = "x", .id = "a b" },
		{ .path = "x", .id = "123456789012345678901" },
		{ .path = "x", .id = "\x7f" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char what[64];
		snprintf(what, sizeof(what), "struct: bad disk %zu refused with a reason", i);
		why = NULL;
		TAP_CHECK(blk_config_from(&bad[i], &c, &why) == -EINVAL && why && why[0], what);
	}
	char *longpath = malloc(5000);
	memset(longpath, 'a', 4999);
	longpath[4999] = 0;
	struct ringvm_disk lp = { .path = longpath };
	TAP_CHECK(blk_config_from(&lp, &c, &why) == -EINVAL, "struct: a path longer than 4095 refused");
	free(longpath);
}

static void spec(const char *path, struct blk_config *c)
{
	TAP_CHECK(spec_blk_config(path, c, NULL) == 0, "path parses");
}

/* blk_open(c) as an unprivileged user: root may write a 0444 file, so drop to nobody in a child. */
static int unwritable_open(const char *dir, const struct blk_config *c)
{
	if (geteuid() != 0) {
		int err = blk_open(c);
		if (err >= 0)
			close(err);
		return err;
	}
	if (chmod(dir, 0755) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(255);
		int err = blk_open(c);
		_exit(err < 0 ? -err : 0);
	}
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -ECHILD;
	return -WEXITSTATUS(status);
}

static void test_open(void)
{
	char dir[] = "/tmp/ringvm-blkspec-XXXXXX";
	if (!mkdtemp(dir)) {
		TAP_CHECK(false, "mkdtemp");
		return;
	}
	char file[256], missing[256], ro[256];
	snprintf(file, sizeof(file), "%s/disk.img", dir);
	snprintf(missing, sizeof(missing), "%s/nope.img", dir);
	snprintf(ro, sizeof(ro), "%s/ro.img", dir);
	int fd = open(file, O_CREAT | O_RDWR, 0644);
	TAP_CHECK(fd >= 0 && ftruncate(fd, 1 << 20) == 0, "temp disk");
	close(fd);
	fd = open(ro, O_CREAT | O_RDWR, 0444);
	close(fd);

	struct blk_config c;
	spec(file, &c);
	fd = blk_open(&c);
	TAP_CHECK(fd >= 0, "a regular file opens");
	TAP_CHECK(fd >= 0 && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR,
		  "read-write without readonly");
	TAP_CHECK(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC), "close-on-exec");
	close(fd);
	spec(missing, &c);
	int err = blk_open(&c);
	TAP_CHECK(err == -ENOENT && strstr(blk_strerror(err), "no such"), "missing file: -ENOENT");
	spec(dir, &c);
	err = blk_open(&c);
	TAP_CHECK(err == -EISDIR && strstr(blk_strerror(err), "directory"), "directory: -EISDIR");
	spec("/dev/null", &c);
	TAP_CHECK(blk_open(&c) == -EINVAL, "character device: -EINVAL");

	spec(ro, &c);
	TAP_CHECK(unwritable_open(dir, &c) == -EROFS && strstr(blk_strerror(-EROFS), "readonly"),
		  "unwritable file without readonly: -EROFS with a hint");
	c.readonly = true;
	fd = blk_open(&c);
	TAP_CHECK(fd >= 0 && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY,
		  "unwritable file with readonly opens read-only");
	close(fd);

	unlink(file);
	unlink(ro);
	rmdir(dir);
}

/*
 * The busy-poll ceiling a disk asks for, over `ringvm serve --poll-us` (the fallback): a spec's
 * poll_us=0 is a choice that wins like any other, an absent poll_us= takes the fallback.
 */
static void test_poll_choice(void)
{
	static const struct {
		const char *spec;
		unsigned int want;
		const char *what;
	} cases[] = {
		{ "x", 50, "no poll_us=: --poll-us applies" },
		{ "x,poll_us=0", 0, "poll_us=0 overrides --poll-us (polling off)" },
		{ "x,poll_us=7", 7, "poll_us=7 overrides --poll-us" },
		{ "x,poll_us=1000", 1000, "poll_us=1000, the maximum, overrides --poll-us" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char spec[32];
		struct ringvm_disk d;
		const char *why = NULL;
		snprintf(spec, sizeof(spec), "%s", cases[i].spec);
		int ret = blk_cli_parse_disk(spec, &d, &why);
		TAP_CHECK(ret == 0 && blk_disk_poll_us(&d, 50) == cases[i].want, cases[i].what);
	}
	/* The typed disk on its own: zeroed is unset; poll_us_set makes 0 a choice; ringvm_run's
	   fallback (blk_config_from) is no polling. */
	struct ringvm_disk z = { .path = "x" }, off = { .path = "x", .poll_us_set = true };
	struct blk_config c;
	const char *why;
	TAP_CHECK(blk_disk_poll_us(&z, 50) == 50 && blk_disk_poll_us(&off, 50) == 0,
		  "typed disk: zeroed takes the fallback, poll_us_set with 0 does not");
	TAP_CHECK(blk_config_from(&z, &c, &why) == 0 && c.poll_us == 0, "ringvm_run: an unset disk does not poll");
}

int main(void)
{
	test_parse();
	test_struct();
	test_poll_choice();
	test_open();
	return tap_done();
}
