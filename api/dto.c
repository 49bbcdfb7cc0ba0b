/*
 * dto.c: records as the API shows them (docs/api.md).  These builders
 * never see a secret column: the store's public records carry none, and
 * a task's args appear only as arg_keys.
 */
#include <stdio.h>

#include "api.h"
#include "clock.h"

char *
api_rfc3339(int64_t ms, char *buf, size_t len)
{
	if (ms <= 0 || cm_rfc3339(ms, buf, len) != 0)
		return NULL;
	return buf;
}

/* A timestamp, or null for 0. */
static json_t *
ts(int64_t ms)
{
	char buf[CM_RFC3339_LEN];

	return api_rfc3339(ms, buf, sizeof(buf)) ? json_string(buf)
	                                         : json_null();
}

static json_t *
str_or_null(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

static json_t *
strlist(const struct pr_strlist *l)
{
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < l->n; i++)
		json_array_append_new(a, json_string(l->v[i]));
	return a;
}

/* Stored JSON text back as a value; null when absent or unreadable. */
static json_t *
raw_json(const char *text)
{
	json_t *v;

	if (text == NULL)
		return json_null();
	v = json_loads(text, JSON_DECODE_ANY, NULL);
	return v ? v : json_null();
}

json_t *
api_dto_task(const struct pr_task *t)
{
	json_t *err = t->error_code == NULL
	                  ? json_null()
	                  : json_pack("{s:s, s:o}", "code", t->error_code,
	                        "message", str_or_null(t->error_message));

	return json_pack("{s:s, s:s, s:o, s:o, s:s, s:o, s:s, s:b, s:o, s:o, "
	                 "s:o, s:o, s:o, s:I}",
	    "space_id", t->space_id, "task_id", t->task_id, "operation_id",
	    str_or_null(t->operation_id), "request_id",
	    str_or_null(t->request_id), "capability", t->capability, "arg_keys",
	    strlist(&t->arg_keys), "status", t->status, "cancel_requested",
	    t->cancel_requested, "result", raw_json(t->result), "error", err,
	    "created_at", ts(t->created_at), "started_at", ts(t->started_at),
	    "finished_at", ts(t->finished_at), "timeout_seconds",
	    (json_int_t)(t->timeout_ms / 1000));
}

/* A Space's hold: who holds it, until when, and whether it waits for
 * the task that ran to end; null when none is in force or asked. */
static json_t *
hold(const struct pr_space *s)
{
	if (s->held_by == NULL)
		return json_null();
	return json_pack("{s:s, s:o, s:o, s:b}", "held_by", s->held_by,
	    "held_by_name", str_or_null(s->held_by_name), "held_until",
	    ts(s->held_until), "pending", s->hold_pending);
}

json_t *
api_dto_space(const struct pr_space *s, const struct pr_task *active)
{
	return json_pack("{s:s, s:s, s:s, s:o, s:s, s:s, s:s, s:o, s:I, s:o, "
	                 "s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o}",
	    "space_id", s->space_id, "workspace_id", s->workspace_id,
	    "browser_instance_id", s->browser_instance_id, "binding_id",
	    str_or_null(s->binding_id), "owner_type", s->owner_type, "owner_id",
	    s->owner_id, "status", s->status, "granted_capabilities",
	    strlist(&s->granted), "revision", (json_int_t)s->revision,
	    "last_error_code", str_or_null(s->last_error_code),
	    "close_requested", s->close_requested, "active_task",
	    active ? api_dto_task(active) : json_null(), "created_at",
	    ts(s->created_at), "updated_at", ts(s->updated_at), "closed_at",
	    ts(s->closed_at), "dialog_policy", str_or_null(s->dialog_policy),
	    "hold", hold(s), "help_requested", s->help_requested, "owner_name",
	    str_or_null(s->owner_name));
}

json_t *
api_dto_event(const struct pr_event *e)
{
	return json_pack("{s:I, s:s, s:o, s:o, s:o, s:s, s:s}", "sequence",
	    (json_int_t)e->sequence, "kind", e->kind, "task_id",
	    str_or_null(e->task_id), "payload", raw_json(e->payload),
	    "created_at", ts(e->created_at), "workspace_id", e->workspace_id,
	    "space_id", e->space_id);
}

/* The public view: no endpoint, config or profile path exists here. */
json_t *
api_dto_instance(const struct pr_instance *i)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:b, s:o, s:o}",
	    "browser_instance_id", i->browser_instance_id, "name", i->name,
	    "driver", i->driver, "profile_mode", i->profile_mode, "bundle_id",
	    i->bundle_id, "status", i->status, "network_policy",
	    raw_json(i->network_policy), "in_use", i->in_use, "created_at",
	    ts(i->created_at), "updated_at", ts(i->updated_at));
}

/* --- provisioning records (routes_admin.c) ----------------------------- */

json_t *
api_dto_workspace(const struct pr_workspace *w)
{
	return json_pack("{s:s, s:s, s:o}", "workspace_id", w->workspace_id,
	    "name", w->name, "created_at", ts(w->created_at));
}

json_t *
api_dto_principal(const struct pr_principal *p)
{
	return json_pack("{s:s, s:s, s:s, s:b, s:b, s:o}", "principal_id",
	    p->principal_id, "kind", p->kind, "name", p->name, "is_admin",
	    p->is_admin, "disabled", p->disabled, "created_at",
	    ts(p->created_at));
}

/* The token itself is added only for the one answer that issues it. */
json_t *
api_dto_token(const struct pr_token *t, const char *token)
{
	json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o}", "token_id",
	    t->token_id, "principal_id", t->principal_id, "label",
	    str_or_null(t->label), "expires_at", ts(t->expires_at),
	    "revoked_at", ts(t->revoked_at), "created_at", ts(t->created_at));

	if (o != NULL && token != NULL)
		json_object_set_new(o, "token", json_string(token));
	return o;
}

json_t *
api_dto_membership(const struct pr_membership *m)
{
	return json_pack("{s:s, s:s, s:s, s:o}", "workspace_id",
	    m->workspace_id, "principal_id", m->principal_id, "role", m->role,
	    "created_at", ts(m->created_at));
}

json_t *
api_dto_bundle(const struct pr_bundle *b)
{
	return json_pack("{s:s, s:s, s:s, s:o, s:o}", "bundle_id", b->bundle_id,
	    "name", b->name, "version", b->version, "manifest",
	    raw_json(b->manifest), "created_at", ts(b->created_at));
}

/* The public view and the host it runs on; still no secret column. */
json_t *
api_dto_instance_admin(const struct pr_instance *i)
{
	json_t *o = api_dto_instance(i);

	if (o != NULL)
		json_object_set_new(o, "host", str_or_null(i->host));
	return o;
}

json_t *
api_dto_binding(const struct pr_binding *b)
{
	return json_pack("{s:s, s:s, s:s, s:o}", "binding_id", b->binding_id,
	    "workspace_id", b->workspace_id, "browser_instance_id",
	    b->browser_instance_id, "created_at", ts(b->created_at));
}

json_t *
api_dto_child(const struct pr_child *ch)
{
	return json_pack("{s:s, s:s?, s:I, s:s, s:I, s:I}", "kind",
	    ch->kind ? ch->kind : "", "space_id", ch->space_id, "pid",
	    (json_int_t)ch->pid, "state", ch->state ? ch->state : "",
	    "restarts", (json_int_t)ch->restarts, "uptime_ms",
	    (json_int_t)ch->uptime_ms);
}

json_t *
api_dto_deleted(
    const char *key, const char *id, const char *key2, const char *id2)
{
	json_t *o = json_pack("{s:s, s:b}", key, id, "deleted", true);

	if (o != NULL && key2 != NULL)
		json_object_set_new(o, key2, json_string(id2));
	return o;
}
