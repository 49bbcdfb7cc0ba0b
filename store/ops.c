/*
 * ops.c: the dispatch table, one handler per proto op.
 */
#include "ops.h"

#include "log.h"

static st_op_fn *const st_op_table[PR_OP__COUNT] = {
    [PR_OP_PING] = st_op_ping,
    [PR_OP_AUTH_RESOLVE] = st_op_auth_resolve,
    [PR_OP_WORKSPACE_CREATE] = st_op_workspace_create,
    [PR_OP_WORKSPACE_LIST] = st_op_workspace_list,
    [PR_OP_PRINCIPAL_CREATE] = st_op_principal_create,
    [PR_OP_PRINCIPAL_LIST] = st_op_principal_list,
    [PR_OP_TOKEN_ISSUE] = st_op_token_issue,
    [PR_OP_TOKEN_REVOKE] = st_op_token_revoke,
    [PR_OP_MEMBER_PUT] = st_op_member_put,
    [PR_OP_MEMBER_REMOVE] = st_op_member_remove,
    [PR_OP_BUNDLE_CREATE] = st_op_bundle_create,
    [PR_OP_BUNDLE_LIST] = st_op_bundle_list,
    [PR_OP_INSTANCE_REGISTER] = st_op_instance_register,
    [PR_OP_INSTANCE_LIST] = st_op_instance_list,
    [PR_OP_INSTANCE_SET_STATUS] = st_op_instance_set_status,
    [PR_OP_BINDING_CREATE] = st_op_binding_create,
    [PR_OP_BINDING_DELETE] = st_op_binding_delete,
    [PR_OP_SPACE_CREATE] = st_op_space_create,
    [PR_OP_SPACE_GET] = st_op_space_get,
    [PR_OP_SPACE_LIST] = st_op_space_list,
    [PR_OP_SPACE_CLOSE] = st_op_space_close,
    [PR_OP_SPACE_MARK_CLOSED] = st_op_space_mark_closed,
    [PR_OP_SPACE_MARK_ERROR] = st_op_space_mark_error,
    [PR_OP_SPACE_NETWORK_BLOCKED] = st_op_space_network_blocked,
    [PR_OP_SPACE_PAGE_EVENT] = st_op_space_page_event,
    [PR_OP_TASK_SUBMIT] = st_op_task_submit,
    [PR_OP_TASK_GET] = st_op_task_get,
    [PR_OP_TASK_LIST] = st_op_task_list,
    [PR_OP_TASK_CANCEL] = st_op_task_cancel,
    [PR_OP_EVENT_LIST] = st_op_event_list,
    [PR_OP_ACTOR_LOAD] = st_op_actor_load,
    [PR_OP_ACTOR_CLAIM] = st_op_actor_claim,
    [PR_OP_ACTOR_HEARTBEAT] = st_op_actor_heartbeat,
    [PR_OP_ACTOR_FINISH] = st_op_actor_finish,
    [PR_OP_SUP_FINALIZE_LOST] = st_op_sup_finalize_lost,
    [PR_OP_SUP_SWEEP_LEASES] = st_op_sup_sweep_leases,
    [PR_OP_SUP_LIST_ACTIVE] = st_op_sup_list_active,
    [PR_OP_ARTIFACT_GET] = st_op_artifact_get,
    [PR_OP_SUP_LIST_CDP] = st_op_sup_list_cdp,
    [PR_OP_SPACE_FILE_PUT] = st_op_space_file_put,
    [PR_OP_SPACE_FILE_LIST] = st_op_space_file_list,
    [PR_OP_SPACE_FILE_GET] = st_op_space_file_get,
    [PR_OP_SPACE_TAKEOVER] = st_op_space_takeover,
    [PR_OP_SPACE_RELEASE] = st_op_space_release,
};

void
st_ops_dispatch(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	if ((unsigned)req->op >= PR_OP__COUNT || st_op_table[req->op] == NULL)
		cm_fatalx("store: no handler for op %d", (int)req->op);
	ctx->seq_space[0] = '\0';
	st_op_table[req->op](ctx, req, rep);
}
