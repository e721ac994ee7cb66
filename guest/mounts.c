/* mounts.c: parse ringvm.mount= and ringvm.root= into share and root descriptions for PID 1. */
#include "guest/mounts.h"

#include "guest/cmdline.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

/* Each share is three fields; one more slot for the decoder's terminating NULL. */
#define MNT_MAX_FIELDS (MNT_MAX_SHARES * 3 + 1)

/* Returns 0 and sets *read_only for "ro"/"rw", -EINVAL otherwise. */
static int mnt_parse_mode(const char *mode, bool *read_only, const char **why)
{
	if (strcmp(mode, "ro") == 0) {
		*read_only = true;
		return 0;
	}
	if (strcmp(mode, "rw") == 0) {
		*read_only = false;
		return 0;
	}
	*why = "MODE must be ro or rw";
	return -EINVAL;
}

/* The decoder already refused raw separators and %00, so only emptiness is left to check. */
static int mnt_check_tag(const char *tag, const char **why)
{
	if (tag[0] == '\0') {
		*why = "TAG is empty";
		return -EINVAL;
	}
	return 0;
}

/* A share over "/" would hide the root the command runs in: that is ringvm.root='s job. */
static int mnt_check_path(const char *path, const char **why)
{
	if (path[0] != '/') {
		*why = "PATH must be absolute";
		return -EINVAL;
	}
	if (path[strspn(path, "/")] == '\0') {
		*why = "PATH must not be / (use ringvm.root= for that)";
		return -EINVAL;
	}
	if (strlen(path) >= PATH_MAX) {
		*why = "PATH is longer than PATH_MAX";
		return -EINVAL;
	}
	return 0;
}

static int mnt_decode(char *value, char *fields[], size_t maxfields, const char **why)
{
	int n = cmdline_decode_argv(value, fields, maxfields);

	if (n == -EINVAL)
		*why = "not comma-separated %XX-encoded fields";
	else if (n == -E2BIG)
		*why = "too many fields";
	return n;
}

int mnt_parse_shares(char *value, struct mnt_share *shares, size_t maxshares, const char **why)
{
	char *fields[MNT_MAX_FIELDS];
	size_t nshares;
	int n = mnt_decode(value, fields, MNT_MAX_FIELDS, why), err;

	if (n < 0)
		return n;
	if (n % 3 != 0) {
		*why = "fields must come in TAG,PATH,MODE triples";
		return -EINVAL;
	}
	nshares = (size_t)n / 3;
	if (nshares > maxshares) {
		*why = "too many shares";
		return -E2BIG;
	}
	for (size_t i = 0; i < nshares; i++) {
		struct mnt_share *s = &shares[i];

		s->tag = fields[3 * i];
		s->path = fields[3 * i + 1];
		err = mnt_check_tag(s->tag, why);
		if (err == 0)
			err = mnt_check_path(s->path, why);
		if (err == 0)
			err = mnt_parse_mode(fields[3 * i + 2], &s->read_only, why);
		if (err < 0)
			return err;
	}
	return (int)nshares;
}

int mnt_parse_root(char *value, struct mnt_root *root, const char **why)
{
	char *fields[3];
	int n = mnt_decode(value, fields, 3, why), err;

	if (n == -E2BIG || (n >= 0 && n != 2)) {
		*why = "want exactly TAG,MODE";
		return -EINVAL;
	}
	if (n < 0)
		return n;
	root->tag = fields[0];
	err = mnt_check_tag(root->tag, why);
	if (err < 0)
		return err;
	return mnt_parse_mode(fields[1], &root->read_only, why);
}
