/*
 * mime.c: one table of the types an artifact may have, by extension.
 * The api serves an artifact with its type and as an attachment, so the
 * table holds no type a browser runs; the store refuses any other type.
 */
#include "mime.h"

#include <string.h>
#include <strings.h>

#include "limits.h"

static const char OCTET[] = "application/octet-stream";

static const struct {
	const char *ext;
	const char *type;
} table[] = {
    {"png", "image/png"},
    {"jpg", "image/jpeg"},
    {"jpeg", "image/jpeg"},
    {"gif", "image/gif"},
    {"webp", "image/webp"},
    {"txt", "text/plain"},
    {"csv", "text/csv"},
    {"json", "application/json"},
    {"pdf", "application/pdf"},
    {"zip", "application/zip"},
    {"gz", "application/gzip"},
    {"xml", "application/xml"},
};

#define N_TABLE (sizeof(table) / sizeof(table[0]))

const char *
cm_mime_of_name(const char *name)
{
	const char *dot = name != NULL ? strrchr(name, '.') : NULL;

	if (dot == NULL || dot == name)
		return OCTET;
	for (size_t i = 0; i < N_TABLE; i++)
		if (strcasecmp(dot + 1, table[i].ext) == 0)
			return table[i].type;
	return OCTET;
}

const char *
cm_mime_known(const char *mime)
{
	if (mime == NULL)
		return NULL;
	if (strcmp(mime, OCTET) == 0)
		return OCTET;
	for (size_t i = 0; i < N_TABLE; i++)
		if (strcmp(mime, table[i].type) == 0)
			return table[i].type;
	return NULL;
}

/* An RFC 9110 tchar. */
static bool
tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

bool
cm_mime_valid(const char *s)
{
	size_t n = s != NULL ? strlen(s) : 0, slash = 0, i;

	if (n == 0 || n > CM_MIME_MAX)
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] == '/') {
			if (slash != 0 || i == 0)
				return false;
			slash = i;
		} else if (!tchar(s[i])) {
			return false;
		}
	}
	return slash != 0 && slash + 1 < n;
}
