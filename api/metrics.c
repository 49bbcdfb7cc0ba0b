/*
 * metrics.c: counters and histograms behind GET /metrics (see metrics.h
 * for what each one measures).  One mutex guards everything: a request
 * holds it for a short linear scan of at most CM_METRICS_SERIES_MAX
 * series, far below the cost of the store round trip it follows.
 */
#include "metrics.h"

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "limits.h"
#include "prom_text.h"
#include "status.h"
#include "view.h"

/* --- histograms --------------------------------------------------------- */

#define HIST_BUCKETS_MAX 16
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

struct hist_spec {
	const double *le; /* upper bounds, ascending; +Inf is implicit */
	size_t n;
};

/* Counts per bucket, not cumulative; [n] is the +Inf overflow. */
struct hist {
	uint64_t in[HIST_BUCKETS_MAX + 1];
	double sum;
};

/* HTTP answers: a store round trip is sub-millisecond, an SSE setup or a
 * long-poll (?wait=, at most 30 s) is long. */
static const double http_le[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
/* Tasks: a fake no-op is milliseconds, the timeout is at most 600 s.  The
 * store stamps events in milliseconds, so 0.001 is the finest step. */
static const double run_le[] = {0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1,
    2.5, 5, 10, 30, 60, 120, 300, 600};
static const double queue_le[] = {
    0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};

static const struct hist_spec http_spec = {http_le, N_OF(http_le)};
static const struct hist_spec run_spec = {run_le, N_OF(run_le)};
static const struct hist_spec queue_spec = {queue_le, N_OF(queue_le)};

_Static_assert(N_OF(http_le) <= HIST_BUCKETS_MAX, "");
_Static_assert(N_OF(run_le) <= HIST_BUCKETS_MAX, "");
_Static_assert(N_OF(queue_le) <= HIST_BUCKETS_MAX, "");

/* The first bucket whose bound is >= v: Prometheus buckets are "le". */
static void
hist_observe(struct hist *h, const struct hist_spec *s, double v)
{
	size_t i = 0;

	while (i < s->n && v > s->le[i])
		i++;
	h->in[i]++;
	h->sum += v;
}

/* --- requests ------------------------------------------------------------ */

static const char *const methods[] = {
    "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "other"};
#define N_METHODS N_OF(methods)

struct req_series {
	const char *route; /* NULL: unmatched */
	unsigned method;
	int status;
	uint64_t n;
};

struct dur_series {
	const char *route;
	unsigned method;
	struct hist h;
};

/* --- tasks --------------------------------------------------------------- */

/* Finished tasks are counted by terminal status (the rows of the other
 * statuses stay zero and are never shown). */
#define N_STATUS CM_TASK_STATUS__COUNT
/* error_code columns: the cm_err codes, with CM_OK standing for "none"
 * and CM_ERR__COUNT for "other". */
#define N_CODES (CM_ERR__COUNT + 1)

/*
 * The bounded map task_id -> (queued_at, started_at): a ring of slots,
 * so an insert evicts the slot written CM_METRICS_TASKS_MAX inserts ago
 * if its task has not finished, and a chained hash to find a task.  Links
 * are index + 1 so that a zeroed map is empty.
 */
#define TASK_BUCKETS (2 * CM_METRICS_TASKS_MAX)
_Static_assert((TASK_BUCKETS & (TASK_BUCKETS - 1)) == 0,
    "CM_METRICS_TASKS_MAX must be a power of two");

struct task_slot {
	char id[CM_ID_MAX + 1];
	int64_t queued_at, started_at; /* ms; 0 unknown */
	uint32_t next;                 /* index + 1 in the chain; 0 ends */
	bool used;
};

/* An actor row of the supervisor's last answer. */
struct restart_row {
	char space_id[CM_ID_MAX + 1];
	int64_t restarts;
};

/* The reasons of network_blocked events, as labels; anything else is
 * counted as "other" (the last column). */
static const char *const block_reasons[] = {
    CM_BLOCK_NOT_ALLOWED, CM_BLOCK_PRIVATE, CM_BLOCK_NO_POLICY};
#define N_BLOCK_REASONS (N_OF(block_reasons) + 1)

static struct {
	pthread_mutex_t lock;
	struct req_series req[CM_METRICS_SERIES_MAX];
	size_t n_req;
	struct dur_series dur[CM_METRICS_SERIES_MAX];
	size_t n_dur;
	uint64_t overflow;

	uint64_t finished[N_STATUS][N_CODES];
	struct hist run[N_STATUS];
	struct hist queue;
	struct task_slot slots[CM_METRICS_TASKS_MAX];
	uint32_t heads[TASK_BUCKETS];
	size_t ring;
	uint64_t evictions;

	uint64_t blocked[N_BLOCK_REASONS]; /* by block_reasons, then other */
	uint64_t streams_cut;
	uint64_t loop_answers;

	long spaces;          /* -1: unknown */
	int store_up, sup_up; /* -1: never asked */
	uint64_t restarts;
	struct restart_row prev[CM_SUP_STATUS_ROWS_MAX];
	struct restart_row cur[CM_SUP_STATUS_ROWS_MAX];
	size_t n_prev;
} m = {.lock = PTHREAD_MUTEX_INITIALIZER,
    .spaces = -1,
    .store_up = -1,
    .sup_up = -1};

static unsigned
method_index(const char *method)
{
	for (unsigned i = 0; method != NULL && i < N_METHODS - 1; i++)
		if (strcmp(method, methods[i]) == 0)
			return i;
	return N_METHODS - 1;
}

static bool
same_route(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

void
api_metrics_request(
    const char *route, const char *method, int status, double seconds)
{
	unsigned mi = method_index(method);
	size_t i;

	if (status < 100 || status > 599)
		status = 0;
	if (!(seconds >= 0))
		seconds = 0; /* NaN or a clock that went backwards */
	pthread_mutex_lock(&m.lock);
	for (i = 0; i < m.n_req; i++)
		if (m.req[i].method == mi && m.req[i].status == status &&
		    same_route(m.req[i].route, route))
			break;
	if (i == m.n_req && m.n_req < CM_METRICS_SERIES_MAX)
		m.req[m.n_req++] = (struct req_series){route, mi, status, 0};
	if (i < m.n_req)
		m.req[i].n++;
	else
		m.overflow++;

	for (i = 0; i < m.n_dur; i++)
		if (m.dur[i].method == mi && same_route(m.dur[i].route, route))
			break;
	if (i == m.n_dur && m.n_dur < CM_METRICS_SERIES_MAX) {
		memset(&m.dur[i], 0, sizeof(m.dur[i]));
		m.dur[i].route = route;
		m.dur[i].method = mi;
		m.n_dur++;
	}
	if (i < m.n_dur)
		hist_observe(&m.dur[i].h, &http_spec, seconds);
	else
		m.overflow++;
	pthread_mutex_unlock(&m.lock);
}

/* --- the task map (m.lock held) ----------------------------------------- */

static uint32_t
task_hash(const char *id)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *id != '\0'; id++)
		h = (h ^ (unsigned char)*id) * 16777619u;
	return h & (TASK_BUCKETS - 1);
}

static struct task_slot *
task_find(const char *id)
{
	uint32_t link = m.heads[task_hash(id)];

	while (link != 0) {
		struct task_slot *s = &m.slots[link - 1];

		if (strcmp(s->id, id) == 0)
			return s;
		link = s->next;
	}
	return NULL;
}

static void
task_remove(struct task_slot *s)
{
	uint32_t *link = &m.heads[task_hash(s->id)];
	uint32_t self = (uint32_t)(s - m.slots) + 1;

	while (*link != 0 && *link != self)
		link = &m.slots[*link - 1].next;
	if (*link == self)
		*link = s->next;
	s->used = false;
	s->next = 0;
}

static struct task_slot *
task_insert(const char *id)
{
	struct task_slot *s = &m.slots[m.ring];
	uint32_t h = task_hash(id);

	if (s->used) {
		task_remove(s); /* unfinished after MAX newer tasks */
		m.evictions++;
	}
	m.ring = (m.ring + 1) % CM_METRICS_TASKS_MAX;
	snprintf(s->id, sizeof(s->id), "%s", id);
	s->queued_at = s->started_at = 0;
	s->used = true;
	s->next = m.heads[h];
	m.heads[h] = (uint32_t)(s - m.slots) + 1;
	return s;
}

/* The column of error_code in a failed or cancelled event's payload. */
static size_t
payload_code(const char *payload)
{
	json_t *v, *code;
	size_t col = CM_OK;
	enum cm_err e;

	if (payload == NULL ||
	    (v = json_loads(payload, JSON_REJECT_DUPLICATES, NULL)) == NULL)
		return CM_OK;
	code = json_object_get(v, "error_code");
	if (json_is_string(code)) {
		e = cm_err_from_code(json_string_value(code));
		col = e == CM_OK ? CM_ERR__COUNT : (size_t)e;
	}
	json_decref(v);
	return col;
}

/* The column of a network_blocked event's reason. */
static size_t
payload_reason(const char *payload)
{
	json_t *v = payload == NULL
	                ? NULL
	                : json_loads(payload, JSON_REJECT_DUPLICATES, NULL);
	const char *r = json_string_value(json_object_get(v, "reason"));
	size_t col = N_BLOCK_REASONS - 1;

	for (size_t k = 0; r != NULL && k + 1 < N_BLOCK_REASONS; k++)
		if (strcmp(r, block_reasons[k]) == 0)
			col = k;
	json_decref(v);
	return col;
}

void
api_metrics_event(const struct pr_event *ev)
{
	struct task_slot *s;
	enum cm_event_kind k;
	enum cm_task_status t = N_STATUS;
	size_t col = CM_OK;
	int64_t at;

	if (ev != NULL && ev->sequence >= 1 && ev->kind != NULL &&
	    cm_event_kind_parse(ev->kind) == CM_EV_NETWORK_BLOCKED) {
		col = payload_reason(ev->payload); /* outside the lock */
		pthread_mutex_lock(&m.lock);
		m.blocked[col]++;
		pthread_mutex_unlock(&m.lock);
		return;
	}
	if (ev == NULL || ev->sequence < 1 || ev->kind == NULL ||
	    ev->task_id == NULL || ev->task_id[0] == '\0')
		return;
	at = ev->created_at;
	k = cm_event_kind_parse(ev->kind);
	/* A task's last event is named after its terminal status. */
	if (cm_event_kind_ends_task(k))
		t = cm_task_status_parse(ev->kind);
	if (t == CM_TASK_FAILED || t == CM_TASK_CANCELLED)
		col = payload_code(ev->payload); /* parsed outside the lock */

	pthread_mutex_lock(&m.lock);
	s = task_find(ev->task_id);
	if (k == CM_EV_QUEUED) {
		if (s == NULL)
			s = task_insert(ev->task_id);
		s->queued_at = at;
	} else if (k == CM_EV_STARTED) {
		if (s == NULL)
			s = task_insert(ev->task_id);
		s->started_at = at;
		if (s->queued_at > 0 && at >= s->queued_at)
			hist_observe(&m.queue, &queue_spec,
			    (double)(at - s->queued_at) / 1000.0);
	} else if (t < N_STATUS) {
		m.finished[t][col]++;
		if (s != NULL && s->started_at > 0 && at >= s->started_at)
			hist_observe(&m.run[t], &run_spec,
			    (double)(at - s->started_at) / 1000.0);
		if (s != NULL)
			task_remove(s);
	}
	pthread_mutex_unlock(&m.lock);
}

/* --- what a scrape asks of others ---------------------------------------- */

void
api_metrics_stream_cut(void)
{
	pthread_mutex_lock(&m.lock);
	m.streams_cut++;
	pthread_mutex_unlock(&m.lock);
}

void
api_metrics_loop_answer(void)
{
	pthread_mutex_lock(&m.lock);
	m.loop_answers++;
	pthread_mutex_unlock(&m.lock);
}

void
api_metrics_gauge_spaces(long n)
{
	pthread_mutex_lock(&m.lock);
	m.spaces = n < 0 ? -1 : n;
	m.store_up = n >= 0;
	pthread_mutex_unlock(&m.lock);
}

static int
row_cmp(const void *a, const void *b)
{
	return strcmp(((const struct restart_row *)a)->space_id,
	    ((const struct restart_row *)b)->space_id);
}

void
api_metrics_actor_restarts(const struct pr_child *children, long n)
{
	size_t n_cur = 0;

	pthread_mutex_lock(&m.lock);
	m.sup_up = n >= 0;
	for (long i = 0; i < n && n_cur < CM_SUP_STATUS_ROWS_MAX; i++) {
		const struct pr_child *ch = &children[i];

		if (ch->kind == NULL || strcmp(ch->kind, "actor") != 0 ||
		    ch->space_id == NULL)
			continue;
		snprintf(m.cur[n_cur].space_id, sizeof(m.cur[n_cur].space_id),
		    "%s", ch->space_id);
		m.cur[n_cur].restarts = ch->restarts > 0 ? ch->restarts : 0;
		n_cur++;
	}
	if (n >= 0) {
		qsort(m.cur, n_cur, sizeof(m.cur[0]), row_cmp);
		/*
		 * A row's growth since the last answer; a row that is new,
		 * or whose count went down (it was replaced), adds all it
		 * has.
		 */
		for (size_t i = 0; i < n_cur; i++) {
			const struct restart_row *p = bsearch(&m.cur[i], m.prev,
			    m.n_prev, sizeof(m.prev[0]), row_cmp);
			int64_t now = m.cur[i].restarts;

			m.restarts += (uint64_t)(p != NULL && now >= p->restarts
			                             ? now - p->restarts
			                             : now);
		}
		memcpy(m.prev, m.cur, n_cur * sizeof(m.cur[0]));
		m.n_prev = n_cur;
	}
	pthread_mutex_unlock(&m.lock);
}

void
api_metrics_reset(void)
{
	pthread_mutex_lock(&m.lock);
	m.n_req = m.n_dur = 0;
	m.overflow = 0;
	memset(m.finished, 0, sizeof(m.finished));
	memset(m.run, 0, sizeof(m.run));
	memset(&m.queue, 0, sizeof(m.queue));
	memset(m.slots, 0, sizeof(m.slots));
	memset(m.heads, 0, sizeof(m.heads));
	m.ring = 0;
	m.evictions = 0;
	memset(m.blocked, 0, sizeof(m.blocked));
	m.streams_cut = 0;
	m.loop_answers = 0;
	m.spaces = -1;
	m.store_up = m.sup_up = -1;
	m.restarts = 0;
	m.n_prev = 0;
	pthread_mutex_unlock(&m.lock);
	api_metrics_mcp_reset();
	api_metrics_live_reset();
}

/* --- rendering ----------------------------------------------------------- */

static void
hist_lines(struct api_prom *b, const char *name, const char *labels,
    const struct hist *h, const struct hist_spec *s)
{
	api_prom_histogram(b, name, labels, h->in, s->le, s->n, h->sum);
}

/* route and method labels of a series, escaped, into a fresh buffer. */
static char *
route_labels(const char *route, unsigned method)
{
	struct api_prom l = {0};

	api_prom_label(&l, "route", route ? route : "unmatched", false);
	api_prom_label(&l, "method", methods[method], true);
	return api_prom_finish(&l);
}

static void
render_http(struct api_prom *b)
{
	api_prom_family(b, "spaced_http_requests_total", "counter",
	    "HTTP requests answered by this api process, by route pattern, "
	    "method and status.");
	for (size_t i = 0; i < m.n_req; i++) {
		char *l = route_labels(m.req[i].route, m.req[i].method);

		if (l == NULL) {
			b->oom = true;
			return;
		}
		api_prom_printf(b,
		    "spaced_http_requests_total{%s,status=\"%d\"} "
		    "%llu\n",
		    l, m.req[i].status, (unsigned long long)m.req[i].n);
		free(l);
	}
	api_prom_family(b, "spaced_http_request_duration_seconds", "histogram",
	    "Time from a request's last byte read to its answer being ready, "
	    "by route pattern and method.");
	for (size_t i = 0; i < m.n_dur; i++) {
		char *l = route_labels(m.dur[i].route, m.dur[i].method);

		if (l == NULL) {
			b->oom = true;
			return;
		}
		hist_lines(b, "spaced_http_request_duration_seconds", l,
		    &m.dur[i].h, &http_spec);
		free(l);
	}
	api_prom_family(b, "spaced_metrics_series_overflow_total", "counter",
	    "Requests not counted because the series table was full.");
	api_prom_printf(b, "spaced_metrics_series_overflow_total %llu\n",
	    (unsigned long long)m.overflow);
}

static const char *
code_name(size_t col)
{
	if (col == CM_OK)
		return "none";
	if (col == CM_ERR__COUNT)
		return "other";
	return cm_err_code((enum cm_err)col);
}

static void
render_tasks(struct api_prom *b)
{
	api_prom_family(b, "spaced_tasks_finished_total", "counter",
	    "Tasks that reached a terminal status, from the store's event "
	    "feed as this api process saw it.");
	for (int t = 0; t < N_STATUS; t++) {
		if (!cm_task_status_terminal((enum cm_task_status)t))
			continue;
		for (size_t col = 0; col < N_CODES; col++) {
			/* completed and cancelled are always shown, so a
			 * first increment is never lost to rate(). */
			if (m.finished[t][col] == 0 &&
			    !(col == CM_OK && t != CM_TASK_FAILED))
				continue;
			api_prom_printf(b,
			    "spaced_tasks_finished_total{status=\"%s\","
			    "error_code=\"%s\"} %llu\n",
			    cm_task_status_name((enum cm_task_status)t),
			    code_name(col),
			    (unsigned long long)m.finished[t][col]);
		}
	}
	api_prom_family(b, "spaced_task_duration_seconds", "histogram",
	    "Task run time: its terminal event's time less its started "
	    "event's time.");
	for (int t = 0; t < N_STATUS; t++) {
		char l[64];

		if (!cm_task_status_terminal((enum cm_task_status)t))
			continue;
		snprintf(l, sizeof(l), "status=\"%s\"",
		    cm_task_status_name((enum cm_task_status)t));
		hist_lines(
		    b, "spaced_task_duration_seconds", l, &m.run[t], &run_spec);
	}
	api_prom_family(b, "spaced_task_queue_seconds", "histogram",
	    "Task queue time: its started event's time less its queued "
	    "event's time.");
	hist_lines(b, "spaced_task_queue_seconds", "", &m.queue, &queue_spec);
	api_prom_family(b, "spaced_task_tracking_evictions_total", "counter",
	    "Unfinished tasks dropped from the bounded latency map; their "
	    "finish adds no run time sample.");
	api_prom_printf(b, "spaced_task_tracking_evictions_total %llu\n",
	    (unsigned long long)m.evictions);
	api_prom_family(b, "spaced_egress_blocked_total", "counter",
	    "Connections the Spaces' egress proxies refused, by reason, from "
	    "the network_blocked events of the store's feed.");
	for (size_t k = 0; k < N_BLOCK_REASONS; k++)
		api_prom_printf(b,
		    "spaced_egress_blocked_total{reason=\"%s\"} %llu\n",
		    k + 1 < N_BLOCK_REASONS ? block_reasons[k] : "other",
		    (unsigned long long)m.blocked[k]);
}

static void
render_streams(struct api_prom *b)
{
	api_prom_family(b, "spaced_sse_streams_cut_total", "counter",
	    "Event streams cut off: their client took nothing for a while "
	    "with too much waiting.");
	api_prom_printf(b, "spaced_sse_streams_cut_total %llu\n",
	    (unsigned long long)m.streams_cut);
}

static void
render_view(struct api_prom *b)
{
	struct api_view_counts v;

	api_view_counts(&v);
	api_prom_family(b, "spaced_api_view_reads_total", "counter",
	    "Space detail and list reads, answered from the api's view (hit) "
	    "or by the store (miss).");
	api_prom_printf(b, "spaced_api_view_reads_total{result=\"hit\"} %llu\n",
	    (unsigned long long)v.hits);
	api_prom_printf(b,
	    "spaced_api_view_reads_total{result=\"miss\"} %llu\n",
	    (unsigned long long)v.misses);
	api_prom_family(b, "spaced_api_feed_losses_total", "counter",
	    "Times the store's feed may have lost a message (a serial "
	    "missed, its pipe gone or back): the view was emptied.");
	api_prom_printf(b, "spaced_api_feed_losses_total %llu\n",
	    (unsigned long long)v.losses);
	api_prom_family(b, "spaced_api_feed_beats_total", "counter",
	    "Beats heard from the store's feed.");
	api_prom_printf(b, "spaced_api_feed_beats_total %llu\n",
	    (unsigned long long)v.beats);
	api_prom_family(b, "spaced_api_loop_answers_total", "counter",
	    "Requests the connection loop answered itself, with no worker: "
	    "reads the view held, /healthz, and refusals decided without "
	    "the store.");
	api_prom_printf(b, "spaced_api_loop_answers_total %llu\n",
	    (unsigned long long)m.loop_answers);
}

static void
render_sources(struct api_prom *b)
{
	if (m.spaces >= 0) {
		api_prom_family(b, "spaced_spaces_active", "gauge",
		    "Spaces whose status is not closed, as the store answered "
		    "at this scrape.");
		api_prom_printf(b, "spaced_spaces_active %ld\n", m.spaces);
	}
	api_prom_family(b, "spaced_actor_restarts_total", "counter",
	    "Actor restarts, from the growth of the supervisor's per-actor "
	    "restart counts between scrapes.");
	api_prom_printf(b, "spaced_actor_restarts_total %llu\n",
	    (unsigned long long)m.restarts);
	if (m.store_up >= 0 || m.sup_up >= 0) {
		api_prom_family(b, "spaced_metrics_source_up", "gauge",
		    "Whether a source answered at the last scrape.");
		if (m.store_up >= 0)
			api_prom_printf(b,
			    "spaced_metrics_source_up{source=\"store\"} %d\n",
			    m.store_up);
		if (m.sup_up >= 0)
			api_prom_printf(b,
			    "spaced_metrics_source_up{source=\"supervisor\"} "
			    "%d\n",
			    m.sup_up);
	}
}

char *
api_metrics_render(void)
{
	struct api_prom b = {0};

	pthread_mutex_lock(&m.lock);
	render_http(&b);
	render_tasks(&b);
	render_streams(&b);
	render_view(&b);
	render_sources(&b);
	api_metrics_mcp_render(&b);
	api_metrics_live_render(&b);
	pthread_mutex_unlock(&m.lock);
	return api_prom_finish(&b);
}
