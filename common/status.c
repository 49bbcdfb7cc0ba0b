#include "status.h"

#include <string.h>

/* The row of table[0..n) equal to s, or n.  O(n) over a handful of rows. */
static int
status_find(const char *const *table, int n, const char *s)
{
	if (s == NULL)
		return n;
	for (int i = 0; i < n; i++)
		if (strcmp(table[i], s) == 0)
			return i;
	return n;
}

/* One string table per enum, and its name and parse functions, written
 * once for the six of them. */
#define CM_STATUS_ROW(e, s) [e] = s,
#define CM_STATUS_TABLE(prefix, count, rows)                               \
	static const char *const prefix##_table[count] = {                 \
	    rows(CM_STATUS_ROW)};                                          \
	const char *prefix##_name(enum prefix v)                           \
	{                                                                  \
		return (unsigned)v < count ? prefix##_table[v] : "";       \
	}                                                                  \
	enum prefix prefix##_parse(const char *s)                          \
	{                                                                  \
		return (enum prefix)status_find(prefix##_table, count, s); \
	}

CM_STATUS_TABLE(cm_task_status, CM_TASK_STATUS__COUNT, CM_TASK_STATUSES)
CM_STATUS_TABLE(cm_space_status, CM_SPACE_STATUS__COUNT, CM_SPACE_STATUSES)
CM_STATUS_TABLE(
    cm_instance_status, CM_INSTANCE_STATUS__COUNT, CM_INSTANCE_STATUSES)
CM_STATUS_TABLE(cm_event_kind, CM_EVENT_KIND__COUNT, CM_EVENT_KINDS)
CM_STATUS_TABLE(cm_driver, CM_DRIVER__COUNT, CM_DRIVERS)
CM_STATUS_TABLE(cm_profile_mode, CM_PROFILE_MODE__COUNT, CM_PROFILE_MODES)

bool
cm_task_status_terminal(enum cm_task_status s)
{
	return s == CM_TASK_COMPLETED || s == CM_TASK_FAILED ||
	       s == CM_TASK_CANCELLED;
}

bool
cm_task_status_is(const char *s, enum cm_task_status want)
{
	return cm_task_status_parse(s) == want;
}

bool
cm_space_status_is(const char *s, enum cm_space_status want)
{
	return cm_space_status_parse(s) == want;
}

bool
cm_event_kind_is(const char *s, enum cm_event_kind want)
{
	return cm_event_kind_parse(s) == want;
}

/* A task's last event is named after its terminal status, so the one
 * terminal set decides both. */
bool
cm_event_kind_ends_task(enum cm_event_kind k)
{
	return cm_task_status_terminal(
	    cm_task_status_parse(cm_event_kind_name(k)));
}

bool
cm_event_kind_wakes_actor(enum cm_event_kind k)
{
	return k == CM_EV_QUEUED || k == CM_EV_CANCEL_REQUESTED ||
	       k == CM_EV_CLOSE_REQUESTED || k == CM_EV_SPACE_CLOSED;
}

bool
cm_event_kind_for_supervisor(enum cm_event_kind k)
{
	return k == CM_EV_SPACE_OPENED || cm_event_kind_wakes_actor(k);
}

const char *
cm_profile_refusal(enum cm_profile_mode m, const char *profile)
{
	bool given = profile != NULL && profile[0] != '\0';

	if (m != CM_PROFILE_EPHEMERAL && m != CM_PROFILE_PERSISTENT)
		return "profile_mode must be ephemeral or persistent";
	if (given && m == CM_PROFILE_EPHEMERAL)
		return "a profile path is for profile_mode persistent only";
	if (given && profile[0] != '/')
		return "profile must be an absolute path";
	return NULL;
}

bool
cm_event_kind_of_page(enum cm_event_kind k)
{
	return k == CM_EV_DIALOG || k == CM_EV_TAB_OPENED ||
	       k == CM_EV_DOWNLOAD;
}
