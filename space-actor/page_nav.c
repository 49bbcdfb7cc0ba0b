/*
 * page_nav.c: the capabilities that move the page: navigate (to a URL the
 * policy allows, its HTTP status in the result) and back (the previous
 * history entry).  Both end when the new document has loaded, with the
 * url and title page.c's page_info reads; a navigation the interception
 * (page_fetch.c) refused ends with host_not_allowed.
 */
#include "page.h"
#include "page_int.h"

#include <stdio.h>
#include <string.h>

static void
page_navigated(struct act_page *p, const json_t *result)
{
	const char *err =
	    json_string_value(json_object_get(result, "errorText"));
	const char *loader =
	    json_string_value(json_object_get(result, "loaderId"));

	if (err != NULL && err[0] != '\0') {
		if (p->blocked_host[0] != '\0' ||
		    page_proxy_refused(p, p->doc_host))
			page_blocked(p);
		else
			page_fail(p, CM_E_RUNTIME_ERROR,
			    "navigation failed: %s", err);
		return;
	}
	if (loader == NULL) { /* within the document: nothing loads */
		page_info(p);
		return;
	}
	p->want_load = true;
}

void
cap_navigate(struct act_page *p)
{
	p->doc_status = 0;
	page_send(p, "Page.navigate",
	    json_pack("{s:O}", "url", json_object_get(p->args, "url")),
	    page_navigated);
}

static void
page_history_done(struct act_page *p, const json_t *result)
{
	(void)result;
	p->want_load = true; /* the entry's loader is not known: any load */
}

static void
page_history(struct act_page *p, const json_t *result)
{
	json_int_t cur =
	    json_integer_value(json_object_get(result, "currentIndex"));
	const json_t *entries = json_object_get(result, "entries");
	const json_t *prev;

	if (cur < 1 ||
	    (prev = json_array_get(entries, (size_t)cur - 1)) == NULL) {
		page_fail(
		    p, CM_E_RUNTIME_ERROR, "there is no page to go back to");
		return;
	}
	page_send(p, "Page.navigateToHistoryEntry",
	    json_pack("{s:O}", "entryId", json_object_get(prev, "id")),
	    page_history_done);
}

void
cap_back(struct act_page *p)
{
	page_send(p, "Page.getNavigationHistory", NULL, page_history);
}
