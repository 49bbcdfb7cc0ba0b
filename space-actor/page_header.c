/*
 * page_header.c: the header every result carries, "page": {url, title,
 * loading, tabs, dialog?, downloads?}, and the snapshot's header lines.
 * It is made from what the page knows (the url and title the browser
 * told as the call ended, the tabs the session keeps, the open dialog):
 * a call that did not read the url and title reads them once as it ends
 * (page_header_end), one browser-side command.  The lines are few and
 * short: the snapshot's bytes are what an agent pays for.
 */
#include "page.h"
#include "page_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "redact.h"

void
act_page_info_changed(struct act_page *p, const json_t *info)
{
	const char *url = json_string_value(json_object_get(info, "url"));
	const char *title = json_string_value(json_object_get(info, "title"));
	char *t;

	if (url != NULL)
		snprintf(p->url, sizeof(p->url), "%s",
		    strlen(url) < sizeof(p->url) ? url : "");
	if (title != NULL && (t = cm_redact_text_max(title, strlen(title), NULL,
	                          CM_PAGE_TITLE_MAX)) != NULL) {
		snprintf(p->title, sizeof(p->title), "%s", t);
		free(t);
	}
}

/* The tabs, as the session keeps them; the page alone without one. */
static json_t *
header_tabs(struct act_page *p)
{
	json_t *list = json_array();

	if (p->tabs_fn != NULL)
		p->tabs_fn(p->tabs_arg, list);
	else
		json_array_append_new(
		    list, json_pack("{s:i, s:s, s:s, s:b}", "index", 0, "title",
		              p->title, "url", p->url, "current", 1));
	return list;
}

void
page_header_add(struct act_page *p, json_t *result)
{
	const json_t *url = json_object_get(result, "url");
	const json_t *title = json_object_get(result, "title");
	json_t *page, *d;

	/* A result that names the page says it as of its end: the header
	 * agrees with it (a title not parsed yet is null in both). */
	page = json_pack("{s:o, s:o, s:b, s:o}", "url",
	    json_is_string(url) ? json_incref((json_t *)url)
	                        : json_string(p->url),
	    "title",
	    title != NULL ? json_incref((json_t *)title)
	                  : json_string(p->title),
	    "loading", p->loading, "tabs", header_tabs(p));
	if (page == NULL)
		return;
	if ((d = page_modal_open_json(p)) != NULL)
		json_object_set_new(page, "dialog", d);
	if (p->dl_began)
		json_object_set_new(page, "downloads",
		    json_pack("[{s:s, s:s, s:I}]", "name", p->dl_name, "state",
		        p->dl_state, "bytes", p->dl_bytes));
	if (strcmp(p->capability, "snapshot") == 0 &&
	    json_is_string(json_object_get(result, "snapshot"))) {
		char *lines = page_header_lines(p);
		const char *outline =
		    json_string_value(json_object_get(result, "snapshot"));
		char *text;
		size_t n;

		if (lines != NULL) {
			n = strlen(lines) + strlen(outline) + 1;
			if ((text = malloc(n)) != NULL) {
				snprintf(text, n, "%s%s", lines, outline);
				json_object_set_new(
				    result, "snapshot", json_string(text));
				free(text);
			}
			free(lines);
		}
	}
	json_object_set_new(result, "page", page);
}

/* Appends s (NULL: nothing) to *buf (of *len bytes used, *cap
 * allocated) with control characters as spaces, so that a title or a
 * message stays on its line, then a newline when nl; false when memory
 * ran out. */
static bool
header_put(char **buf, size_t *len, size_t *cap, const char *s, bool nl)
{
	size_t n = s != NULL ? strlen(s) : 0;
	char *b;

	if (*len + n + 2 > *cap) {
		size_t c = (*len + n + 2) * 2;

		if ((b = realloc(*buf, c)) == NULL)
			return false;
		*buf = b;
		*cap = c;
	}
	for (size_t i = 0; i < n; i++)
		(*buf)[(*len)++] = (unsigned char)s[i] < 0x20 ? ' ' : s[i];
	if (nl)
		(*buf)[(*len)++] = '\n';
	(*buf)[*len] = '\0';
	return true;
}

char *
page_header_lines(struct act_page *p)
{
	json_t *tabs = header_tabs(p), *t, *d = page_modal_open_json(p);
	char *buf = NULL, num[32];
	size_t len = 0, cap = 0, i;
	bool ok;

	ok = header_put(&buf, &len, &cap, "url: ", false) &&
	     header_put(&buf, &len, &cap, p->url, true) &&
	     header_put(&buf, &len, &cap, "title: ", false) &&
	     header_put(&buf, &len, &cap, p->title, true);
	if (json_array_size(tabs) > 1)
		json_array_foreach(tabs, i, t)
		{
			snprintf(num, sizeof(num), "tab %lld%s: ",
			    (long long)json_integer_value(
			        json_object_get(t, "index")),
			    json_is_true(json_object_get(t, "current"))
			        ? " (current)"
			        : "");
			ok = ok && header_put(&buf, &len, &cap, num, false) &&
			     header_put(&buf, &len, &cap,
			         json_string_value(json_object_get(t, "title")),
			         false) &&
			     header_put(&buf, &len, &cap, " ", false) &&
			     header_put(&buf, &len, &cap,
			         json_string_value(json_object_get(t, "url")),
			         true);
		}
	if (d != NULL)
		ok = ok && header_put(&buf, &len, &cap, "dialog: ", false) &&
		     header_put(&buf, &len, &cap, p->dialog.type, false) &&
		     header_put(&buf, &len, &cap, " \"", false) &&
		     header_put(&buf, &len, &cap, p->dialog.message, false) &&
		     header_put(&buf, &len, &cap,
		         "\" (open: answer it with handle_dialog)", true);
	json_decref(tabs);
	json_decref(d);
	if (!ok) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The url and title for a result's header, read as the call ends. */
static void
page_ending_info(void *arg, const json_t *result, const json_t *error)
{
	struct act_page *p = arg;
	json_t *r = p->ending;

	p->cmd = 0;
	if (!p->busy || p->done)
		return;
	p->ending = NULL;
	if (error == NULL)
		act_page_info_changed(p, json_object_get(result, "targetInfo"));
	page_end(p, CM_OK, r);
}

/*
 * A call that succeeded without reading the page's url and title: they
 * are read now, so that its header says what the page is after it (a
 * title its click set, say).  The browser's events tell them too, but
 * may come after the call's last reply.  Past the call's deadline, or
 * with no answer, the result keeps the last ones told: what the call did
 * is not lost to its header.
 */
void
page_header_end(struct act_page *p, json_t *result)
{
	int64_t now = cm_mono_ms();

	p->info_fresh = true;
	json_decref(p->ending);
	p->ending = result;
	p->next = NULL;
	snprintf(
	    p->cmd_method, sizeof(p->cmd_method), "%s", "Target.getTargetInfo");
	p->cmd_type[0] = '\0';
	p->cmd = act_cdp_call(p->cdp, NULL, "Target.getTargetInfo",
	    json_pack("{s:s}", "targetId", p->target),
	    p->deadline_ms > now ? p->deadline_ms : now + 500, page_ending_info,
	    p);
	if (p->cmd < 0) {
		p->cmd = 0;
		p->ending = NULL;
		page_end(p, CM_OK, result);
	}
}
