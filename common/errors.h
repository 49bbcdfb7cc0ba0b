/*
 * errors.h: the one error enum of spaced.
 *
 * Every code has a stable string (what clients and the database see), an
 * HTTP status and a retryable flag.  Errors from SQLite, nng and curl are
 * translated into these at their call sites.
 */
#ifndef CM_ERRORS_H
#define CM_ERRORS_H

#include <stdbool.h>

/* X(enum, code string, http status, retryable) */
#define CM_ERRORS(X)                                                         \
	X(CM_OK, "ok", 200, false)                                           \
	X(CM_E_UNAUTHENTICATED, "unauthenticated", 401, false)               \
	X(CM_E_FORBIDDEN, "forbidden", 403, false)                           \
	X(CM_E_NOT_FOUND, "not_found", 404, false)                           \
	X(CM_E_METHOD_NOT_ALLOWED, "method_not_allowed", 405, false)         \
	X(CM_E_INSTANCE_IN_USE, "browser_instance_in_use", 409, false)       \
	X(CM_E_SPACE_CLOSED, "space_closed", 409, false)                     \
	X(CM_E_SPACE_UNUSABLE, "space_unusable", 409, false)                 \
	X(CM_E_TASK_IN_PROGRESS, "space_task_in_progress", 409, true)        \
	X(CM_E_SPACE_HELD, "space_held", 409, true)                          \
	X(CM_E_IDEMPOTENCY_REUSED, "idempotency_key_reused", 409, false)     \
	X(CM_E_NO_TASK, "no_task", 409, false)                               \
	X(CM_E_CONFLICT, "conflict", 409, false)                             \
	X(CM_E_PAYLOAD_TOO_LARGE, "payload_too_large", 413, false)           \
	X(CM_E_INVALID_REQUEST, "invalid_request", 422, false)               \
	X(CM_E_CAPABILITY_UNKNOWN, "capability_unknown", 422, false)         \
	X(CM_E_CAPABILITY_NOT_GRANTED, "capability_not_granted", 422, false) \
	X(CM_E_INVALID_ARGS, "invalid_args", 422, false)                     \
	X(CM_E_INVALID_TIMEOUT, "invalid_timeout", 422, false)               \
	X(CM_E_QUOTA_EXCEEDED, "quota_exceeded", 429, true)                  \
	X(CM_E_INTERNAL, "internal", 500, true)                              \
	X(CM_E_RUNTIME_NOT_READY, "runtime_not_ready", 503, true)            \
	X(CM_E_STORE_UNAVAILABLE, "store_unavailable", 503, true)            \
	X(CM_E_OVERLOADED, "overloaded", 503, true)                          \
	X(CM_E_SUPERVISOR_UNAVAILABLE, "supervisor_unavailable", 503, true)  \
	X(CM_E_VIEWERS_EXCEEDED, "viewers_exceeded", 429, true)              \
	/* Codes that only tasks and Spaces carry. */                        \
	X(CM_E_RUNTIME_ERROR, "runtime_error", 502, false)                   \
	X(CM_E_RUNTIME_CRASHED, "runtime_crashed", 502, false)               \
	X(CM_E_TASK_TIMEOUT, "task_timeout", 504, false)                     \
	X(CM_E_HOST_NOT_ALLOWED, "host_not_allowed", 403, false)             \
	X(CM_E_ELEMENT_NOT_FOUND, "element_not_found", 422, false)           \
	X(CM_E_OUTCOME_UNKNOWN, "outcome_unknown", 500, false)               \
	X(CM_E_LEASE_EXPIRED, "lease_expired", 500, false)                   \
	X(CM_E_ACTOR_CRASH_LOOP, "actor_crash_loop", 500, false)             \
	X(CM_E_ELEMENT_OBSCURED, "element_obscured", 422, false)             \
	X(CM_E_ELEMENT_NOT_INTERACTABLE, "element_not_interactable", 422,    \
	    false)                                                           \
	X(CM_E_ELEMENT_NOT_EDITABLE, "element_not_editable", 422, false)     \
	X(CM_E_DIALOG_OPEN, "dialog_open", 409, false)                       \
	X(CM_E_NO_DIALOG, "no_dialog", 409, false)                           \
	X(CM_E_NO_TAB, "no_tab", 409, false)

enum cm_err {
#define CM_ERR_ENUM(e, s, h, r) e,
	CM_ERRORS(CM_ERR_ENUM)
#undef CM_ERR_ENUM
	    CM_ERR__COUNT
};

/* Stable string of a code; "internal" for a value out of range. */
const char *cm_err_code(enum cm_err e);
/* HTTP status of a code; 500 for a value out of range. */
int cm_err_http(enum cm_err e);
bool cm_err_retryable(enum cm_err e);
/* The code whose string is s, or CM_ERR__COUNT when there is none. */
enum cm_err cm_err_from_code(const char *s);

#endif
