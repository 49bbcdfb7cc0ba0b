/*
 * json.h: strict JSON helpers on top of jansson.
 *
 * Everything from outside a process is parsed with cm_json_parse, which
 * bounds size and depth before jansson sees the text and rejects duplicate
 * keys.
 */
#ifndef CM_JSON_H
#define CM_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Parses len bytes of text as one JSON value.  Rejects: more than max_len
 * bytes, nesting deeper than max_depth (checked by a scan before parsing,
 * so hostile input cannot recurse the parser), duplicate object keys,
 * NUL bytes inside strings, trailing garbage.  On success *out owns a new
 * reference.  On failure returns -1 and writes a short reason to err.
 */
int cm_json_parse(const char *text, size_t len, size_t max_len,
    size_t max_depth, json_t **out, char *err, size_t errlen);

/*
 * Checks that every key of obj is in allowed (NULL-terminated).  Returns 0,
 * or -1 with the first unknown key named in err.
 */
int cm_json_only_keys(
    const json_t *obj, const char *const *allowed, char *err, size_t errlen);

/*
 * Compact, key-sorted serialization: the canonical form used to compare
 * args for idempotency.  Returns a malloc'd string (caller frees) or NULL.
 */
char *cm_json_canonical(const json_t *v);

/* Depth of a parsed value: a scalar is 0, [] and {} are 1. */
size_t cm_json_depth(const json_t *v);

#endif
