/*
 * page_cmd.c: a call's commands (page_int.h): each step sends one command
 * to the page's session (or a frame's, or the browser's), and its reply
 * goes to the step it names.  Only one command is awaited at a time, so
 * abandoning a call is forgetting that command.  A browser's error ends
 * the call with runtime_error (a soft command's goes to its step as
 * NULL), a connection that ends with runtime_crashed, and a command past
 * the task's deadline with task_timeout.
 */
#include "page.h"
#include "page_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The browser refused a command because the document of the object it
 * names went away (a frame that navigated between two steps), before
 * any input of the call was sent: the element is gone, as a stale ref's
 * is, and nothing of the call reached the page. */
static bool
page_gone_before_input(const struct act_page *p, const json_t *error)
{
	const char *msg = json_string_value(json_object_get(error, "message"));

	return !p->acted && strncmp(p->cmd_method, "Input.", 6) != 0 &&
	       strcmp(p->capability, "snapshot") != 0 && msg != NULL &&
	       (strcmp(msg, "Cannot find context with specified id") == 0 ||
	           strcmp(msg, "Could not find object with given id") == 0);
}

static void
page_reply(void *arg, const json_t *result, const json_t *error)
{
	struct act_page *p = arg;
	void (*next)(struct act_page *, const json_t *) = p->next;
	json_int_t code;
	bool soft = false;

	p->cmd = 0;
	if (!p->busy || p->done)
		return;
	if (error != NULL) {
		code = json_integer_value(json_object_get(error, "code"));
		if (code == ACT_CDP_E_TIMEOUT)
			page_fail(p, CM_E_TASK_TIMEOUT,
			    "the browser did not answer in time");
		else if (code == ACT_CDP_E_CLOSED)
			page_fail(
			    p, CM_E_RUNTIME_CRASHED, "the browser went away");
		else if (p->soft)
			soft = true; /* the step reads the refusal */
		else if (p->look_again)
			/* A wait looks at a page that may be between two
			 * documents: a look that failed is made again. */
			page_wait_lost(p);
		else if (page_gone_before_input(p, error))
			page_not_found(p, "the element's document went away "
			                  "before any input reached it");
		else
			page_fail(p, CM_E_RUNTIME_ERROR, "%s: %s",
			    p->capability,
			    json_is_string(json_object_get(error, "message"))
			        ? json_string_value(
			              json_object_get(error, "message"))
			        : "the browser refused the command");
		if (!soft)
			return;
		result = NULL;
	}
	p->next = NULL;
	next(p, result);
}

/* Sends method to session; its reply goes to next (soft: a refusal of
 * the browser too, as NULL). */
static void
page_command(struct act_page *p, const char *session, const char *method,
    json_t *params, bool soft, void (*next)(struct act_page *, const json_t *))
{
	const char *type = json_string_value(json_object_get(params, "type"));

	p->next = next;
	snprintf(p->cmd_method, sizeof(p->cmd_method), "%s", method);
	snprintf(p->cmd_type, sizeof(p->cmd_type), "%s",
	    strncmp(method, "Input.", 6) == 0 && type != NULL ? type : "");
	p->soft = soft;
	p->cmd = act_cdp_call(
	    p->cdp, session, method, params, p->deadline_ms, page_reply, p);
	if (p->cmd < 0) {
		p->cmd = 0;
		page_fail(p, CM_E_RUNTIME_CRASHED,
		    "the browser connection is broken");
	}
}

/* Sends method to the page's session (or the browser's, when browser is
 * true); its reply goes to next.  A command that names an object (the
 * call's element) goes to the session the element lives in: an object
 * id means nothing to another (p->at, an out-of-process frame's). */
void
page_send_to(struct act_page *p, bool browser, const char *method,
    json_t *params, void (*next)(struct act_page *, const json_t *))
{
	const char *to = browser ? NULL : p->session;

	if (!browser && p->at[0] != '\0' &&
	    json_object_get(params, "objectId") != NULL)
		to = p->at;
	page_command(p, to, method, params, false, next);
}

void
page_send(struct act_page *p, const char *method, json_t *params,
    void (*next)(struct act_page *, const json_t *))
{
	page_send_to(p, false, method, params, next);
}

void
page_send_soft(struct act_page *p, const char *session, const char *method,
    json_t *params, void (*next)(struct act_page *, const json_t *))
{
	page_command(p, session, method, params, true, next);
}

/* Calls one of the constant scripts on object p->object with args (a
 * JSON array of plain values, or NULL); the value comes back by value
 * unless by_ref. */
static void
page_call(struct act_page *p, const char *script, json_t *args, bool by_ref,
    bool await, void (*next)(struct act_page *, const json_t *))
{
	json_t *wrapped = json_array();
	json_t *v;
	size_t i;

	if (args != NULL) {
		json_array_foreach(args, i, v) json_array_append_new(
		    wrapped, json_pack("{s:O}", "value", v));
		json_decref(args);
	}
	page_send(p, "Runtime.callFunctionOn",
	    json_pack("{s:s, s:s, s:o, s:b, s:b}", "objectId", p->object,
	        "functionDeclaration", script, "arguments", wrapped,
	        "returnByValue", !by_ref, "awaitPromise", await),
	    next);
}

void
page_call_on(struct act_page *p, const char *script, json_t *args, bool by_ref,
    void (*next)(struct act_page *, const json_t *))
{
	page_call(p, script, args, by_ref, false, next);
}

void
page_call_on_awaited(struct act_page *p, const char *script, json_t *args,
    void (*next)(struct act_page *, const json_t *))
{
	page_call(p, script, args, false, true, next);
}

/* The value a by-value call returned, or NULL when it threw. */
const json_t *
page_value(struct act_page *p, const json_t *result)
{
	if (json_object_get(result, "exceptionDetails") != NULL) {
		page_fail(p, CM_E_RUNTIME_ERROR,
		    "%s: the page threw an exception", p->capability);
		return NULL;
	}
	return json_object_get(json_object_get(result, "result"), "value");
}
