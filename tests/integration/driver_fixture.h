/*
 * driver_fixture.h: running a runtime driver (space-actor/driver.h) in a
 * test as the actor's loop runs it.  Header-only.
 */
#ifndef SPACED_DRIVER_FIXTURE_H
#define SPACED_DRIVER_FIXTURE_H

#include <criterion/criterion.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "config.h"
#include "driver.h"
#include "pages.h"
#include "testkit.h"

/*
 * Runs one call of capability cap with args_json on driver d (of ops) to
 * its end, for at most wait_ms, and returns the outcome; its result is
 * parsed into *result (caller decrefs) when result is not NULL.
 */
static inline struct act_outcome df_run_beside(const struct act_driver_ops *ops,
    struct act_driver *d, struct act_driver *beside, const char *cap,
    const char *args_json, json_t **result, int wait_ms);

static inline struct act_outcome
df_run(const struct act_driver_ops *ops, struct act_driver *d, const char *cap,
    const char *args_json, json_t **result, int wait_ms)
{
	return df_run_beside(ops, d, NULL, cap, args_json, result, wait_ms);
}

/*
 * df_run, with driver beside (of ops too; NULL: none) served meanwhile
 * as an idle actor's loop serves its own, another Space's actor on the
 * same browser.
 */
static inline struct act_outcome
df_run_beside(const struct act_driver_ops *ops, struct act_driver *d,
    struct act_driver *beside, const char *cap, const char *args_json,
    json_t **result, int wait_ms)
{
	struct act_call call = {.task_id = "t", .request_id = "r"};
	struct act_outcome out;
	json_t *args = json_loads(args_json, 0, NULL);
	int64_t end = cm_mono_ms() + wait_ms;

	cr_assert_not_null(args, "bad args in the test: %s", args_json);
	call.capability = cap;
	call.args = args;
	call.deadline_ms = end;
	memset(&out, 0, sizeof(out));
	cr_assert_eq(ops->start(d, &call), 0);
	for (;;) {
		struct pollfd fds[16];
		struct act_outcome idle;
		int64_t wake, wake_b = -1, now = cm_mono_ms();
		int n = ops->pollfds(d, fds, 8, &wake), nb = 0;

		if (beside != NULL)
			nb = ops->pollfds(beside, fds + n, 8, &wake_b);
		if (wake < 0 || (wake_b >= 0 && wake_b < wake))
			wake = wake_b;
		cr_assert_lt(now, end + 1000, "%s did not end", cap);
		poll(fds, (nfds_t)(n + nb),
		    wake < 0      ? 100
		    : wake <= now ? 0
		                  : (int)(wake - now));
		memset(&idle, 0, sizeof(idle));
		if (beside != NULL)
			ops->step(beside, fds + n, nb, &idle);
		if (ops->step(d, fds, n, &out) == ACT_DONE)
			break;
	}
	json_decref(args);
	if (result != NULL)
		*result = out.result ? json_loads(out.result, 0, NULL) : NULL;
	free(out.result);
	out.result = NULL;
	return out;
}

/*
 * A managed driver's world in a test: a data dir of the test's own (the
 * profiles live there), the env of one Space on /usr/bin/chromium, and
 * the page server of pages.h.  The browsers inherit TMPDIR=dir, so
 * Chromium's single-instance directories (under $TMPDIR, left by every
 * browser killed; only the actor's sweep would remove a discarded
 * profile's) go with dir.  Call before any thread starts.
 */
struct df_world {
	struct cm_config cfg;
	struct act_env env;
	struct tk_pages *pages;
	int port;
	char dir[256];
};

static inline void
df_world_setup(struct df_world *w, const char *tag, const char *space_id,
    const char *instance_id)
{
	signal(SIGPIPE, SIG_IGN); /* as the actor: a dead browser's pipe */
	memset(w, 0, sizeof(*w));
	tk_tmpdir(w->dir, sizeof(w->dir), tag);
	cr_assert_eq(setenv("TMPDIR", w->dir, 1), 0);
	snprintf(w->cfg.data_dir, sizeof(w->cfg.data_dir), "%s", w->dir);
	snprintf(w->cfg.chromium_path, sizeof(w->cfg.chromium_path), "%s",
	    "/usr/bin/chromium");
	w->env.space_id = space_id;
	w->env.instance_id = instance_id;
	w->env.driver = CM_DRIVER_MANAGED;
	w->env.cfg = &w->cfg;
	cr_assert_not_null(w->pages = tk_pages_start(&w->port));
}

static inline void
df_world_teardown(struct df_world *w)
{
	tk_pages_stop(w->pages);
	tk_rmrf(w->dir);
}

/* Navigates d to path on the page server at port; the page's title must
 * be title. */
static inline void
df_open(const struct act_driver_ops *ops, struct act_driver *d, int port,
    const char *path, const char *title, int wait_ms)
{
	char args[160];
	json_t *res;
	struct act_outcome o;

	snprintf(args, sizeof(args), "{\"url\":\"http://127.0.0.1:%d%s\"}",
	    port, path);
	o = df_run(ops, d, "navigate", args, &res, wait_ms);
	cr_assert_eq(
	    o.err, CM_OK, "navigate: %s %s", cm_err_code(o.err), o.message);
	cr_assert_str_eq(
	    json_string_value(json_object_get(res, "title")), title);
	json_decref(res);
}

/* Runs cap with args on d: it must fail with want, its message holding
 * words. */
static inline void
df_fails_with(const struct act_driver_ops *ops, struct act_driver *d,
    const char *cap, const char *args, enum cm_err want, const char *words,
    int wait_ms)
{
	struct act_outcome o = df_run(ops, d, cap, args, NULL, wait_ms);

	cr_assert_eq(o.err, want, "%s %s: %s (%s)", cap, args,
	    cm_err_code(o.err), o.message);
	cr_assert_not_null(strstr(o.message, words),
	    "%s %s: \"%s\" lacks \"%s\"", cap, args, o.message, words);
}

/* The ref the outline gives the line that holds what; the test fails
 * when there is none on that line. */
static inline void
df_ref_of(const char *outline, const char *what, char *ref, size_t len)
{
	const char *line = strstr(outline, what), *r;

	cr_assert_not_null(line, "no \"%s\" in:\n%s", what, outline);
	r = strstr(line, "[ref=");
	cr_assert_not_null(r, "no ref on \"%s\" in:\n%s", what, outline);
	cr_assert_lt(
	    (size_t)(r - line), strcspn(line, "\n"), "no ref on %s", what);
	snprintf(ref, len, "%.*s", (int)strcspn(r + 5, "]"), r + 5);
}

/* The outline of a snapshot's text: what follows its header lines (the
 * page's url, title, tabs and dialog, which begin with neither '-' nor a
 * space, as no line of the outline does). */
static inline const char *
df_outline(const char *snapshot)
{
	while (*snapshot != '\0' && *snapshot != '-' && *snapshot != ' ') {
		const char *nl = strchr(snapshot, '\n');

		snapshot = nl != NULL ? nl + 1 : snapshot + strlen(snapshot);
	}
	return snapshot;
}

#endif
