/*
 * metrics_live.c: the live view's metrics behind GET /metrics
 * (metrics.h): the viewers attached now, and the frames (and their
 * bytes) written to viewers.  Only the loop thread changes them, and a
 * scrape reads them on a worker, so they are atomics: no lock is taken
 * on the frames' path.
 */
#include "metrics.h"

#include <stdatomic.h>
#include <stdint.h>

#include "prom_text.h"

static struct {
	atomic_long viewers;
	atomic_uint_least64_t frames, bytes;
} ml;

void
api_metrics_live_viewers(int delta)
{
	atomic_fetch_add(&ml.viewers, delta);
}

void
api_metrics_live_frame(size_t bytes)
{
	atomic_fetch_add(&ml.frames, 1);
	atomic_fetch_add(&ml.bytes, bytes);
}

void
api_metrics_live_render(struct api_prom *b)
{
	api_prom_family(b, "spaced_live_viewers", "gauge",
	    "Viewers of Spaces' live views attached to this api process.");
	api_prom_printf(
	    b, "spaced_live_viewers %ld\n", (long)atomic_load(&ml.viewers));
	api_prom_family(b, "spaced_live_frames_sent_total", "counter",
	    "Live view frames written to viewers.");
	api_prom_printf(b, "spaced_live_frames_sent_total %llu\n",
	    (unsigned long long)atomic_load(&ml.frames));
	api_prom_family(b, "spaced_live_frame_bytes_sent_total", "counter",
	    "Bytes of live view frames (their SSE text) written to viewers.");
	api_prom_printf(b, "spaced_live_frame_bytes_sent_total %llu\n",
	    (unsigned long long)atomic_load(&ml.bytes));
}

void
api_metrics_live_reset(void)
{
	/* Viewers attached stay counted: the gauge says what is open. */
	atomic_store(&ml.frames, 0);
	atomic_store(&ml.bytes, 0);
}
