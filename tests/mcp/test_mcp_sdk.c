/*
 * test_mcp_sdk.c: spaced's MCP endpoint as the official TypeScript SDK
 * drives it.  Starts the real spaced on its own /tmp directory and port
 * with a managed Chromium bound to the workspace, and the page server of
 * browser tests on 127.0.0.1; then runs sdk.test.mjs (the SDK's Client
 * over its Streamable HTTP transport) with the workspace's MCP URL, the
 * manager's token and the pages' URL in its environment, and passes when
 * it exits 0 and the Space it opened is closed.  Then the official
 * conformance suite: conformance.test.mjs, run by the Node 22 it needs,
 * against the workspace's MCP URL on a fake instance.
 *
 * The SDK, the suite and that Node are installed from
 * tests/mcp/package-lock.json by scripts/npm_ci.sh (a no-op once
 * installed from this lock file).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_fixture.h"
#include "node_fixture.h"
#include "pages.h"

/* The whole client run: the SDK's own requests are bounded per call. */
#define SDK_RUN_MS (3 * 60 * 1000)

TestSuite(mcp_sdk, .timeout = 300);

/* The one Space of the workspace, into out: the caller's that the first
 * tool call opened. */
static void
only_space(struct hf_env *e, char out[CM_ID_MAX + 1])
{
	char path[256];
	json_t *res = NULL, *data;

	hf_path(e, path, sizeof(path), NULL, NULL, NULL);
	cr_assert_eq(hf_call(e, "GET", path, e->manager, NULL, &res), 200);
	data = json_object_get(res, "data");
	cr_assert_eq(json_array_size(data), 1, "not one Space: %zu",
	    json_array_size(data));
	snprintf(out, CM_ID_MAX + 1, "%s",
	    json_string_value(
	        json_object_get(json_array_get(data, 0), "space_id")));
	json_decref(res);
}

Test(mcp_sdk, the_official_client_drives_a_real_browser, .fini = tk_cleanup)
{
	static struct hf_env e;
	char inst[CM_ID_MAX + 1], space[CM_ID_MAX + 1];
	char env[3][1200];
	char *const argv[] = {
	    "node", SPACED_SOURCE_DIR "/tests/mcp/sdk.test.mjs", NULL};
	char *const envv[] = {env[0], env[1], env[2], NULL};
	struct tk_pages *pages;
	int port, code;

	nf_npm_ci("tests/mcp");
	cr_assert_not_null(pages = tk_pages_start(&port));
	hf_start(&e, "mcpsdk", 0, NULL);
	hf_managed_instance(&e, "chromium-mcp-sdk", inst);

	snprintf(env[0], sizeof(env[0]), "MCP_URL=%s/api/v1/workspaces/%s/mcp",
	    e.sf.p.http_base, hf_ws(&e));
	snprintf(env[1], sizeof(env[1]), "MCP_TOKEN=%s", e.manager);
	snprintf(env[2], sizeof(env[2]), "MCP_PAGES=http://127.0.0.1:%d", port);
	code = nf_run_group(argv, envv, "MCP_", SDK_RUN_MS);
	cr_assert_eq(code, 0,
	    "sdk.test.mjs failed (exit %d); the service's log is %s", code,
	    e.sf.out);

	/* The client saw the pages: the sign-in form sent once. */
	cr_assert_eq(tk_pages_hits(pages, "/next"), 1);
	/* browser_space_close closed the one Space the first call opened. */
	only_space(&e, space);
	cr_assert(
	    hf_wait_space(&e, space, "closed"), "%s is not closed", space);
	{
		size_t len = 0;
		char *log = tk_read_file(e.sf.out, &len);

		cr_assert_not_null(log);
		cr_assert_not(
		    hf_contains(log, len, e.manager), "the token was logged");
		free(log);
	}
	tk_pages_stop(pages);
	hf_stop(&e);
}

/* The official conformance suite's server scenarios against the
 * workspace's MCP URL, on a fake instance: its fixture tools are none of
 * spaced's, so those scenarios are the baseline's. */
Test(mcp_sdk, the_conformance_suite_fails_only_its_baseline, .fini = tk_cleanup)
{
	static struct hf_env e;
	char env[3][1200];
	char *const argv[] = {SPACED_SOURCE_DIR
	    "/tests/mcp/node_modules/node/bin/node",
	    SPACED_SOURCE_DIR "/tests/mcp/conformance.test.mjs", NULL};
	char *const envv[] = {env[0], env[1], env[2], NULL};
	int code;

	nf_npm_ci("tests/mcp");
	hf_start(&e, "mcpconf", 1, NULL);
	snprintf(env[0], sizeof(env[0]), "MCP_URL=%s/api/v1/workspaces/%s/mcp",
	    e.sf.p.http_base, hf_ws(&e));
	snprintf(env[1], sizeof(env[1]), "MCP_TOKEN=%s", e.manager);
	snprintf(env[2], sizeof(env[2]), "MCP_DIR=%s", e.sf.dir);
	code = nf_run_group(argv, envv, "MCP_", SDK_RUN_MS);
	cr_assert_eq(code, 0,
	    "conformance.test.mjs failed (exit %d); the service's log is %s",
	    code, e.sf.out);
	hf_stop(&e);
}
