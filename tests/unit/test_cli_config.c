/* test_cli_config.c: the JSON configuration file: every field read, printed back the same, each bad key refused by its path. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/tap.h"
#include "vmm/cli_config.h"

static char dir[] = "/tmp/ringvm-clicfg-XXXXXX";
static char file[128];
static char err[RINGVM_ERR_MAX];

static void put(const char *text)
{
	FILE *f = fopen(file, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* Load text over fresh defaults. */
static int load(const char *text, struct ringvm_config *cfg, struct cli_config_file *f)
{
	put(text);
	ringvm_config_init(cfg);
	memset(f, 0, sizeof(*f));
	err[0] = 0;
	return cli_config_load(file, cfg, f, err, sizeof(err));
}

static const char example[] =
	"{\n"
	"  \"kernel\": \"/boot/vmlinuz\",\n"
	"  \"initrd\": null,\n"
	"  \"cmdline\": \"quiet\",\n"
	"  \"cpus\": 2,\n"
	"  \"memory\": \"1G\",\n"
	"  \"command\": [\"sh\", \"-c\", \"exit 7\"],\n"
	"  \"disks\": [ { \"path\": \"/img/a.img\" },\n"
	"             { \"path\": \"/img/b.img\", \"readonly\": true, \"direct\": true, \"queues\": 4,\n"
	"               \"id\": \"disk-b\", \"poll_us\": 50 } ],\n"
	"  \"shares\": [ { \"host_dir\": \"/srv\", \"guest_dir\": \"/srv\", \"tag\": \"srv\", \"readonly\": true,\n"
	"                \"cache\": \"never\", \"queues\": 2, \"dev\": true, \"suid\": true,\n"
	"                \"xattr\": \"security\", \"allow_direct_io\": true } ],\n"
	"  \"root\": { \"host_dir\": \"/\", \"writable\": true },\n"
	"  \"fs_limits\": { \"fds\": 5000, \"dir_buffers\": 64 },\n"
	"  \"verbose\": true\n"
	"}\n";

static void test_example(void)
{
	struct ringvm_config c;
	struct cli_config_file f;
	int ret = load(example, &c, &f);
	TAP_CHECK(ret == 0, "the README's kind of example loads");
	if (ret) {
		printf("# %s\n", err);
		return;
	}
	TAP_CHECK(!strcmp(c.kernel, "/boot/vmlinuz") && !c.initrd && f.initrd_set && !strcmp(c.cmdline, "quiet") &&
			  c.cpus == 2 && c.memory == 1ULL << 30 && c.verbose,
		  "scalars: kernel, initrd null, cmdline, cpus, memory \"1G\", verbose");
	TAP_CHECK(c.argc == 3 && !strcmp(c.argv[0], "sh") && !strcmp(c.argv[2], "exit 7"), "command");
	TAP_CHECK(c.nr_disks == 2 && !strcmp(c.disks[0].path, "/img/a.img") && !c.disks[0].readonly &&
			  c.disks[0].queues == 0 && c.disks[1].readonly && c.disks[1].direct &&
			  c.disks[1].queues == 4 && !strcmp(c.disks[1].id, "disk-b") && c.disks[1].poll_us == 50,
		  "disks: defaults for absent keys, every field when given");
	const struct ringvm_share *s = &c.shares[0];
	TAP_CHECK(c.nr_shares == 1 && !strcmp(s->host_dir, "/srv") && !strcmp(s->guest_dir, "/srv") &&
			  !strcmp(s->tag, "srv") && s->readonly && s->cache == RINGVM_CACHE_NEVER && s->queues == 2 &&
			  s->dev && s->suid && s->xattr == RINGVM_XATTR_SECURITY && s->allow_direct_io,
		  "shares: every field");
	TAP_CHECK(!strcmp(c.root.host_dir, "/") && c.root.writable && c.fs_limits.fds == 5000 &&
			  c.fs_limits.dir_buffers == 64,
		  "root and fs_limits");

	/* Printed, loaded again, printed again: the same text. */
	char *a = NULL, *b = NULL;
	size_t alen, blen;
	FILE *m = open_memstream(&a, &alen);
	int p1 = cli_config_print(&c, m);
	fclose(m);
	cli_config_free(&f);
	struct ringvm_config c2;
	int r2 = a ? load(a, &c2, &f) : -ENOMEM;
	m = open_memstream(&b, &blen);
	int p2 = r2 ? -1 : cli_config_print(&c2, m);
	fclose(m);
	TAP_CHECK(p1 == 0 && r2 == 0 && p2 == 0 && a && b && !strcmp(a, b) && strstr(a, "\"memory\": \"1G\""),
		  "config --print's output loads back to the same config");
	if (r2)
		printf("# %s\n", err);
	free(a);
	free(b);
	cli_config_free(&f);
}

static void test_partial(void)
{
	struct ringvm_config c;
	struct cli_config_file f;
	int ret = load("{ \"cpus\": 3, \"memory\": 268435456 }", &c, &f);
	TAP_CHECK(ret == 0 && c.cpus == 3 && c.memory == 256ULL << 20 && !c.kernel && !f.initrd_set &&
			  c.console.stdio[1] == 1 && c.seccomp && c.nr_disks == 0,
		  "absent keys keep what the config had; memory as a number of bytes");
	cli_config_free(&f);
	ret = load("{}", &c, &f);
	TAP_CHECK(ret == 0 && c.cpus == 1, "an empty object is the defaults");
	cli_config_free(&f);
}

/* text is refused, and the line names want (the key's path or the line). */
static void refused(const char *text, const char *want, const char *what)
{
	struct ringvm_config c;
	struct cli_config_file f;
	int ret = load(text, &c, &f);
	bool ok = ret < 0 && strstr(err, want) && strstr(err, file) && !strchr(err, '\n');
	TAP_CHECK(ok, what);
	if (!ok)
		printf("# got %d: %s\n", ret, err);
	cli_config_free(&f);
}

static void test_errors(void)
{
	refused("{ \"kernal\": \"x\" }", ": kernal: unknown key", "an unknown top-level key, by name");
	refused("{ \"disks\": [ { \"path\": \"a\" }, { \"path\": \"b\", \"queues\": \"4\" } ] }",
		": disks[1].queues: expected an integer", "a wrong type inside a list, by its path");
	refused("{ \"disks\": [ { \"path\": \"a\", \"ro\": true } ] }", ": disks[0].ro: unknown key",
		"an unknown key in a disk");
	refused("{ \"disks\": [ { \"readonly\": true } ] }", ": disks[0]: \"path\" is required", "a disk without a path");
	refused("{ \"disks\": { \"path\": \"a\" } }", ": disks: expected an array", "disks not an array");
	refused("{ \"disks\": [ 1 ] }", ": disks[0]: expected an object", "a disk that is not an object");
	char many[1024] = "{ \"disks\": [ ";
	for (int i = 0; i <= RINGVM_MAX_DEVICES; i++)
		strcat(many, i ? ", { \"path\": \"a\" }" : "{ \"path\": \"a\" }");
	strcat(many, " ] }");
	refused(many, ": disks: at most 16", "more disks than devices");
	refused("{ \"shares\": [ { \"host_dir\": \"/a\", \"guest_dir\": \"/b\", \"cache\": \"sometimes\" } ] }",
		": shares[0].cache: 'sometimes' is not one of auto, always, never", "a bad enum value, with the choices");
	refused("{ \"shares\": [ { \"host_dir\": \"/a\", \"guest_dir\": \"/b\", \"xattr\": 1 } ] }",
		": shares[0].xattr: expected a string", "an enum that is not a string");
	refused("{ \"shares\": [ { \"host_dir\": \"/a\" } ] }", ": shares[0]: \"host_dir\" and \"guest_dir\" are required",
		"a share without its guest directory");
	refused("{ \"root\": { \"host_dir\": \"/\", \"writable\": \"yes\" } }", ": root.writable: expected true or false",
		"a bool that is a string");
	refused("{ \"root\": \"/\" }", ": root: expected an object", "root not an object");
	refused("{ \"fs_limits\": { \"fds\": -1 } }", ": fs_limits.fds: expected an integer from 0", "a negative limit");
	refused("{ \"fs_limits\": { \"files\": 1 } }", ": fs_limits.files: unknown key", "an unknown limit");
	refused("{ \"cpus\": 1.5 }", ": cpus: expected an integer", "a fractional cpu count");
	refused("{ \"cpus\": 4294967296 }", ": cpus: expected an integer from 0 to 4294967295", "a cpu count past 32 bits");
	refused("{ \"memory\": \"12Q\" }", ": memory: 12Q: unknown suffix", "a memory size with a bad suffix");
	refused("{ \"memory\": true }", ": memory: expected a size", "memory neither a size nor a number");
	refused("{ \"command\": \"uname -a\" }", ": command: expected an array of strings", "a command that is a string");
	refused("{ \"command\": [\"sh\", 7] }", ": command[1]: expected a string", "a command argument that is a number");
	refused("{ \"kernel\": \"a\\u0000b\" }", ": kernel: a string with a NUL", "a string with a NUL");
	refused("{ \"verbose\": null }", ": verbose: expected true or false", "null where a bool goes");
	refused("[ 1, 2 ]", ": (top level): expected an object", "a top level that is not an object");
	refused("{\n  \"cpus\": 2,\n  \"memory\": \n}\n", ": line 4:", "a syntax error names its line");
	refused("", ": line 1:", "an empty file");
	refused("{ \"cpus\": 2 } trailing", ": line 1:", "text after the object");

	char *big = malloc((1 << 20) + 16);
	if (big) {
		memset(big, ' ', (1 << 20) + 15);
		big[0] = '{';
		big[(1 << 20) + 14] = '}';
		big[(1 << 20) + 15] = 0;
		refused(big, "larger than 1 MiB", "a file over 1 MiB");
		free(big);
	}
	struct ringvm_config c;
	struct cli_config_file f = { 0 };
	ringvm_config_init(&c);
	TAP_CHECK(cli_config_load("/nonexistent/vm.json", &c, &f, err, sizeof(err)) == -ENOENT &&
			  strstr(err, "/nonexistent/vm.json: No such file"),
		  "a missing file");
	cli_config_free(&f);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		TAP_CHECK(false, "mkdtemp");
		return tap_done();
	}
	snprintf(file, sizeof(file), "%s/vm.json", dir);
	test_example();
	test_partial();
	test_errors();
	unlink(file);
	rmdir(dir);
	return tap_done();
}
