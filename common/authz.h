/*
 * authz.h: who may do what in a workspace.  The one copy of the
 * authorization rules: the api asks here for every route, and the store
 * for a task submit, on the Space row it reads anyway.
 *
 * Pure: no I/O, no allocation, no state, so any thread of any process may
 * call it.  The caller resolves the bearer token (auth.resolve), fetches
 * the Space a route names, and asks here.
 *
 * Decisions, checked in this order; the first that applies wins:
 *
 *  1. The action is not one of enum cm_action: CM_E_INTERNAL (a bug in
 *     the caller; deny).
 *  2. No identity, no principal, a principal without an id, or a disabled
 *     principal: CM_E_UNAUTHENTICATED (401).  Disabled wins over admin.
 *  3. CM_ACT_ADMIN: allowed for is_admin principals, otherwise
 *     CM_E_FORBIDDEN.  workspace_id and space are ignored.
 *  4. Every other action is a workspace route.  A NULL or empty
 *     workspace_id names no workspace: CM_E_NOT_FOUND.
 *  5. The caller's role in the workspace is the membership whose
 *     workspace_id and principal_id both match (memberships of other
 *     principals are ignored; a role other than "member" or "manager"
 *     counts as none).  A non-admin without a role: CM_E_FORBIDDEN, for
 *     every workspace route, whether or not the workspace or Space exists,
 *     so a non-member learns nothing about the workspace.
 *     Roles apply whatever the principal's kind: a runtime_agent may be a
 *     manager.  Admins need no membership and act as managers everywhere.
 *  6. CM_ACT_SPACE_LIST and CM_ACT_INSTANCE_LIST: allowed (the list is
 *     narrowed by cm_authz_list_filter, not here).
 *  7. CM_ACT_SPACE_CREATE: a manager or admin may name any owner (the
 *     store checks that owner_id is a non-disabled member of the workspace
 *     and of kind owner_type).  A member may name only itself: owner_id
 *     equal to its principal_id and owner_type equal to its kind; anything
 *     else is CM_E_FORBIDDEN ("owner_id not allowed").  A NULL owner_type
 *     or owner_id is CM_E_FORBIDDEN for everyone: the route validates the
 *     body (422) first, so this only fails closed.
 *  8. Actions on one Space (read, submit, cancel, close, take-over): a NULL
 * space (the store found none) or a space whose workspace_id is not
 * workspace_id (foreign) is CM_E_NOT_FOUND, for admins too.  Then managers and
 *     admins are allowed; a member is allowed only on a Space it owns, and
 *     otherwise gets CM_E_FORBIDDEN ("not the owner and not a manager": the
 *     Space's existence is visible to members of its workspace, never to
 *     others).
 *
 * A principal owns a Space when space->owner_id equals its principal_id.
 * Principal ids are unique across kinds and create (rule 7, and the store)
 * already ties owner_type to the owner's kind, so owner_type is not
 * compared again; this keeps "owns" identical to the list filter, which
 * the store applies on owner_id.
 *
 * Routes that find a Space first should call cm_authz_check with the
 * space the store returned, or NULL when it answered not_found: a
 * non-member then still gets 403 (rule 5) and a member 404 (rule 8).
 */
#ifndef CM_AUTHZ_H
#define CM_AUTHZ_H

#include <stddef.h>

#include "errors.h"
#include "proto.h"

/*
 * Who is calling.  Points into the auth.resolve reply (or anywhere); the
 * caller keeps that memory alive while the identity is used.
 */
struct cm_identity {
	const struct pr_principal *principal; /* NULL: unauthenticated */
	const struct pr_membership *memberships;
	size_t n_memberships;
};

enum cm_action {
	CM_ACT_SPACE_LIST,     /* GET  .../browser-spaces */
	CM_ACT_SPACE_CREATE,   /* POST .../browser-spaces */
	CM_ACT_SPACE_READ,     /* GET  the Space, its tasks, its events */
	CM_ACT_SPACE_SUBMIT,   /* POST .../tasks */
	CM_ACT_SPACE_CANCEL,   /* POST .../cancel */
	CM_ACT_SPACE_CLOSE,    /* POST .../close */
	CM_ACT_SPACE_TAKEOVER, /* POST .../takeover, .../release */
	CM_ACT_INSTANCE_LIST,  /* GET  .../browser-instances */
	CM_ACT_ADMIN,          /* every /api/v1/admin route */
	CM_ACT__COUNT
};

/*
 * Builds an identity from an auth.resolve reply.  The reply names the
 * caller only when it succeeded with exactly one principal; otherwise
 * out->principal is NULL (every check then answers 401).  out borrows
 * rep's memory.
 */
void cm_identity_from_reply(const struct pr_rep *rep, struct cm_identity *out);

/*
 * Decides whether id may perform action a in workspace_id (see the rules
 * above).  space is the Space the route names (NULL when it names none or
 * the store found none); it is ignored by actions that name no Space.
 * create_owner_type and create_owner_id are the create body's owner,
 * ignored by every other action.
 *
 * Returns CM_OK, CM_E_UNAUTHENTICATED, CM_E_FORBIDDEN, CM_E_NOT_FOUND or
 * CM_E_INTERNAL.  When why is not NULL it is set to a static human
 * message for the error response ("" on CM_OK).
 */
enum cm_err cm_authz_check(const struct cm_identity *id, enum cm_action a,
    const char *workspace_id, const struct pr_space *space,
    const char *create_owner_type, const char *create_owner_id,
    const char **why);

/*
 * For the Space list: applies cm_authz_check(CM_ACT_SPACE_LIST), then
 * decides the owner_id filter the store query must use.  Managers and
 * admins see every Space: the filter is requested_owner_id as given (NULL
 * for none).  A member sees only its own Spaces: the filter is its
 * principal_id, and asking for another owner's Spaces is CM_E_FORBIDDEN.
 *
 * On CM_OK *owner_filter is set (it may point into id or at
 * requested_owner_id); on an error it is left as it was.
 */
enum cm_err cm_authz_list_filter(const struct cm_identity *id,
    const char *workspace_id, const char *requested_owner_id,
    const char **owner_filter, const char **why);

#endif
