/*
 * mime.h: the media types of the files a Space holds: a task's artifacts
 * (a screenshot, a download) and the files a client puts on a Space.
 */
#ifndef CM_MIME_H
#define CM_MIME_H

#include <stdbool.h>

/*
 * The type a file of that name is stored and served as, by its extension
 * (case-insensitive): a static string that cm_mime_known returns again;
 * application/octet-stream for an extension the table does not know,
 * and for a type a browser would render as a document of the service's
 * origin (html, svg, javascript).
 */
const char *cm_mime_of_name(const char *name);

/* The table's static string equal to mime (exactly), or NULL when mime
 * is no type an artifact may have. */
const char *cm_mime_known(const char *mime);

/* True when s is a media type as a client may give one: type "/" subtype
 * of RFC 9110 token characters, at most CM_MIME_MAX bytes, no parameters. */
bool cm_mime_valid(const char *s);

#endif
