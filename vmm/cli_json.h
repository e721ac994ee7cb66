/* cli_json.h: typed getters for the CLI's JSON file (json-c), each error naming the key's path; shared by vmm/cli_config.c and each kind's CLI part. */
#ifndef RINGVM_CLI_JSON_H
#define RINGVM_CLI_JSON_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Memory a loaded file's config points into, freed with the file (cli_json_free_all). */
struct cli_json_block;

/*
 * Where a load is: the file (named first in every error), the caller's error buffer, and the list
 * that every cli_json_alloc() joins. Made by cli_config_load(); the loaders below only read it.
 */
struct cli_json {
	const char *file;
	char *err;
	size_t errlen;
	struct cli_json_block **kept;
};

/* "FILE: PATH: what" in c->err; returns -EINVAL. */
int cli_json_bad(const struct cli_json *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The getters: v's value into *out when v has the type, else -EINVAL with "expected ..." naming
 * path. Strings point into v (alive as long as the parsed file) and never hold a NUL.
 */
__attribute__((warn_unused_result)) int cli_json_string(const struct cli_json *c, const char *path,
							json_object *v, const char **out);
/* A string, or null for none (*out = NULL). */
__attribute__((warn_unused_result)) int cli_json_string_or_null(const struct cli_json *c, const char *path,
								json_object *v, const char **out);
__attribute__((warn_unused_result)) int cli_json_bool(const struct cli_json *c, const char *path, json_object *v,
						      bool *out);
/* A non-negative integer up to max ("expected an integer from 0 to MAX" past it). */
__attribute__((warn_unused_result)) int cli_json_uint(const struct cli_json *c, const char *path, json_object *v,
						      uint64_t max, uint64_t *out);
/* An integer from 0 to UINT32_MAX. */
__attribute__((warn_unused_result)) int cli_json_uint32(const struct cli_json *c, const char *path,
							json_object *v, unsigned int *out);
/* One of names[0..n) (a string): its index; else "'X' is not one of A, B, C". */
__attribute__((warn_unused_result)) int cli_json_enum(const struct cli_json *c, const char *path,
						      json_object *v, const char *const *names, int n, int *out);
/* 0 when v is an object, else "expected an object". */
__attribute__((warn_unused_result)) int cli_json_object(const struct cli_json *c, const char *path,
							json_object *v);

/* path = prefix + "." + key (just key when prefix is ""), cut to fit len. */
void cli_json_join(char *path, size_t len, const char *prefix, const char *key);

/*
 * A JSON array of at most max items (noun names them in the errors: "devices", "strings"): room
 * for them (and a zeroed one after the last, so a string array ends in NULL) from cli_json_alloc,
 * each filled by one(c, "NAME[i]", item, &room[i]). 0 with *room and *count set, or -errno (the
 * error in c->err; -ENOMEM without one).
 */
__attribute__((warn_unused_result)) int cli_json_list(const struct cli_json *c, const char *name, json_object *v,
						      size_t max, const char *noun,
						      int (*one)(const struct cli_json *c, const char *path,
								 json_object *item, void *out),
						      size_t item_size, void **room, unsigned int *count);

/* For the printers: a JSON string of s, or NULL (json-c's null) when s is NULL. */
json_object *cli_json_new_string_or_null(const char *s);

/* For the printers: names[v], or "?" when v is out of 0..n (a config not yet checked). */
const char *cli_json_name_of(const char *const *names, int n, int v);

/* n zeroed bytes that live until the file is freed (cli_json_free_all), or NULL. */
void *cli_json_alloc(const struct cli_json *c, size_t n);

/* Free every block cli_json_alloc() kept on *kept; *kept is NULL after. */
void cli_json_free_all(struct cli_json_block **kept);

#endif
