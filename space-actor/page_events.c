/*
 * page_events.c: what the page does besides a call: the tabs it opens and
 * its downloads (its dialogs are page_modal.c's).  Each is told to the page's
 * on_event as it happens, whether or not a call runs, and a call under way says
 * in its result what happened during it (page_end, page_info_done).
 */
#include "page.h"
#include "page_int.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"

void
page_tell(struct act_page *p, const struct act_page_event *ev)
{
	if (p->on_event != NULL)
		p->on_event(p->on_event_arg, ev);
}

void
page_window_open(struct act_page *p, const json_t *params)
{
	const char *url = json_string_value(json_object_get(params, "url"));

	if (url == NULL || strlen(url) >= sizeof(p->window_url))
		url = "";
	snprintf(p->window_url, sizeof(p->window_url), "%s", url);
}

void
act_page_tab_opened(struct act_page *p, const char *url, bool refused)
{
	struct act_page_event ev = {.kind = CM_EV_TAB_OPENED};

	if (p->busy && !p->done) {
		if (refused)
			p->tabs_refused++;
		else
			p->tabs_opened++;
	}
	/* A new tab's target has no url yet: it is the one the page asked
	 * for as it opened it. */
	ev.url = url != NULL && url[0] != '\0' ? url : p->window_url;
	ev.closed = refused;
	page_tell(p, &ev);
	p->window_url[0] = '\0';
}

/* The name a site suggested for a download, as a result may show it:
 * printable, no path separators, cut on a character boundary. */
static void
download_name(char *out, size_t len, const char *name)
{
	size_t n = 0;

	for (; name != NULL && *name != '\0' && n + 1 < len; name++) {
		unsigned char c = (unsigned char)*name;

		out[n++] = c < 0x20 || c == 0x7f || c == '/' || c == '\\'
		               ? '_'
		               : (char)c;
	}
	if (name != NULL && *name != '\0')
		while (n > 0 && ((unsigned char)out[n - 1] & 0xC0) == 0x80)
			n--;
	if (n > 0 && name != NULL && *name != '\0' &&
	    ((unsigned char)out[n - 1] & 0xC0) == 0xC0)
		n--;
	out[n] = '\0';
}

/* The download under way with that guid, or -1. */
static int
download_find(const struct act_page *p, const char *guid)
{
	for (int i = 0; i < p->n_downloads; i++)
		if (strcmp(p->downloads[i].guid, guid) == 0)
			return i;
	return -1;
}

/*
 * A download began (name is already what a result shows): it is told,
 * and kept until its end is, when there is room.  A guid seen before is
 * the same download, told once.
 */
static void
download_began(struct act_page *p, const char *guid, const char *name)
{
	struct act_page_event ev = {.kind = CM_EV_DOWNLOAD};
	struct act_page_download *d;

	if (download_find(p, guid) >= 0)
		return;
	if (p->n_downloads < CM_PAGE_DOWNLOADS_MAX) {
		d = &p->downloads[p->n_downloads++];
		snprintf(d->guid, sizeof(d->guid), "%s", guid);
		snprintf(d->name, sizeof(d->name), "%s", name);
	}
	ev.name = name;
	ev.state = "in_progress";
	page_tell(p, &ev);
}

/* A download kept by download_began ended (state completed or canceled)
 * with bytes received: it is told and forgotten. */
static void
download_ended(
    struct act_page *p, const char *guid, const char *state, json_int_t bytes)
{
	struct act_page_event ev = {.kind = CM_EV_DOWNLOAD};
	int i = download_find(p, guid);

	if (i < 0)
		return;
	ev.name = p->downloads[i].name;
	ev.state = state;
	ev.bytes = bytes;
	/* The call's own download says what became of its file. */
	if (p->busy && !p->done && p->dl_began &&
	    strcmp(guid, p->dl_guid) == 0) {
		ev.artifact = p->dl_artifact[0] != '\0' ? p->dl_artifact : NULL;
		ev.sha256 = ev.artifact != NULL ? p->dl_sha256 : NULL;
		ev.too_large = p->dl_too_large;
	}
	page_tell(p, &ev);
	p->downloads[i] = p->downloads[--p->n_downloads];
}

void
act_page_download(struct act_page *p, const char *method, const json_t *params)
{
	const char *guid = json_string_value(json_object_get(params, "guid"));
	const char *state;
	char name[CM_DOWNLOAD_NAME_MAX + 1];
	json_int_t bytes;

	if (guid == NULL || strlen(guid) > CM_ID_MAX)
		return;
	if (strcmp(method, "Browser.downloadWillBegin") == 0) {
		download_name(name, sizeof(name),
		    json_string_value(
		        json_object_get(params, "suggestedFilename")));
		download_began(p, guid, name);
		/* The first of the call is the one it reports. */
		if (!p->busy || p->done || p->dl_began)
			return;
		p->dl_began = true;
		snprintf(p->dl_guid, sizeof(p->dl_guid), "%s", guid);
		snprintf(p->dl_name, sizeof(p->dl_name), "%s", name);
		p->dl_state = "in_progress";
		p->dl_bytes = 0;
		p->dl_wait_end_ms = -1;
		return;
	}
	state = json_string_value(json_object_get(params, "state"));
	bytes = json_integer_value(json_object_get(params, "receivedBytes"));
	if (state == NULL || strcmp(state, "inProgress") == 0) {
		state = NULL;
		page_download_progress(p, guid, bytes,
		    json_integer_value(json_object_get(params, "totalBytes")));
	} else {
		state =
		    strcmp(state, "completed") == 0 ? "completed" : "canceled";
		page_download_end(p, guid, strcmp(state, "completed") == 0);
		download_ended(p, guid, state, bytes);
	}
	if (!p->busy || p->done || !p->dl_began ||
	    strcmp(guid, p->dl_guid) != 0)
		return;
	p->dl_bytes = bytes;
	if (state == NULL)
		return;
	p->dl_state = state;
	if (p->dl_wanted && p->cmd == 0) {
		p->dl_wanted = false;
		page_info(p);
	} else if (p->dl_held != NULL) {
		json_t *held = p->dl_held;

		p->dl_held = NULL;
		page_end(p, CM_OK, held);
	}
}
