/*
 * GET /metrics and GET /api/v1/openapi.json on the real service: both
 * answer without a token with their content types, the served document is
 * api/openapi.json byte for byte, requests are counted by route pattern
 * (never by raw path), and a scrape asks the store for the active Spaces
 * and the supervisor for actor restarts (kill -9 one actor, see it
 * counted).
 */
#include <curl/curl.h>
#include <signal.h>

#include "space_fixture.h"

static struct sf_env env;

static void
fini(void)
{
	tk_cleanup();
}

TestSuite(metrics_http, .fini = fini, .timeout = 120);

static size_t
sink(char *data, size_t size, size_t n, void *arg)
{
	(void)data;
	(void)arg;
	return size * n;
}

/* The Content-Type of a GET without a token (malloc'd). */
static char *
content_type(const struct tk_proc *p, const char *path)
{
	char url[256], *ct = NULL, *copy;
	CURL *c = curl_easy_init();
	long status = 0;

	cr_assert_not_null(c);
	snprintf(url, sizeof(url), "%s%s", p->http_base, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 20000L);
	cr_assert_eq(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	cr_assert_eq(status, 200);
	curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
	cr_assert_not_null(ct);
	copy = strdup(ct);
	curl_easy_cleanup(c);
	return copy;
}

/* One scrape, without a token; the text is malloc'd. */
static char *
scrape(void)
{
	char *text = NULL;

	cr_assert_eq(
	    tk_http(&env.p, "GET", "/metrics", NULL, NULL, NULL, &text), 200);
	cr_assert_not_null(text);
	return text;
}

static double
scrape_sample(const char *key)
{
	char *t = scrape();
	double v = tk_prom_sample(t, key);

	free(t);
	return v;
}

Test(metrics_http, openapi_is_served_as_the_file)
{
	char path[256], *served = NULL, *file, *ct;
	size_t len;

	sf_start(&env, "oapi", 1);
	cr_assert(tk_http_ready(&env.p, SF_WAIT_MS));
	snprintf(path, sizeof(path), "%s/api/openapi.json", SPACED_SOURCE_DIR);
	cr_assert_not_null(file = tk_read_file(path, &len));
	cr_assert_eq(tk_http(&env.p, "GET", "/api/v1/openapi.json", NULL, NULL,
	                 NULL, &served),
	    200);
	cr_assert_not_null(served);
	cr_assert_eq(strlen(served), len, "served %zu bytes, the file has %zu",
	    strlen(served), len);
	cr_assert(memcmp(served, file, len) == 0,
	    "the served document is not api/openapi.json");
	ct = content_type(&env.p, "/api/v1/openapi.json");
	cr_assert_str_eq(ct, "application/json");
	free(ct);
	free(served);
	free(file);
	sf_stop(&env);
}

Test(metrics_http, counts_by_route_pattern_and_asks_the_sources)
{
	char *t, *ct;

	sf_start(&env, "metr", 1);
	cr_assert(tk_http_ready(&env.p, SF_WAIT_MS));
	cr_assert_eq(
	    tk_http(&env.p, "GET", "/no/such/route", NULL, NULL, NULL, NULL),
	    404);
	cr_assert_eq(
	    tk_http(&env.p, "PATCH", "/healthz", NULL, NULL, NULL, NULL), 405);
	cr_assert_eq(tk_http(&env.p, "GET",
	                 "/api/v1/workspaces/ws-secret-id/browser-spaces", NULL,
	                 NULL, NULL, NULL),
	    401);

	t = scrape();
	cr_assert_geq(
	    tk_prom_sample(t, "spaced_http_requests_total{route=\"/healthz\","
	                      "method=\"GET\",status=\"200\"}"),
	    1, "%s", t);
	cr_assert_eq(
	    tk_prom_sample(t, "spaced_http_requests_total{route=\"unmatched\","
	                      "method=\"GET\",status=\"404\"}"),
	    1, "%s", t);
	cr_assert_eq(
	    tk_prom_sample(t, "spaced_http_requests_total{route=\"/healthz\","
	                      "method=\"PATCH\",status=\"405\"}"),
	    1, "%s", t);
	cr_assert_eq(
	    tk_prom_sample(t, "spaced_http_requests_total{route=\"/api/v1/"
	                      "workspaces/*/browser-spaces\",method=\"GET\","
	                      "status=\"401\"}"),
	    1, "%s", t);
	cr_assert_null(strstr(t, "ws-secret-id"), "a raw path became a label");
	cr_assert_null(strstr(t, "/no/such/route"));
	cr_assert_eq(
	    tk_prom_sample(t, "spaced_metrics_source_up{source=\"store\"}"), 1,
	    "%s", t);
	cr_assert_eq(tk_prom_sample(
	                 t, "spaced_metrics_source_up{source=\"supervisor\"}"),
	    1, "%s", t);
	cr_assert_eq(tk_prom_sample(t, "spaced_spaces_active"), 0, "%s", t);
	cr_assert_eq(
	    tk_prom_sample(t, "spaced_actor_restarts_total"), 0, "%s", t);
	free(t);

	/* The scrape itself is counted once it is answered. */
	cr_assert_geq(scrape_sample("spaced_http_requests_total{route=\"/"
	                            "metrics\",method=\"GET\",status=\"200\"}"),
	    1);
	ct = content_type(&env.p, "/metrics");
	cr_assert_str_eq(ct, "text/plain; version=0.0.4; charset=utf-8");
	free(ct);

	sf_create_ok(&env, 0, NULL);
	cr_assert_eq(scrape_sample("spaced_spaces_active"), 1);
	sf_stop(&env);
}

struct restarts_wait {
	double want;
};

static bool
restarts_reached(void *arg)
{
	const struct restarts_wait *w = arg;

	return scrape_sample("spaced_actor_restarts_total") >= w->want;
}

struct actor_wait {
	const char *space;
	pid_t not ;
	pid_t pid;
};

static bool
actor_running(void *arg)
{
	struct actor_wait *w = arg;
	pid_t pids[4];
	int n = tk_actor_pids(env.p.pid, w->space, pids, 4);

	for (int i = 0; i < n; i++)
		if (pids[i] != w->not ) {
			w->pid = pids[i];
			return true;
		}
	return false;
}

Test(metrics_http, actor_restarts_come_from_the_supervisor)
{
	char space[CM_ID_MAX + 1];
	struct actor_wait a = {space, 0, 0};
	struct restarts_wait r = {1};

	sf_start(&env, "mrst", 1);
	cr_assert(tk_http_ready(&env.p, SF_WAIT_MS));
	sf_create_ok(&env, 0, space);
	cr_assert(tk_wait_until(actor_running, &a, SF_WAIT_MS),
	    "no actor for %s", space);
	cr_assert_eq(scrape_sample("spaced_actor_restarts_total"), 0);

	cr_assert_eq(kill(a.pid, SIGKILL), 0);
	a.not = a.pid;
	cr_assert(tk_wait_until(actor_running, &a, SF_WAIT_MS),
	    "the actor was not restarted");
	cr_assert(tk_wait_until(restarts_reached, &r, SF_WAIT_MS),
	    "spaced_actor_restarts_total stayed below 1");
	/* Counted once, however often it is scraped. */
	cr_assert_eq(scrape_sample("spaced_actor_restarts_total"), 1);
	cr_assert_eq(scrape_sample("spaced_actor_restarts_total"), 1);
	sf_stop(&env);
}
