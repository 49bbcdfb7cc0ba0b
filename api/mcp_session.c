/*
 * mcp_session.c: the MCP session table (mcp_session.h).
 */
#include "mcp_session.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "ids.h"

struct session {
	bool used;
	char id[API_MCP_SID_LEN + 1];
	char principal[CM_ID_MAX + 1];
	char ws[CM_ID_MAX + 1];
	char space[CM_ID_MAX + 1]; /* "": the workspace's URL */
	char version[16];
	int64_t used_s;
	uint64_t used_seq; /* the order of use, for the least recent */
	int log_level;     /* mcp_rpc.h's; 0 until logging/setLevel */
	struct {
		char rpc[CM_MCP_ID_MAX + 3];
		char task[CM_ID_MAX + 1];
	} calls[CM_MCP_PENDING_MAX];
	unsigned next_call;
};

static struct session table[CM_MCP_SESSIONS_MAX];
static uint64_t uses;      /* under lock */
static atomic_int logging; /* sessions with a level; changed under lock */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Frees s's slot.  Under lock. */
static void
drop(struct session *s)
{
	if (s->log_level != 0)
		atomic_fetch_sub(&logging, 1);
	memset(s, 0, sizeof(*s));
}

/* Drops the sessions idle past their time.  Under lock. */
static void
expire(int64_t now_s)
{
	for (size_t i = 0; i < CM_MCP_SESSIONS_MAX; i++)
		if (table[i].used &&
		    now_s - table[i].used_s >= CM_MCP_SESSION_IDLE_S)
			drop(&table[i]);
}

static bool
same(const char *a, const char *b)
{
	return strcmp(a, b != NULL ? b : "") == 0;
}

/* The live session id of w, or NULL.  Under lock. */
static struct session *
lookup(const char *id, const struct api_mcp_where *w)
{
	if (id == NULL || strlen(id) != API_MCP_SID_LEN)
		return NULL;
	for (size_t i = 0; i < CM_MCP_SESSIONS_MAX; i++) {
		struct session *s = &table[i];

		/* Another principal's, or another URL's, is no session of w:
		 * it is answered as unknown, never named. */
		if (s->used && strcmp(s->id, id) == 0)
			return same(s->principal, w->principal_id) &&
			               same(s->ws, w->workspace_id) &&
			               same(s->space, w->space_id)
			           ? s
			           : NULL;
	}
	return NULL;
}

int
api_mcp_session_open(const struct api_mcp_where *w, const char *version,
    int64_t now_s, char id[API_MCP_SID_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[CM_MCP_SESSION_ID_BYTES];
	struct session *slot = NULL, *oldest = NULL;
	int mine = 0, rc = 0;

	cm_random_bytes(raw, sizeof(raw));
	for (size_t i = 0; i < sizeof(raw); i++) {
		id[2 * i] = hex[raw[i] >> 4];
		id[2 * i + 1] = hex[raw[i] & 15];
	}
	id[API_MCP_SID_LEN] = '\0';
	pthread_mutex_lock(&lock);
	expire(now_s);
	for (size_t i = 0; i < CM_MCP_SESSIONS_MAX; i++) {
		struct session *s = &table[i];

		if (!s->used && slot == NULL)
			slot = s;
		if (s->used && same(s->principal, w->principal_id)) {
			mine++;
			if (oldest == NULL || s->used_seq < oldest->used_seq)
				oldest = s;
		}
	}
	/* A principal at its bound makes room in its own sessions, never in
	 * another's: its least recently used one ends, and that client's
	 * next message is answered 404 (it initializes again, and finds its
	 * Space as it was). */
	if (mine >= CM_MCP_SESSIONS_PER_PRINCIPAL) {
		slot = oldest;
		rc = 1;
	}
	if (slot == NULL) {
		pthread_mutex_unlock(&lock);
		return 2;
	}
	drop(slot);
	slot->used = true;
	memcpy(slot->id, id, API_MCP_SID_LEN + 1);
	snprintf(slot->principal, sizeof(slot->principal), "%s",
	    w->principal_id != NULL ? w->principal_id : "");
	snprintf(slot->ws, sizeof(slot->ws), "%s",
	    w->workspace_id != NULL ? w->workspace_id : "");
	snprintf(slot->space, sizeof(slot->space), "%s",
	    w->space_id != NULL ? w->space_id : "");
	snprintf(slot->version, sizeof(slot->version), "%s", version);
	slot->used_s = now_s;
	slot->used_seq = ++uses;
	pthread_mutex_unlock(&lock);
	return rc;
}

bool
api_mcp_session_find(const char *id, const struct api_mcp_where *w,
    int64_t now_s, char version[16])
{
	struct session *s;

	pthread_mutex_lock(&lock);
	expire(now_s);
	if ((s = lookup(id, w)) != NULL) {
		s->used_s = now_s;
		s->used_seq = ++uses;
		if (version != NULL)
			snprintf(version, 16, "%s", s->version);
	}
	pthread_mutex_unlock(&lock);
	return s != NULL;
}

bool
api_mcp_session_set_level(
    const char *id, const struct api_mcp_where *w, int level)
{
	struct session *s;

	pthread_mutex_lock(&lock);
	if ((s = lookup(id, w)) != NULL) {
		if ((s->log_level != 0) != (level != 0))
			atomic_fetch_add(&logging, level != 0 ? 1 : -1);
		s->log_level = level;
	}
	pthread_mutex_unlock(&lock);
	return s != NULL;
}

int
api_mcp_session_level(const char *id)
{
	int level = 0;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < CM_MCP_SESSIONS_MAX; i++)
		if (table[i].used && strcmp(table[i].id, id) == 0)
			level = table[i].log_level;
	pthread_mutex_unlock(&lock);
	return level;
}

bool
api_mcp_session_end(const char *id, const struct api_mcp_where *w)
{
	struct session *s;

	pthread_mutex_lock(&lock);
	if ((s = lookup(id, w)) != NULL)
		drop(s);
	pthread_mutex_unlock(&lock);
	return s != NULL;
}

void
api_mcp_session_call(const char *id, const char *rpc_id, const char *task_id)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < CM_MCP_SESSIONS_MAX; i++) {
		struct session *s = &table[i];
		unsigned k;

		if (!s->used || strcmp(s->id, id) != 0)
			continue;
		k = s->next_call++ % CM_MCP_PENDING_MAX;
		snprintf(
		    s->calls[k].rpc, sizeof(s->calls[k].rpc), "%s", rpc_id);
		snprintf(
		    s->calls[k].task, sizeof(s->calls[k].task), "%s", task_id);
		break;
	}
	pthread_mutex_unlock(&lock);
}

bool
api_mcp_session_task(const char *id, const struct api_mcp_where *w,
    const char *rpc_id, char task[CM_ID_MAX + 1])
{
	struct session *s;
	bool found = false;

	pthread_mutex_lock(&lock);
	if ((s = lookup(id, w)) != NULL)
		for (size_t k = 0; k < CM_MCP_PENDING_MAX && !found; k++)
			if (s->calls[k].rpc[0] != '\0' &&
			    strcmp(s->calls[k].rpc, rpc_id) == 0) {
				snprintf(task, CM_ID_MAX + 1, "%s",
				    s->calls[k].task);
				found = true;
			}
	pthread_mutex_unlock(&lock);
	return found;
}

int
api_mcp_sessions_open(int64_t now_s)
{
	int n = 0;

	pthread_mutex_lock(&lock);
	expire(now_s);
	for (size_t i = 0; i < CM_MCP_SESSIONS_MAX; i++)
		n += table[i].used;
	pthread_mutex_unlock(&lock);
	return n;
}

bool
api_mcp_sessions_logging(void)
{
	return atomic_load(&logging) > 0;
}
