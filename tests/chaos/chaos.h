/*
 * chaos.h: what the chaos suite's two files share: its bounds, the run's
 * state (one struct, ch, in chaos.c) and the helpers each file gives the
 * other.  chaos.c drives the load and the kills; chaos_check.c checks
 * what must hold afterwards (and, sampled, during the load).
 */
#ifndef CHAOS_H
#define CHAOS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "pages.h"
#include "testkit.h"

#define CH_SPACES_MAX 2048       /* Spaces one run may create */
#define CH_TASKS_MAX 100000      /* tasks one run may track */
#define CH_PROCS_MAX 8192        /* processes one look at /proc reads */
#define CH_BODY_MAX 512          /* a request body the load sends */
#define CH_RID_LEN 24            /* "r<number>" */
#define CH_CANARIES_MAX 16       /* secrets that must never show */
#define CH_READY_MS 60000        /* spaced's readiness line after a start */
#define CH_HEALTHY_MS 30000      /* the api answers after a start */
#define CH_SETTLE_MS 120000      /* every acknowledged task ends */
#define CH_EXIT_MS 15000         /* spaced exits after SIGTERM */
#define CH_GONE_MS 5000          /* a dead tree's processes are gone */
#define CH_GAP_MIN_MS 300        /* between two kills, at least */
#define CH_GAP_SPAN_MS 900       /* and at most this much more */
#define CH_SAMPLE_STEPS 40       /* the API sampled every this many steps */
#define CH_SLEEP_MAX_MS 400      /* a sleep task's longest */
#define CH_TIMEOUT_SLEEP_MS 1500 /* a sleep meant to time out (1 s) */
/*
 * The supervisor's policy gives up after 5 failures of the store (or of
 * the api) in 10 s, by design: at most this many kills of either in its
 * window, so that the run tests recovery, not the give-up.
 */
#define CH_POLICY_WINDOW_MS 10000
#define CH_POLICY_KILLS 3
#define CH_MANAGED 2 /* --browsers: managed instances */

enum ch_kill { K_ACTOR, K_STORE, K_API, K_TREE, K_CHROMIUM, K__COUNT };

struct ch_space {
	char id[CM_ID_MAX + 1];
	bool done;        /* closed, closing or unusable: no more work sent */
	bool close_acked; /* a close was answered 200 or 202 */
	bool managed;     /* on a managed instance: a real browser */
	char status[16];  /* once settled */
};

struct ch_task {
	int space;
	char task_id[CM_ID_MAX + 1];
	char rid[CH_RID_LEN];
	char *body; /* exactly as sent, for an identical repeat */
	char status[16];
	bool terminal;
};

/* A request that got no answer: sent again, unchanged. */
struct ch_retry {
	bool set, managed;
	int space;
	char rid[CH_RID_LEN];
	char *body;
};

struct chaos {
	unsigned seed, rng;
	int kills, n_spaces;
	bool browsers, keep;
	char dir[128], out[192], fake_log[192], listen[64];
	const char *flags[6];
	struct tk_proc p;
	struct tk_world w;
	char admin[CM_TOKEN_MAX], op[CM_TOKEN_LEN];
	char ws[CM_ID_MAX + 1], owner[CM_ID_MAX + 1];
	size_t n_inst;
	char inst[TK_MAX_INSTANCES][CM_ID_MAX + 1];
	size_t n_fake; /* inst[n_fake..]: managed */
	struct tk_pages *pages;
	int pages_port;
	const char *canary[CH_CANARIES_MAX];
	size_t n_canary;
	char note[64], endpoint[96], msg[64];
	struct ch_space space[CH_SPACES_MAX];
	int n_space;
	struct ch_task *task;
	int n_task;
	struct ch_retry retry_task, retry_create;
	int next_rid;
	int killed[K__COUNT];
	int restarts;
	int64_t policy[2][CH_POLICY_KILLS]; /* store, api: last kills */
	int violations;
	int victim; /* the Space whose actor is killed most */
	const char *argv0;
};

extern struct chaos ch;

/* chaos.c */
void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Every canary in len bytes of text is a violation (where: what the
 * bytes are); except, when not NULL, is one canary that may be there. */
void canary_scan_but(
    const char *where, const char *text, size_t len, const char *except);
void canary_scan(const char *where, const char *text, size_t len);
/*
 * One request with the operator's token; the body is scanned for canaries
 * and parsed into *out (NULL when it is not JSON; may be NULL).  Returns
 * the status, or -1 when no answer came.
 */
int api(const char *method, const char *path, const char *body, json_t **out);
/* o's string member key, "" when there is none. */
const char *jstr(const json_t *o, const char *key);
/* The path of Space si, then tail. */
void space_path(char *out, size_t len, int si, const char *tail);
bool task_terminal(const char *status);
/* The index of the task with this id, -1 when the run has none. */
int find_task(const char *task_id);

/* chaos_check.c */
void space_status(const char *id, char *out, size_t len);
void sample_active(const char *when);
bool settled(void *arg);
void check_events(void);
int check_fake_log(void);
void check_closed_spaces(void);
void check_profiles(void);
void check_database(void);
void check_log(void);

#endif
