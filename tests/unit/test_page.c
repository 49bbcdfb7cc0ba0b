/*
 * test_page.c: the capability layer's calls that end before any browser
 * call (space-actor/page.h).  Such a call has an outcome at once, and the
 * page asks for its next turn at once, so the actor's loop takes it
 * without waiting for a browser event or a timer.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "clock.h"
#include "errors.h"
#include "page.h"

/* A page with no browser behind it: every call below must end before it
 * would send a command (the CDP client is NULL). */
static struct act_page page;

static void
start(const char *capability, const char *args_json)
{
	json_t *args = json_loads(args_json, 0, NULL);

	act_page_init(&page, NULL, NULL, "session", "target");
	cr_assert_eq(
	    act_page_start(&page, capability, args, cm_mono_ms() + 10000), 0);
	json_decref(args);
}

static void
ends_at_once(enum cm_err want, const char *words)
{
	int64_t now = cm_mono_ms();
	int64_t wake = act_page_tick(&page, now);
	struct act_outcome out;

	cr_assert_geq(wake, 0, "no turn asked for: the outcome would wait");
	cr_assert_leq(wake, now, "a turn asked for at %lld, now %lld",
	    (long long)wake, (long long)now);
	cr_assert(act_page_take(&page, &out));
	cr_assert_eq(out.err, want, "err %d", (int)out.err);
	cr_assert_not_null(strstr(out.message, words), "%s", out.message);
	free(out.result);
	/* Taken: no call, no turn. */
	cr_assert_eq(act_page_tick(&page, cm_mono_ms()), -1);
	act_page_fini(&page);
}

Test(page, a_stale_ref_fails_at_once)
{
	start("click", "{\"ref\":\"e3\"}");
	ends_at_once(CM_E_ELEMENT_NOT_FOUND, "stale or unknown");
}

Test(page, a_ref_of_no_snapshot_fails_at_once)
{
	start("type", "{\"ref\":\"x9\",\"text\":\"a\"}");
	ends_at_once(CM_E_ELEMENT_NOT_FOUND, "not a ref");
}

Test(page, an_unknown_capability_fails_at_once)
{
	start("teleport", "{}");
	ends_at_once(CM_E_CAPABILITY_UNKNOWN, "no such capability");
}
