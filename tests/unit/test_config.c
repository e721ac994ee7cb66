/* test_config.c: ringvm_config_check(), the library's one gate for a typed configuration: each rule refuses. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "include/ringvm.h"
#include "tests/unit/tap.h"

static char err[RINGVM_ERR_MAX];

static void base(struct ringvm_config *c)
{
	ringvm_config_init(c);
	c->kernel = "vmlinuz";
}

/* cfg is refused with ret and a reason containing want. */
static void refused(const struct ringvm_config *c, int ret, const char *want, const char *what)
{
	err[0] = 0;
	int got = ringvm_config_check(c, err, sizeof(err));
	TAP_CHECK(got == ret && strstr(err, want) && !strchr(err, '\n'), what);
	if (got != ret || !strstr(err, want))
		printf("# got %d: %s\n", got, err);
}

int main(void)
{
	struct ringvm_config c;
	ringvm_config_init(&c);
	TAP_CHECK(c.cpus == 1 && c.memory == 512ULL << 20 && c.console.stdio[0] == 0 &&
			  c.console.stdio[1] == 1 && c.console.stdio[2] == 2 && c.console.tty == RINGVM_TTY_AUTO && c.seccomp && c.drop_privileges && !c.handle_signals &&
			  c.stop_timeout_ms == RINGVM_STOP_TIMEOUT_MS && RINGVM_STOP_TIMEOUT_MS == 10000 &&
			  !c.argc && !c.nr_disks && !c.nr_shares && !c.root.host_dir,
		  "ringvm_config_init: the documented defaults");
	refused(&c, -EINVAL, "no kernel", "no kernel");
	base(&c);
	TAP_CHECK(ringvm_config_check(&c, err, sizeof(err)) == 0, "defaults + a kernel pass");

	base(&c);
	c.cpus = 0;
	refused(&c, -EINVAL, "cpus", "0 cpus");
	c.cpus = 256;
	refused(&c, -EINVAL, "cpus", "256 cpus");
	base(&c);
	c.memory = 32ULL << 20;
	refused(&c, -EINVAL, "memory", "32 MiB");
	c.memory = (64ULL << 20) + 1;
	refused(&c, -EINVAL, "memory", "memory not a multiple of 4K");
	c.memory = (1ULL << 40) + 4096;
	refused(&c, -EINVAL, "memory", "memory above 1T");

	base(&c);
	c.argc = 2;
	refused(&c, -EINVAL, "argv", "argc without argv");
	const char *argv[] = { "true", NULL };
	c.argv = argv;
	refused(&c, -EINVAL, "argv[1]", "a NULL argument");

	base(&c);
	c.nr_disks = 1;
	refused(&c, -EINVAL, "NULL array", "nr_disks with no array");

	struct ringvm_disk disks[RINGVM_MAX_DEVICES + 1];
	memset(disks, 0, sizeof(disks));
	for (unsigned int i = 0; i <= RINGVM_MAX_DEVICES; i++)
		disks[i].path = "d.img";
	base(&c);
	c.disks = disks;
	c.nr_disks = RINGVM_MAX_DEVICES;
	TAP_CHECK(ringvm_config_check(&c, err, sizeof(err)) == 0, "RINGVM_MAX_DEVICES disks pass");
	c.nr_disks = RINGVM_MAX_DEVICES + 1;
	refused(&c, -E2BIG, "at most 16 devices", "one disk too many");
	c.nr_disks = RINGVM_MAX_DEVICES;
	c.root.host_dir = "/";
	refused(&c, -E2BIG, "at most 16 devices", "the root counts as a device");
	c.root.host_dir = NULL;
	c.nr_disks = 0xffffffffu;
	refused(&c, -E2BIG, "devices", "a huge count does not wrap");

	base(&c);
	struct ringvm_disk bad_disk = { .path = "x.img", .queues = 99 };
	c.disks = &bad_disk;
	c.nr_disks = 1;
	refused(&c, -EINVAL, "disk x.img: queues", "a disk's own rule, named with its path");

	struct ringvm_share sh[2];
	memset(sh, 0, sizeof(sh));
	sh[0] = (struct ringvm_share){ .host_dir = "/a", .guest_dir = "/data" };
	sh[1] = (struct ringvm_share){ .host_dir = "/b", .guest_dir = "/data" };
	base(&c);
	c.shares = sh;
	c.nr_shares = 1;
	TAP_CHECK(ringvm_config_check(&c, err, sizeof(err)) == 0, "one share passes");
	c.nr_shares = 2;
	sh[1].tag = "other";
	refused(&c, -EINVAL, "already a mount point", "two shares on one mount point");
	sh[1] = (struct ringvm_share){ .host_dir = "/b", .guest_dir = "/x/data" };
	sh[0].guest_dir = "/x_data";
	refused(&c, -EINVAL, "tag 'x_data'", "two shares whose default tags collide");
	sh[0] = (struct ringvm_share){ .host_dir = "/a", .guest_dir = "/srv", .tag = "root" };
	c.nr_shares = 1;
	c.root.host_dir = "/";
	refused(&c, -EINVAL, "tag 'root'", "a share tagged root beside the root");
	sh[0] = (struct ringvm_share){ .host_dir = "/a", .guest_dir = "/" };
	sh[0].tag = "slash";
	refused(&c, -EINVAL, "already a mount point", "a share on / beside the root");
	c.root.host_dir = NULL;
	sh[0] = (struct ringvm_share){ .host_dir = "/a", .guest_dir = "rel" };
	refused(&c, -EINVAL, "absolute", "a relative guest directory");
	sh[0] = (struct ringvm_share){ .host_dir = "/a", .guest_dir = "/m", .tag = "a:b" };
	refused(&c, -EINVAL, "tag", "a tag with ':'");
	sh[0] = (struct ringvm_share){ .host_dir = "/a", .guest_dir = "/m",
				       .cache = (enum ringvm_cache)7 };
	refused(&c, -EINVAL, "cache", "an out-of-range cache mode");
	sh[0] = (struct ringvm_share){ .host_dir = "/a", .guest_dir = "/m",
				       .xattr = (enum ringvm_xattr)9 };
	refused(&c, -EINVAL, "xattr", "an out-of-range xattr policy");
	sh[0] = (struct ringvm_share){ .guest_dir = "/m" };
	refused(&c, -EINVAL, "host directory", "a share without a host directory");

	base(&c);
	c.fs_limits.fds = (1ULL << 30) + 1;
	refused(&c, -EINVAL, "fs_limits", "fs_limits above 2^30");
	base(&c);
	c.console.stdio[1] = -2;
	refused(&c, -EINVAL, "console", "a console fd below -1");

	/* The reason is cut to the buffer, NUL-terminated, and a NULL buffer is fine. */
	base(&c);
	c.cpus = 0;
	char small[8];
	memset(small, 'X', sizeof(small));
	TAP_CHECK(ringvm_config_check(&c, small, sizeof(small)) == -EINVAL && small[7] == 0 &&
			  strlen(small) == 7,
		  "a short err buffer gets a cut, terminated line");
	TAP_CHECK(ringvm_config_check(&c, NULL, 0) == -EINVAL, "err may be NULL with errlen 0");
	TAP_CHECK(!strcmp(ringvm_version(), RINGVM_VERSION_STRING), "ringvm_version() matches the header");
	return tap_done();
}
