/*
 * routes_meta.c: the routes about the service itself: GET /metrics and
 * GET /api/v1/openapi.json, which need no token, and the admin's
 * GET /api/v1/admin/status, the supervisor's table of children.
 *
 * A scrape asks two processes for what only they know, each with a short
 * timeout so that a dead source costs the scrape a bounded wait and its
 * gauges, never the request counters: the store for the Spaces that are
 * not closed (sup.list_active), and the supervisor's control socket for
 * the actors' restart counts (sup.status).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "clock.h"
#include "mcp_session.h"
#include "metrics.h"
#include "rpc.h"

/* A scrape is retried by the scraper: waiting longer buys nothing.  The
 * store's bound covers every page of the active Spaces together. */
#define META_STORE_TIMEOUT_MS 2000
#define META_SUP_TIMEOUT_MS 1000

/* The supervisor's control socket, opened on the first scrape and kept:
 * the dial retries in the background when the supervisor restarts. */
static struct {
	pthread_mutex_t lock;
	bool open;
	nng_socket s;
} sup = {.lock = PTHREAD_MUTEX_INITIALIZER};

static bool
sup_socket(const struct cm_config *cfg, nng_socket *out)
{
	char url[CM_PATH_MAX];
	bool ok;

	pthread_mutex_lock(&sup.lock);
	if (!sup.open &&
	    cm_ipc_url(url, sizeof(url), cfg->run_dir, "supervisor.ipc") == 0 &&
	    cm_rpc_open(&sup.s, url) == 0)
		sup.open = true;
	*out = sup.s;
	ok = sup.open;
	pthread_mutex_unlock(&sup.lock);
	return ok;
}

/*
 * Counts the Spaces that are not closed, page by page: each page of
 * sup.list_active holds at most CM_ACTIVE_PAGE_MAX, after the last id of
 * the one before.  The pages share one deadline, so however many there
 * are, a slow store costs the scrape META_STORE_TIMEOUT_MS at most.  A
 * Space opened or closed during the walk may or may not be counted, as
 * with any gauge read while it moves.
 */
static void
scrape_store(struct api_ctx *c)
{
	char after[CM_ID_MAX + 1] = "";
	int64_t deadline = cm_mono_ms() + META_STORE_TIMEOUT_MS;
	long total = 0;
	size_t n;

	do {
		int64_t left = deadline - cm_mono_ms();
		struct pr_req q;
		struct pr_rep r;

		memset(&q, 0, sizeof(q));
		memset(&r, 0, sizeof(r));
		q.op = PR_OP_SUP_LIST_ACTIVE; /* every host: host stays NULL */
		q.after_id = after[0] != '\0' ? after : NULL;
		if (left <= 0 ||
		    cm_rpc_call(c->store, &q, &r, (int)left) != CM_OK ||
		    r.err != CM_OK) {
			pr_rep_free(&r);
			api_metrics_gauge_spaces(-1);
			return;
		}
		n = r.n_spaces;
		total += (long)n;
		if (n > 0)
			snprintf(after, sizeof(after), "%s",
			    r.spaces[n - 1].space_id);
		pr_rep_free(&r);
	} while (n == CM_ACTIVE_PAGE_MAX);
	api_metrics_gauge_spaces(total);
}

/*
 * The supervisor's whole table: its rows, shallow copies whose strings
 * belong to the pages' replies, which are kept until sup_table_free.
 */
#define SUP_TABLE_PAGES (CM_SUP_STATUS_ROWS_MAX / CM_SUP_STATUS_PAGE_MAX)
struct sup_table {
	struct pr_rep page[SUP_TABLE_PAGES];
	size_t n_pages;
	struct pr_child *rows;
	size_t n;
	bool too_large; /* more than CM_SUP_STATUS_ROWS_MAX rows */
};

static void
sup_table_free(struct sup_table *t)
{
	for (size_t i = 0; i < t->n_pages; i++)
		pr_rep_free(&t->page[i]);
	free(t->rows);
	t->n_pages = t->n = 0;
	t->rows = NULL;
}

/*
 * Reads the supervisor's table from its control socket, a page of
 * sup.status at a time (the rows after the last one's serial), into t
 * (the caller frees it with sup_table_free, whatever this answers).
 * Runs on a worker, never on the connection loop; the pages share one
 * deadline of META_SUP_TIMEOUT_MS.  False when the supervisor did not
 * answer every page, answered an error, or has more than
 * CM_SUP_STATUS_ROWS_MAX rows.
 */
static bool
sup_table_read(struct api_ctx *c, struct sup_table *t)
{
	int64_t deadline = cm_mono_ms() + META_SUP_TIMEOUT_MS, after = 0;
	nng_socket s;
	size_t n;

	memset(t, 0, sizeof(*t));
	if (!sup_socket(c->cfg, &s))
		return false;
	do {
		int64_t left = deadline - cm_mono_ms();
		struct pr_rep *r = &t->page[t->n_pages];
		struct pr_child *rows;
		struct pr_req q;

		if (t->n_pages == SUP_TABLE_PAGES) {
			t->too_large = true;
			return false;
		}
		if (left <= 0)
			return false;
		memset(&q, 0, sizeof(q));
		memset(r, 0, sizeof(*r));
		q.op = PR_OP_SUP_STATUS;
		q.after_sequence = after;
		t->n_pages++;
		if (cm_rpc_call(s, &q, r, (int)left) != CM_OK ||
		    r->err != CM_OK)
			return false;
		n = r->n_children;
		if (n > CM_SUP_STATUS_PAGE_MAX ||
		    (rows = realloc(t->rows, (t->n + n + 1) * sizeof(*rows))) ==
		        NULL)
			return false;
		t->rows = rows;
		memcpy(t->rows + t->n, r->children, n * sizeof(*rows));
		t->n += n;
		if (n > 0)
			after = r->children[n - 1].serial;
	} while (n == CM_SUP_STATUS_PAGE_MAX);
	return true;
}

static void
scrape_supervisor(struct api_ctx *c)
{
	struct sup_table t;

	if (sup_table_read(c, &t))
		api_metrics_actor_restarts(t.rows, (long)t.n);
	else
		api_metrics_actor_restarts(NULL, -1);
	sup_table_free(&t);
}

void
api_admin_status(struct api_ctx *c)
{
	struct sup_table t;
	json_t *rows;

	if (!api_admin_allowed(c))
		return;
	if (!sup_table_read(c, &t)) {
		api_fail(c, 0, CM_E_SUPERVISOR_UNAVAILABLE,
		    t.too_large ? "the supervisor has more than " CM_STR(
		                      CM_SUP_STATUS_ROWS_MAX) " children"
		                : "the supervisor did not answer");
		sup_table_free(&t);
		return;
	}
	if ((rows = json_array()) == NULL) {
		sup_table_free(&t);
		api_fail(c, 500, CM_E_INTERNAL, "out of memory");
		return;
	}
	for (size_t i = 0; i < t.n; i++)
		json_array_append_new(rows, api_dto_child(&t.rows[i]));
	sup_table_free(&t);
	api_ok(c, 200, rows);
}

void
api_metrics_get(struct api_ctx *c)
{
	char *text;

	scrape_store(c);
	scrape_supervisor(c);
	api_metrics_mcp_sessions(api_mcp_sessions_open(cm_mono_ms() / 1000));
	if ((text = api_metrics_render()) == NULL) {
		api_fail(c, 500, CM_E_INTERNAL, "out of memory");
		return;
	}
	free(c->res->body);
	c->res->status = 200;
	c->res->body = text;
	c->res->content_type = "text/plain; version=0.0.4; charset=utf-8";
}

void
api_openapi_get(struct api_ctx *c)
{
	char *doc = malloc(api_openapi_json_len + 1);

	if (doc == NULL) {
		api_fail(c, 500, CM_E_INTERNAL, "out of memory");
		return;
	}
	memcpy(doc, api_openapi_json, api_openapi_json_len + 1);
	free(c->res->body);
	c->res->status = 200;
	c->res->body = doc;
	c->res->content_type = NULL; /* application/json */
}
