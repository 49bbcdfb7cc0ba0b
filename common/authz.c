/*
 * authz.c: the authorization decisions.  The rules and their order are
 * documented in authz.h; this file only explains choices.
 */
#include <stdbool.h>
#include <string.h>

#include "authz.h"

enum authz_role { AUTHZ_NONE, AUTHZ_MEMBER, AUTHZ_MANAGER };

/* The error body's message for each refusal, one per reason: a client
 * and an operator read the same words for the same rule. */
static const char authz_why_unauth[] = "authentication required";
static const char authz_why_admin[] = "not an admin";
static const char authz_why_member[] = "not a member of the workspace";
static const char authz_why_owner[] = "not the owner and not a manager";
static const char authz_why_create[] = "owner_id not allowed";
static const char authz_why_no_ws[] = "no such workspace";
static const char authz_why_no_space[] = "no such browser space";
static const char authz_why_action[] = "unknown action";

static bool
authz_nonempty(const char *s)
{
	return s != NULL && s[0] != '\0';
}

/* Both NULL-safe; NULL never equals anything, not even NULL. */
static bool
authz_same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static bool
authz_authenticated(const struct cm_identity *id)
{
	return id != NULL && id->principal != NULL &&
	       authz_nonempty(id->principal->principal_id) &&
	       !id->principal->disabled;
}

/*
 * The caller's role in ws.  The store sends one membership per workspace
 * (its primary key), so at most one row matches; should two ever match,
 * the first with a known role counts.  Rows of other principals are
 * skipped so a reply that carried them could not lend their role.
 * O(n_memberships).
 */
static enum authz_role
authz_role(const struct cm_identity *id, const char *ws)
{
	const struct pr_principal *p = id->principal;

	for (size_t i = 0; i < id->n_memberships; i++) {
		const struct pr_membership *m = &id->memberships[i];

		if (!authz_same(m->workspace_id, ws) ||
		    !authz_same(m->principal_id, p->principal_id))
			continue;
		if (authz_same(m->role, "manager"))
			return AUTHZ_MANAGER;
		if (authz_same(m->role, "member"))
			return AUTHZ_MEMBER;
	}
	return AUTHZ_NONE;
}

static bool
authz_names_space(enum cm_action a)
{
	return a == CM_ACT_SPACE_READ || a == CM_ACT_SPACE_SUBMIT ||
	       a == CM_ACT_SPACE_CANCEL || a == CM_ACT_SPACE_CLOSE ||
	       a == CM_ACT_SPACE_TAKEOVER;
}

static enum cm_err
authz_answer(enum cm_err err, const char *msg, const char **why)
{
	if (why != NULL)
		*why = msg;
	return err;
}

enum cm_err
cm_authz_check(const struct cm_identity *id, enum cm_action a,
    const char *workspace_id, const struct pr_space *space,
    const char *create_owner_type, const char *create_owner_id,
    const char **why)
{
	const struct pr_principal *p;
	enum authz_role role;
	bool all; /* manager or admin: every Space of the workspace */

	/* Checked through an unsigned value: an enum may be signed. */
	if ((unsigned)a >= (unsigned)CM_ACT__COUNT)
		return authz_answer(CM_E_INTERNAL, authz_why_action, why);
	if (!authz_authenticated(id))
		return authz_answer(
		    CM_E_UNAUTHENTICATED, authz_why_unauth, why);
	p = id->principal;

	if (a == CM_ACT_ADMIN) {
		if (!p->is_admin)
			return authz_answer(
			    CM_E_FORBIDDEN, authz_why_admin, why);
		return authz_answer(CM_OK, "", why);
	}

	if (!authz_nonempty(workspace_id))
		return authz_answer(CM_E_NOT_FOUND, authz_why_no_ws, why);
	role = authz_role(id, workspace_id);
	if (role == AUTHZ_NONE && !p->is_admin)
		return authz_answer(CM_E_FORBIDDEN, authz_why_member, why);
	all = p->is_admin || role == AUTHZ_MANAGER;

	if (a == CM_ACT_SPACE_CREATE) {
		if (create_owner_type == NULL || create_owner_id == NULL)
			return authz_answer(
			    CM_E_FORBIDDEN, authz_why_create, why);
		if (!all && !(authz_same(create_owner_id, p->principal_id) &&
		                authz_same(create_owner_type, p->kind)))
			return authz_answer(
			    CM_E_FORBIDDEN, authz_why_create, why);
		return authz_answer(CM_OK, "", why);
	}

	if (authz_names_space(a)) {
		/* The store already answers not_found for a foreign Space;
		 * comparing again means a wrong lookup cannot leak one. */
		if (space == NULL ||
		    !authz_same(space->workspace_id, workspace_id))
			return authz_answer(
			    CM_E_NOT_FOUND, authz_why_no_space, why);
		if (!all && !authz_same(space->owner_id, p->principal_id))
			return authz_answer(
			    CM_E_FORBIDDEN, authz_why_owner, why);
	}
	/* Space list and instance list: any member. */
	return authz_answer(CM_OK, "", why);
}

enum cm_err
cm_authz_list_filter(const struct cm_identity *id, const char *workspace_id,
    const char *requested_owner_id, const char **owner_filter, const char **why)
{
	enum cm_err err;

	err = cm_authz_check(
	    id, CM_ACT_SPACE_LIST, workspace_id, NULL, NULL, NULL, why);
	if (err != CM_OK)
		return err;
	if (id->principal->is_admin ||
	    authz_role(id, workspace_id) == AUTHZ_MANAGER) {
		*owner_filter = requested_owner_id;
		return CM_OK;
	}
	if (requested_owner_id != NULL &&
	    !authz_same(requested_owner_id, id->principal->principal_id))
		return authz_answer(CM_E_FORBIDDEN, authz_why_owner, why);
	*owner_filter = id->principal->principal_id;
	return CM_OK;
}

void
cm_identity_from_reply(const struct pr_rep *rep, struct cm_identity *out)
{
	out->principal = NULL;
	out->memberships = NULL;
	out->n_memberships = 0;
	if (rep == NULL || rep->err != CM_OK || rep->n_principals != 1)
		return;
	out->principal = &rep->principals[0];
	out->memberships = rep->memberships;
	out->n_memberships = rep->n_memberships;
}
