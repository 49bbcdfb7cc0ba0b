/*
 * test_routes_space.c: what the Space routes refuse before they ask the
 * store, each run for an admin with no store (api_offline.h): a 422 is
 * the route's own verdict, a 503 a request it sent on.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_offline.h"

static const struct pr_principal admin = {
    .principal_id = "admin-1", .kind = "operator", .is_admin = true};

/* Runs fn for query and body; returns the status. */
static int
run(void (*fn)(struct api_ctx *), const char *query, const char *body)
{
	struct api_res res;

	api_offline_run(fn, "GET", query, body, strlen(body), &admin, &res);
	cr_assert_not_null(res.body);
	free(res.body);
	return res.status;
}

/* Found by fuzz_routes: an owner_id one byte longer than an id went on to
 * the store, whose protocol has no room for it: a 500. */
Test(routes_space, a_list_filter_longer_than_an_id_is_422)
{
	char query[CM_ID_MAX + 32], id[CM_ID_MAX + 2];

	memset(id, 'p', sizeof(id) - 1);
	id[sizeof(id) - 1] = '\0';
	snprintf(query, sizeof(query), "limit=5&owner_id=%s", id);
	cr_assert_eq(run(api_space_list, query, ""), 422);
	/* An id at its bound is the store's to judge. */
	id[CM_ID_MAX] = '\0';
	snprintf(query, sizeof(query), "owner_id=%s", id);
	cr_assert_eq(run(api_space_list, query, ""), 503);
	cr_assert_eq(run(api_space_list, "owner_id=", ""), 503);
}
