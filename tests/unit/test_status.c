#include <criterion/criterion.h>
#include <string.h>

#include "status.h"

/* The wire strings clients read (docs/api.md): the tables may never change
 * them. */
static const char *const task_wire[] = {
    "queued", "running", "completed", "failed", "cancelled"};
static const char *const space_wire[] = {
    "idle", "running", "held", "closed", "error"};
static const char *const instance_wire[] = {"ready", "unavailable", "disabled"};
static const char *const kind_wire[] = {"queued", "started", "completed",
    "failed", "cancel_requested", "cancelled", "space_opened", "space_closed",
    "space_error", "network_blocked", "dialog", "tab_opened", "download",
    "takeover_started", "takeover_ended", "help_requested", "operator_input",
    "close_requested"};
/* A browser instance's driver, as stored and as registered over HTTP. */
static const char *const driver_wire[] = {"managed", "cdp", "fake"};
/* A managed instance's profile mode, as stored and as registered. */
static const char *const profile_wire[] = {"ephemeral", "persistent"};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* name, parse and the table agree on every value, in wire order. */
#define ROUND_TRIP(prefix, count, wire)                                      \
	do {                                                                 \
		cr_assert_eq((size_t)(count), N(wire));                      \
		for (int i = 0; i < (int)(count); i++) {                     \
			cr_assert_str_eq(                                    \
			    prefix##_name((enum prefix)i), wire[i]);         \
			cr_assert_eq(                                        \
			    (int)prefix##_parse(wire[i]), i, "%s", wire[i]); \
		}                                                            \
	} while (0)

Test(status, round_trip_of_every_value)
{
	ROUND_TRIP(cm_task_status, CM_TASK_STATUS__COUNT, task_wire);
	ROUND_TRIP(cm_space_status, CM_SPACE_STATUS__COUNT, space_wire);
	ROUND_TRIP(
	    cm_instance_status, CM_INSTANCE_STATUS__COUNT, instance_wire);
	ROUND_TRIP(cm_event_kind, CM_EVENT_KIND__COUNT, kind_wire);
	ROUND_TRIP(cm_driver, CM_DRIVER__COUNT, driver_wire);
	ROUND_TRIP(cm_profile_mode, CM_PROFILE_MODE__COUNT, profile_wire);
	cr_assert(cm_task_status_is("failed", CM_TASK_FAILED));
	cr_assert(cm_space_status_is("closed", CM_SPACE_CLOSED));
	cr_assert(cm_event_kind_is("space_opened", CM_EV_SPACE_OPENED));
}

Test(status, unknown_strings_are_errors)
{
	static const char *const bad[] = {"", "Queued", "queued ", "cancel",
	    "canceled", "closing", "open", "done", "Managed", "cdp ", "chrome",
	    "fak"};

	for (size_t i = 0; i < N(bad); i++) {
		cr_assert_eq(cm_task_status_parse(bad[i]),
		    CM_TASK_STATUS__COUNT, "%s", bad[i]);
		cr_assert_eq(cm_space_status_parse(bad[i]),
		    CM_SPACE_STATUS__COUNT, "%s", bad[i]);
		cr_assert_eq(cm_instance_status_parse(bad[i]),
		    CM_INSTANCE_STATUS__COUNT, "%s", bad[i]);
		cr_assert_eq(cm_event_kind_parse(bad[i]), CM_EVENT_KIND__COUNT,
		    "%s", bad[i]);
		cr_assert_eq(
		    cm_driver_parse(bad[i]), CM_DRIVER__COUNT, "%s", bad[i]);
		cr_assert_eq(cm_profile_mode_parse(bad[i]),
		    CM_PROFILE_MODE__COUNT, "%s", bad[i]);
		cr_assert_not(cm_task_status_is(bad[i], CM_TASK_QUEUED));
	}
	cr_assert_eq(cm_task_status_parse(NULL), CM_TASK_STATUS__COUNT);
	cr_assert_eq(cm_space_status_parse(NULL), CM_SPACE_STATUS__COUNT);
	cr_assert_eq(cm_instance_status_parse(NULL), CM_INSTANCE_STATUS__COUNT);
	cr_assert_eq(cm_event_kind_parse(NULL), CM_EVENT_KIND__COUNT);
	cr_assert_eq(cm_driver_parse(NULL), CM_DRIVER__COUNT);
	cr_assert_eq(cm_profile_mode_parse(NULL), CM_PROFILE_MODE__COUNT);
	/* A status of one table is no value of another. */
	cr_assert_eq(cm_task_status_parse("idle"), CM_TASK_STATUS__COUNT);
	cr_assert_eq(cm_space_status_parse("queued"), CM_SPACE_STATUS__COUNT);
	cr_assert_eq(cm_event_kind_parse("running"), CM_EVENT_KIND__COUNT);
	cr_assert_eq(cm_driver_parse("ready"), CM_DRIVER__COUNT);
}

Test(status, out_of_range_values_name_nothing)
{
	cr_assert_str_eq(cm_task_status_name(CM_TASK_STATUS__COUNT), "");
	cr_assert_str_eq(cm_space_status_name(CM_SPACE_STATUS__COUNT), "");
	cr_assert_str_eq(
	    cm_instance_status_name(CM_INSTANCE_STATUS__COUNT), "");
	cr_assert_str_eq(cm_event_kind_name(CM_EVENT_KIND__COUNT), "");
	cr_assert_str_eq(cm_driver_name(CM_DRIVER__COUNT), "");
	cr_assert_str_eq(cm_driver_name((enum cm_driver) - 1), "");
	cr_assert_str_eq(cm_task_status_name((enum cm_task_status) - 1), "");
	cr_assert_not(cm_task_status_terminal(CM_TASK_STATUS__COUNT));
	cr_assert_not(cm_event_kind_ends_task(CM_EVENT_KIND__COUNT));
}

Test(status, terminal_set)
{
	static const bool want[CM_TASK_STATUS__COUNT] = {
	    [CM_TASK_QUEUED] = false,
	    [CM_TASK_RUNNING] = false,
	    [CM_TASK_COMPLETED] = true,
	    [CM_TASK_FAILED] = true,
	    [CM_TASK_CANCELLED] = true,
	};

	for (int i = 0; i < CM_TASK_STATUS__COUNT; i++)
		cr_assert_eq(cm_task_status_terminal((enum cm_task_status)i),
		    want[i], "%s", task_wire[i]);
}

Test(status, the_events_that_end_a_task)
{
	for (int i = 0; i < CM_EVENT_KIND__COUNT; i++) {
		enum cm_event_kind k = (enum cm_event_kind)i;
		bool want = k == CM_EV_COMPLETED || k == CM_EV_FAILED ||
		            k == CM_EV_CANCELLED;

		cr_assert_eq(
		    cm_event_kind_ends_task(k), want, "%s", kind_wire[i]);
	}
}

/* A profile path is absolute, and only a persistent instance has one. */
Test(status, the_profile_rule)
{
	static const struct {
		enum cm_profile_mode mode;
		const char *profile;
		bool ok;
	} cases[] = {
	    {CM_PROFILE_EPHEMERAL, NULL, true},
	    {CM_PROFILE_EPHEMERAL, "", true},
	    {CM_PROFILE_EPHEMERAL, "/srv/p", false},
	    {CM_PROFILE_EPHEMERAL, "ephemeral", false},
	    {CM_PROFILE_PERSISTENT, NULL, true},
	    {CM_PROFILE_PERSISTENT, "", true},
	    {CM_PROFILE_PERSISTENT, "/srv/p", true},
	    {CM_PROFILE_PERSISTENT, "ephemeral", false},
	    {CM_PROFILE_PERSISTENT, "./p", false},
	    {CM_PROFILE_PERSISTENT, "~/p", false},
	    {CM_PROFILE_MODE__COUNT, NULL, false},
	};

	for (size_t i = 0; i < N(cases); i++) {
		const char *why =
		    cm_profile_refusal(cases[i].mode, cases[i].profile);

		cr_assert_eq(why == NULL, cases[i].ok, "case %zu: %s", i,
		    why ? why : "accepted");
		/* The path is a secret: no refusal quotes it. */
		if (why != NULL && cases[i].profile != NULL &&
		    cases[i].profile[0] != '\0')
			cr_assert_null(
			    strstr(why, cases[i].profile), "case %zu", i);
	}
	cr_assert_not_null(strstr(
	    cm_profile_refusal(CM_PROFILE_PERSISTENT, "var/p"), "absolute"));
}

/* The page's own kinds: only the actor's space.page_event writes them. */
Test(status, the_events_of_the_page)
{
	for (int i = 0; i < CM_EVENT_KIND__COUNT; i++) {
		enum cm_event_kind k = (enum cm_event_kind)i;
		bool want = strcmp(kind_wire[i], "dialog") == 0 ||
		            strcmp(kind_wire[i], "tab_opened") == 0 ||
		            strcmp(kind_wire[i], "download") == 0;

		cr_assert_eq(
		    cm_event_kind_of_page(k), want, "%s", kind_wire[i]);
	}
	cr_assert_not(cm_event_kind_of_page(CM_EVENT_KIND__COUNT));
}
