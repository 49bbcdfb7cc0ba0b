#include "json.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 3, 4))) static void
json_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/*
 * Brackets outside strings are the only way JSON nests, so counting them
 * bounds the recursion jansson will do.  Unbalanced or malformed text is
 * left for jansson to reject; this scan only has to be an upper bound.
 * O(len).
 */
static bool
json_depth_ok(const char *text, size_t len, size_t max_depth)
{
	size_t depth = 0;
	bool in_string = false, escaped = false;

	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (in_string) {
			if (escaped)
				escaped = false;
			else if (c == '\\')
				escaped = true;
			else if (c == '"')
				in_string = false;
			continue;
		}
		switch (c) {
		case '"':
			in_string = true;
			break;
		case '[':
		case '{':
			if (++depth > max_depth)
				return false;
			break;
		case ']':
		case '}':
			if (depth > 0)
				depth--;
			break;
		default:
			break;
		}
	}
	return true;
}

int
cm_json_parse(const char *text, size_t len, size_t max_len, size_t max_depth,
    json_t **out, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *v;

	if (out == NULL)
		return -1;
	*out = NULL;
	if (text == NULL) {
		json_err(err, errlen, "no JSON text");
		return -1;
	}
	if (len > max_len) {
		json_err(
		    err, errlen, "JSON text larger than %zu bytes", max_len);
		return -1;
	}
	if (!json_depth_ok(text, len, max_depth)) {
		json_err(err, errlen, "JSON nested deeper than %zu", max_depth);
		return -1;
	}
	/*
	 * Without JSON_DISABLE_EOF_CHECK jansson rejects anything but
	 * whitespace after the value; without JSON_ALLOW_NUL it rejects
	 * \u0000, which C strings downstream would silently cut.
	 */
	v = json_loadb(
	    text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (v == NULL) {
		json_err(err, errlen, "invalid JSON at line %d column %d: %s",
		    jerr.line, jerr.column, jerr.text);
		return -1;
	}
	*out = v;
	return 0;
}

int
cm_json_only_keys(
    const json_t *obj, const char *const *allowed, char *err, size_t errlen)
{
	/* jansson's iterators take a non-const pointer but do not write. */
	json_t *o = (json_t *)obj;
	const char *key;
	json_t *val;

	if (!json_is_object(o)) {
		json_err(err, errlen, "not a JSON object");
		return -1;
	}
	json_object_foreach(o, key, val)
	{
		bool known = false;

		(void)val;
		for (size_t i = 0; allowed != NULL && allowed[i] != NULL; i++) {
			if (strcmp(key, allowed[i]) == 0) {
				known = true;
				break;
			}
		}
		if (!known) {
			json_err(err, errlen, "unknown key: %s", key);
			return -1;
		}
	}
	return 0;
}

char *
cm_json_canonical(const json_t *v)
{
	if (v == NULL)
		return NULL;
	/*
	 * 17 significant digits round-trip every double, so one value always
	 * encodes to one text and two different values never collide.
	 */
	return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY |
	                         JSON_REAL_PRECISION(17));
}

size_t
cm_json_depth(const json_t *v)
{
	json_t *o = (json_t *)v;
	size_t max = 0;

	if (json_is_array(o)) {
		for (size_t i = 0; i < json_array_size(o); i++) {
			size_t d = cm_json_depth(json_array_get(o, i));
			if (d > max)
				max = d;
		}
		return max + 1;
	}
	if (json_is_object(o)) {
		const char *key;
		json_t *val;

		json_object_foreach(o, key, val)
		{
			size_t d = cm_json_depth(val);

			(void)key;
			if (d > max)
				max = d;
		}
		return max + 1;
	}
	return 0;
}
