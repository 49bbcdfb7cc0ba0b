/*
 * status.h: the statuses of tasks, Spaces and browser instances, the
 * kinds of events, the drivers and profile modes of browser instances, as
 * enums, each with its one string table.
 *
 * The strings are the wire and database form and never change; code
 * compares enums, never the strings.  Each X-macro row is
 * X(enum, string); a parse of a string that is no row (or NULL) returns
 * the table's __COUNT value, which callers treat as an error.  A name of
 * a value out of range is "" (never NULL), so it matches no row.
 */
#ifndef CM_STATUS_H
#define CM_STATUS_H

#include <stdbool.h>

/* A task's.  completed, failed and cancelled are terminal. */
#define CM_TASK_STATUSES(X)               \
	X(CM_TASK_QUEUED, "queued")       \
	X(CM_TASK_RUNNING, "running")     \
	X(CM_TASK_COMPLETED, "completed") \
	X(CM_TASK_FAILED, "failed")       \
	X(CM_TASK_CANCELLED, "cancelled")

/* A Space's. */
#define CM_SPACE_STATUSES(X)           \
	X(CM_SPACE_IDLE, "idle")       \
	X(CM_SPACE_RUNNING, "running") \
	X(CM_SPACE_HELD, "held")       \
	X(CM_SPACE_CLOSED, "closed")   \
	X(CM_SPACE_ERROR, "error")

/* A browser instance's. */
#define CM_INSTANCE_STATUSES(X)                   \
	X(CM_INSTANCE_READY, "ready")             \
	X(CM_INSTANCE_UNAVAILABLE, "unavailable") \
	X(CM_INSTANCE_DISABLED, "disabled")

/* Event kinds: task events, Space events, runtime events (the egress
 * proxy's refusals; the page's dialogs, tabs and downloads), operator
 * events (a take-over's start and end, a call for help, an operator's
 * input through the live view). */
#define CM_EVENT_KINDS(X)                                    \
	X(CM_EV_QUEUED, "queued")                            \
	X(CM_EV_STARTED, "started")                          \
	X(CM_EV_COMPLETED, "completed")                      \
	X(CM_EV_FAILED, "failed")                            \
	X(CM_EV_CANCEL_REQUESTED, "cancel_requested")        \
	X(CM_EV_CANCELLED, "cancelled")                      \
	X(CM_EV_SPACE_OPENED, "space_opened")                \
	X(CM_EV_SPACE_CLOSED, "space_closed")                \
	X(CM_EV_SPACE_ERROR, "space_error")                  \
	X(CM_EV_NETWORK_BLOCKED, "network_blocked")          \
	X(CM_EV_DIALOG, "dialog")                            \
	X(CM_EV_TAB_OPENED, "tab_opened")                    \
	X(CM_EV_DOWNLOAD, "download")                        \
	X(CM_EV_TAKEOVER_STARTED, "takeover_started")        \
	X(CM_EV_TAKEOVER_ENDED, "takeover_ended")            \
	X(CM_EV_HELP_REQUESTED, "help_requested")            \
	X(CM_EV_OPERATOR_INPUT, "operator_input")            \
	/* A wake-up notice only (proto.h), never stored. */ \
	X(CM_EV_CLOSE_REQUESTED, "close_requested")

/* A browser instance's driver: what kind of runtime its actor runs. */
#define CM_DRIVERS(X)                   \
	X(CM_DRIVER_MANAGED, "managed") \
	X(CM_DRIVER_CDP, "cdp")         \
	X(CM_DRIVER_FAKE, "fake")

/* A managed instance's browser profile: a fresh one per Space, removed
 * when it closes, or one kept by the instance across its Spaces. */
#define CM_PROFILE_MODES(X)                  \
	X(CM_PROFILE_EPHEMERAL, "ephemeral") \
	X(CM_PROFILE_PERSISTENT, "persistent")

/* Why an egress proxy refused a connection: the reason of a
 * network_blocked event, and the label of spaced_egress_blocked_total. */
#define CM_BLOCK_NOT_ALLOWED "host_not_allowed" /* allow_hosts */
#define CM_BLOCK_PRIVATE "private_address"      /* deny_private_networks */
#define CM_BLOCK_NO_POLICY "no_policy"          /* no Space yet */

#define CM_STATUS_ENUM(e, s) e,
enum cm_task_status { CM_TASK_STATUSES(CM_STATUS_ENUM) CM_TASK_STATUS__COUNT };
enum cm_space_status {
	CM_SPACE_STATUSES(CM_STATUS_ENUM) CM_SPACE_STATUS__COUNT
};
enum cm_instance_status {
	CM_INSTANCE_STATUSES(CM_STATUS_ENUM) CM_INSTANCE_STATUS__COUNT
};
enum cm_event_kind { CM_EVENT_KINDS(CM_STATUS_ENUM) CM_EVENT_KIND__COUNT };
enum cm_driver { CM_DRIVERS(CM_STATUS_ENUM) CM_DRIVER__COUNT };
enum cm_profile_mode {
	CM_PROFILE_MODES(CM_STATUS_ENUM) CM_PROFILE_MODE__COUNT
};
#undef CM_STATUS_ENUM

const char *cm_task_status_name(enum cm_task_status s);
/* The status named s, or CM_TASK_STATUS__COUNT. */
enum cm_task_status cm_task_status_parse(const char *s);
/* completed, failed or cancelled: the task will never change again. */
bool cm_task_status_terminal(enum cm_task_status s);
/* cm_task_status_parse(s) == want, for a status read off a record. */
bool cm_task_status_is(const char *s, enum cm_task_status want);

const char *cm_space_status_name(enum cm_space_status s);
/* The status named s, or CM_SPACE_STATUS__COUNT. */
enum cm_space_status cm_space_status_parse(const char *s);
bool cm_space_status_is(const char *s, enum cm_space_status want);

const char *cm_instance_status_name(enum cm_instance_status s);
/* The status named s, or CM_INSTANCE_STATUS__COUNT. */
enum cm_instance_status cm_instance_status_parse(const char *s);

const char *cm_event_kind_name(enum cm_event_kind k);
/* The kind named s, or CM_EVENT_KIND__COUNT. */
enum cm_event_kind cm_event_kind_parse(const char *s);
bool cm_event_kind_is(const char *s, enum cm_event_kind want);
/* completed, failed or cancelled: the event that ends its task. */
bool cm_event_kind_ends_task(enum cm_event_kind k);
/* What a supervisor acts on (store-notices.ipc): space_opened starts an
 * actor, queued, cancel_requested, close_requested and space_closed wake
 * one. */
bool cm_event_kind_for_supervisor(enum cm_event_kind k);
/* The kinds among them that wake a Space's actor. */
bool cm_event_kind_wakes_actor(enum cm_event_kind k);
/* dialog, tab_opened or download: an event of the Space's page, which
 * its actor records (space.page_event) and no other op writes. */
bool cm_event_kind_of_page(enum cm_event_kind k);

const char *cm_driver_name(enum cm_driver d);
/* The driver named s, or CM_DRIVER__COUNT. */
enum cm_driver cm_driver_parse(const char *s);

const char *cm_profile_mode_name(enum cm_profile_mode m);
/* The mode named s, or CM_PROFILE_MODE__COUNT. */
enum cm_profile_mode cm_profile_mode_parse(const char *s);
/*
 * The one rule of an instance's profile path (NULL or "": none given): a
 * persistent instance may name an absolute path, where its browser keeps
 * its profile (none: <data_dir>/profiles/instance-<its id>); a relative
 * one would land in whatever the service's working directory is, and an
 * ephemeral instance's profile is always <data_dir>/profiles/<space_id>,
 * so a path there means nothing.  NULL when mode and path go together,
 * else why not (static text that never quotes the path, a secret).
 */
const char *cm_profile_refusal(enum cm_profile_mode m, const char *profile);

#endif
