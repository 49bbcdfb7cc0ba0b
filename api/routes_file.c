/*
 * routes_file.c: the files a client keeps on a Space for its page to
 * upload (the upload capability).  PUT .../files/{name} keeps the body's
 * bytes (at most CM_UPLOAD_MAX, which request.c judges before reading
 * them) under name, with the request's Content-Type, replacing a file of
 * that name; GET .../files lists them, without their bytes.  Whoever may
 * submit a task on the Space may put a file on it, and whoever may read
 * it may list them: the same authorization as its tasks and artifacts.
 */
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "ids.h"
#include "mime.h"

static json_t *
file_dto(const struct pr_file *f)
{
	return json_pack("{s:s, s:s, s:I, s:s, s:I, s:I}", "name", f->name,
	    "mime", f->mime, "size", (json_int_t)f->size, "sha256", f->sha256,
	    "created_at", (json_int_t)f->created_at, "updated_at",
	    (json_int_t)f->updated_at);
}

/* The request's media type without parameters into out, or
 * application/octet-stream when it gives none; false when it is not one. */
static bool
file_mime(const char *v, char *out, size_t len)
{
	size_t n;

	if (v == NULL || v[0] == '\0') {
		snprintf(out, len, "application/octet-stream");
		return true;
	}
	n = strcspn(v, "; \t");
	if (n == 0 || n >= len)
		return false;
	snprintf(out, len, "%.*s", (int)n, v);
	return cm_mime_valid(out);
}

void
api_file_put(struct api_ctx *c)
{
	const char *name = c->params[2];
	char mime[CM_MIME_MAX + 1];
	struct pr_req q;
	struct pr_rep r;

	if (c->req->body_len == 0) {
		api_fail(c, 0, CM_E_INVALID_REQUEST, "the file is empty");
		return;
	}
	if (!file_mime(c->req->content_type, mime, sizeof(mime))) {
		api_fail(c, 0, CM_E_INVALID_REQUEST,
		    "Content-Type is not a media type");
		return;
	}
	if (!api_space_allowed(c, CM_ACT_SPACE_SUBMIT))
		return;
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SPACE_FILE_PUT;
	q.workspace_id = c->workspace_id;
	q.space_id = c->space_id;
	q.name = name;
	q.mime = mime;
	q.artifact.p = (const unsigned char *)c->req->body;
	q.artifact.n = c->req->body_len;
	if (!api_call(c, &q, &r))
		return;
	if (r.err != CM_OK)
		api_fail_rep(c, &r);
	else if (r.n_files != 1)
		api_fail(c, 500, CM_E_INTERNAL, "the store sent no file");
	else
		api_ok(c, r.created ? 201 : 200, file_dto(&r.files[0]));
	pr_rep_free(&r);
}

void
api_file_list(struct api_ctx *c)
{
	struct pr_req q;
	struct pr_rep r;
	json_t *list;

	if (!api_space_allowed(c, CM_ACT_SPACE_READ))
		return;
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SPACE_FILE_LIST;
	q.workspace_id = c->workspace_id;
	q.space_id = c->space_id;
	if (!api_call(c, &q, &r))
		return;
	if (r.err != CM_OK) {
		api_fail_rep(c, &r);
		pr_rep_free(&r);
		return;
	}
	list = json_array();
	for (size_t i = 0; i < r.n_files; i++)
		json_array_append_new(list, file_dto(&r.files[i]));
	api_ok(c, 200, list);
	pr_rep_free(&r);
}
