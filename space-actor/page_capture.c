/*
 * page_capture.c: the screenshot capability, an artifact of its task
 * (docs/architecture.md).  Two CDP calls on the steps page.c provides
 * (page_int.h): Page.getLayoutMetrics for the size to capture, then
 * Page.captureScreenshot.  The image goes back beside the result, as the
 * outcome's artifact, which the store keeps with the task; the result
 * names it and never holds the image itself:
 *   {"artifact": "screenshot.png", "mime": "image/png",
 *    "width": W, "height": H, "bytes": N}
 * One screenshot per task, so its name is fixed by its format.
 */
#include "page.h"
#include "page_int.h"

#include "b64.h"

#include <stdlib.h>
#include <string.h>

/* Larger than this, the decoded image cannot fit CM_ARTIFACT_MAX. */
#define SHOT_B64_MAX (((size_t)CM_ARTIFACT_MAX + 2) / 3 * 4)

static void
page_shot_taken(struct act_page *p, const json_t *result)
{
	const json_t *data = json_object_get(result, "data");
	bool jpeg = p->shot_jpeg;
	unsigned char *img = NULL;
	size_t len = 0;

	if (!json_is_string(data)) {
		page_fail(p, CM_E_RUNTIME_ERROR,
		    "screenshot: the browser returned no image");
		return;
	}
	/* Over the bound before decoding, or after: the same clear failure. */
	if (json_string_length(data) > SHOT_B64_MAX ||
	    (cm_b64_decode(json_string_value(data), json_string_length(data),
	         SHOT_B64_MAX / 4 * 3, &img, &len) == 0 &&
	        len > CM_ARTIFACT_MAX)) {
		free(img);
		page_fail(p, CM_E_RUNTIME_ERROR,
		    "screenshot: the image is over the %d bytes an artifact "
		    "may "
		    "hold; take the viewport only, or a jpeg of lower quality",
		    CM_ARTIFACT_MAX);
		return;
	}
	if (img == NULL || len == 0) {
		free(img);
		page_fail(p, CM_E_RUNTIME_ERROR,
		    "screenshot: the browser's image is not base64");
		return;
	}
	p->out.artifact = img;
	p->out.artifact_len = len;
	snprintf(p->out.artifact_name, sizeof(p->out.artifact_name), "%s",
	    jpeg ? "screenshot.jpg" : "screenshot.png");
	p->out.artifact_mime = jpeg ? "image/jpeg" : "image/png";
	page_end(p, CM_OK,
	    json_pack("{s:s, s:s, s:i, s:i, s:I}", "artifact",
	        p->out.artifact_name, "mime", p->out.artifact_mime, "width",
	        p->shot_w, "height", p->shot_h, "bytes", (json_int_t)len));
}

/* A size in CSS pixels, as a whole number of them; 0 when there is none. */
static int
shot_px(const json_t *v)
{
	double d = json_number_value(v);
	int i;

	if (!(d >= 1) || d > INT32_MAX - 1)
		return 0;
	i = (int)d;
	return (double)i < d ? i + 1 : i; /* a part of a pixel is captured */
}

static void
page_shot_metrics(struct act_page *p, const json_t *result)
{
	bool full = json_is_true(json_object_get(p->args, "full_page"));
	const json_t *vp = json_object_get(result, "cssVisualViewport");
	const json_t *cs = json_object_get(result, "cssContentSize");
	json_t *params;

	/* The viewport as the browser lays it out, or the whole document. */
	p->shot_w = shot_px(
	    json_object_get(full ? cs : vp, full ? "width" : "clientWidth"));
	p->shot_h = shot_px(
	    json_object_get(full ? cs : vp, full ? "height" : "clientHeight"));
	if (p->shot_w == 0 || p->shot_h == 0) {
		page_fail(
		    p, CM_E_RUNTIME_ERROR, "screenshot: the page has no size");
		return;
	}
	params = json_pack("{s:s}", "format", p->shot_jpeg ? "jpeg" : "png");
	if (p->shot_jpeg) {
		json_int_t q =
		    json_is_integer(json_object_get(p->args, "quality"))
		        ? json_integer_value(
		              json_object_get(p->args, "quality"))
		        : CM_SCREENSHOT_QUALITY_DEFAULT;
		json_object_set_new(params, "quality", json_integer(q));
	}
	if (full) {
		/* Past the viewport: the document's own size, at scale 1. */
		json_object_set_new(
		    params, "captureBeyondViewport", json_true());
		json_object_set_new(params, "clip",
		    json_pack("{s:i, s:i, s:i, s:i, s:i}", "x", 0, "y", 0,
		        "width", p->shot_w, "height", p->shot_h, "scale", 1));
	}
	page_send(p, "Page.captureScreenshot", params, page_shot_taken);
}

void
cap_screenshot(struct act_page *p)
{
	const char *fmt = json_string_value(json_object_get(p->args, "format"));

	p->shot_jpeg = fmt != NULL && strcmp(fmt, "jpeg") == 0;
	p->shot_w = p->shot_h = 0;
	page_send(p, "Page.getLayoutMetrics", NULL, page_shot_metrics);
}
