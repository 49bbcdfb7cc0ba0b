/*
 * api/metrics: the exposition format (checked line by line by a small
 * parser of the text format), label escaping, histogram bucket maths, the
 * task counters and latencies derived from events with their bounded
 * map, the restart counter folded from the supervisor's answers, and
 * counting from many threads at once.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits.h"
#include "metrics.h"

static void
setup(void)
{
	api_metrics_reset();
}

TestSuite(metrics, .init = setup);

/* The rendered text; the test frees it. */
static char *
render(void)
{
	char *t = api_metrics_render();

	cr_assert_not_null(t);
	return t;
}

/* Whether text holds line as a whole line. */
static bool
has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

#define assert_line(text, line)                                             \
	cr_assert(has_line(text, line), "missing line: %s\n--- in ---\n%s", \
	    line, text)
#define assert_no_line(text, line) \
	cr_assert(!has_line(text, line), "unexpected line: %s", line)

/* The value of the sample whose name and labels are exactly key. */
static double
sample(const char *text, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = text; (p = strstr(p, key)) != NULL; p++)
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	cr_assert_fail("no sample %s in\n%s", key, text);
	return -1;
}

/* --- a checker of the text format (0.0.4) ------------------------------ */

static bool
name_char(char ch, bool first)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       ch == '_' || ch == ':' || (!first && ch >= '0' && ch <= '9');
}

/* Reads a metric or label name at *p; its length, 0 when there is none. */
static size_t
name_at(const char *p)
{
	size_t n = 0;

	while (name_char(p[n], n == 0))
		n++;
	return n;
}

/*
 * Checks one sample line: name, optional {labels} with escapes \\ \" \n
 * only, one space, a float.  Returns the name's length, 0 when bad.
 */
static size_t
sample_ok(const char *line, size_t len)
{
	const char *p = line, *end = line + len;
	size_t n = name_at(p);
	char *num_end, num[64];

	if (n == 0)
		return 0;
	p += n;
	if (*p == '{') {
		p++;
		while (*p != '}') {
			size_t ln = name_at(p);

			if (ln == 0 || p[ln] != '=' || p[ln + 1] != '"')
				return 0;
			p += ln + 2;
			while (*p != '"') {
				if (p >= end || *p == '\n')
					return 0;
				if (*p == '\\') {
					if (p[1] != '\\' && p[1] != '"' &&
					    p[1] != 'n')
						return 0;
					p++;
				}
				p++;
			}
			p++;
			if (*p == ',')
				p++;
			else if (*p != '}')
				return 0;
		}
		p++;
	}
	if (*p != ' ' || (size_t)(end - p - 1) >= sizeof(num))
		return 0;
	snprintf(num, sizeof(num), "%.*s", (int)(end - p - 1), p + 1);
	if (strcmp(num, "+Inf") != 0 && strcmp(num, "NaN") != 0) {
		strtod(num, &num_end);
		if (num_end == num || *num_end != '\0')
			return 0;
	}
	return n;
}

/*
 * The whole exposition: every line a HELP, a TYPE or a sample; a family's
 * HELP and then TYPE come before its samples, each family once; sample
 * names are the family's (with _bucket, _sum, _count for histograms).
 */
static void
assert_exposition(const char *text)
{
	char family[128] = "", type[16] = "", seen[4096] = " ";
	size_t seen_len = 1;
	const char *line = text;

	cr_assert(strlen(text) > 0 && text[strlen(text) - 1] == '\n');
	while (*line != '\0') {
		const char *nl = strchr(line, '\n');
		size_t len = (size_t)(nl - line);
		char name[128], key[132];

		cr_assert_not_null(nl);
		if (strncmp(line, "# HELP ", 7) == 0) {
			size_t n = name_at(line + 7);

			cr_assert(n > 0 && line[7 + n] == ' ', "%.*s", (int)len,
			    line);
			snprintf(
			    family, sizeof(family), "%.*s", (int)n, line + 7);
			snprintf(key, sizeof(key), " %s ", family);
			cr_assert_null(
			    strstr(seen, key), "family %s twice", family);
			cr_assert(seen_len + strlen(family) + 2 < sizeof(seen));
			seen_len += (size_t)snprintf(seen + seen_len,
			    sizeof(seen) - seen_len, "%s ", family);
			type[0] = '\0';
		} else if (strncmp(line, "# TYPE ", 7) == 0) {
			size_t n = name_at(line + 7);

			cr_assert(n == strlen(family) &&
			              strncmp(line + 7, family, n) == 0,
			    "TYPE without its HELP: %.*s", (int)len, line);
			snprintf(type, sizeof(type), "%.*s", (int)(len - 8 - n),
			    line + 8 + n);
			cr_assert(strcmp(type, "counter") == 0 ||
			              strcmp(type, "gauge") == 0 ||
			              strcmp(type, "histogram") == 0,
			    "type %s", type);
		} else {
			size_t n = sample_ok(line, len);

			cr_assert(
			    n > 0, "bad sample line: %.*s", (int)len, line);
			cr_assert(type[0] != '\0', "sample before TYPE");
			snprintf(name, sizeof(name), "%.*s", (int)n, line);
			if (strcmp(type, "histogram") == 0) {
				size_t f = strlen(family);

				cr_assert(
				    strncmp(name, family, f) == 0 &&
				        (strcmp(name + f, "_bucket") == 0 ||
				            strcmp(name + f, "_sum") == 0 ||
				            strcmp(name + f, "_count") == 0),
				    "%s in family %s", name, family);
			} else {
				cr_assert_str_eq(name, family);
			}
		}
		line = nl + 1;
	}
}

/* --- tests --------------------------------------------------------------- */

Test(metrics, empty_exposition_is_well_formed)
{
	char *t = render();

	assert_exposition(t);
	assert_line(t, "# TYPE spaced_http_requests_total counter");
	assert_line(t, "# TYPE spaced_http_request_duration_seconds histogram");
	assert_line(t, "# TYPE spaced_tasks_finished_total counter");
	assert_line(t, "# TYPE spaced_task_duration_seconds histogram");
	assert_line(t, "# TYPE spaced_task_queue_seconds histogram");
	assert_line(t, "# TYPE spaced_actor_restarts_total counter");
	assert_line(t, "spaced_tasks_finished_total{status=\"completed\","
	               "error_code=\"none\"} 0");
	assert_line(t, "spaced_task_queue_seconds_count 0");
	assert_line(t, "spaced_actor_restarts_total 0");
	assert_line(t, "# TYPE spaced_sse_streams_cut_total counter");
	assert_line(t, "spaced_sse_streams_cut_total 0");
	/* Unknown until a scrape asked the store. */
	cr_assert_null(strstr(t, "spaced_spaces_active"));
	cr_assert_null(strstr(t, "spaced_metrics_source_up"));
	free(t);
}

Test(metrics, streams_cut_are_counted)
{
	char *t;

	api_metrics_stream_cut();
	api_metrics_stream_cut();
	t = render();
	assert_exposition(t);
	assert_line(t, "spaced_sse_streams_cut_total 2");
	free(t);
}

Test(metrics, requests_by_route_method_and_status)
{
	static const char route[] = "/api/v1/workspaces/*/browser-spaces/*";
	char *t;

	api_metrics_request(route, "GET", 200, 0.001);
	api_metrics_request(route, "GET", 200, 0.002);
	api_metrics_request(route, "GET", 404, 0.001);
	api_metrics_request(route, "POST", 405, 0.001);
	api_metrics_request(NULL, "GET", 404, 0.001);
	api_metrics_request(NULL, "BREW", 404, 0.001);
	api_metrics_request(NULL, NULL, 42, 0.001); /* nonsense status */
	t = render();
	assert_exposition(t);
	assert_line(t, "spaced_http_requests_total{route=\"/api/v1/workspaces/"
	               "*/browser-spaces/*\",method=\"GET\",status=\"200\"} 2");
	assert_line(t, "spaced_http_requests_total{route=\"/api/v1/workspaces/"
	               "*/browser-spaces/*\",method=\"GET\",status=\"404\"} 1");
	assert_line(t,
	    "spaced_http_requests_total{route=\"/api/v1/workspaces/"
	    "*/browser-spaces/*\",method=\"POST\",status=\"405\"} 1");
	assert_line(t, "spaced_http_requests_total{route=\"unmatched\","
	               "method=\"GET\",status=\"404\"} 1");
	/* An unknown method never becomes a label of its own. */
	assert_line(t, "spaced_http_requests_total{route=\"unmatched\","
	               "method=\"other\",status=\"404\"} 1");
	assert_line(t, "spaced_http_requests_total{route=\"unmatched\","
	               "method=\"other\",status=\"0\"} 1");
	cr_assert_null(strstr(t, "BREW"));
	/* One histogram per (route, method), whatever the status. */
	assert_line(t, "spaced_http_request_duration_seconds_count{route=\"/"
	               "api/v1/workspaces/*/browser-spaces/*\",method=\"GET\"} "
	               "3");
	free(t);
}

Test(metrics, label_values_are_escaped)
{
	/* A route is a table pattern, but the renderer must not trust it. */
	static const char route[] = "/a\"b\\c\nd";
	char *t;

	api_metrics_request(route, "GET", 200, 0.001);
	t = render();
	assert_exposition(t);
	assert_line(t, "spaced_http_requests_total{route=\"/a\\\"b\\\\c\\nd\","
	               "method=\"GET\",status=\"200\"} 1");
	free(t);
}

Test(metrics, histogram_buckets_are_cumulative_and_le)
{
	const char *k = "spaced_http_request_duration_seconds_bucket{route="
	                "\"/healthz\",method=\"GET\",le=";
	char key[160], *t;

	/* On a bound (le is <=), between two, and past the last one. */
	api_metrics_request("/healthz", "GET", 200, 0.0005);
	api_metrics_request("/healthz", "GET", 200, 0.003);
	api_metrics_request("/healthz", "GET", 200, 100);
	api_metrics_request("/healthz", "GET", 200, -1); /* clamped to 0 */
	t = render();
	assert_exposition(t);
#define BUCKET(le, n)                                                    \
	do {                                                             \
		snprintf(key, sizeof(key), "%s\"%s\"}", k, le);          \
		cr_assert_eq(                                            \
		    sample(t, key), n, "le=%s: %g", le, sample(t, key)); \
	} while (0)
	BUCKET("0.0005", 2);
	BUCKET("0.001", 2);
	BUCKET("0.0025", 2);
	BUCKET("0.005", 3);
	BUCKET("10", 3);
	BUCKET("30", 3);
	BUCKET("+Inf", 4);
#undef BUCKET
	cr_assert_float_eq(sample(t, "spaced_http_request_duration_seconds_sum"
	                             "{route=\"/healthz\",method=\"GET\"}"),
	    100.0035, 1e-9);
	cr_assert_eq(sample(t, "spaced_http_request_duration_seconds_count{"
	                       "route=\"/healthz\",method=\"GET\"}"),
	    4);
	free(t);
}

/* An event as the store publishes it. */
static void
feed(const char *task, const char *kind, int64_t at, const char *payload)
{
	struct pr_event e;

	memset(&e, 0, sizeof(e));
	e.space_id = "sp";
	e.workspace_id = "ws";
	e.task_id = task;
	e.sequence = 1;
	e.kind = kind;
	e.payload = payload;
	e.created_at = at;
	api_metrics_event(&e);
}

Test(metrics, task_latency_from_events)
{
	char *t;

	feed("t1", "queued", 10000, "{\"capability\":\"noop\"}");
	feed("t1", "started", 10250, NULL);
	feed("t1", "completed", 11250, NULL);
	t = render();
	assert_exposition(t);
	assert_line(t, "spaced_tasks_finished_total{status=\"completed\","
	               "error_code=\"none\"} 1");
	/* queue 0.25 s: in le=0.25, not in le=0.1 */
	cr_assert_eq(
	    sample(t, "spaced_task_queue_seconds_bucket{le=\"0.1\"}"), 0);
	cr_assert_eq(
	    sample(t, "spaced_task_queue_seconds_bucket{le=\"0.25\"}"), 1);
	cr_assert_float_eq(
	    sample(t, "spaced_task_queue_seconds_sum"), 0.25, 1e-12);
	/* run 1 s, under its status */
	cr_assert_eq(sample(t, "spaced_task_duration_seconds_bucket{status="
	                       "\"completed\",le=\"0.5\"}"),
	    0);
	cr_assert_eq(sample(t, "spaced_task_duration_seconds_bucket{status="
	                       "\"completed\",le=\"1\"}"),
	    1);
	cr_assert_eq(sample(t, "spaced_task_duration_seconds_count{status="
	                       "\"failed\"}"),
	    0);
	free(t);
}

Test(metrics, finished_by_status_and_error_code)
{
	char *t;

	feed("a", "queued", 1000, NULL);
	feed("a", "started", 1001, NULL);
	feed("a", "failed", 1500,
	    "{\"error_code\":\"runtime_error\",\"error_message\":\"x\"}");
	feed("b", "failed", 2000, "{\"error_code\":\"runtime_error\"}");
	/* Codes outside errors.h, "ok", and junk cannot add labels. */
	feed("c", "failed", 2000, "{\"error_code\":\"made_up_code\"}");
	feed("d", "failed", 2000, "{\"error_code\":\"ok\"}");
	feed("e", "failed", 2000, "not json");
	/* Cancelled while queued: counted, no run or queue sample. */
	feed("f", "queued", 3000, NULL);
	feed("f", "cancel_requested", 3001, NULL);
	feed("f", "cancelled", 3002, NULL);
	t = render();
	assert_exposition(t);
	assert_line(t, "spaced_tasks_finished_total{status=\"failed\","
	               "error_code=\"runtime_error\"} 2");
	assert_line(t, "spaced_tasks_finished_total{status=\"failed\","
	               "error_code=\"other\"} 2");
	assert_line(t, "spaced_tasks_finished_total{status=\"failed\","
	               "error_code=\"none\"} 1");
	assert_line(t, "spaced_tasks_finished_total{status=\"cancelled\","
	               "error_code=\"none\"} 1");
	cr_assert_null(strstr(t, "made_up_code"));
	/* Only a's run (0.499 s) was seen from its start. */
	cr_assert_eq(
	    sample(t, "spaced_task_duration_seconds_count{status=\"failed\"}"),
	    1);
	cr_assert_float_eq(
	    sample(t, "spaced_task_duration_seconds_sum{status=\"failed\"}"),
	    0.499, 1e-12);
	cr_assert_eq(sample(t, "spaced_task_duration_seconds_count{status="
	                       "\"cancelled\"}"),
	    0);
	cr_assert_eq(sample(t, "spaced_task_queue_seconds_count"), 1);
	free(t);
}

Test(metrics, events_that_do_not_count)
{
	struct pr_event e;
	char *t;

	memset(&e, 0, sizeof(e));
	e.kind = "completed";
	e.task_id = "x";
	e.sequence = 0; /* a wake-up notice, not a log event */
	api_metrics_event(&e);
	e.sequence = 3;
	e.task_id = NULL; /* a Space event */
	api_metrics_event(&e);
	e.task_id = "";
	api_metrics_event(&e);
	api_metrics_event(NULL);
	feed("y", "space_closed", 5, NULL);
	feed("y", "cancel_requested", 5, NULL);
	/* A start before its queue (a clock step) gives no sample. */
	feed("z", "queued", 9000, NULL);
	feed("z", "started", 8000, NULL);
	feed("z", "completed", 7000, NULL);
	t = render();
	assert_line(t, "spaced_tasks_finished_total{status=\"completed\","
	               "error_code=\"none\"} 1");
	cr_assert_eq(sample(t, "spaced_task_queue_seconds_count"), 0);
	cr_assert_eq(sample(t, "spaced_task_duration_seconds_count{status="
	                       "\"completed\"}"),
	    0);
	free(t);
}

Test(metrics, task_map_is_bounded_and_evicts_the_oldest)
{
	const int extra = 10;
	char id[32], *t;

	/* MAX + extra tasks queued and none finished: the first `extra`
	 * are evicted to make room. */
	for (int i = 0; i < CM_METRICS_TASKS_MAX + extra; i++) {
		snprintf(id, sizeof(id), "task-%d", i);
		feed(id, "queued", 1000, NULL);
	}
	t = render();
	cr_assert_eq(sample(t, "spaced_task_tracking_evictions_total"), extra);
	free(t);
	/* The oldest kept task still has its queue time... */
	snprintf(id, sizeof(id), "task-%d", extra);
	feed(id, "started", 1100, NULL);
	/* ...an evicted one starts unseen, and taking a slot again evicts
	 * the next oldest. */
	feed("task-0", "started", 1100, NULL);
	t = render();
	cr_assert_eq(sample(t, "spaced_task_queue_seconds_count"), 1);
	cr_assert_eq(
	    sample(t, "spaced_task_tracking_evictions_total"), extra + 1);
	free(t);
	api_metrics_reset();

	/* Finished tasks free their slot: the ring then overwrites free
	 * slots, which is no eviction. */
	for (int i = 0; i < 3 * CM_METRICS_TASKS_MAX; i++) {
		snprintf(id, sizeof(id), "done-%d", i);
		feed(id, "queued", 1000, NULL);
		feed(id, "started", 1001, NULL);
		feed(id, "completed", 1002, NULL);
	}
	t = render();
	cr_assert_eq(sample(t, "spaced_task_tracking_evictions_total"), 0);
	cr_assert_eq(sample(t, "spaced_task_queue_seconds_count"),
	    3 * CM_METRICS_TASKS_MAX);
	cr_assert_eq(sample(t, "spaced_task_duration_seconds_count{status="
	                       "\"completed\"}"),
	    3 * CM_METRICS_TASKS_MAX);
	free(t);
}

Test(metrics, spaces_gauge_and_sources)
{
	char *t;

	api_metrics_gauge_spaces(5);
	api_metrics_actor_restarts(NULL, -1);
	t = render();
	assert_exposition(t);
	assert_line(t, "spaced_spaces_active 5");
	assert_line(t, "spaced_metrics_source_up{source=\"store\"} 1");
	assert_line(t, "spaced_metrics_source_up{source=\"supervisor\"} 0");
	free(t);
	/* A store that did not answer: no stale value. */
	api_metrics_gauge_spaces(-1);
	t = render();
	cr_assert_null(strstr(t, "spaced_spaces_active"));
	assert_line(t, "spaced_metrics_source_up{source=\"store\"} 0");
	free(t);
}

static struct pr_child
child(const char *kind, const char *space, int64_t restarts)
{
	struct pr_child c;

	memset(&c, 0, sizeof(c));
	c.kind = kind;
	c.space_id = space;
	c.restarts = restarts;
	c.state = "ready";
	return c;
}

static double
restarts_now(void)
{
	char *t = render();
	double v = sample(t, "spaced_actor_restarts_total");

	free(t);
	return v;
}

Test(metrics, restarts_counter_never_goes_down)
{
	struct pr_child a[4];

	a[0] = child("store", NULL, 5); /* not an actor */
	a[1] = child("api", NULL, 1);
	a[2] = child("actor", "space-a", 2);
	a[3] = child("actor", "space-b", 0);
	api_metrics_actor_restarts(a, 4);
	cr_assert_eq(restarts_now(), 2); /* what the rows already had */

	a[2].restarts = 3;
	a[3].restarts = 1;
	api_metrics_actor_restarts(a, 4);
	cr_assert_eq(restarts_now(), 4);

	/* space-b closed: its row is gone, the counter stays. */
	api_metrics_actor_restarts(a, 3);
	cr_assert_eq(restarts_now(), 4);

	/* The supervisor did not answer: nothing changes. */
	api_metrics_actor_restarts(NULL, -1);
	cr_assert_eq(restarts_now(), 4);

	/* space-a's row was replaced (its count fell to 1): 1 more. */
	a[2].restarts = 1;
	a[3] = child("actor", "space-c", 2); /* new, with 2 */
	api_metrics_actor_restarts(&a[2], 2);
	cr_assert_eq(restarts_now(), 7);
	api_metrics_actor_restarts(&a[2], 2);
	cr_assert_eq(restarts_now(), 7);
}

#define THREADS 4
#define PER_THREAD 20000

static void *
hammer(void *arg)
{
	char id[32];
	long n = (long)(intptr_t)arg;

	for (int i = 0; i < PER_THREAD; i++) {
		api_metrics_request("/healthz", "GET", 200, 0.001);
		if (i % 100 == 0) {
			snprintf(id, sizeof(id), "t%ld-%d", n, i);
			feed(id, "queued", 1, NULL);
			feed(id, "started", 2, NULL);
			feed(id, "completed", 3, NULL);
		}
		if (i % 5000 == 0)
			free(api_metrics_render());
	}
	return NULL;
}

Test(metrics, counts_exactly_from_many_threads)
{
	pthread_t th[THREADS];
	char *t;

	for (long i = 0; i < THREADS; i++)
		cr_assert_eq(
		    pthread_create(&th[i], NULL, hammer, (void *)(intptr_t)i),
		    0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	t = render();
	assert_exposition(t);
	cr_assert_eq(sample(t, "spaced_http_requests_total{route=\"/healthz\","
	                       "method=\"GET\",status=\"200\"}"),
	    THREADS * PER_THREAD);
	cr_assert_eq(sample(t, "spaced_tasks_finished_total{status="
	                       "\"completed\",error_code=\"none\"}"),
	    THREADS * PER_THREAD / 100);
	free(t);
}

Test(metrics, series_table_is_bounded)
{
	static char routes[CM_METRICS_SERIES_MAX + 5][16];
	char *t;

	for (int i = 0; i < CM_METRICS_SERIES_MAX + 5; i++) {
		snprintf(routes[i], sizeof(routes[i]), "/r%d", i);
		api_metrics_request(routes[i], "GET", 200, 0.001);
	}
	t = render();
	assert_exposition(t);
	/* 5 request series and 5 histograms found no room. */
	cr_assert_eq(sample(t, "spaced_metrics_series_overflow_total"), 10);
	cr_assert_null(strstr(t, "route=\"/r516\""));
	cr_assert_not_null(strstr(t, "route=\"/r511\""));
	free(t);
}
