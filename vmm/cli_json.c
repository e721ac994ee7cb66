/* cli_json.c: typed getters for the CLI's JSON file, errors naming the key's path, and the memory a loaded config points into. */
#include "vmm/cli_json.h"

#include <errno.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cli_json_block {
	struct cli_json_block *next;
	alignas(max_align_t) unsigned char data[];
};

int cli_json_bad(const struct cli_json *c, const char *path, const char *fmt, ...)
{
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "%s: %s: %s", c->file, path, what);
	return -EINVAL;
}

int cli_json_string(const struct cli_json *c, const char *path, json_object *v, const char **out)
{
	if (!json_object_is_type(v, json_type_string))
		return cli_json_bad(c, path, "expected a string");
	const char *s = json_object_get_string(v);
	if (strlen(s) != (size_t)json_object_get_string_len(v))
		return cli_json_bad(c, path, "a string with a NUL in it");
	*out = s;
	return 0;
}

int cli_json_string_or_null(const struct cli_json *c, const char *path, json_object *v, const char **out)
{
	*out = NULL;
	return json_object_is_type(v, json_type_null) ? 0 : cli_json_string(c, path, v, out);
}

int cli_json_bool(const struct cli_json *c, const char *path, json_object *v, bool *out)
{
	if (!json_object_is_type(v, json_type_boolean))
		return cli_json_bad(c, path, "expected true or false");
	*out = json_object_get_boolean(v);
	return 0;
}

int cli_json_uint(const struct cli_json *c, const char *path, json_object *v, uint64_t max, uint64_t *out)
{
	if (!json_object_is_type(v, json_type_int))
		return cli_json_bad(c, path, "expected an integer");
	/* json-c keeps integers above INT64_MAX as uint64: read it that way when non-negative. */
	int64_t s = json_object_get_int64(v);
	if (s < 0)
		return cli_json_bad(c, path, "expected an integer from 0 to %llu", (unsigned long long)max);
	uint64_t u = json_object_get_uint64(v);
	if (u > max)
		return cli_json_bad(c, path, "expected an integer from 0 to %llu", (unsigned long long)max);
	*out = u;
	return 0;
}

int cli_json_uint32(const struct cli_json *c, const char *path, json_object *v, unsigned int *out)
{
	uint64_t u;
	int ret = cli_json_uint(c, path, v, UINT32_MAX, &u);
	if (!ret)
		*out = (unsigned int)u;
	return ret;
}

int cli_json_enum(const struct cli_json *c, const char *path, json_object *v, const char *const *names, int n,
		  int *out)
{
	const char *s;
	int ret = cli_json_string(c, path, v, &s);
	if (ret)
		return ret;
	for (int i = 0; i < n; i++) {
		if (!strcmp(s, names[i])) {
			*out = i;
			return 0;
		}
	}
	char list[96] = "";
	for (int i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "", names[i]);
	return cli_json_bad(c, path, "'%s' is not one of %s", s, list);
}

int cli_json_object(const struct cli_json *c, const char *path, json_object *v)
{
	return json_object_is_type(v, json_type_object) ? 0 : cli_json_bad(c, path, "expected an object");
}

void cli_json_join(char *path, size_t len, const char *prefix, const char *key)
{
	snprintf(path, len, "%s%s%s", prefix, *prefix ? "." : "", key);
}

int cli_json_list(const struct cli_json *c, const char *name, json_object *v, size_t max, const char *noun,
		  int (*one)(const struct cli_json *c, const char *path, json_object *item, void *out),
		  size_t item_size, void **room, unsigned int *count)
{
	if (!json_object_is_type(v, json_type_array))
		return cli_json_bad(c, name, "expected an array of %s", noun);
	size_t n = json_object_array_length(v);
	if (n > max)
		return cli_json_bad(c, name, "at most %zu %s", max, noun);
	/* n <= max, a small bound (RINGVM_MAX_DEVICES, 4096 arguments): the product cannot overflow. */
	unsigned char *items = cli_json_alloc(c, (n + 1) * item_size);
	if (!items)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		char path[64];
		snprintf(path, sizeof(path), "%s[%zu]", name, i);
		int ret = one(c, path, json_object_array_get_idx(v, i), items + i * item_size);
		if (ret)
			return ret;
	}
	*room = items;
	*count = (unsigned int)n;
	return 0;
}

json_object *cli_json_new_string_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

const char *cli_json_name_of(const char *const *names, int n, int v)
{
	return v >= 0 && v < n ? names[v] : "?";
}

void *cli_json_alloc(const struct cli_json *c, size_t n)
{
	struct cli_json_block *b = calloc(1, sizeof(*b) + n);
	if (!b)
		return NULL;
	b->next = *c->kept;
	*c->kept = b;
	return b->data;
}

void cli_json_free_all(struct cli_json_block **kept)
{
	while (*kept) {
		struct cli_json_block *b = *kept;
		*kept = b->next;
		free(b);
	}
}
