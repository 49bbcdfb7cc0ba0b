/*
 * task_timeout_max bounds a task's timeout_seconds, and the 422 that
 * refuses one says the range this service was configured with, not the
 * default's.
 */
#include <criterion/criterion.h>

#include "http_fixture.h"

static struct hf_env env;

Test(
    timeout_max, the_configured_bound_is_enforced_and_named, .fini = tk_cleanup)
{
	static const char *const flags[] = {
	    "--task-timeout-max=30", "--task-timeout-default=10", NULL};
	char space[CM_ID_MAX + 1], path[1024];
	const char *msg;
	json_t *out = NULL;

	hf_start(&env, "tmax", 1, flags);
	hf_create_ok(&env, 0, "[\"noop\"]", space);
	hf_path(&env, path, sizeof(path), NULL, space, "/tasks");

	cr_assert_eq(hf_call(&env, "POST", path, env.manager,
	                 "{\"request_id\": \"r1\", \"capability\": \"noop\", "
	                 "\"timeout_seconds\": 31}",
	                 &out),
	    422);
	cr_assert_str_eq(af_error_code(out), "invalid_timeout");
	msg = json_string_value(
	    json_object_get(json_object_get(out, "error"), "message"));
	cr_assert_not_null(msg);
	cr_assert_not_null(strstr(msg, "1..30"), "message: %s", msg);
	cr_assert_null(strstr(msg, "600"), "message: %s", msg);
	json_decref(out);

	hf_expect(&env, "POST", path, env.manager,
	    "{\"request_id\": \"r2\", \"capability\": \"noop\", "
	    "\"timeout_seconds\": 30}",
	    202, NULL);
	hf_stop(&env);
}
