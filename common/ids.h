/* ids.h: UUIDv7 identifiers and random bytes, both from getrandom(2),
 * and the shape of an artifact's name. */
#ifndef CM_IDS_H
#define CM_IDS_H

#include <stddef.h>

#define CM_UUID_LEN 37 /* 36 characters and the NUL */

/* Fills buf with random bytes; aborts if the kernel cannot supply them. */
void cm_random_bytes(void *buf, size_t len);
/* Writes a lowercase RFC 9562 UUIDv7 (time-ordered) into out. */
void cm_uuid7(char out[CM_UUID_LEN]);
/* True when s is a well-formed lowercase or uppercase UUID string. */
int cm_uuid_valid(const char *s);
/*
 * True when the n bytes at s are an artifact's name: 1..CM_ID_MAX of
 * [A-Za-z0-9._-], not starting with '.', so it is one URL path segment
 * as it is, never "." or "..".
 */
int cm_artifact_name_valid(const char *s, size_t n);
/* The same rule for a file a client puts on a Space, at most
 * CM_FILE_NAME_MAX bytes: 1 when the n bytes at s are one. */
int cm_file_name_valid(const char *s, size_t n);

#endif
