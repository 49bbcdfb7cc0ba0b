/*
 * page_form.c: the capabilities a person uses on a form: fill (a field's
 * whole value), select_option (a select's options) and check (a checkbox,
 * a radio button, a switch).  Each acts only on an element a person could
 * act on (page_reach), and its result is what the element holds after,
 * read back from the page, never what was asked.
 */
#include "page.h"
#include "page_int.h"

#include <stdio.h>
#include <string.h>

/*
 * fill's first step, on the element, with the value: what kind of field
 * it is, and whether it takes the value.  Text a person types (text-like
 * inputs, number, a textarea, an editable element) is focused and all of
 * it selected, and {how:'type'} returned: the browser then inserts the
 * value as typed text (its beforeinput and input events), which replaces
 * the selection; an empty value deletes it as the Delete key does.  A
 * date, time, range or color input takes no typing: its value is set as
 * its picker sets it (the native setter, then input and change), and
 * {how:'set'} returned.  A value such a field would not hold (a date
 * given "hello", a number given "abc": the field would sanitize it to
 * "") is refused before anything is done: {why:'invalid', kind}.  Else
 * {why:'not_editable', kind} for what takes no value, {why:'readonly'},
 * or {why:'unfocused'}.
 */
static const char JS_FILL[] =
    "function(v){const t=this,k=t.localName,ty=k==='input'?t.type:'';"
    "const typed=['text','search','email','url','tel','password','number'];"
    "const set=['date','time','datetime-local','month','week','range',"
    "'color'];"
    "if(k==='select')return {why:'not_editable',kind:'select'};"
    "if(k==='input'&&!typed.includes(ty)&&!set.includes(ty))"
    "return {why:'not_editable',kind:ty};"
    "if(k!=='input'&&k!=='textarea'&&!t.isContentEditable)"
    "return {why:'not_editable',kind:k};"
    "if(t.readOnly)return {why:'readonly'};"
    "if(ty==='color'?!/^#[0-9a-fA-F]{6}$/.test(v):"
    "(ty==='number'||set.includes(ty))&&v!==''&&(()=>{"
    "const q=document.createElement('input');"
    "q.type=ty==='range'?'number':ty;q.value=v;return q.value==='';})())"
    "return {why:'invalid',kind:ty};"
    "t.focus();if(t.getRootNode().activeElement!==t)"
    "return {why:'unfocused'};"
    "if(set.includes(ty)){Object.getOwnPropertyDescriptor("
    "HTMLInputElement.prototype,'value').set.call(t,v);"
    "t.dispatchEvent(new Event('input',{bubbles:true,composed:true}));"
    "t.dispatchEvent(new Event('change',{bubbles:true}));"
    "return {how:'set'};}"
    "if(k==='input'||k==='textarea')t.select();else{"
    "const r=document.createRange();r.selectNodeContents(t);"
    "const s=getSelection();s.removeAllRanges();s.addRange(r);}"
    "if(v==='')document.execCommand('delete');"
    "return {how:v===''?'set':'type'};}";
/*
 * The value an element holds (an editable element's text), at most max
 * UTF-16 units of it, cut before a split pair: {value, truncated}.
 */
static const char JS_VALUE[] =
    "function(max){const t=this,k=t.localName;"
    "let v=String(k==='input'||k==='textarea'||k==='select'?t.value:"
    "t.innerText);const cut=v.length>max;if(cut){let n=max;"
    "const c=v.charCodeAt(n-1);if(c>=0xd800&&c<0xdc00)n--;v=v.slice(0,n);}"
    "return {value:v,truncated:cut};}";
/*
 * select_option, on the element, with the names wanted, whether they are
 * labels (else values) and the most selected values to return.  Each
 * name must name an option (a label is the option's label, or its text
 * as shown); {why:'missing', missing} lists those that do not.  A select
 * that is not multiple takes one ({why:'single'}), and a disabled option
 * is not chosen ({why:'disabled_option', which}).  The options named are
 * then exactly those selected, as a person's choice leaves them, with the
 * input and change events a choice brings; returns {selected}, the values
 * of the options selected after.
 */
static const char JS_SELECT[] =
    "function(w,byLabel,max){const t=this;"
    "if(t.localName!=='select')return {why:'not_select',"
    "kind:t.localName==='input'?t.type:t.localName};"
    "const opts=Array.from(t.options),pick=[],missing=[];"
    "for(const x of w){const o=opts.find(o=>byLabel?"
    "(o.label===x||o.textContent.trim()===x):o.value===x);"
    "if(o)pick.push(o);else missing.push(x);}"
    "if(missing.length)return {why:'missing',missing:missing};"
    "if(!t.multiple&&pick.length>1)return {why:'single'};"
    "for(const o of pick)if(o.disabled||(o.parentNode.localName==="
    "'optgroup'&&o.parentNode.disabled))"
    "return {why:'disabled_option',which:byLabel?o.label:o.value};"
    "for(const o of opts)o.selected=pick.includes(o);"
    "t.dispatchEvent(new Event('input',{bubbles:true,composed:true}));"
    "t.dispatchEvent(new Event('change',{bubbles:true}));"
    "return {selected:Array.from(t.selectedOptions).slice(0,max)"
    ".map(o=>o.value)};}";
/*
 * check, on the element: what it is and whether it is checked.  A
 * checkbox or radio input says its checked; an element whose role is
 * checkbox, radio, switch (or their menu items) its aria-checked.
 * Returns {kind, checked}, or {why:'not_checkable', kind}.
 */
static const char JS_CHECKED[] =
    "function(){const t=this,r=t.getAttribute('role');"
    "if(t.localName==='input'&&(t.type==='checkbox'||t.type==='radio'))"
    "return {kind:t.type,checked:t.checked};"
    "if(['checkbox','radio','switch','menuitemcheckbox','menuitemradio']"
    ".includes(r))return {kind:r,checked:t.getAttribute('aria-checked')"
    "==='true'};"
    "return {why:'not_checkable',kind:t.localName==='input'?t.type:"
    "t.localName};}";

/* The page's word for a kind of element, to name it in a message:
 * letters and '-' only, bounded; "unknown" for none. */
static void
page_kind(const json_t *v, char *kind, size_t len)
{
	const char *r = json_string_value(json_object_get(v, "kind"));
	size_t n = 0;

	for (; r != NULL && *r != '\0' && n + 1 < len; r++)
		if ((*r >= 'a' && *r <= 'z') || *r == '-')
			kind[n++] = *r;
	kind[n] = '\0';
	if (n == 0)
		snprintf(kind, len, "unknown");
}

/* ---- fill */

static void
page_fill_read(struct act_page *p, const json_t *result)
{
	const json_t *v = page_value(p, result);

	if (p->done)
		return;
	if (!json_is_string(json_object_get(v, "value"))) {
		page_fail(p, CM_E_OUTCOME_UNKNOWN,
		    "the value was given to the element, and it could not be "
		    "read back");
		return;
	}
	page_action_done(
	    p, json_pack("{s:O, s:b}", "value", json_object_get(v, "value"),
	           "truncated", json_is_true(json_object_get(v, "truncated"))));
}

static void
page_fill_readback(struct act_page *p, const json_t *result)
{
	(void)result;
	page_call_on(p, JS_VALUE, json_pack("[i]", CM_FIELD_VALUE_MAX), false,
	    page_fill_read);
}

static void
page_fill_ready(struct act_page *p, const json_t *result)
{
	const json_t *v = page_value(p, result);
	const char *how, *why;
	char kind[32];

	if (p->done)
		return;
	how = json_string_value(json_object_get(v, "how"));
	why = json_string_value(json_object_get(v, "why"));
	page_kind(v, kind, sizeof(kind));
	if (how != NULL && strcmp(how, "type") == 0) {
		page_send(p, "Input.insertText",
		    json_pack(
		        "{s:O}", "text", json_object_get(p->args, "value")),
		    page_fill_readback);
	} else if (how != NULL) {
		page_fill_readback(p, NULL);
	} else if (why != NULL && strcmp(why, "invalid") == 0) {
		page_fail(p, CM_E_INVALID_ARGS,
		    "the element (%s) refuses that value: it does not hold it "
		    "as written (a %s input takes %s), so nothing was changed",
		    kind, kind,
		    strcmp(kind, "color") == 0 ? "#rrggbb"
		    : strcmp(kind, "number") == 0 || strcmp(kind, "range") == 0
		        ? "a number such as 12 or -0.5"
		    : strcmp(kind, "date") == 0           ? "YYYY-MM-DD"
		    : strcmp(kind, "time") == 0           ? "HH:MM or HH:MM:SS"
		    : strcmp(kind, "datetime-local") == 0 ? "YYYY-MM-DDTHH:MM"
		    : strcmp(kind, "month") == 0          ? "YYYY-MM"
		    : strcmp(kind, "week") == 0           ? "YYYY-Www"
		                                          : "another form");
	} else if (why != NULL && strcmp(why, "not_editable") == 0) {
		page_fail(p, CM_E_ELEMENT_NOT_EDITABLE,
		    "the element (%s) takes no value to fill, so nothing was "
		    "changed; use %s",
		    kind, page_fitting_capability(kind));
	} else {
		page_fail(p, CM_E_ELEMENT_NOT_INTERACTABLE,
		    "the element is %s, so nothing was changed",
		    why != NULL && strcmp(why, "readonly") == 0
		        ? "read-only"
		        : "not able to take the focus");
	}
}

static void
page_fill_reached(struct act_page *p)
{
	page_call_on(p, JS_FILL,
	    json_pack("[O]", json_object_get(p->args, "value")), false,
	    page_fill_ready);
}

static void
page_fill_at(struct act_page *p)
{
	/* No hit test: what is filled goes to the focus, not to a point. */
	page_reach(p, false, false, page_fill_reached);
}

void
cap_fill(struct act_page *p)
{
	page_element(p, false, page_fill_at);
}

/* ---- select_option */

/* Ends the call naming the names no option has (as far as they fit). */
static void
page_select_missing(struct act_page *p, const json_t *missing)
{
	char names[CM_ERROR_MESSAGE_MAX / 2];
	size_t n = 0, i;
	const json_t *m;

	names[0] = '\0';
	json_array_foreach(missing, i, m)
	{
		int w = snprintf(names + n, sizeof(names) - n, "%s\"%s\"",
		    i > 0 ? ", " : "",
		    json_is_string(m) ? json_string_value(m) : "?");

		if (w < 0 || (size_t)w >= sizeof(names) - n) {
			names[n] = '\0';
			break;
		}
		n += (size_t)w;
	}
	page_fail(p, CM_E_ELEMENT_NOT_FOUND,
	    "the select has no option with the %s %s; take a new snapshot "
	    "and use its options",
	    json_object_get(p->args, "labels") != NULL ? "label" : "value",
	    names);
}

static void
page_selected(struct act_page *p, const json_t *result)
{
	const json_t *v = page_value(p, result);
	const char *why;
	char kind[32];

	if (p->done)
		return;
	why = json_string_value(json_object_get(v, "why"));
	page_kind(v, kind, sizeof(kind));
	if (why == NULL && json_is_array(json_object_get(v, "selected")))
		page_action_done(p, json_pack("{s:O}", "selected",
		                        json_object_get(v, "selected")));
	else if (why != NULL && strcmp(why, "missing") == 0)
		page_select_missing(p, json_object_get(v, "missing"));
	else if (why != NULL && strcmp(why, "single") == 0)
		page_fail(p, CM_E_INVALID_ARGS,
		    "the element refuses that choice: the select takes one "
		    "option (it is not multiple), so nothing was chosen");
	else if (why != NULL && strcmp(why, "disabled_option") == 0)
		page_fail(p, CM_E_ELEMENT_NOT_INTERACTABLE,
		    "the option \"%s\" is disabled, so nothing was chosen",
		    json_is_string(json_object_get(v, "which"))
		        ? json_string_value(json_object_get(v, "which"))
		        : "?");
	else if (why != NULL && strcmp(why, "not_select") == 0)
		page_fail(p, CM_E_ELEMENT_NOT_INTERACTABLE,
		    "the element (%s) is not a select, so nothing was chosen; "
		    "use %s",
		    kind, page_fitting_capability(kind));
	else
		page_fail(p, CM_E_OUTCOME_UNKNOWN,
		    "the options were chosen, and what the select holds could "
		    "not be read back");
}

static void
page_select_reached(struct act_page *p)
{
	const json_t *labels = json_object_get(p->args, "labels");

	page_call_on(p, JS_SELECT,
	    json_pack("[O, b, i]",
	        labels != NULL ? labels : json_object_get(p->args, "values"),
	        labels != NULL, CM_SELECT_OPTIONS_MAX),
	    false, page_selected);
}

static void
page_select_at(struct act_page *p)
{
	page_reach(p, false, false, page_select_reached);
}

void
cap_select_option(struct act_page *p)
{
	page_element(p, false, page_select_at);
}

/* ---- check */

/* The element's state after the click: the one asked for, or a failure
 * that says the click changed nothing. */
static void
page_check_after(struct act_page *p, const json_t *result)
{
	const json_t *v = page_value(p, result);
	bool want = json_is_true(json_object_get(p->args, "checked"));

	if (p->done)
		return;
	if (!json_is_boolean(json_object_get(v, "checked"))) {
		page_fail(p, CM_E_OUTCOME_UNKNOWN,
		    "the element was clicked, and its state could not be read "
		    "back (it may have been replaced)");
		return;
	}
	if (json_is_true(json_object_get(v, "checked")) != want) {
		page_fail(p, CM_E_ELEMENT_NOT_INTERACTABLE,
		    "the element was clicked and is still %s: the page did "
		    "not change its state",
		    want ? "unchecked" : "checked");
		return;
	}
	page_action_done(
	    p, json_pack("{s:b, s:b}", "checked", want, "clicked", 1));
}

static void
page_check_clicked(struct act_page *p, const json_t *result)
{
	(void)result;
	page_call_on(p, JS_CHECKED, NULL, false, page_check_after);
}

static void
page_check_state(struct act_page *p, const json_t *result)
{
	const json_t *v = page_value(p, result);
	bool want = json_is_true(json_object_get(p->args, "checked"));
	const char *kind;
	char k[32];

	if (p->done)
		return;
	if (!json_is_boolean(json_object_get(v, "checked"))) {
		page_kind(v, k, sizeof(k));
		page_fail(p, CM_E_ELEMENT_NOT_INTERACTABLE,
		    "the element (%s) is not a checkbox, a radio button or a "
		    "switch, so nothing was done; use %s",
		    k, strcmp(k, "select") == 0 ? "select_option" : "click");
		return;
	}
	if (json_is_true(json_object_get(v, "checked")) == want) {
		page_end(p, CM_OK,
		    json_pack("{s:b, s:b}", "checked", want, "clicked", 0));
		return;
	}
	kind = json_string_value(json_object_get(v, "kind"));
	if (!want && kind != NULL &&
	    (strcmp(kind, "radio") == 0 ||
	        strcmp(kind, "menuitemradio") == 0)) {
		page_fail(p, CM_E_ELEMENT_NOT_INTERACTABLE,
		    "a checked radio button is not unchecked by a click; "
		    "check another one of its group");
		return;
	}
	page_click_object(p, page_check_clicked);
}

static void
page_check_at(struct act_page *p)
{
	page_call_on(p, JS_CHECKED, NULL, false, page_check_state);
}

void
cap_check(struct act_page *p)
{
	page_element(p, false, page_check_at);
}
