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
 * once for the five of them. */
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
cm_event_kind_of_page(enum cm_event_kind k)
{
	return k == CM_EV_DIALOG || k == CM_EV_TAB_OPENED ||
	       k == CM_EV_DOWNLOAD;
}
