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
	"  \"verbose\": true,\n"
	"  \"env\": [\"A=1\", \"B=two words\"],\n"
	"  \"workdir\": \"/srv\",\n"
	"  \"user\": { \"uid\": 1000, \"gid\": 100 },\n"
	"  \"timeout\": 30,\n"
	"  \"stop_timeout\": 3,\n"
	"  \"tty\": \"off\",\n"
	"  \"gdb\": \"tcp:127.0.0.1:1234\",\n"
	"  \"gdb_wait\": true\n"
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
	const struct ringvm_launch *l = &c.launch;
	TAP_CHECK(l->nr_env == 2 && !strcmp(l->env[0], "A=1") && !strcmp(l->env[1], "B=two words") &&
			  !strcmp(l->workdir, "/srv") && l->set_user && l->uid == 1000 && l->gid == 100,
		  "env, workdir, user: the command's launch");
	TAP_CHECK(c.timeout_s == 30 && c.stop_timeout_ms == 3000 && c.console.tty == RINGVM_TTY_OFF &&
			  !strcmp(c.gdb, "tcp:127.0.0.1:1234") && c.gdb_wait,
		  "timeout, stop_timeout (seconds), tty, gdb, gdb_wait");
	TAP_CHECK(c.disks[1].poll_us_set && !c.disks[0].poll_us_set, "poll_us given is set, absent is not");

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

/* The run settings' other values: null, gid from uid, poll_us 0 and null, printed and read back. */
static void test_run_values(void)
{
	struct ringvm_config c;
	struct cli_config_file f;
	int ret = load("{ \"kernel\": \"k\", \"user\": { \"uid\": 7 }, \"workdir\": null, \"gdb\": null, \"tty\": \"on\",\n"
		       "  \"stop_timeout\": 0, \"timeout\": 0, \"env\": [],\n"
		       "  \"disks\": [ { \"path\": \"a\", \"poll_us\": 0 }, { \"path\": \"b\", \"poll_us\": null } ] }",
		       &c, &f);
	TAP_CHECK(ret == 0 && c.launch.set_user && c.launch.uid == 7 && c.launch.gid == 7 && !c.launch.workdir &&
			  !c.gdb && c.console.tty == RINGVM_TTY_ON && c.stop_timeout_ms == 0 && c.timeout_s == 0 &&
			  c.launch.nr_env == 0,
		  "user without gid takes the uid's; null workdir and gdb; stop_timeout 0");
	TAP_CHECK(ret == 0 && c.disks[0].poll_us_set && c.disks[0].poll_us == 0 && !c.disks[1].poll_us_set,
		  "poll_us 0 is a choice, null is unset");
	if (ret)
		printf("# %s\n", err);
	char *a = NULL;
	size_t alen;
	FILE *m = open_memstream(&a, &alen);
	int p = ret ? -1 : cli_config_print(&c, m);
	fclose(m);
	cli_config_free(&f);
	struct ringvm_config c2;
	int r2 = p == 0 && a ? load(a, &c2, &f) : -1;
	TAP_CHECK(r2 == 0 && c2.disks[0].poll_us_set && !c2.disks[1].poll_us_set && c2.launch.gid == 7 &&
			  strstr(a, "\"poll_us\": null") && strstr(a, "\"workdir\": null"),
		  "printed: poll_us 0 and null, user and null strings survive the round trip");
	if (r2)
		printf("# %s\n", err);
	free(a);
	cli_config_free(&f);
	ret = load("{}", &c, &f);
	m = open_memstream(&a, &alen);
	p = ret ? -1 : cli_config_print(&c, m);
	fclose(m);
	TAP_CHECK(p == 0 && strstr(a, "\"env\": [\n  ]") && strstr(a, "\"user\": null") && strstr(a, "\"timeout\": 0") &&
			  strstr(a, "\"stop_timeout\": 10") && strstr(a, "\"tty\": \"auto\"") &&
			  strstr(a, "\"gdb_wait\": false"),
		  "config --print shows the run settings' defaults");
	free(a);
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
	refused("{ \"env\": \"A=1\" }", ": env: expected an array", "env not an array");
	refused("{ \"env\": [\"A=1\", \"B\"] }", ": env[1]: 'B': want NAME=VALUE", "an env entry without =");
	refused("{ \"env\": [\"=x\"] }", ": env[0]: '=x': want NAME=VALUE", "an env entry without a name");
	refused("{ \"env\": [1] }", ": env[0]: expected a string", "an env entry that is a number");
	refused("{ \"workdir\": \"tmp\" }", ": workdir: 'tmp': the directory must be absolute", "a relative workdir");
	refused("{ \"workdir\": 1 }", ": workdir: expected a string", "a workdir that is a number");
	refused("{ \"user\": 1000 }", ": user: expected an object", "user as a number");
	refused("{ \"user\": { \"gid\": 1 } }", ": user: \"uid\" is required", "user without a uid");
	refused("{ \"user\": { \"uid\": 4294967295 } }", ": user.uid: expected an integer from 0 to 4294967294",
		"a uid of (uid_t)-1");
	refused("{ \"user\": { \"uid\": 1, \"name\": \"x\" } }", ": user.name: unknown key", "an unknown key in user");
	refused("{ \"timeout\": \"5s\" }", ": timeout: expected an integer", "a timeout that is a string");
	refused("{ \"timeout\": 10000001 }", ": timeout: expected an integer from 0 to 10000000", "a timeout too long");
	refused("{ \"stop_timeout\": -1 }", ": stop_timeout: expected an integer from 0 to 1000000",
		"a negative stop_timeout");
	refused("{ \"tty\": true }", ": tty: expected a string", "tty as a bool");
	refused("{ \"tty\": \"yes\" }", ": tty: 'yes' is not one of auto, on, off", "a bad tty value");
	refused("{ \"gdb\": 1234 }", ": gdb: expected a string", "gdb as a number");
	refused("{ \"gdb_wait\": \"yes\" }", ": gdb_wait: expected true or false", "gdb_wait as a string");
	refused("{ \"disks\": [ { \"path\": \"a\", \"poll_us\": \"0\" } ] }", ": disks[0].poll_us: expected an integer",
		"poll_us as a string");
	refused("{ \"stop-timeout\": 1 }", ": stop-timeout: unknown key", "the CLI's spelling is not a key");
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
	test_run_values();
	test_partial();
	test_errors();
	unlink(file);
	rmdir(dir);
	return tap_done();
}
