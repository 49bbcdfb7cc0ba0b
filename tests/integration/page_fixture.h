/*
 * page_fixture.h: a managed driver on a real Chromium, run as the actor
 * runs it (driver_fixture.h), and the test page server (pages.h), in a
 * temporary data dir of the test's own, which is the browsers' TMPDIR
 * too: Chromium's single-instance directories (under $TMPDIR, left by
 * every browser killed) go with it.  Header-only.
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
	struct cm_config cfg;
	struct act_env env;
	struct tk_pages *pages;
	int port;
	char dir[256];
	struct act_driver *drv;
	int wait_ms; /* the most one call may take */
};

/* Starts the page server and opens the driver for Space space_id; the
 * data dir's name has tag in it. */
static inline void
pf_open(struct pf_page *f, const char *tag, const char *space_id, int wait_ms)
{
	char err[256];

	signal(SIGPIPE, SIG_IGN); /* as the actor: a dead browser's pipe */
	memset(f, 0, sizeof(*f));
	f->wait_ms = wait_ms;
	tk_tmpdir(f->dir, sizeof(f->dir), tag);
	cr_assert_eq(setenv("TMPDIR", f->dir, 1), 0);
	snprintf(f->cfg.data_dir, sizeof(f->cfg.data_dir), "%s", f->dir);
	snprintf(f->cfg.chromium_path, sizeof(f->cfg.chromium_path), "%s",
	    "/usr/bin/chromium");
	f->env.space_id = space_id;
	f->env.instance_id = "0190a0b0-0000-7000-8000-0000000000ab";
	f->env.driver = CM_DRIVER_MANAGED;
	f->env.cfg = &f->cfg;
	cr_assert_not_null(f->pages = tk_pages_start(&f->port));
	cr_assert_eq(
	    act_driver_managed.open(&f->env, &f->drv, err, sizeof(err)), 0,
	    "%s", err);
}

static inline void
pf_close(struct pf_page *f)
{
	act_driver_managed.close(f->drv);
	tk_pages_stop(f->pages);
	tk_rmrf(f->dir);
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
	    f->port, path);
	o = pf_run(f, "navigate", args, &res);
	cr_assert_eq(
	    o.err, CM_OK, "navigate: %s %s", cm_err_code(o.err), o.message);
	cr_assert_str_eq(
	    json_string_value(json_object_get(res, "title")), title);
	json_decref(res);
}

#endif
