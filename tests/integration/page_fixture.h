/*
 * page_fixture.h: a managed driver on a real Chromium, open in a test
 * world (driver_fixture.h's df_world: its data dir, which is the
 * browsers' TMPDIR too, and the test page server), run as the actor runs
 * it.  Header-only.
 */
#ifndef SPACED_PAGE_FIXTURE_H
#define SPACED_PAGE_FIXTURE_H

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capability.h"
#include "driver.h"
#include "driver_fixture.h"
#include "pages.h"
#include "testkit.h"

struct pf_page {
	struct df_world w; /* the data dir, the Space's env, the pages */
	struct act_driver *drv;
	int wait_ms;             /* the most one call may take */
	struct cm_policy policy; /* pf_open_policy's */
};

/* Starts the page server and opens the driver for Space space_id, under
 * the network policy rules (a JSON object; NULL: none); the data dir's
 * name has tag in it. */
static inline void
pf_open_policy(struct pf_page *f, const char *tag, const char *space_id,
    int wait_ms, const char *rules)
{
	char err[256];

	memset(f, 0, sizeof(*f));
	f->wait_ms = wait_ms;
	df_world_setup(
	    &f->w, tag, space_id, "0190a0b0-0000-7000-8000-0000000000ab");
	if (rules != NULL) {
		cr_assert_eq(cm_policy_parse(rules, strlen(rules), &f->policy,
		                 err, sizeof(err)),
		    0, "%s", err);
		f->w.env.policy = &f->policy;
	}
	cr_assert_eq(
	    act_driver_managed.open(&f->w.env, &f->drv, err, sizeof(err)), 0,
	    "%s", err);
}

/* pf_open_policy with no policy. */
static inline void
pf_open(struct pf_page *f, const char *tag, const char *space_id, int wait_ms)
{
	pf_open_policy(f, tag, space_id, wait_ms, NULL);
}

static inline void
pf_close(struct pf_page *f)
{
	act_driver_managed.close(f->drv);
	df_world_teardown(&f->w);
}

/* One call of cap with args_json to its end (df_run). */
static inline struct act_outcome
pf_run(
    struct pf_page *f, const char *cap, const char *args_json, json_t **result)
{
	return df_run(
	    &act_driver_managed, f->drv, cap, args_json, result, f->wait_ms);
}

/* Navigates to path on the page server; its title must be title. */
static inline void
pf_navigate(struct pf_page *f, const char *path, const char *title)
{
	char args[160];
	json_t *res;
	struct act_outcome o;

	snprintf(args, sizeof(args), "{\"url\":\"http://127.0.0.1:%d%s\"}",
	    f->w.port, path);
	o = pf_run(f, "navigate", args, &res);
	cr_assert_eq(
	    o.err, CM_OK, "navigate: %s %s", cm_err_code(o.err), o.message);
	cr_assert_str_eq(
	    json_string_value(json_object_get(res, "title")), title);
	json_decref(res);
}

#endif
