/* Authorization: the whole decision table of common/authz.h, then its
 * edges. */
#include <criterion/criterion.h>
#include <string.h>

#include "authz.h"

#define W1 "ws-1"
#define W2 "ws-2"

/* ---- fixtures -------------------------------------------------------- */

static const struct pr_principal p_op = {
    .principal_id = "p-op", .kind = "operator"};
static const struct pr_principal p_ag = {
    .principal_id = "p-ag", .kind = "runtime_agent"};
static const struct pr_principal p_other = {
    .principal_id = "p-other", .kind = "operator"};
static const struct pr_principal p_out = {
    .principal_id = "p-out", .kind = "operator"};
static const struct pr_principal p_mgr = {
    .principal_id = "p-mgr", .kind = "operator"};
static const struct pr_principal p_agmgr = {
    .principal_id = "p-agmgr", .kind = "runtime_agent"};
static const struct pr_principal p_admin = {
    .principal_id = "p-admin", .kind = "operator", .is_admin = true};
/* Disabled wins even over admin and manager. */
static const struct pr_principal p_dis = {.principal_id = "p-dis",
    .kind = "operator",
    .is_admin = true,
    .disabled = true};

static const struct pr_membership m_op[] = {
    {.workspace_id = W1, .principal_id = "p-op", .role = "member"},
    {.workspace_id = W2, .principal_id = "p-op", .role = "member"}};
static const struct pr_membership m_ag[] = {
    {.workspace_id = W1, .principal_id = "p-ag", .role = "member"}};
static const struct pr_membership m_other[] = {
    {.workspace_id = W1, .principal_id = "p-other", .role = "member"}};
/* A manager elsewhere is nobody in W1. */
static const struct pr_membership m_out[] = {
    {.workspace_id = W2, .principal_id = "p-out", .role = "manager"}};
static const struct pr_membership m_mgr[] = {
    {.workspace_id = W1, .principal_id = "p-mgr", .role = "manager"}};
static const struct pr_membership m_agmgr[] = {
    {.workspace_id = W1, .principal_id = "p-agmgr", .role = "manager"}};
static const struct pr_membership m_dis[] = {
    {.workspace_id = W1, .principal_id = "p-dis", .role = "manager"}};

#define IDENT(p, m)                                   \
	{                                             \
		&(p), (m), sizeof(m) / sizeof((m)[0]) \
	}

enum who {
	WHO_NONE,         /* no identity at all */
	WHO_NO_PRINCIPAL, /* an identity naming nobody */
	WHO_DISABLED,     /* disabled admin and manager */
	WHO_NON_MEMBER,   /* member (manager) of W2 only */
	WHO_NOT_OWNER,    /* operator member of W1 owning nothing here */
	WHO_OP_OWNER,     /* operator member, owns s_op and s_foreign */
	WHO_AG_OWNER,     /* runtime_agent member, owns s_ag */
	WHO_MANAGER,      /* operator manager */
	WHO_AG_MANAGER,   /* runtime_agent manager: the role, not the kind */
	WHO_ADMIN,        /* admin, member of nothing */
	WHO__COUNT
};

static const struct cm_identity id_no_principal = {NULL, NULL, 0};
static const struct cm_identity id_dis = IDENT(p_dis, m_dis);
static const struct cm_identity id_out = IDENT(p_out, m_out);
static const struct cm_identity id_other = IDENT(p_other, m_other);
static const struct cm_identity id_op = IDENT(p_op, m_op);
static const struct cm_identity id_ag = IDENT(p_ag, m_ag);
static const struct cm_identity id_mgr = IDENT(p_mgr, m_mgr);
static const struct cm_identity id_agmgr = IDENT(p_agmgr, m_agmgr);
static const struct cm_identity id_admin = {&p_admin, NULL, 0};

static const struct cm_identity *const who_id[WHO__COUNT] = {
    [WHO_NONE] = NULL,
    [WHO_NO_PRINCIPAL] = &id_no_principal,
    [WHO_DISABLED] = &id_dis,
    [WHO_NON_MEMBER] = &id_out,
    [WHO_NOT_OWNER] = &id_other,
    [WHO_OP_OWNER] = &id_op,
    [WHO_AG_OWNER] = &id_ag,
    [WHO_MANAGER] = &id_mgr,
    [WHO_AG_MANAGER] = &id_agmgr,
    [WHO_ADMIN] = &id_admin,
};
static const char *const who_name[WHO__COUNT] = {"none", "no-principal",
    "disabled", "non-member", "member-not-owner", "operator-owner",
    "agent-owner", "manager", "agent-manager", "admin"};

static const struct pr_space s_op = {.space_id = "s-op",
    .workspace_id = W1,
    .owner_type = "operator",
    .owner_id = "p-op"};
static const struct pr_space s_ag = {.space_id = "s-ag",
    .workspace_id = W1,
    .owner_type = "runtime_agent",
    .owner_id = "p-ag"};
/* In W2, owned by p-op: foreign when reached under W1, even for its
 * owner. */
static const struct pr_space s_foreign = {.space_id = "s-foreign",
    .workspace_id = W2,
    .owner_type = "operator",
    .owner_id = "p-op"};

/* ---- the decision table ---------------------------------------------- */

/* Columns: actions that name no Space, then each Space action against
 * s_op, s_ag, s_foreign and a Space the store did not find (NULL). */
#define SPACE_COLS(A) A##_OP, A##_AG, A##_FOREIGN, A##_MISSING
enum col {
	C_LIST,
	C_CREATE_SELF, /* owner is the caller itself */
	C_INSTANCES,
	C_ADMIN,
	SPACE_COLS(C_READ),
	SPACE_COLS(C_SUBMIT),
	SPACE_COLS(C_CANCEL),
	SPACE_COLS(C_CLOSE),
	C__COUNT
};
static const char *const col_name[C__COUNT] = {"list", "create-self",
    "instances", "admin", "read/s_op", "read/s_ag", "read/foreign",
    "read/missing", "submit/s_op", "submit/s_ag", "submit/foreign",
    "submit/missing", "cancel/s_op", "cancel/s_ag", "cancel/foreign",
    "cancel/missing", "close/s_op", "close/s_ag", "close/foreign",
    "close/missing"};

#define O CM_OK
#define U CM_E_UNAUTHENTICATED
#define F CM_E_FORBIDDEN
#define N CM_E_NOT_FOUND

/* clang-format off */
static const enum cm_err expected[WHO__COUNT][C__COUNT] = {
	/*                 list cre inst adm   s_op s_ag frgn miss  (x4: read, submit, cancel, close) */
	[WHO_NONE]         = {U, U, U, U,  U, U, U, U,  U, U, U, U,  U, U, U, U,  U, U, U, U},
	[WHO_NO_PRINCIPAL] = {U, U, U, U,  U, U, U, U,  U, U, U, U,  U, U, U, U,  U, U, U, U},
	[WHO_DISABLED]     = {U, U, U, U,  U, U, U, U,  U, U, U, U,  U, U, U, U,  U, U, U, U},
	[WHO_NON_MEMBER]   = {F, F, F, F,  F, F, F, F,  F, F, F, F,  F, F, F, F,  F, F, F, F},
	[WHO_NOT_OWNER]    = {O, O, O, F,  F, F, N, N,  F, F, N, N,  F, F, N, N,  F, F, N, N},
	[WHO_OP_OWNER]     = {O, O, O, F,  O, F, N, N,  O, F, N, N,  O, F, N, N,  O, F, N, N},
	[WHO_AG_OWNER]     = {O, O, O, F,  F, O, N, N,  F, O, N, N,  F, O, N, N,  F, O, N, N},
	[WHO_MANAGER]      = {O, O, O, F,  O, O, N, N,  O, O, N, N,  O, O, N, N,  O, O, N, N},
	[WHO_AG_MANAGER]   = {O, O, O, F,  O, O, N, N,  O, O, N, N,  O, O, N, N,  O, O, N, N},
	[WHO_ADMIN]        = {O, O, O, O,  O, O, N, N,  O, O, N, N,  O, O, N, N,  O, O, N, N},
};
/* clang-format on */

static enum cm_err
run_cell(enum who w, enum col c, const char **why)
{
	static const enum cm_action space_actions[] = {CM_ACT_SPACE_READ,
	    CM_ACT_SPACE_SUBMIT, CM_ACT_SPACE_CANCEL, CM_ACT_SPACE_CLOSE};
	const struct pr_space *const spaces[] = {
	    &s_op, &s_ag, &s_foreign, NULL};
	const struct cm_identity *id = who_id[w];
	/* Whoever calls creates for itself (p-op's owner when nobody). */
	const struct pr_principal *self =
	    id != NULL && id->principal != NULL ? id->principal : &p_op;

	switch (c) {
	case C_LIST:
		return cm_authz_check(
		    id, CM_ACT_SPACE_LIST, W1, NULL, NULL, NULL, why);
	case C_CREATE_SELF:
		return cm_authz_check(id, CM_ACT_SPACE_CREATE, W1, NULL,
		    self->kind, self->principal_id, why);
	case C_INSTANCES:
		return cm_authz_check(
		    id, CM_ACT_INSTANCE_LIST, W1, NULL, NULL, NULL, why);
	case C_ADMIN:
		return cm_authz_check(
		    id, CM_ACT_ADMIN, W1, NULL, NULL, NULL, why);
	default: {
		int k = c - C_READ_OP;

		return cm_authz_check(id, space_actions[k / 4], W1,
		    spaces[k % 4], NULL, NULL, why);
	}
	}
}

Test(authz, decision_table)
{
	int cells = 0;

	for (int w = 0; w < WHO__COUNT; w++) {
		for (int c = 0; c < C__COUNT; c++) {
			const char *why = NULL;
			enum cm_err got = run_cell(w, c, &why);

			cr_expect_eq(got, expected[w][c],
			    "%s / %s: got %s, want %s", who_name[w],
			    col_name[c], cm_err_code(got),
			    cm_err_code(expected[w][c]));
			cr_expect_not_null(why, "%s / %s: why not set",
			    who_name[w], col_name[c]);
			if (why != NULL)
				cr_expect_eq(why[0] == '\0', got == CM_OK,
				    "%s / %s: why \"%s\" for %s", who_name[w],
				    col_name[c], why, cm_err_code(got));
			cells++;
		}
	}
	cr_assert_eq(cells, 200);
}

Test(authz, why_is_optional)
{
	cr_assert_eq(cm_authz_check(&id_other, CM_ACT_SPACE_READ, W1, &s_op,
	                 NULL, NULL, NULL),
	    CM_E_FORBIDDEN);
	cr_assert_eq(cm_authz_check(&id_op, CM_ACT_SPACE_READ, W1, &s_op, NULL,
	                 NULL, NULL),
	    CM_OK);
}

Test(authz, why_names_the_status_table_reason)
{
	const char *why = NULL;

	cm_authz_check(&id_out, CM_ACT_SPACE_LIST, W1, NULL, NULL, NULL, &why);
	cr_assert_str_eq(why, "not a member of the workspace");
	cm_authz_check(
	    &id_other, CM_ACT_SPACE_CLOSE, W1, &s_op, NULL, NULL, &why);
	cr_assert_str_eq(why, "not the owner and not a manager");
	cm_authz_check(
	    &id_op, CM_ACT_SPACE_CREATE, W1, NULL, "operator", "p-other", &why);
	cr_assert_str_eq(why, "owner_id not allowed");
	cm_authz_check(&id_mgr, CM_ACT_ADMIN, W1, NULL, NULL, NULL, &why);
	cr_assert_str_eq(why, "not an admin");
	cm_authz_check(NULL, CM_ACT_SPACE_LIST, W1, NULL, NULL, NULL, &why);
	cr_assert_str_eq(why, "authentication required");
}

/* ---- create: whose Space may be created ------------------------------ */

struct create_case {
	const char *name;
	const struct cm_identity *id;
	const char *owner_type;
	const char *owner_id;
	enum cm_err want;
};

Test(authz, create_owner)
{
	static const struct create_case cases[] = {
	    {"operator member for itself", &id_op, "operator", "p-op", O},
	    {"operator member for another", &id_op, "operator", "p-other", F},
	    {"operator member for an agent", &id_op, "runtime_agent", "p-ag",
	        F},
	    {"operator member, own id, wrong type", &id_op, "runtime_agent",
	        "p-op", F},
	    {"operator member, empty id", &id_op, "operator", "", F},
	    {"operator member, id prefix", &id_op, "operator", "p-o", F},
	    {"operator member, id extended", &id_op, "operator", "p-op2", F},
	    {"operator member, NULL id", &id_op, "operator", NULL, F},
	    {"operator member, NULL type", &id_op, NULL, "p-op", F},
	    {"agent member for itself", &id_ag, "runtime_agent", "p-ag", O},
	    {"agent member, own id as operator", &id_ag, "operator", "p-ag", F},
	    {"agent member for an operator", &id_ag, "operator", "p-op", F},
	    {"manager for an operator", &id_mgr, "operator", "p-op", O},
	    {"manager for an agent", &id_mgr, "runtime_agent", "p-ag", O},
	    /* The store, not authz, checks the owner's kind and membership. */
	    {"manager, type the store rejects", &id_mgr, "runtime_agent",
	        "p-op", O},
	    {"manager, NULL id", &id_mgr, "operator", NULL, F},
	    {"manager, NULL type", &id_mgr, NULL, "p-op", F},
	    {"agent manager for an operator", &id_agmgr, "operator", "p-op", O},
	    {"admin for another", &id_admin, "runtime_agent", "p-ag", O},
	    {"admin, NULL id", &id_admin, "operator", NULL, F},
	    {"non-member for itself", &id_out, "operator", "p-out", F},
	    {"non-member for a member", &id_out, "operator", "p-op", F},
	    {"disabled for itself", &id_dis, "operator", "p-dis", U},
	};
	size_t n = sizeof(cases) / sizeof(cases[0]);

	for (size_t i = 0; i < n; i++) {
		const struct create_case *k = &cases[i];
		enum cm_err got = cm_authz_check(k->id, CM_ACT_SPACE_CREATE, W1,
		    NULL, k->owner_type, k->owner_id, NULL);

		cr_expect_eq(got, k->want, "%s: got %s, want %s", k->name,
		    cm_err_code(got), cm_err_code(k->want));
	}
	cr_assert_eq(n, 23);
}

/* ---- the list filter ------------------------------------------------- */

struct list_case {
	const char *name;
	const struct cm_identity *id;
	const char *requested;
	enum cm_err want;
	const char *want_filter; /* NULL: every Space */
};

Test(authz, list_filter)
{
	static const struct list_case cases[] = {
	    {"member, no filter: own", &id_op, NULL, O, "p-op"},
	    {"member asks for own", &id_op, "p-op", O, "p-op"},
	    {"member asks for another", &id_op, "p-ag", F, NULL},
	    {"member asks for an id prefix", &id_op, "p-o", F, NULL},
	    {"agent member, no filter: own", &id_ag, NULL, O, "p-ag"},
	    {"manager, no filter: all", &id_mgr, NULL, O, NULL},
	    {"manager asks for another", &id_mgr, "p-op", O, "p-op"},
	    {"agent manager, no filter: all", &id_agmgr, NULL, O, NULL},
	    {"admin, no filter: all", &id_admin, NULL, O, NULL},
	    {"admin asks for one", &id_admin, "p-ag", O, "p-ag"},
	    {"non-member", &id_out, NULL, F, NULL},
	    {"non-member asks for own", &id_out, "p-out", F, NULL},
	    {"disabled", &id_dis, NULL, U, NULL},
	    {"nobody", NULL, NULL, U, NULL},
	};
	static const char sentinel[] = "untouched";
	size_t n = sizeof(cases) / sizeof(cases[0]);

	for (size_t i = 0; i < n; i++) {
		const struct list_case *k = &cases[i];
		const char *filter = sentinel;
		const char *why = NULL;
		enum cm_err got = cm_authz_list_filter(
		    k->id, W1, k->requested, &filter, &why);

		cr_expect_eq(got, k->want, "%s: got %s, want %s", k->name,
		    cm_err_code(got), cm_err_code(k->want));
		if (k->want != CM_OK) {
			cr_expect_eq(filter, sentinel,
			    "%s: filter written on error", k->name);
			cr_expect(why != NULL && why[0] != '\0',
			    "%s: no reason", k->name);
		} else if (k->want_filter == NULL) {
			cr_expect_null(filter, "%s: filter \"%s\", want none",
			    k->name,
			    filter == sentinel ? "(untouched)" : filter);
		} else {
			cr_expect(filter != NULL && filter != sentinel &&
			              strcmp(filter, k->want_filter) == 0,
			    "%s: filter \"%s\", want \"%s\"", k->name,
			    filter == NULL ? "(none)" : filter, k->want_filter);
		}
	}
	cr_assert_eq(n, 14);
}

Test(authz, list_filter_is_per_workspace)
{
	const char *filter = NULL;

	/* p-out manages W2: sees all there, nothing in W1. */
	cr_assert_eq(
	    cm_authz_list_filter(&id_out, W2, NULL, &filter, NULL), CM_OK);
	cr_assert_null(filter);
	cr_assert_eq(cm_authz_list_filter(&id_out, W1, NULL, &filter, NULL),
	    CM_E_FORBIDDEN);
}

/* ---- edges ----------------------------------------------------------- */

Test(authz, roles_are_per_workspace)
{
	static const struct pr_membership mixed[] = {
	    {.workspace_id = W1, .principal_id = "p-op", .role = "member"},
	    {.workspace_id = W2, .principal_id = "p-op", .role = "manager"}};
	const struct cm_identity id = IDENT(p_op, mixed);
	const struct pr_space s_ag2 = {.workspace_id = W2,
	    .owner_type = "runtime_agent",
	    .owner_id = "p-ag"};

	cr_assert_eq(
	    cm_authz_check(&id, CM_ACT_SPACE_READ, W1, &s_ag, NULL, NULL, NULL),
	    CM_E_FORBIDDEN, "manager of W2 must stay a member in W1");
	cr_assert_eq(cm_authz_check(
	                 &id, CM_ACT_SPACE_READ, W2, &s_ag2, NULL, NULL, NULL),
	    CM_OK);
}

Test(authz, memberships_of_other_principals_are_ignored)
{
	/* A reply that carried someone else's manager row lends no role. */
	static const struct pr_membership lent[] = {
	    {.workspace_id = W1, .principal_id = "p-mgr", .role = "manager"},
	    {.workspace_id = W1, .principal_id = "p-op", .role = "member"}};
	static const struct pr_membership only_lent[] = {
	    {.workspace_id = W1, .principal_id = "p-mgr", .role = "manager"}};
	const struct cm_identity a = IDENT(p_op, lent);
	const struct cm_identity b = IDENT(p_op, only_lent);

	cr_assert_eq(
	    cm_authz_check(&a, CM_ACT_SPACE_CLOSE, W1, &s_ag, NULL, NULL, NULL),
	    CM_E_FORBIDDEN);
	cr_assert_eq(
	    cm_authz_check(&a, CM_ACT_SPACE_CLOSE, W1, &s_op, NULL, NULL, NULL),
	    CM_OK);
	cr_assert_eq(
	    cm_authz_check(&b, CM_ACT_SPACE_LIST, W1, NULL, NULL, NULL, NULL),
	    CM_E_FORBIDDEN);
}

Test(authz, unknown_role_is_no_membership)
{
	static const struct pr_membership odd[] = {
	    {.workspace_id = W1, .principal_id = "p-op", .role = "owner"}};
	static const struct pr_membership none[] = {
	    {.workspace_id = W1, .principal_id = "p-op", .role = NULL}};
	const struct cm_identity a = IDENT(p_op, odd);
	const struct cm_identity b = IDENT(p_op, none);

	cr_assert_eq(cm_authz_check(
	                 &a, CM_ACT_INSTANCE_LIST, W1, NULL, NULL, NULL, NULL),
	    CM_E_FORBIDDEN);
	cr_assert_eq(cm_authz_check(
	                 &b, CM_ACT_INSTANCE_LIST, W1, NULL, NULL, NULL, NULL),
	    CM_E_FORBIDDEN);
}

Test(authz, principal_without_id_is_unauthenticated)
{
	/* An empty id must not match a Space whose owner_id is empty. */
	static const struct pr_principal anon = {
	    .principal_id = "", .kind = "operator"};
	static const struct pr_principal nul = {.kind = "operator"};
	static const struct pr_membership m[] = {
	    {.workspace_id = W1, .principal_id = "", .role = "member"}};
	const struct pr_space s_empty = {
	    .workspace_id = W1, .owner_type = "operator", .owner_id = ""};
	const struct cm_identity a = IDENT(anon, m);
	const struct cm_identity b = {&nul, NULL, 0};

	cr_assert_eq(cm_authz_check(
	                 &a, CM_ACT_SPACE_READ, W1, &s_empty, NULL, NULL, NULL),
	    CM_E_UNAUTHENTICATED);
	cr_assert_eq(
	    cm_authz_check(&b, CM_ACT_SPACE_LIST, W1, NULL, NULL, NULL, NULL),
	    CM_E_UNAUTHENTICATED);
}

Test(authz, disabled_member_is_unauthenticated)
{
	static const struct pr_principal dis_op = {
	    .principal_id = "p-op", .kind = "operator", .disabled = true};
	const struct cm_identity id = IDENT(dis_op, m_op);

	cr_assert_eq(
	    cm_authz_check(&id, CM_ACT_SPACE_READ, W1, &s_op, NULL, NULL, NULL),
	    CM_E_UNAUTHENTICATED);
}

Test(authz, workspace_must_be_named)
{
	for (int i = 0; i < 2; i++) {
		const char *ws = i == 0 ? NULL : "";

		cr_assert_eq(cm_authz_check(&id_admin, CM_ACT_SPACE_LIST, ws,
		                 NULL, NULL, NULL, NULL),
		    CM_E_NOT_FOUND);
		cr_assert_eq(cm_authz_check(&id_op, CM_ACT_SPACE_READ, ws,
		                 &s_op, NULL, NULL, NULL),
		    CM_E_NOT_FOUND);
	}
	/* Still 401 first. */
	cr_assert_eq(cm_authz_check(
	                 NULL, CM_ACT_SPACE_LIST, NULL, NULL, NULL, NULL, NULL),
	    CM_E_UNAUTHENTICATED);
}

Test(authz, admin_routes_ignore_the_workspace)
{
	cr_assert_eq(cm_authz_check(
	                 &id_admin, CM_ACT_ADMIN, NULL, NULL, NULL, NULL, NULL),
	    CM_OK);
	cr_assert_eq(
	    cm_authz_check(&id_mgr, CM_ACT_ADMIN, NULL, NULL, NULL, NULL, NULL),
	    CM_E_FORBIDDEN);
	cr_assert_eq(
	    cm_authz_check(&id_out, CM_ACT_ADMIN, W2, NULL, NULL, NULL, NULL),
	    CM_E_FORBIDDEN, "a manager of W2 is no admin");
}

Test(authz, admin_member_keeps_admin_powers)
{
	static const struct pr_principal adm = {
	    .principal_id = "p-am", .kind = "runtime_agent", .is_admin = true};
	static const struct pr_membership m[] = {
	    {.workspace_id = W1, .principal_id = "p-am", .role = "member"}};
	const struct cm_identity id = IDENT(adm, m);

	cr_assert_eq(cm_authz_check(
	                 &id, CM_ACT_SPACE_CANCEL, W1, &s_op, NULL, NULL, NULL),
	    CM_OK);
	cr_assert_eq(cm_authz_check(&id, CM_ACT_SPACE_CREATE, W1, NULL,
	                 "operator", "p-op", NULL),
	    CM_OK);
}

Test(authz, space_fields_missing)
{
	const struct pr_space no_ws = {
	    .owner_type = "operator", .owner_id = "p-op"};
	const struct pr_space no_owner = {.workspace_id = W1};

	cr_assert_eq(cm_authz_check(&id_mgr, CM_ACT_SPACE_READ, W1, &no_ws,
	                 NULL, NULL, NULL),
	    CM_E_NOT_FOUND);
	cr_assert_eq(cm_authz_check(&id_op, CM_ACT_SPACE_READ, W1, &no_owner,
	                 NULL, NULL, NULL),
	    CM_E_FORBIDDEN);
	cr_assert_eq(cm_authz_check(&id_mgr, CM_ACT_SPACE_READ, W1, &no_owner,
	                 NULL, NULL, NULL),
	    CM_OK);
}

Test(authz, ownership_is_owner_id)
{
	/* Documented choice: owner_type is tied to the kind at create and not
	 * compared again, so "owns" matches the store's owner_id filter. */
	const struct pr_space odd = {.workspace_id = W1,
	    .owner_type = "runtime_agent",
	    .owner_id = "p-op"};
	const struct pr_space prefix = {
	    .workspace_id = W1, .owner_type = "operator", .owner_id = "p-o"};

	cr_assert_eq(cm_authz_check(&id_op, CM_ACT_SPACE_SUBMIT, W1, &odd, NULL,
	                 NULL, NULL),
	    CM_OK);
	cr_assert_eq(cm_authz_check(&id_op, CM_ACT_SPACE_SUBMIT, W1, &prefix,
	                 NULL, NULL, NULL),
	    CM_E_FORBIDDEN);
}

Test(authz, space_is_ignored_when_the_action_names_none)
{
	/* A stale pointer from a foreign Space must not turn list into 404. */
	cr_assert_eq(cm_authz_check(&id_op, CM_ACT_SPACE_LIST, W1, &s_foreign,
	                 NULL, NULL, NULL),
	    CM_OK);
	cr_assert_eq(cm_authz_check(&id_other, CM_ACT_INSTANCE_LIST, W1, &s_op,
	                 NULL, NULL, NULL),
	    CM_OK);
}

Test(authz, unknown_action_is_denied)
{
	const char *why = NULL;

	cr_assert_eq(cm_authz_check(
	                 &id_admin, CM_ACT__COUNT, W1, &s_op, NULL, NULL, &why),
	    CM_E_INTERNAL);
	cr_assert_str_eq(why, "unknown action");
	cr_assert_eq(cm_authz_check(&id_admin, (enum cm_action) - 1, W1, &s_op,
	                 NULL, NULL, NULL),
	    CM_E_INTERNAL);
}

/* ---- identity from the auth.resolve reply ---------------------------- */

Test(authz, identity_from_reply)
{
	struct pr_principal ps[2] = {p_op, p_ag};
	struct pr_membership ms[2] = {m_op[0], m_op[1]};
	struct pr_rep rep = {.err = CM_OK,
	    .principals = ps,
	    .n_principals = 1,
	    .memberships = ms,
	    .n_memberships = 2};
	struct cm_identity id;

	cm_identity_from_reply(&rep, &id);
	cr_assert_eq(id.principal, &ps[0]);
	cr_assert_eq(id.memberships, ms);
	cr_assert_eq(id.n_memberships, 2);
	cr_assert_eq(
	    cm_authz_check(&id, CM_ACT_SPACE_READ, W1, &s_op, NULL, NULL, NULL),
	    CM_OK);
}

Test(authz, identity_from_failed_or_odd_reply)
{
	struct pr_principal ps[2] = {p_admin, p_op};
	struct pr_rep rep = {
	    .err = CM_E_UNAUTHENTICATED, .principals = ps, .n_principals = 1};
	struct cm_identity id;

	cm_identity_from_reply(&rep, &id);
	cr_assert_null(id.principal, "an error reply names nobody");
	cr_assert_eq(
	    cm_authz_check(&id, CM_ACT_ADMIN, NULL, NULL, NULL, NULL, NULL),
	    CM_E_UNAUTHENTICATED);

	rep.err = CM_OK;
	rep.n_principals = 2;
	cm_identity_from_reply(&rep, &id);
	cr_assert_null(id.principal, "two principals: ambiguous");

	rep.n_principals = 0;
	rep.principals = NULL;
	cm_identity_from_reply(&rep, &id);
	cr_assert_null(id.principal);
	cr_assert_eq(id.n_memberships, 0);

	cm_identity_from_reply(NULL, &id);
	cr_assert_null(id.principal);
}
