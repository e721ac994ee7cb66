/* conform_names.c: directory entries: link, unlink, rename and renameat2, mkdir/rmdir, EXDEV. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/posix/conform.h"

/* The sorted entries of a directory with their d_type: "a:reg b:dir". */
static void cf_list(const char *name, const char *dir)
{
	static const char *const types[] = { [DT_REG] = "reg", [DT_DIR] = "dir", [DT_LNK] = "lnk",
					     [DT_FIFO] = "fifo", [DT_SOCK] = "sock", [DT_CHR] = "chr",
					     [DT_BLK] = "blk", [DT_UNKNOWN] = "unknown" };
	struct dirent **ents;
	char out[1024];
	size_t o = 0;
	int n, i;

	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0) {
		cf_ret(name, -1, NULL);
		return;
	}
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		unsigned char t = ents[i]->d_type;
		const char *tn = t < sizeof(types) / sizeof(types[0]) && types[t] ? types[t] : "?";

		if (o < sizeof(out))
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%s:%s", i ? " " : "",
					      ents[i]->d_name, tn);
		free(ents[i]);
	}
	free(ents);
	cf_val(name, "%s", out);
}

static void cf_names_link(void)
{
	cf_mkfile("f", 0644, "data");
	cf_setup("mkdir", mkdir("d", 0755));
	CFS("link", link("f", "f2"), "f");
	cf_val("link-both-names", "%s / %s", cf_desc("f"), cf_desc("f2"));
	CF("link-existing-target", link("f", "f2"));
	CF("link-missing-source", link("missing", "x"));
	CF("link-dir", link("d", "d2"));
	CF("link-into-missing-dir", link("f", "nodir/x"));
	CF("link-through-file", link("f", "f/x"));
	cf_setup("symlink", symlink("f", "sl"));
	CFS("linkat-symlink-itself", linkat(AT_FDCWD, "sl", AT_FDCWD, "sl-hard", 0), "sl-hard");
	CFS("linkat-follow", linkat(AT_FDCWD, "sl", AT_FDCWD, "sl-follow", AT_SYMLINK_FOLLOW), "sl-follow");
	CFS("unlink-one-name", unlink("f2"), "f");
	CF("unlink-missing", unlink("f2"));
	CF("unlink-dir", unlink("d"));
	CF("unlink-trailing-slash-file", unlink("f/"));
	CF("unlink-trailing-slash-dir", unlink("d/"));
	CFS("unlink-symlink-not-target", unlink("sl"), "f");
	CF("unlink-empty-name", unlink(""));
	cf_setup("mkfifo", mkfifo("ff", 0644));
	CF("unlink-fifo", unlink("ff"));
	cf_list("list", ".");
	/* What a change of names does to the times of the directory and of the inode. */
	cf_age(".");
	cf_mkfile("t1", 0644, "t");
	cf_val("create-dir-mtime", "changed: %s", cf_yn(cf_mtime(".") != 1000000000LL * 1000000000LL));
	cf_age(".");
	cf_setup("unlink", unlink("t1"));
	cf_val("unlink-dir-mtime", "changed: %s", cf_yn(cf_mtime(".") != 1000000000LL * 1000000000LL));
	cf_mkfile("t2", 0644, "t");
	{
		long long before = cf_ctime("t2");

		cf_tick();
		cf_setup("link", link("t2", "t3"));
		cf_val("link-ctime", "changed: %s", cf_yn(cf_ctime("t2") != before));
		before = cf_ctime("t2");
		cf_tick();
		cf_setup("unlink", unlink("t3"));
		cf_val("unlink-other-name-ctime", "changed: %s", cf_yn(cf_ctime("t2") != before));
	}
	/* The inode a rename replaces keeps its other name, one link less. */
	cf_mkfile("victim", 0644, "v");
	cf_setup("link", link("victim", "victim2"));
	cf_mkfile("mover", 0644, "m");
	CFS("rename-over-hard-linked", rename("mover", "victim"), "victim2");
	CFS("unlink-hard-linked", unlink("f"), "sl-follow");
}

static void cf_names_dirs(void)
{
	CFS("mkdir", mkdir("m", 0777), "m");
	CFS("mkdir-sticky", mkdir("ms", 01777), "ms");
	CFS("mkdir-setgid-bits", mkdir("mg", 02755), "mg");
	CF("mkdir-existing", mkdir("m", 0755));
	cf_mkfile("file", 0644, "");
	CF("mkdir-over-file", mkdir("file", 0755));
	cf_setup("symlink", symlink("m", "lm"));
	CF("mkdir-over-symlink", mkdir("lm", 0755));
	cf_setup("symlink", symlink("nowhere", "ldang"));
	CF("mkdir-over-dangling-symlink", mkdir("ldang", 0755));
	CF("mkdir-in-missing", mkdir("nodir/x", 0755));
	CF("mkdir-through-file", mkdir("file/x", 0755));
	CFS("mkdir-trailing-slash", mkdir("slash/", 0755), "slash");
	CFS("mkdir-sub", mkdir("m/sub", 0755), "m");
	CF("rmdir-nonempty", rmdir("m"));
	CF("rmdir-file", rmdir("file"));
	CF("rmdir-symlink-to-dir", rmdir("lm"));
	CF("rmdir-dot", rmdir("m/sub/."));
	CF("rmdir-dotdot", rmdir("m/sub/.."));
	CF("rmdir-missing", rmdir("nodir"));
	CFS("rmdir-sub", rmdir("m/sub"), "m");
	CF("rmdir", rmdir("m"));
	CF("rmdir-trailing-slash", rmdir("slash/"));
	cf_setup("mkdir", mkdir("opened", 0755));
	{
		int fd = open("opened", O_RDONLY | O_DIRECTORY);

		CF("rmdir-while-open", rmdir("opened"));
		if (fd >= 0) {
			CF("removed-dir-openat-create", openat(fd, "x", O_CREAT | O_WRONLY, 0644));
			close(fd);
		}
	}
}

static void cf_names_rename(void)
{
	cf_mkfile("a", 0644, "A");
	cf_mkfile("b", 0644, "B");
	cf_setup("mkdir", mkdir("da", 0755));
	cf_setup("mkdir", mkdir("db", 0755));
	cf_setup("mkdir", mkdir("dfull", 0755));
	cf_mkfile("dfull/x", 0644, "x");
	CFS("rename-file-new-name", rename("a", "a1"), "a1");
	CFS("rename-file-over-file", rename("a1", "b"), "b");
	cf_val("rename-over-content", "%s", cf_content("b"));
	CF("rename-missing", rename("a", "c"));
	CF("rename-file-over-dir", rename("b", "da"));
	CF("rename-dir-over-file", rename("da", "b"));
	CFS("rename-dir-over-empty-dir", rename("da", "db"), "db");
	CF("rename-dir-over-nonempty-dir", rename("db", "dfull"));
	CF("rename-dir-into-own-subdir", rename("dfull", "dfull/sub"));
	CFS("rename-dir-into-other-dir", rename("db", "dfull/db"), "dfull");
	cf_val("rename-dir-parent-links", "src %s dst %s", cf_desc("."), cf_desc("dfull"));
	CF("rename-dot", rename(".", "z"));
	CF("rename-to-dot", rename("b", "."));
	CF("rename-to-dotdot", rename("b", "dfull/db/.."));
	CF("rename-trailing-slash-file", rename("b", "b2/"));
	CFS("rename-trailing-slash-dir", rename("dfull/", "dfull2/"), "dfull2");
	cf_setup("link", link("b", "b-hard"));
	CFS("rename-onto-own-hard-link", rename("b", "b-hard"), "b");
	cf_val("rename-onto-own-hard-link-both", "%s / %s", cf_desc("b"), cf_desc("b-hard"));
	cf_setup("symlink", symlink("b", "lb"));
	CFS("rename-symlink-moves-link", rename("lb", "lb2"), "lb2");
	CF("rename-into-missing-dir", rename("b", "nodir/b"));

	cf_mkfile("x", 0644, "X");
	cf_mkfile("y", 0644, "Y");
	cf_setup("mkdir", mkdir("ex", 0755));
	cf_setup("mkdir", mkdir("ex/sub", 0755));
	CF("exchange-files", renameat2(AT_FDCWD, "x", AT_FDCWD, "y", RENAME_EXCHANGE));
	cf_val("exchange-files-content", "x=%s", cf_content("x"));
	cf_val("exchange-files-content2", "y=%s", cf_content("y"));
	CF("exchange-file-and-dir", renameat2(AT_FDCWD, "x", AT_FDCWD, "ex", RENAME_EXCHANGE));
	cf_val("exchange-file-and-dir-types", "x=%s", cf_desc("x"));
	cf_val("exchange-file-and-dir-types2", "ex=%s", cf_desc("ex"));
	CF("exchange-across-dirs", renameat2(AT_FDCWD, "y", AT_FDCWD, "x/sub", RENAME_EXCHANGE));
	cf_val("exchange-across-dirs-links", ".=%s x=%s", cf_desc("."), cf_desc("x"));
	CF("exchange-missing-target", renameat2(AT_FDCWD, "ex", AT_FDCWD, "nope", RENAME_EXCHANGE));
	CF("exchange-missing-source", renameat2(AT_FDCWD, "nope", AT_FDCWD, "ex", RENAME_EXCHANGE));
	CF("exchange-and-noreplace", renameat2(AT_FDCWD, "ex", AT_FDCWD, "x", RENAME_EXCHANGE | RENAME_NOREPLACE));
	cf_setup("mkdir", mkdir("y/inner", 0755));
	CF("exchange-dir-with-own-subdir", renameat2(AT_FDCWD, "y", AT_FDCWD, "y/inner", RENAME_EXCHANGE));
	CF("noreplace-existing", renameat2(AT_FDCWD, "ex", AT_FDCWD, "b", RENAME_NOREPLACE));
	CFS("noreplace-new", renameat2(AT_FDCWD, "ex", AT_FDCWD, "ex2", RENAME_NOREPLACE), "ex2");
	CF("renameat2-bad-flags", renameat2(AT_FDCWD, "ex2", AT_FDCWD, "ex3", 0x80));
	CF("rename-whiteout", renameat2(AT_FDCWD, "ex2", AT_FDCWD, "ex3", RENAME_WHITEOUT));
	cf_list("list", ".");
}

/* Another file system: nothing links or renames across. */
static void cf_names_exdev(void)
{
	char p[4200];

	cf_mkfile("local", 0644, "L");
	snprintf(p, sizeof(p), "%s/remote", cf_other);
	cf_mkfile(p, 0644, "R");
	snprintf(p, sizeof(p), "%s/moved", cf_other);
	CF("rename-to-other-fs", rename("local", p));
	CF("link-to-other-fs", link("local", p));
	snprintf(p, sizeof(p), "%s/remote", cf_other);
	CF("rename-from-other-fs", rename(p, "here"));
	CF("exchange-across-fs", renameat2(AT_FDCWD, "local", AT_FDCWD, p, RENAME_EXCHANGE));
	CF("noreplace-across-fs", renameat2(AT_FDCWD, "local", AT_FDCWD, p, RENAME_NOREPLACE));
}

void cf_names(void)
{
	cf_in_dir("link", cf_names_link);
	cf_in_dir("dirs", cf_names_dirs);
	cf_in_dir("rename", cf_names_rename);
	cf_in_dir("exdev", cf_names_exdev);
}
