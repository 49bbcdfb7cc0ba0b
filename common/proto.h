/*
 * proto.h: every message between spaced processes, defined once.
 *
 * A store request is a msgpack map: {"op": "<name>", <field>: <value>...}.
 * A reply is a msgpack map: {"err": "<code>", "msg": "...", <field>...}.
 * An internal event on the store's PUB socket is the topic
 * "ev/<workspace_id>/<space_id>/" followed by a msgpack event record.
 * Records with a sequence of 1 or more are committed log events; a record
 * with sequence 0 is a wake-up notice for the Space's actor (kind
 * "close_requested"), never stored and never forwarded to clients.
 *
 * The supervisor's control socket (REP) speaks the same request/reply
 * format; it answers only sup.status.
 *
 * Field types on the wire: strings are msgpack str, integers int/uint
 * (int64 range), booleans bool, byte strings (an artifact) bin, string
 * lists arrays of str, record lists arrays of maps.  Encoders omit NULL
 * strings, zero integers, false booleans, empty byte strings and empty
 * lists, so zero means "absent" for every integer field: a timestamp of 0
 * is null, a limit of 0 is the default.  nil is never sent and never
 * accepted.
 *
 * Decoders check everything before a field is used: the op or record
 * shape, that every key is known and allowed for the op, each value's
 * type, each string's length (and that it holds no NUL byte), each list's
 * count, that every field the op requires is present, and the size of
 * the whole message: CM_REQ_MSG_MAX for a request of any op that cannot
 * carry an artifact (pr_req_max).  Any failure rejects the whole message.
 *
 * Ownership: a decoded struct owns all of its strings and lists through
 * its arena and is released with pr_req_free / pr_rep_free (both accept
 * a zeroed struct).  A struct built for encoding may point anywhere; the
 * encoder only reads it.  pr_rep_strdup and pr_rep_alloc put data in the
 * reply's own arena so a builder need not track lifetimes.
 */
#ifndef CM_PROTO_H
#define CM_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "limits.h"

/* A bump allocator: chunks freed together. */
struct pr_arena {
	struct pr_chunk *head;
};
void *pr_arena_alloc(struct pr_arena *a, size_t n); /* zeroed; NULL on OOM */
char *pr_arena_strdup(struct pr_arena *a, const char *s); /* NULL for NULL */
char *pr_arena_strndup(struct pr_arena *a, const char *s, size_t n);
void pr_arena_free(struct pr_arena *a);

struct pr_strlist {
	size_t n;
	const char **v;
};

/* Bytes that may hold anything, NUL included: n == 0 is absent. */
struct pr_bin {
	size_t n;
	const unsigned char *p;
};

/* Field types. */
enum pr_type { PR_STR, PR_INT, PR_BOOL, PR_STRLIST, PR_BIN };
#define PR_CTYPE_PR_STR const char *
#define PR_CTYPE_PR_INT int64_t
#define PR_CTYPE_PR_BOOL bool
#define PR_CTYPE_PR_STRLIST struct pr_strlist
#define PR_CTYPE_PR_BIN struct pr_bin

/*
 * Request fields: X(ENUM, member, type, max).  For PR_STR max is the
 * longest string in bytes; for PR_STRLIST it is the most items, each at
 * most CM_CAPABILITY_MAX bytes; for PR_BIN the most bytes; it is unused
 * for PR_INT and PR_BOOL.
 */
#define PR_REQ_FIELDS(X)                                              \
	X(OP_ID, op_id, PR_STR, CM_ID_MAX)                            \
	X(TOKEN_HASH, token_hash, PR_STR, 64)                         \
	X(WORKSPACE_ID, workspace_id, PR_STR, CM_ID_MAX)              \
	X(SPACE_ID, space_id, PR_STR, CM_ID_MAX)                      \
	X(TASK_ID, task_id, PR_STR, CM_ID_MAX)                        \
	X(PRINCIPAL_ID, principal_id, PR_STR, CM_ID_MAX)              \
	X(TOKEN_ID, token_id, PR_STR, CM_ID_MAX)                      \
	X(BUNDLE_ID, bundle_id, PR_STR, CM_ID_MAX)                    \
	X(INSTANCE_ID, browser_instance_id, PR_STR, CM_ID_MAX)        \
	X(BINDING_ID, binding_id, PR_STR, CM_ID_MAX)                  \
	X(NAME, name, PR_STR, CM_NAME_MAX)                            \
	X(KIND, kind, PR_STR, 32)                                     \
	X(IS_ADMIN, is_admin, PR_BOOL, 0)                             \
	X(LABEL, label, PR_STR, CM_NAME_MAX)                          \
	X(EXPIRES_AT, expires_at, PR_INT, 0)                          \
	X(ROLE, role, PR_STR, 32)                                     \
	X(MANIFEST, manifest, PR_STR, CM_MANIFEST_MAX)                \
	X(DRIVER, driver, PR_STR, 32)                                 \
	X(ENDPOINT, endpoint, PR_STR, CM_ENDPOINT_MAX)                \
	X(CONFIG, config, PR_STR, CM_INSTANCE_CONFIG_MAX)             \
	X(NETWORK_POLICY, network_policy, PR_STR, CM_POLICY_MAX)      \
	X(PROFILE, profile, PR_STR, CM_PROFILE_MAX)                   \
	X(PROFILE_MODE, profile_mode, PR_STR, 32)                     \
	X(HOST, host, PR_STR, CM_HOST_MAX)                            \
	X(STATUS, status, PR_STR, 32)                                 \
	X(INSTANCE_STATUS, instance_status, PR_STR, 32)               \
	X(IF_STATUS, if_status, PR_STR, 32)                           \
	X(OWNER_TYPE, owner_type, PR_STR, 32)                         \
	X(OWNER_ID, owner_id, PR_STR, CM_ID_MAX)                      \
	X(GRANTED, granted, PR_STRLIST, CM_GRANTED_MAX)               \
	X(REQUEST_ID, request_id, PR_STR, CM_ID_MAX)                  \
	X(CAPABILITY, capability, PR_STR, CM_CAPABILITY_MAX)          \
	X(ARGS, args, PR_STR, CM_ARGS_MAX)                            \
	X(TIMEOUT_MS, timeout_ms, PR_INT, 0)                          \
	X(LIMIT, limit, PR_INT, 0)                                    \
	X(AFTER_SEQUENCE, after_sequence, PR_INT, 0)                  \
	X(AFTER_ID, after_id, PR_STR, CM_ID_MAX)                      \
	X(LEASE_HOLDER, lease_holder, PR_STR, CM_ID_MAX)              \
	X(RESULT, result, PR_STR, CM_RESULT_MAX)                      \
	X(ERROR_CODE, error_code, PR_STR, CM_ERROR_CODE_MAX)          \
	X(ARTIFACT_NAME, artifact_name, PR_STR, CM_ID_MAX)            \
	X(MIME, mime, PR_STR, CM_MIME_MAX)                            \
	X(ARTIFACT, artifact, PR_BIN, CM_ARTIFACT_MAX)                \
	X(ERROR_MESSAGE, error_message, PR_STR, CM_ERROR_MESSAGE_MAX) \
	X(WAIT_MS, wait_ms, PR_INT, 0)                                \
	X(PAYLOAD, payload, PR_STR, CM_PAGE_EVENT_PAYLOAD_MAX)        \
	X(DIALOG_POLICY, dialog_policy, PR_STR, 16)                   \
	X(TTL_MS, ttl_ms, PR_INT, 0)                                  \
	X(POS_X, x, PR_INT, 0)                                        \
	X(POS_Y, y, PR_INT, 0)                                        \
	X(DELTA_X, delta_x, PR_INT, 0)                                \
	X(DELTA_Y, delta_y, PR_INT, 0)                                \
	X(BUTTON, button, PR_STR, 16)                                 \
	X(KEY, key, PR_STR, CM_LIVE_KEY_MAX)                          \
	X(TEXT, text, PR_STR, CM_LIVE_TEXT_MAX)

enum pr_field {
#define PR_F_ENUM(e, m, t, max) PR_F_##e,
	PR_REQ_FIELDS(PR_F_ENUM)
#undef PR_F_ENUM
	    PR_F__COUNT
};
#define PRM(e) (UINT64_C(1) << PR_F_##e)

/*
 * Operations: X(ENUM, "wire name", is_write, required mask, optional mask).
 * Every write requires op_id: the store answers a repeated op_id with its
 * first reply, across store restarts, so a REQ re-send never applies a
 * write twice.
 *
 * task.submit from the api names its caller (principal_id, kind, is_admin,
 * and role, the caller's role in workspace_id when it has one), and the
 * store authorizes it through common/authz.h on the Space row it reads, so
 * no space.get goes before a submit.  Without principal_id the caller is
 * trusted (the processes of the service, tests and benchmarks).
 *
 * actor.finish of a completed task may carry its artifact (artifact_name,
 * mime and the bytes, all three or none); the store writes it in the
 * transaction that finishes the task.  artifact.get reads one back, by
 * the task's workspace, Space and id, for a caller the api authorized on
 * the Space as for task.get.
 *
 * space.file_put keeps a file on a Space for its page to upload (name,
 * cm_file_name_valid; mime, cm_mime_valid; its bytes in the artifact
 * field, at most CM_UPLOAD_MAX), replacing one of that name; the api has
 * authorized the caller on the Space.  space.file_list lists them, with
 * no bytes; space.file_get reads one back with its bytes, for the
 * Space's actor.
 *
 * actor.claim with wait_ms (at most CM_CLAIM_WAIT_MAX_MS) that finds no
 * task may be held that long by the store's loop: a commit that touches
 * the Space meanwhile (a submit, a close) runs the claim again in the
 * same group, and it is answered with what it then finds; otherwise it is
 * answered no task when the time is up.  sup.finalize_lost drops the held
 * claim of the Space's lost actor unanswered.
 *
 * space.takeover holds the Space for principal_id (an operator the api
 * authorized as its owner or a manager), with the token it came with
 * (token_id: revoking it ends the hold), for ttl_ms (at most
 * CM_TAKEOVER_TTL_MAX_MS); the holder's own take-over again renews it.
 * An active task is sent down the cancel path first, and the hold begins
 * once it has ended (hold_pending until then).  space.release ends it,
 * for the holder, or a manager (role) or admin.  A held Space reads as
 * status held, with held_by, its name (held_by_name) and held_until.
 *
 * space.network_blocked and space.page_event are the actor's record of
 * what its runtime did besides a task's result: a refusal of the egress
 * proxy, and what the page did (kind dialog, tab_opened or download,
 * cm_event_kind_of_page; payload its JSON object, bounded and redacted by
 * the actor, its shape checked by the store, docs/api.md).  The api
 * records an operator's input through the live view the same way (kind
 * operator_input: who, what, where and the element, never a text).  A page
 * event names the task during which it happened, if any: the store records it
 * with that task while the task runs, and with none once it has ended.
 *
 * live.watch, live.stop and live.input are the requests of a Space's
 * actor's control socket (REP, ipc <run_dir>/ctl-<space_id>.ipc), which
 * the api sends and the actor's loop answers; they never reach the store.
 * live.watch starts the screencast of the Space's page, or renews its
 * lease (CM_LIVE_LEASE_MS): the actor publishes frames (pr_frame_encode)
 * on its PUB socket, <run_dir>/live-<space_id>.ipc, bound only while
 * watched.  live.stop ends it and closes that socket.  live.input is an
 * operator's pointer or key: kind (click, move, down, up, wheel, key,
 * text), x and y in CSS pixels of the viewport, a wheel's delta_x and
 * delta_y, a button (left, middle, right), a key's name, text to type;
 * its reply's one input record says what was done (the kind, and the
 * role and name of the element under the point), never the text.
 */
#define PR_W PRM(OP_ID)
#define PR_OPS(X)                                                              \
	X(PING, "ping", false, 0, 0)                                           \
	X(AUTH_RESOLVE, "auth.resolve", false, PRM(TOKEN_HASH), 0)             \
	X(WORKSPACE_CREATE, "workspace.create", true, PR_W | PRM(NAME), 0)     \
	X(WORKSPACE_LIST, "workspace.list", false, 0, 0)                       \
	X(PRINCIPAL_CREATE, "principal.create", true,                          \
	    PR_W | PRM(KIND) | PRM(NAME), PRM(IS_ADMIN))                       \
	X(PRINCIPAL_LIST, "principal.list", false, 0, 0)                       \
	X(TOKEN_ISSUE, "token.issue", true,                                    \
	    PR_W | PRM(PRINCIPAL_ID) | PRM(TOKEN_HASH),                        \
	    PRM(LABEL) | PRM(EXPIRES_AT))                                      \
	X(TOKEN_REVOKE, "token.revoke", true, PR_W | PRM(TOKEN_ID), 0)         \
	X(MEMBER_PUT, "member.put", true,                                      \
	    PR_W | PRM(WORKSPACE_ID) | PRM(PRINCIPAL_ID) | PRM(ROLE), 0)       \
	X(MEMBER_REMOVE, "member.remove", true,                                \
	    PR_W | PRM(WORKSPACE_ID) | PRM(PRINCIPAL_ID), 0)                   \
	X(BUNDLE_CREATE, "bundle.create", true, PR_W | PRM(MANIFEST), 0)       \
	X(BUNDLE_LIST, "bundle.list", false, 0, 0)                             \
	X(INSTANCE_REGISTER, "instance.register", true,                        \
	    PR_W | PRM(NAME) | PRM(DRIVER) | PRM(BUNDLE_ID),                   \
	    PRM(ENDPOINT) | PRM(CONFIG) | PRM(NETWORK_POLICY) | PRM(PROFILE) | \
	        PRM(PROFILE_MODE) | PRM(HOST))                                 \
	X(INSTANCE_LIST, "instance.list", false, 0, PRM(WORKSPACE_ID))         \
	X(INSTANCE_SET_STATUS, "instance.set_status", true,                    \
	    PR_W | PRM(INSTANCE_ID) | PRM(STATUS), PRM(IF_STATUS))             \
	X(BINDING_CREATE, "binding.create", true,                              \
	    PR_W | PRM(WORKSPACE_ID) | PRM(INSTANCE_ID), 0)                    \
	X(BINDING_DELETE, "binding.delete", true, PR_W | PRM(BINDING_ID), 0)   \
	X(SPACE_CREATE, "space.create", true,                                  \
	    PR_W | PRM(WORKSPACE_ID) | PRM(INSTANCE_ID) | PRM(OWNER_TYPE) |    \
	        PRM(OWNER_ID),                                                 \
	    PRM(BINDING_ID) | PRM(GRANTED) | PRM(REQUEST_ID) |                 \
	        PRM(DIALOG_POLICY))                                            \
	X(SPACE_GET, "space.get", false, PRM(WORKSPACE_ID) | PRM(SPACE_ID), 0) \
	X(SPACE_LIST, "space.list", false, PRM(WORKSPACE_ID),                  \
	    PRM(STATUS) | PRM(OWNER_ID) | PRM(LIMIT) | PRM(AFTER_ID))          \
	X(SPACE_CLOSE, "space.close", true,                                    \
	    PR_W | PRM(WORKSPACE_ID) | PRM(SPACE_ID), 0)                       \
	X(SPACE_MARK_CLOSED, "space.mark_closed", true, PR_W | PRM(SPACE_ID),  \
	    0)                                                                 \
	X(SPACE_MARK_ERROR, "space.mark_error", true,                          \
	    PR_W | PRM(SPACE_ID) | PRM(ERROR_CODE),                            \
	    PRM(ERROR_MESSAGE) | PRM(INSTANCE_STATUS))                         \
	X(SPACE_NETWORK_BLOCKED, "space.network_blocked", true,                \
	    PR_W | PRM(SPACE_ID) | PRM(HOST) | PRM(ERROR_CODE), 0)             \
	X(SPACE_PAGE_EVENT, "space.page_event", true,                          \
	    PR_W | PRM(SPACE_ID) | PRM(KIND) | PRM(PAYLOAD), PRM(TASK_ID))     \
	X(SPACE_TAKEOVER, "space.takeover", true,                              \
	    PR_W | PRM(WORKSPACE_ID) | PRM(SPACE_ID) | PRM(PRINCIPAL_ID) |     \
	        PRM(TOKEN_ID) | PRM(TTL_MS),                                   \
	    0)                                                                 \
	X(SPACE_RELEASE, "space.release", true,                                \
	    PR_W | PRM(WORKSPACE_ID) | PRM(SPACE_ID) | PRM(PRINCIPAL_ID),      \
	    PRM(ROLE) | PRM(IS_ADMIN))                                         \
	X(TASK_SUBMIT, "task.submit", true,                                    \
	    PR_W | PRM(WORKSPACE_ID) | PRM(SPACE_ID) | PRM(REQUEST_ID) |       \
	        PRM(CAPABILITY),                                               \
	    PRM(ARGS) | PRM(TIMEOUT_MS) | PRM(PRINCIPAL_ID) | PRM(KIND) |      \
	        PRM(IS_ADMIN) | PRM(ROLE))                                     \
	X(TASK_GET, "task.get", false,                                         \
	    PRM(WORKSPACE_ID) | PRM(SPACE_ID) | PRM(TASK_ID), 0)               \
	X(TASK_LIST, "task.list", false, PRM(WORKSPACE_ID) | PRM(SPACE_ID),    \
	    PRM(LIMIT) | PRM(AFTER_ID))                                        \
	X(TASK_CANCEL, "task.cancel", true,                                    \
	    PR_W | PRM(WORKSPACE_ID) | PRM(SPACE_ID), PRM(TASK_ID))            \
	X(EVENT_LIST, "event.list", false, PRM(WORKSPACE_ID) | PRM(SPACE_ID),  \
	    PRM(AFTER_SEQUENCE) | PRM(LIMIT))                                  \
	X(ACTOR_LOAD, "actor.load", false, PRM(SPACE_ID), 0)                   \
	X(ACTOR_CLAIM, "actor.claim", true,                                    \
	    PR_W | PRM(SPACE_ID) | PRM(LEASE_HOLDER), PRM(WAIT_MS))            \
	X(ACTOR_HEARTBEAT, "actor.heartbeat", true,                            \
	    PR_W | PRM(TASK_ID) | PRM(LEASE_HOLDER), 0)                        \
	X(ACTOR_FINISH, "actor.finish", true,                                  \
	    PR_W | PRM(TASK_ID) | PRM(LEASE_HOLDER) | PRM(STATUS),             \
	    PRM(RESULT) | PRM(ERROR_CODE) | PRM(ERROR_MESSAGE) |               \
	        PRM(ARTIFACT_NAME) | PRM(MIME) | PRM(ARTIFACT))                \
	X(ARTIFACT_GET, "artifact.get", false,                                 \
	    PRM(WORKSPACE_ID) | PRM(SPACE_ID) | PRM(TASK_ID) |                 \
	        PRM(ARTIFACT_NAME),                                            \
	    0)                                                                 \
	X(SUP_FINALIZE_LOST, "sup.finalize_lost", true, PR_W | PRM(SPACE_ID),  \
	    PRM(HOST))                                                         \
	X(SUP_SWEEP_LEASES, "sup.sweep_leases", true, PR_W, PRM(HOST))         \
	X(SUP_LIST_ACTIVE, "sup.list_active", false, 0,                        \
	    PRM(HOST) | PRM(AFTER_ID))                                         \
	X(SUP_LIST_CDP, "sup.list_cdp", false, 0, PRM(HOST))                   \
	X(SUP_STATUS, "sup.status", false, 0, PRM(AFTER_SEQUENCE))             \
	X(SPACE_FILE_PUT, "space.file_put", true,                              \
	    PR_W | PRM(WORKSPACE_ID) | PRM(SPACE_ID) | PRM(NAME) | PRM(MIME) | \
	        PRM(ARTIFACT),                                                 \
	    0)                                                                 \
	X(SPACE_FILE_LIST, "space.file_list", false,                           \
	    PRM(WORKSPACE_ID) | PRM(SPACE_ID), 0)                              \
	X(SPACE_FILE_GET, "space.file_get", false, PRM(SPACE_ID) | PRM(NAME),  \
	    0)                                                                 \
	X(LIVE_WATCH, "live.watch", false, PRM(SPACE_ID), 0)                   \
	X(LIVE_STOP, "live.stop", false, PRM(SPACE_ID), 0)                     \
	X(LIVE_INPUT, "live.input", false, PRM(SPACE_ID) | PRM(KIND),          \
	    PRM(POS_X) | PRM(POS_Y) | PRM(DELTA_X) | PRM(DELTA_Y) |            \
	        PRM(BUTTON) | PRM(KEY) | PRM(TEXT))

enum pr_op {
#define PR_OP_ENUM(e, n, w, req, opt) PR_OP_##e,
	PR_OPS(PR_OP_ENUM)
#undef PR_OP_ENUM
	    PR_OP__COUNT
};

const char *pr_op_name(enum pr_op op);
bool pr_op_is_write(enum pr_op op);
/* The largest request of op, envelope included: CM_STORE_RECV_MAX for an
 * op that may carry an artifact, CM_REQ_MSG_MAX for every other. */
size_t pr_req_max(enum pr_op op);

struct pr_req {
	enum pr_op op;
#define PR_F_MEMBER(e, m, t, max) PR_CTYPE_##t m;
	PR_REQ_FIELDS(PR_F_MEMBER)
#undef PR_F_MEMBER
	struct pr_arena arena;
};

/*
 * Records.  X(member, type, max) per field; PR_STRLIST items are at most
 * CM_CAPABILITY_MAX bytes (capability names, arg keys).
 */
#define PR_REC_WORKSPACE(X)                \
	X(workspace_id, PR_STR, CM_ID_MAX) \
	X(name, PR_STR, CM_NAME_MAX)       \
	X(created_at, PR_INT, 0)

#define PR_REC_PRINCIPAL(X)                \
	X(principal_id, PR_STR, CM_ID_MAX) \
	X(kind, PR_STR, 32)                \
	X(name, PR_STR, CM_NAME_MAX)       \
	X(is_admin, PR_BOOL, 0)            \
	X(disabled, PR_BOOL, 0)            \
	X(created_at, PR_INT, 0)

#define PR_REC_TOKEN(X)                    \
	X(token_id, PR_STR, CM_ID_MAX)     \
	X(principal_id, PR_STR, CM_ID_MAX) \
	X(label, PR_STR, CM_NAME_MAX)      \
	X(expires_at, PR_INT, 0)           \
	X(revoked_at, PR_INT, 0)           \
	X(created_at, PR_INT, 0)

#define PR_REC_MEMBERSHIP(X)               \
	X(workspace_id, PR_STR, CM_ID_MAX) \
	X(principal_id, PR_STR, CM_ID_MAX) \
	X(role, PR_STR, 32)                \
	X(created_at, PR_INT, 0)

#define PR_REC_BUNDLE(X)                     \
	X(bundle_id, PR_STR, CM_ID_MAX)      \
	X(name, PR_STR, CM_NAME_MAX)         \
	X(version, PR_STR, CM_NAME_MAX)      \
	X(manifest, PR_STR, CM_MANIFEST_MAX) \
	X(created_at, PR_INT, 0)

/* The public view of an instance: no endpoint, config or profile path. */
#define PR_REC_INSTANCE(X)                        \
	X(browser_instance_id, PR_STR, CM_ID_MAX) \
	X(name, PR_STR, CM_NAME_MAX)              \
	X(driver, PR_STR, 32)                     \
	X(profile_mode, PR_STR, 32)               \
	X(bundle_id, PR_STR, CM_ID_MAX)           \
	X(network_policy, PR_STR, CM_POLICY_MAX)  \
	X(status, PR_STR, 32)                     \
	X(host, PR_STR, CM_HOST_MAX)              \
	X(in_use, PR_BOOL, 0)                     \
	X(created_at, PR_INT, 0)                  \
	X(updated_at, PR_INT, 0)

/* The secret columns of an instance: only actor.load returns them, and
 * sup.list_cdp the endpoints of cdp instances, for the supervisor's
 * probe. */
#define PR_REC_INSTANCE_SECRET(X)                 \
	X(endpoint, PR_STR, CM_ENDPOINT_MAX)      \
	X(config, PR_STR, CM_INSTANCE_CONFIG_MAX) \
	X(profile, PR_STR, CM_PROFILE_MAX)

#define PR_REC_BINDING(X)                         \
	X(binding_id, PR_STR, CM_ID_MAX)          \
	X(workspace_id, PR_STR, CM_ID_MAX)        \
	X(browser_instance_id, PR_STR, CM_ID_MAX) \
	X(created_at, PR_INT, 0)

#define PR_REC_SPACE(X)                               \
	X(space_id, PR_STR, CM_ID_MAX)                \
	X(workspace_id, PR_STR, CM_ID_MAX)            \
	X(browser_instance_id, PR_STR, CM_ID_MAX)     \
	X(binding_id, PR_STR, CM_ID_MAX)              \
	X(owner_type, PR_STR, 32)                     \
	X(owner_id, PR_STR, CM_ID_MAX)                \
	X(status, PR_STR, 32)                         \
	X(granted, PR_STRLIST, CM_GRANTED_MAX)        \
	X(revision, PR_INT, 0)                        \
	X(last_error_code, PR_STR, CM_ERROR_CODE_MAX) \
	X(close_requested, PR_BOOL, 0)                \
	X(created_at, PR_INT, 0)                      \
	X(updated_at, PR_INT, 0)                      \
	X(closed_at, PR_INT, 0)                       \
	X(dialog_policy, PR_STR, 16)                  \
	X(held_by, PR_STR, CM_ID_MAX)                 \
	X(held_by_name, PR_STR, CM_NAME_MAX)          \
	X(held_until, PR_INT, 0)                      \
	X(hold_pending, PR_BOOL, 0)                   \
	X(help_requested, PR_BOOL, 0)                 \
	X(owner_name, PR_STR, CM_NAME_MAX)

/* A task as clients may see it: args appear only as arg_keys. */
#define PR_REC_TASK(X)                                 \
	X(task_id, PR_STR, CM_ID_MAX)                  \
	X(space_id, PR_STR, CM_ID_MAX)                 \
	X(workspace_id, PR_STR, CM_ID_MAX)             \
	X(request_id, PR_STR, CM_ID_MAX)               \
	X(operation_id, PR_STR, CM_ID_MAX)             \
	X(capability, PR_STR, CM_CAPABILITY_MAX)       \
	X(arg_keys, PR_STRLIST, CM_SCHEMA_PROPS_MAX)   \
	X(timeout_ms, PR_INT, 0)                       \
	X(status, PR_STR, 32)                          \
	X(cancel_requested, PR_BOOL, 0)                \
	X(result, PR_STR, CM_RESULT_MAX)               \
	X(error_code, PR_STR, CM_ERROR_CODE_MAX)       \
	X(error_message, PR_STR, CM_ERROR_MESSAGE_MAX) \
	X(created_at, PR_INT, 0)                       \
	X(started_at, PR_INT, 0)                       \
	X(finished_at, PR_INT, 0)                      \
	X(updated_at, PR_INT, 0)

/*
 * An event.  host is set only on the store's PUB, and only on
 * space_opened: the host of the Space's instance, so that only that
 * host's supervisor starts its actor (a space_opened without it, heard
 * from another host's store, sends the supervisor to its host's rescan).
 * It is never stored and never reaches a client (api_dto_event).
 * serial is set only on the store's PUB as well: the messages it has
 * published since it started, this one included, counted from 1 in the
 * order they leave; a subscriber that misses one sees the next serial
 * jump (pr_beat_encode says the last one when nothing else comes).
 */
#define PR_REC_EVENT(X)                    \
	X(space_id, PR_STR, CM_ID_MAX)     \
	X(workspace_id, PR_STR, CM_ID_MAX) \
	X(task_id, PR_STR, CM_ID_MAX)      \
	X(sequence, PR_INT, 0)             \
	X(kind, PR_STR, 32)                \
	X(payload, PR_STR, CM_RESULT_MAX)  \
	X(created_at, PR_INT, 0)           \
	X(host, PR_STR, CM_HOST_MAX)       \
	X(serial, PR_INT, 0)

/* A task's artifact: bytes as stored, sha256 (lowercase hex) and size as
 * the store computed them when it wrote the row. */
#define PR_REC_ARTIFACT(X)                \
	X(task_id, PR_STR, CM_ID_MAX)     \
	X(space_id, PR_STR, CM_ID_MAX)    \
	X(name, PR_STR, CM_ID_MAX)        \
	X(mime, PR_STR, CM_MIME_MAX)      \
	X(bytes, PR_BIN, CM_ARTIFACT_MAX) \
	X(sha256, PR_STR, 64)             \
	X(size, PR_INT, 0)                \
	X(created_at, PR_INT, 0)

/* A file kept on a Space (space.file_*): bytes only from file_get. */
#define PR_REC_FILE(X)                    \
	X(space_id, PR_STR, CM_ID_MAX)    \
	X(name, PR_STR, CM_FILE_NAME_MAX) \
	X(mime, PR_STR, CM_MIME_MAX)      \
	X(bytes, PR_BIN, CM_UPLOAD_MAX)   \
	X(sha256, PR_STR, 64)             \
	X(size, PR_INT, 0)                \
	X(created_at, PR_INT, 0)          \
	X(updated_at, PR_INT, 0)

/* A supervised process, as the supervisor's control socket reports it. */
#define PR_REC_CHILD(X)                \
	X(serial, PR_INT, 0)           \
	X(kind, PR_STR, 32)            \
	X(pid, PR_INT, 0)              \
	X(space_id, PR_STR, CM_ID_MAX) \
	X(state, PR_STR, 32)           \
	X(restarts, PR_INT, 0)         \
	X(uptime_ms, PR_INT, 0)

/* What an operator's input did (live.input's reply): its kind, and the
 * role and accessible name of the element under the point ("" when
 * none, or not a pointer's). */
#define PR_REC_INPUT(X)              \
	X(kind, PR_STR, 32)          \
	X(role, PR_STR, CM_NAME_MAX) \
	X(name, PR_STR, CM_LIVE_TARGET_NAME_MAX)

/* One frame of a Space's live view (pr_frame_encode): its sequence from
 * 1 within one screencast, its size in pixels, when the browser painted
 * it (Unix ms) and its JPEG bytes. */
#define PR_REC_FRAME(X)      \
	X(seq, PR_INT, 0)    \
	X(width, PR_INT, 0)  \
	X(height, PR_INT, 0) \
	X(at, PR_INT, 0)     \
	X(jpeg, PR_BIN, CM_LIVE_FRAME_MAX)

/* X(struct tag, list member in pr_rep, field macro) */
#define PR_RECORDS(X)                                                \
	X(workspace, workspaces, PR_REC_WORKSPACE)                   \
	X(principal, principals, PR_REC_PRINCIPAL)                   \
	X(token, tokens, PR_REC_TOKEN)                               \
	X(membership, memberships, PR_REC_MEMBERSHIP)                \
	X(bundle, bundles, PR_REC_BUNDLE)                            \
	X(instance, instances, PR_REC_INSTANCE)                      \
	X(instance_secret, instance_secrets, PR_REC_INSTANCE_SECRET) \
	X(binding, bindings, PR_REC_BINDING)                         \
	X(space, spaces, PR_REC_SPACE)                               \
	X(task, tasks, PR_REC_TASK)                                  \
	X(event, events, PR_REC_EVENT)                               \
	X(artifact, artifacts, PR_REC_ARTIFACT)                      \
	X(child, children, PR_REC_CHILD)                             \
	X(file, files, PR_REC_FILE)                                  \
	X(input, inputs, PR_REC_INPUT)                               \
	X(frame, frames, PR_REC_FRAME)

#define PR_REC_MEMBER(m, t, max) PR_CTYPE_##t m;
#define PR_REC_STRUCT(tag, list, fields) \
	struct pr_##tag {                \
		fields(PR_REC_MEMBER)    \
	};
PR_RECORDS(PR_REC_STRUCT)
#undef PR_REC_STRUCT

/*
 * A reply.  Scalars: err (sent as its stable code), msg (human text, at
 * most CM_ERROR_MESSAGE_MAX), created (a create or submit made a new row,
 * rather than answering an idempotent repeat), cancel_requested and
 * close_requested (heartbeat, finish), args (the claimed task's args
 * JSON; only actor.claim sends it), count (rows a sweep touched),
 * feed_serial (space.get: the serial of the last event the store had
 * published, or will publish with this reply's commit, when it read the
 * Space; see PR_REC_EVENT).  Then one
 * list per record type, each at most CM_PROTO_LIST_MAX long.
 */
struct pr_rep {
	enum cm_err err;
	const char *msg;
	bool created;
	bool cancel_requested;
	bool close_requested;
	const char *args;
	int64_t count;
	int64_t feed_serial;
#define PR_REP_LIST(tag, list, fields) \
	struct pr_##tag *list;         \
	size_t n_##list;
	PR_RECORDS(PR_REP_LIST)
#undef PR_REP_LIST
	struct pr_arena arena;
};

/*
 * Encoders write a msgpack message into *buf (malloc'd; the caller frees)
 * and its length into *len.  Return 0, or -1 on allocation failure or when
 * a field breaks its bound (a bug in the caller, which is logged).
 */
int pr_req_encode(const struct pr_req *r, char **buf, size_t *len);
int pr_rep_encode(const struct pr_rep *r, char **buf, size_t *len);

/*
 * Decoders fill *out from len bytes of buf (len at most CM_MSG_MAX).
 * Return 0, or -1 with a reason in err; on failure *out holds nothing
 * that needs freeing, though pr_*_free on it is still safe.
 */
int pr_req_decode(
    const void *buf, size_t len, struct pr_req *out, char *err, size_t errlen);
int pr_rep_decode(
    const void *buf, size_t len, struct pr_rep *out, char *err, size_t errlen);

void pr_req_free(struct pr_req *r);
void pr_rep_free(struct pr_rep *r);

/* Reply building helpers: memory from the reply's arena. */
const char *pr_rep_strdup(struct pr_rep *r, const char *s);
void *pr_rep_alloc(struct pr_rep *r, size_t n);
/* Sets err and a formatted msg (truncated to CM_ERROR_MESSAGE_MAX). */
void pr_rep_error(struct pr_rep *r, enum cm_err err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Internal events.  pr_event_topic writes "ev/<workspace_id>/<space_id>/"
 * (returns its length, or -1 when it does not fit).  pr_pub_encode
 * produces topic followed by the msgpack record, ready to publish;
 * pr_pub_decode checks the topic against the record it carries.
 *
 * An event that ends a task may carry the task's row as that same commit
 * left it (task, or NULL): a second msgpack map after the event's, never
 * stored, from which the api answers a request waiting on the task
 * without reading it back.  It fits its event only when pr_pub_task_fits
 * says so (the same task, Space and workspace, with capability and
 * status); the encoder refuses, and the decoder rejects, one that does
 * not.  A decoder given task NULL checks the task all the same and drops
 * it; otherwise task->task_id is NULL when the message carries none.
 */
int pr_event_topic(
    const char *workspace_id, const char *space_id, char *buf, size_t len);
int pr_pub_encode(const struct pr_event *ev, const struct pr_task *task,
    char **buf, size_t *len);
int pr_pub_decode(const void *buf, size_t len, struct pr_event *out,
    struct pr_task *task, struct pr_arena *arena, char *err, size_t errlen);
bool pr_pub_task_fits(const struct pr_event *ev, const struct pr_task *task);

/*
 * The store's beat, on its PUB beside the events: the topic PR_BEAT_TOPIC
 * and the serial of the last event it has sent (0: none yet), sent when
 * it has sent nothing else for CM_STORE_BEAT_MS.  A subscriber whose last
 * serial is not the beat's has lost one; with no beat for long, the feed
 * itself is down.  pr_beat_decode returns 0 with *serial, or -1.
 */
#define PR_BEAT_TOPIC "bt/"
int pr_beat_encode(int64_t serial, char **buf, size_t *len);
int pr_beat_decode(const void *buf, size_t len, int64_t *serial);

/*
 * A live frame as the actor publishes it: the frame record alone, at
 * most CM_LIVE_MSG_MAX bytes.  The decoder checks it as any record and
 * also that seq, width, height and at are positive and that the JPEG is
 * there; its bytes live in arena.
 */
int pr_frame_encode(const struct pr_frame *f, char **buf, size_t *len);
int pr_frame_decode(const void *buf, size_t len, struct pr_frame *out,
    struct pr_arena *arena, char *err, size_t errlen);

#endif
