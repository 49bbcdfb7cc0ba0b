/*
 * cdp.h: the one Chrome DevTools Protocol client (docs/architecture.md).
 *
 * It numbers commands, keeps a bounded table of those waiting for a reply,
 * each with a deadline, and routes events, with the flat sessions of
 * Target.attachToTarget {flatten: true}: one connection carries every
 * target's sessionId.  It knows nothing of how bytes travel: a transport
 * hands it each whole message it received and sends each message it is
 * given.  Every message received is size-checked and parsed with jansson
 * (cm_json_parse) before a field of it is read.
 *
 * Single-threaded: everything runs on the actor's loop.  Callbacks are
 * called from act_cdp_receive, act_cdp_expire and act_cdp_fail_all; a
 * callback may issue new commands but must not free the client.
 */
#ifndef ACT_CDP_H
#define ACT_CDP_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct act_cdp;

/*
 * A command's outcome: result is the reply's result object on success;
 * otherwise result is NULL and error says why, as CDP's {code, message}
 * or, for a command that got no reply, one of ours: code
 * ACT_CDP_E_TIMEOUT (its deadline passed) or ACT_CDP_E_CLOSED (the
 * connection ended), or from the transport ACT_CDP_E_TOO_BIG (its reply
 * was over the bound and dropped: act_cdp_too_big).  Both are borrowed for the
 * call.
 */
typedef void (*act_cdp_reply_fn)(
    void *arg, const json_t *result, const json_t *error);

/* An event: session_id is NULL for the browser's own. */
typedef void (*act_cdp_event_fn)(void *arg, const char *session_id,
    const char *method, const json_t *params);

/* Sends one whole message (len bytes of JSON text); returns 0 or -1. */
typedef int (*act_cdp_send_fn)(void *arg, const char *msg, size_t len);

#define ACT_CDP_E_TIMEOUT (-1000001)
#define ACT_CDP_E_CLOSED (-1000002)
#define ACT_CDP_E_TOO_BIG (-1000003) /* the reply passed CM_CDP_MSG_MAX */

/*
 * A message of the browser over CM_CDP_MSG_MAX is dropped by its
 * transport, which keeps its first bytes (head, len: CM_CDP_HEAD_MAX or
 * fewer) and hands act_cdp_receive this, written into out: an error reply
 * of ours (code ACT_CDP_E_TOO_BIG) to the command the dropped message
 * answered, so that the call fails and the connection stays.  Chromium
 * writes a reply's "id" first.  Returns its length, or 0 when the head
 * names no command (an event was dropped: nothing waits for it).  Also
 * logs the drop.
 */
size_t act_cdp_too_big(const char *head, size_t len, char *out, size_t outlen);
#define ACT_CDP_TOO_BIG_LEN 160 /* room for its reply */

/* Returns NULL when memory is short. */
struct act_cdp *act_cdp_new(
    act_cdp_send_fn send, act_cdp_event_fn on_event, void *arg);

/* Drops every pending command without calling back.  NULL is accepted. */
void act_cdp_free(struct act_cdp *c);

/*
 * Sends method with params (a JSON object, or NULL for none; the client
 * takes the reference) to session_id (NULL: the browser).  fn is called
 * once, with the reply or when deadline_ms (monotonic) passes.  Returns
 * the command's id (> 0), or -1 when the table of pending commands is
 * full, the message is over CM_CDP_MSG_MAX, or the transport refused it:
 * then fn is never called.
 */
int64_t act_cdp_call(struct act_cdp *c, const char *session_id,
    const char *method, json_t *params, int64_t deadline_ms,
    act_cdp_reply_fn fn, void *arg);

/* Forgets command id: its reply, if one comes, is dropped. */
void act_cdp_forget(struct act_cdp *c, int64_t id);

/* Commands waiting for a reply. */
size_t act_cdp_pending(const struct act_cdp *c);

/*
 * Takes one whole message from the transport.  Returns 0, or -1 when it
 * is not a CDP message (too large, not JSON, a reply to no command of
 * ours...): the caller treats the connection as broken.
 */
int act_cdp_receive(struct act_cdp *c, const char *msg, size_t len);

/*
 * Fails the commands whose deadline is past with ACT_CDP_E_TIMEOUT.
 * Returns the earliest deadline still pending, or -1 when none is.
 */
int64_t act_cdp_expire(struct act_cdp *c, int64_t now_ms);

/* Fails every pending command with ACT_CDP_E_CLOSED (the connection
 * ended). */
void act_cdp_fail_all(struct act_cdp *c);

#endif
