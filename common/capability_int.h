/*
 * capability_int.h: what the capability module's files share: capability.c
 * (bundles: parse, look up, the pre-dispatch check), capability_schema.c
 * (the args schema subset: checked at manifest parse, then validation) and
 * capability_policy.c (hosts and the network policy).  Nothing outside
 * the module includes it; everyone else sees capability.h.
 */
#ifndef CM_CAPABILITY_INT_H
#define CM_CAPABILITY_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define CAP_PATH_MAX 256 /* error path shown to the client */

/* Writes a reason to err (may be NULL or errlen 0: nothing written) and
 * returns -1, for "return cm_cap_err(...)". */
int cm_cap_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Names of bundles, capabilities and properties: [A-Za-z0-9_.-]{1,max}. */
bool cm_cap_name_ok(const char *s, size_t max);

/*
 * Checks schema s (found at path, nested depth deep) completely: every
 * keyword known, applying to its type, with a value of the right type,
 * bounds ordered, enum values valid.  Returns 0, or -1 with a reason in
 * err.  Validation with cm_cap_validate may then trust s.
 */
int cm_cap_schema_check(
    const json_t *s, const char *path, size_t depth, char *err, size_t errlen);

/*
 * Validates v (found at path, nested depth deep) against s, a schema that
 * passed cm_cap_schema_check.  Returns 0, or -1 with the offending path in
 * err.
 */
int cm_cap_validate(const json_t *s, const json_t *v, const char *path,
    size_t depth, char *err, size_t errlen);

#endif
