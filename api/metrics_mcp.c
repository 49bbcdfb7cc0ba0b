/*
 * metrics_mcp.c: the MCP metrics behind GET /metrics (metrics.h): the
 * sessions open at the last scrape and the tool calls by tool and
 * outcome.  One mutex of its own guards them; api_metrics_render takes
 * it inside its own (never the other way round), so a scrape is still
 * one reading.
 */
#include "metrics.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits.h"
#include "prom_text.h"

static const char *const outcomes[API_MCP_OUTCOME__COUNT] = {
    [API_MCP_OK] = "ok",
    [API_MCP_TOOL_ERROR] = "tool_error",
    [API_MCP_CANCELLED] = "cancelled",
    [API_MCP_BUSY] = "busy",
    [API_MCP_IN_PROGRESS] = "in_progress",
    [API_MCP_REFUSED] = "refused",
    [API_MCP_INVALID] = "invalid",
    [API_MCP_ERROR] = "error",
};

/* "browser_" and a capability's name. */
#define TOOL_LABEL_MAX (CM_CAPABILITY_MAX + 8)

struct tool_row {
	char tool[TOOL_LABEL_MAX + 1];
	uint64_t n[API_MCP_OUTCOME__COUNT];
};

static struct {
	pthread_mutex_t lock;
	struct tool_row rows[CM_METRICS_MCP_TOOLS_MAX];
	size_t n_rows;
	uint64_t other[API_MCP_OUTCOME__COUNT]; /* past the rows, or too long */
	long sessions;                          /* -1: never asked */
} mm = {.lock = PTHREAD_MUTEX_INITIALIZER, .sessions = -1};

void
api_metrics_mcp_sessions(long n)
{
	pthread_mutex_lock(&mm.lock);
	mm.sessions = n < 0 ? -1 : n;
	pthread_mutex_unlock(&mm.lock);
}

void
api_metrics_mcp_call(const char *tool, enum api_mcp_outcome o)
{
	size_t i;

	if ((unsigned)o >= API_MCP_OUTCOME__COUNT)
		o = API_MCP_ERROR;
	if (tool == NULL || *tool == '\0')
		tool = "unknown";
	pthread_mutex_lock(&mm.lock);
	for (i = 0; i < mm.n_rows; i++)
		if (strcmp(mm.rows[i].tool, tool) == 0)
			break;
	if (i == mm.n_rows && mm.n_rows < CM_METRICS_MCP_TOOLS_MAX &&
	    strlen(tool) <= TOOL_LABEL_MAX) {
		memset(&mm.rows[i], 0, sizeof(mm.rows[i]));
		snprintf(mm.rows[i].tool, sizeof(mm.rows[i].tool), "%s", tool);
		mm.n_rows++;
	}
	if (i < mm.n_rows)
		mm.rows[i].n[o]++;
	else
		mm.other[o]++;
	pthread_mutex_unlock(&mm.lock);
}

/* One tool's series: every outcome, zeros too, so that a first
 * increment is never lost to rate(). */
static void
tool_lines(struct api_prom *b, const char *tool, const uint64_t *n)
{
	struct api_prom l = {0};
	char *label;

	api_prom_label(&l, "tool", tool, false);
	if ((label = api_prom_finish(&l)) == NULL) {
		b->oom = true;
		return;
	}
	for (size_t o = 0; o < API_MCP_OUTCOME__COUNT; o++)
		api_prom_printf(b,
		    "spaced_mcp_tool_calls_total{%s,outcome=\"%s\"} %llu\n",
		    label, outcomes[o], (unsigned long long)n[o]);
	free(label);
}

void
api_metrics_mcp_render(struct api_prom *b)
{
	bool other = false;

	pthread_mutex_lock(&mm.lock);
	if (mm.sessions >= 0) {
		api_prom_family(b, "spaced_mcp_sessions", "gauge",
		    "MCP sessions open in this api process at this scrape.");
		api_prom_printf(b, "spaced_mcp_sessions %ld\n", mm.sessions);
	}
	api_prom_family(b, "spaced_mcp_tool_calls_total", "counter",
	    "MCP tools/call requests answered, by tool and outcome.");
	for (size_t i = 0; i < mm.n_rows; i++)
		tool_lines(b, mm.rows[i].tool, mm.rows[i].n);
	for (size_t o = 0; o < API_MCP_OUTCOME__COUNT; o++)
		other |= mm.other[o] != 0;
	if (other)
		tool_lines(b, "other", mm.other);
	pthread_mutex_unlock(&mm.lock);
}

void
api_metrics_mcp_reset(void)
{
	pthread_mutex_lock(&mm.lock);
	mm.n_rows = 0;
	memset(mm.other, 0, sizeof(mm.other));
	mm.sessions = -1;
	pthread_mutex_unlock(&mm.lock);
}
