/*
 * test_ops_artifact.c: a task's artifact, written by actor.finish in the
 * transaction that finishes the task, read back by artifact.get within
 * the task's workspace and Space, bounded by CM_ARTIFACT_MAX, and gone
 * with its Space.
 */
#include "store_fixture.h"

#include "ops.h"

static struct fx fx;
static const char *sp; /* a Space on instance 0 */

static void
setup(void)
{
	fx_setup(&fx, 0);
	fx_provision(&fx, 2);
	sp = fx_space(&fx, 0);
}

static void
teardown(void)
{
	fx_teardown(&fx);
	sp = NULL;
}

TestSuite(artifact, .init = setup, .fini = teardown);

/* A real 3x2 PNG (the fake driver's), NUL bytes and all, and its
 * SHA-256 as sha256sum(1) gives it. */
static const unsigned char png[] = {0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a,
    0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x03, 0x00, 0x00, 0x00, 0x02, 0x08, 0x02, 0x00, 0x00, 0x00, 0x12, 0x16,
    0xf1, 0x4d, 0x00, 0x00, 0x00, 0x10, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda,
    0x63, 0xf8, 0xcf, 0xc0, 0xc0, 0x00, 0xc1, 0x70, 0x16, 0x00, 0x3b, 0xd8,
    0x05, 0xfb, 0x36, 0x11, 0x98, 0xea, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};
#define PNG_SHA256 \
	"1d549f2c99202751e780f6da00c481ac9e833d09d034a5ad6e54c617d8792ca9"

static struct pr_rep *
finish_with(const char *task, const char *holder, const char *status,
    const char *name, const char *mime, const void *bytes, size_t n,
    enum cm_err want)
{
	struct pr_req q;

	fx_req(&fx, &q, PR_OP_ACTOR_FINISH);
	q.task_id = task;
	q.lease_holder = holder;
	q.status = status;
	if (strcmp(status, "completed") == 0)
		q.result = "{\"artifact\":\"screenshot.png\"}";
	else if (strcmp(status, "failed") == 0) {
		q.error_code = "runtime_error";
		q.error_message = "it went wrong";
	}
	q.artifact_name = name;
	q.mime = mime;
	q.artifact.p = bytes;
	q.artifact.n = n;
	return FX_CALL(&fx, &q, want);
}

static struct pr_rep *
artifact_get(const char *ws, const char *space, const char *task,
    const char *name, enum cm_err want)
{
	struct pr_req q;

	fx_req(&fx, &q, PR_OP_ARTIFACT_GET);
	q.workspace_id = ws;
	q.space_id = space;
	q.task_id = task;
	q.artifact_name = name;
	return FX_CALL(&fx, &q, want);
}

static int64_t
artifacts_of(const char *space)
{
	return fx_sql_int(&fx,
	    "SELECT count(*) FROM browser_space_artifacts WHERE space_id = ?1",
	    space, (const char *)NULL);
}

/* A claimed task of sp, held by "actor-1". */
static const char *
running_task(const char *request_id)
{
	const char *task = fx_task(&fx, sp, request_id);

	fx_claim(&fx, sp, "actor-1");
	return task;
}

Test(artifact, finish_stores_it_with_the_stores_own_sha256_and_size)
{
	const char *task = running_task("r1");
	struct pr_rep *r;

	fx_advance(&fx, 250);
	r = finish_with(task, "actor-1", "completed", "screenshot.png",
	    "image/png", png, sizeof(png), CM_OK);
	/* The finish's reply is kept for its op_id: it never holds bytes. */
	cr_assert_eq(r->n_artifacts, 0);
	cr_assert_str_eq(
	    fx_task_get(&fx, sp, task)->tasks[0].status, "completed");
	r = artifact_get(fx.ws, sp, task, "screenshot.png", CM_OK);
	cr_assert_eq(r->n_artifacts, 1);
	cr_assert_str_eq(r->artifacts[0].task_id, task);
	cr_assert_str_eq(r->artifacts[0].space_id, sp);
	cr_assert_str_eq(r->artifacts[0].name, "screenshot.png");
	cr_assert_str_eq(r->artifacts[0].mime, "image/png");
	cr_assert_eq(r->artifacts[0].bytes.n, sizeof(png));
	cr_assert_eq(memcmp(r->artifacts[0].bytes.p, png, sizeof(png)), 0);
	cr_assert_str_eq(r->artifacts[0].sha256, PNG_SHA256);
	cr_assert_eq(r->artifacts[0].size, (int64_t)sizeof(png));
	cr_assert_eq(r->artifacts[0].created_at, FX_T0 + 250);
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT size FROM browser_space_artifacts"
	                 " WHERE task_id = ?1 AND sha256 = ?2",
	                 task, PNG_SHA256, (const char *)NULL),
	    (int64_t)sizeof(png));

	/* The same finish again (its op_id memory lost): one row still. */
	finish_with(task, "actor-1", "completed", "screenshot.png", "image/png",
	    png, sizeof(png), CM_OK);
	cr_assert_eq(artifacts_of(sp), 1);
	FX_LOG(&fx, sp, "space_opened", "queued", "started", "completed");
}

Test(artifact, get_finds_it_only_by_its_own_workspace_space_task_and_name)
{
	const char *task = running_task("r1");
	const char *sp2 = fx_space(&fx, 1);
	const char *other = fx_task(&fx, sp2, "r2");

	finish_with(task, "actor-1", "completed", "screenshot.png", "image/png",
	    png, sizeof(png), CM_OK);
	artifact_get(fx.ws, sp, task, "screenshot.png", CM_OK);
	artifact_get(fx.ws2, sp, task, "screenshot.png", CM_E_NOT_FOUND);
	artifact_get(fx.ws, sp2, task, "screenshot.png", CM_E_NOT_FOUND);
	artifact_get(fx.ws, sp, other, "screenshot.png", CM_E_NOT_FOUND);
	artifact_get(fx.ws, sp, task, "screenshot.jpg", CM_E_NOT_FOUND);
	artifact_get(
	    fx.ws, sp, "no-such-task", "screenshot.png", CM_E_NOT_FOUND);
}

Test(artifact, finish_refuses_a_bad_artifact_and_records_nothing)
{
	const char *task = running_task("r1");
	unsigned char *big = calloc(1, (size_t)CM_ARTIFACT_MAX + 1);
	struct pr_req q;
	struct pr_rep rep;
	char *buf = NULL;
	size_t len;

	cr_assert_not_null(big);
	/* Name, mime and bytes, all three. */
	finish_with(task, "actor-1", "completed", "screenshot.png", NULL, png,
	    sizeof(png), CM_E_INVALID_REQUEST);
	finish_with(task, "actor-1", "completed", NULL, "image/png", png,
	    sizeof(png), CM_E_INVALID_REQUEST);
	finish_with(task, "actor-1", "completed", "screenshot.png", "image/png",
	    NULL, 0, CM_E_INVALID_REQUEST);
	/* A name is one plain path segment. */
	finish_with(task, "actor-1", "completed", "../x.png", "image/png", png,
	    sizeof(png), CM_E_INVALID_REQUEST);
	finish_with(task, "actor-1", "completed", ".png", "image/png", png,
	    sizeof(png), CM_E_INVALID_REQUEST);
	/* Served as its mime type: images only. */
	finish_with(task, "actor-1", "completed", "x.html", "text/html", png,
	    sizeof(png), CM_E_INVALID_REQUEST);
	/* Only a completed task has one. */
	finish_with(task, "actor-1", "failed", "screenshot.png", "image/png",
	    png, sizeof(png), CM_E_INVALID_REQUEST);
	/* Over the bound: no encoder sends it, no decoder takes it... */
	fx_req(&fx, &q, PR_OP_ACTOR_FINISH);
	q.task_id = task;
	q.lease_holder = "actor-1";
	q.status = "completed";
	q.artifact_name = "screenshot.png";
	q.mime = "image/png";
	q.artifact.p = big;
	q.artifact.n = (size_t)CM_ARTIFACT_MAX + 1;
	cr_assert_neq(pr_req_encode(&q, &buf, &len), 0);
	/* ...and the store's own check refuses it all the same. */
	memset(&rep, 0, sizeof(rep));
	cr_assert_eq(st_artifact_check(&q, &rep), -1);
	cr_assert_eq(rep.err, CM_E_INVALID_REQUEST);
	pr_rep_free(&rep);
	q.artifact.n = CM_ARTIFACT_MAX;
	cr_assert_eq(st_artifact_check(&q, &rep), 1);
	pr_rep_free(&rep);
	/* Under another lease: refused, and nothing written. */
	finish_with(task, "actor-2", "completed", "screenshot.png", "image/png",
	    png, sizeof(png), CM_E_LEASE_EXPIRED);
	free(big);
	cr_assert_eq(artifacts_of(sp), 0);
	cr_assert_str_eq(
	    fx_task_get(&fx, sp, task)->tasks[0].status, "running");
}

Test(artifact, one_of_cm_artifact_max_bytes_is_stored_whole)
{
	const char *task = running_task("r1");
	unsigned char *max = malloc(CM_ARTIFACT_MAX);
	struct pr_rep *r;

	cr_assert_not_null(max);
	for (size_t i = 0; i < CM_ARTIFACT_MAX; i++)
		max[i] = (unsigned char)(i * 7 + i / 251);
	finish_with(task, "actor-1", "completed", "screenshot.jpg",
	    "image/jpeg", max, CM_ARTIFACT_MAX, CM_OK);
	r = artifact_get(fx.ws, sp, task, "screenshot.jpg", CM_OK);
	cr_assert_eq(r->artifacts[0].bytes.n, (size_t)CM_ARTIFACT_MAX);
	cr_assert_eq(r->artifacts[0].size, CM_ARTIFACT_MAX);
	cr_assert_str_eq(r->artifacts[0].mime, "image/jpeg");
	cr_assert_eq(memcmp(r->artifacts[0].bytes.p, max, CM_ARTIFACT_MAX), 0);
	free(max);
}

Test(artifact, deleting_the_space_deletes_its_artifacts)
{
	const char *task = running_task("r1");
	char sql[256];

	finish_with(task, "actor-1", "completed", "screenshot.png", "image/png",
	    png, sizeof(png), CM_OK);
	cr_assert_eq(artifacts_of(sp), 1);
	/* The store's own connection has foreign keys on, as its README
	 * says; the cascade is the schema's. */
	snprintf(
	    sql, sizeof(sql), "DELETE FROM browser_spaces WHERE id = '%s'", sp);
	cr_assert_eq(fx_raw_exec(&fx, sql), SQLITE_OK);
	cr_assert_eq(artifacts_of(sp), 0);
	artifact_get(fx.ws, sp, task, "screenshot.png", CM_E_NOT_FOUND);
}

/* A blob literal of the database's dialect. */
static const char *
lit(const char *hex)
{
	static char buf[4][64];
	static unsigned n;
	char *b = buf[n++ % 4];

	snprintf(b, sizeof(buf[0]), fx.pg ? "'\\x%s'::bytea" : "x'%s'", hex);
	return b;
}

/* Inserts a row behind the store's back; returns SQLite's result code. */
static int
raw_insert(const char *task, const char *id, const char *name, const char *mime,
    const char *bytes, int64_t size)
{
	char sql[512];

	snprintf(sql, sizeof(sql),
	    "INSERT INTO browser_space_artifacts VALUES ('%s', '%s', '%s',"
	    " '%s', '%s', %s, '%s', %lld, 0)",
	    id, task, sp, name, mime, bytes, PNG_SHA256, (long long)size);
	return fx_raw_exec(&fx, sql);
}

Test(artifact, the_schema_holds_size_mime_and_bound)
{
	const char *task = running_task("r1");

	/* The table refuses what the store would. */
	cr_assert_neq(
	    raw_insert(task, "a1", "x.html", "text/html", lit("00"), 1),
	    SQLITE_OK, "a text/html mime");
	cr_assert_neq(
	    raw_insert(task, "a1", "x.png", "image/png", lit("0001"), 1),
	    SQLITE_OK, "a size not its own");
	cr_assert_neq(raw_insert(task, "a1", "x.png", "image/png",
	                  "zeroblob(4194305)", 4194305),
	    SQLITE_OK, "over 4 MiB");
	cr_assert_eq(
	    raw_insert(task, "a1", "x.png", "image/png", lit("0001"), 2),
	    SQLITE_OK);
	/* One of each name per task. */
	cr_assert_neq(
	    raw_insert(task, "a2", "x.png", "image/png", lit("0001"), 2),
	    SQLITE_OK, "a second x.png");
	_Static_assert(CM_ARTIFACT_MAX == 4194304, "the migration's bound");
}
