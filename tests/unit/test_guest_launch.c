/* test_launch.c: the command's environment, directory and user as PID 1 reads them from the command line. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "guest/launch.h"
#include "tests/unit/tap.h"

static struct launch l;

/* envp as one string "A|B|C", for comparisons. */
static const char *env_str(void)
{
	static char buf[4096];

	buf[0] = '\0';
	for (int i = 0; l.envp[i]; i++) {
		if (i)
			strcat(buf, "|");
		strcat(buf, l.envp[i]);
	}
	return buf;
}

int main(void)
{
	const char *why = NULL;
	const char *def = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin|HOME=/root|TERM=linux";

	TAP_CHECK(launch_parse(&l, "console=ttyS0 ringvm.cmd=true", &why) == 0 &&
			  strcmp(env_str(), def) == 0 && strcmp(l.cwd, "/") == 0 && !l.set_user,
		  "nothing asked: the default environment, /, no user change");
	TAP_CHECK(launch_parse(&l, "ringvm.env=FOO=bar,TERM=dumb,EMPTY=,X=a%2Cb%20c=d ringvm.cwd=/tmp/a%20b "
				   "ringvm.user=1000:1001",
			       &why) == 0,
		  "env, cwd and user together");
	TAP_CHECK(strcmp(env_str(), "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin|"
				    "HOME=/|TERM=dumb|FOO=bar|EMPTY=|X=a,b c=d") == 0,
		  "TERM is replaced in place, others added in order; HOME=/ for a non-root user; values decoded");
	TAP_CHECK(strcmp(l.cwd, "/tmp/a b") == 0, "the directory is decoded");
	TAP_CHECK(l.set_user && l.uid == 1000 && l.gid == 1001, "uid 1000, gid 1001");
	TAP_CHECK(launch_parse(&l, "ringvm.user=0:0 ringvm.env=HOME=/h", &why) == 0 &&
			  strstr(env_str(), "|HOME=/h|") && !strstr(env_str(), "HOME=/root"),
		  "HOME=... replaces the default HOME");

	static const char *const bad[] = {
		"ringvm.env=NOEQUALS", "ringvm.env==x", "ringvm.env=A=1,%G1", "ringvm.cwd=relative",
		"ringvm.cwd=/a,/b", "ringvm.user=1000", "ringvm.user=a:b", "ringvm.user=1:-1",
		"ringvm.user=4294967295:0", "ringvm.user=1:2:3", "ringvm.user=99999999999999999999:1",
	};
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char what[128];

		why = NULL;
		snprintf(what, sizeof(what), "%s is refused with a reason", bad[i]);
		TAP_CHECK(launch_parse(&l, bad[i], &why) == -EINVAL && why != NULL, what);
	}
	/* More variables than fit: refused, never an overflow. */
	static char many[8192];
	strcpy(many, "ringvm.env=");
	for (int i = 0; i < 600 && strlen(many) < sizeof(many) - 8; i++)
		strcat(many, i ? ",A=1" : "A=1");
	TAP_CHECK(launch_parse(&l, many, &why) == -EINVAL, "600 variables are refused (at most 512)");
	return tap_done();
}
