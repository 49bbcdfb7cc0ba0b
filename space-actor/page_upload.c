/*
 * page_upload.c: upload {ref|selector, files}, which sets files on a file
 * input as a person choosing them would.  The actor has written them
 * before the call starts (upload.c), each under the name the client gave
 * it in the call's own directory (p->up_dir), so the page's File objects
 * carry the client's names.  DOM.setFileInputFiles sets them and fires
 * the input's input and change events; the result is what the input then
 * reports (input.files), never what was asked.
 */
#include "page.h"
#include "page_int.h"

#include <stdio.h>
#include <string.h>

/*
 * Whether the element takes the files: "ok"; "gone"; "disabled";
 * "single" when more than n = 1 files go to an input without multiple;
 * or "not_file:<what it is>".
 */
static const char JS_FILE_INPUT[] =
    "function(n){if(!this.isConnected)return 'gone';"
    "if(this.nodeType!==1)return 'not_file:'+this.nodeName;"
    "const k=this.localName;"
    "if(k!=='input'||this.type!=='file')"
    "return 'not_file:'+(k==='input'?'input type='+this.type:k);"
    "if(this.matches(':disabled'))return 'disabled';"
    "if(n>1&&!this.multiple)return 'single';return 'ok';}";
/* What the input holds now, as the page sees it. */
static const char JS_FILES[] = "function(){return Array.from(this.files||[],"
                               "f=>({name:f.name,size:f.size,type:f.type}));}";

static void
upload_read(struct act_page *p, const json_t *result)
{
	const json_t *v = page_value(p, result);
	size_t want = json_array_size(json_object_get(p->args, "files"));

	if (p->done)
		return;
	/* Asked, and not what the input holds: the browser did not take
	 * them (the page replaced the input, say). */
	if (!json_is_array(v) || json_array_size(v) != want) {
		page_fail(p, CM_E_RUNTIME_ERROR,
		    "the input holds %zu files, not the %zu set",
		    json_is_array(v) ? json_array_size(v) : 0, want);
		return;
	}
	page_action_done(p, json_pack("{s:O}", "files", v));
}

static void
upload_set(struct act_page *p, const json_t *result)
{
	(void)result;
	page_call_on(p, JS_FILES, NULL, false, upload_read);
}

/* The paths of the call's files: <up_dir>/<name> for each name. */
static json_t *
upload_paths(struct act_page *p)
{
	char path[CM_PATH_MAX + CM_FILE_NAME_MAX + 2];
	const json_t *files = json_object_get(p->args, "files");
	json_t *out = json_array();
	int n;

	for (size_t i = 0; out != NULL && i < json_array_size(files); i++) {
		n = snprintf(path, sizeof(path), "%s/%s", p->up_dir,
		    json_string_value(json_array_get(files, i)));
		if (n <= 0 || (size_t)n >= sizeof(path) ||
		    json_array_append_new(out, json_string(path)) != 0) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

static void
upload_checked(struct act_page *p, const json_t *result)
{
	const json_t *v = page_value(p, result);
	const char *why = json_string_value(v);
	json_t *paths;

	if (p->done)
		return;
	if (why == NULL) {
		page_fail(p, CM_E_RUNTIME_ERROR,
		    "upload: the element could not be looked at");
	} else if (strcmp(why, "gone") == 0) {
		page_not_found(p, "the element is no longer in the page");
	} else if (strncmp(why, "not_file:", 9) == 0) {
		page_fail(p, CM_E_ELEMENT_NOT_INTERACTABLE,
		    "the element is %.64s, not a file input "
		    "(input type=file): nothing was set",
		    why + 9);
	} else if (strcmp(why, "disabled") == 0) {
		page_fail(p, CM_E_ELEMENT_NOT_INTERACTABLE,
		    "the file input is disabled: nothing was set");
	} else if (strcmp(why, "single") == 0) {
		page_fail(p, CM_E_INVALID_ARGS,
		    "the file input takes one file (it has no multiple "
		    "attribute): name one");
	} else if ((paths = upload_paths(p)) == NULL) {
		page_fail(p, CM_E_RUNTIME_ERROR,
		    "upload: the files' paths do not fit");
	} else {
		page_send(p, "DOM.setFileInputFiles",
		    json_pack(
		        "{s:o, s:s}", "files", paths, "objectId", p->object),
		    upload_set);
	}
}

static void
upload_found(struct act_page *p)
{
	json_int_t n =
	    (json_int_t)json_array_size(json_object_get(p->args, "files"));

	page_call_on(
	    p, JS_FILE_INPUT, json_pack("[I]", n), false, upload_checked);
}

void
cap_upload(struct act_page *p)
{
	/* The actor writes the files before the call; a call with none
	 * (a driver run on its own) has nothing to set. */
	if (p->up_dir == NULL || p->up_dir[0] == '\0') {
		page_fail(p, CM_E_RUNTIME_ERROR,
		    "upload: no files were fetched for this call");
		return;
	}
	page_element(p, false, upload_found);
}
