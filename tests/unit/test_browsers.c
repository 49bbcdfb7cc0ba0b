/*
 * test_browsers.c: the managed instances of a first start
 * (supervisor/browsers.h), one step at a time with replies made here: what
 * it asks for, that it registers only the names not registered yet (a
 * start that resumes after a crash), that a binding that exists already
 * is fine, and when it does nothing at all.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "browsers.h"

#define WS "0190a000-0000-7000-8000-00000000000a"
#define BUNDLE "0190a000-0000-7000-8000-00000000000b"
#define KNOWN "0190a000-0000-7000-8000-000000000001"
#define MADE "0190a000-0000-7000-8000-000000000002"

/* A config asking for n instances, with a browser at path. */
static struct cm_config
config(int n, const char *path)
{
	struct cm_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.managed_browsers = n;
	snprintf(cfg.chromium_path, sizeof(cfg.chromium_path), "%s", path);
	return cfg;
}

Test(browsers, nothing_without_a_browser_or_a_count)
{
	struct cm_config none = config(0, "/bin/sh");
	struct cm_config absent = config(2, "/nonexistent/chromium");
	struct cm_config dir = config(2, "/tmp");
	struct sup_browsers *b;
	struct pr_req q;

	cr_assert_eq(sup_browsers_begin(&b, &none, WS, &q), SUP_BOOT_DONE);
	cr_assert_null(b);
	cr_assert_eq(sup_browsers_begin(&b, &absent, WS, &q), SUP_BOOT_DONE);
	cr_assert_null(b);
	cr_assert_eq(sup_browsers_begin(&b, &dir, WS, &q), SUP_BOOT_DONE,
	    "a directory is not a browser");
	cr_assert_null(b);
}

Test(browsers, registers_the_names_not_there_and_binds_every_one)
{
	struct cm_config cfg = config(2, "/bin/sh");
	struct pr_bundle bundles[2] = {{.bundle_id = "other", .name = "fake"},
	    {.bundle_id = BUNDLE, .name = "browser"}};
	struct pr_instance listed = {
	    .browser_instance_id = KNOWN, .name = "chromium-1"};
	struct pr_instance made = {
	    .browser_instance_id = MADE, .name = "chromium-2"};
	struct sup_browsers *b;
	struct pr_req q;
	struct pr_rep r;

	cr_assert_eq(sup_browsers_begin(&b, &cfg, WS, &q), SUP_BOOT_CALL);
	cr_assert_eq(q.op, PR_OP_BUNDLE_LIST);

	memset(&r, 0, sizeof(r));
	r.bundles = bundles;
	r.n_bundles = 2;
	cr_assert_eq(sup_browsers_step(b, &r, &q), SUP_BOOT_CALL);
	cr_assert_eq(q.op, PR_OP_INSTANCE_LIST);

	/* chromium-1 is there from an earlier start: bound, not made. */
	memset(&r, 0, sizeof(r));
	r.instances = &listed;
	r.n_instances = 1;
	cr_assert_eq(sup_browsers_step(b, &r, &q), SUP_BOOT_CALL);
	cr_assert_eq(q.op, PR_OP_BINDING_CREATE);
	cr_assert_str_eq(q.workspace_id, WS);
	cr_assert_str_eq(q.browser_instance_id, KNOWN);

	/* Bound already: fine.  Then chromium-2 is registered. */
	memset(&r, 0, sizeof(r));
	r.err = CM_E_CONFLICT;
	cr_assert_eq(sup_browsers_step(b, &r, &q), SUP_BOOT_CALL);
	cr_assert_eq(q.op, PR_OP_INSTANCE_REGISTER);
	cr_assert_str_eq(q.name, "chromium-2");
	cr_assert_str_eq(q.driver, "managed");
	cr_assert_str_eq(q.bundle_id, BUNDLE);
	cr_assert_null(q.profile, "a fresh profile per Space");

	memset(&r, 0, sizeof(r));
	r.instances = &made;
	r.n_instances = 1;
	cr_assert_eq(sup_browsers_step(b, &r, &q), SUP_BOOT_CALL);
	cr_assert_eq(q.op, PR_OP_BINDING_CREATE);
	cr_assert_str_eq(q.browser_instance_id, MADE);

	memset(&r, 0, sizeof(r));
	cr_assert_eq(sup_browsers_step(b, &r, &q), SUP_BOOT_DONE);
	sup_browsers_free(b);
}

Test(browsers, a_store_error_starts_it_over)
{
	struct cm_config cfg = config(1, "/bin/sh");
	struct pr_bundle bundle = {.bundle_id = BUNDLE, .name = "browser"};
	struct sup_browsers *b;
	struct pr_req q;
	struct pr_rep r;

	cr_assert_eq(sup_browsers_begin(&b, &cfg, WS, &q), SUP_BOOT_CALL);
	memset(&r, 0, sizeof(r));
	r.bundles = &bundle;
	r.n_bundles = 1;
	cr_assert_eq(sup_browsers_step(b, &r, &q), SUP_BOOT_CALL);
	memset(&r, 0, sizeof(r));
	cr_assert_eq(sup_browsers_step(b, &r, &q), SUP_BOOT_CALL);
	cr_assert_eq(q.op, PR_OP_INSTANCE_REGISTER);
	memset(&r, 0, sizeof(r));
	r.err = CM_E_STORE_UNAVAILABLE;
	cr_assert_eq(sup_browsers_step(b, &r, &q), SUP_BOOT_FAILED);
	sup_browsers_free(b);
}

Test(browsers, no_browser_bundle_registers_nothing)
{
	struct cm_config cfg = config(2, "/bin/sh");
	struct sup_browsers *b;
	struct pr_req q;
	struct pr_rep r;

	cr_assert_eq(sup_browsers_begin(&b, &cfg, WS, &q), SUP_BOOT_CALL);
	memset(&r, 0, sizeof(r));
	cr_assert_eq(sup_browsers_step(b, &r, &q), SUP_BOOT_DONE);
	sup_browsers_free(b);
}
