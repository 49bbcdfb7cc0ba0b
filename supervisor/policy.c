#include "policy.h"

#include <string.h>

const struct sup_policy sup_policy_permanent = {
    .permanent = true,
    .backoff_min_ms = 100,
    .backoff_max_ms = 5000,
    .first_immediate = false,
    .max_failures = 4, /* the fifth failure in the window gives up */
    .window_ms = 10000,
};

const struct sup_policy sup_policy_actor = {
    .permanent = false,
    .backoff_min_ms = 100,
    .backoff_max_ms = 5000,
    .first_immediate = true, /* a killed actor is back at once */
    .max_failures = 3,       /* "more than 3 crashes in 60 s" */
    .window_ms = 60000,
};

static void
forget_old(const struct sup_policy *p, struct sup_history *h, int64_t now)
{
	int keep = 0;

	for (int i = 0; i < h->n; i++)
		if (now - h->at[i] < p->window_ms)
			h->at[keep++] = h->at[i];
	h->n = keep;
}

int
sup_policy_recent(
    const struct sup_policy *p, const struct sup_history *h, int64_t now_ms)
{
	int n = 0;

	for (int i = 0; i < h->n; i++)
		if (now_ms - h->at[i] < p->window_ms)
			n++;
	return n;
}

enum sup_verdict
sup_policy_exit(const struct sup_policy *p, struct sup_history *h,
    int64_t now_ms, bool exited, int code, int64_t *delay_ms)
{
	int64_t delay;
	int n;

	*delay_ms = 0;
	if (exited && code == SUP_EXIT_PERMANENT)
		return SUP_GIVE_UP;
	if (!p->permanent && exited && code == 0)
		return SUP_DONE;

	forget_old(p, h, now_ms);
	if (h->n == SUP_HISTORY_MAX) {
		memmove(
		    h->at, h->at + 1, sizeof(h->at[0]) * (SUP_HISTORY_MAX - 1));
		h->n--;
	}
	h->at[h->n++] = now_ms;
	n = h->n;
	if (n > p->max_failures)
		return SUP_GIVE_UP;

	/* n-th failure in the window: min * 2^(n-1), or 0 then min * 2^(n-2).
	 */
	if (p->first_immediate && n == 1)
		return SUP_RESTART;
	delay = p->backoff_min_ms;
	for (int i = p->first_immediate ? 2 : 1; i < n; i++) {
		delay *= 2;
		if (delay >= p->backoff_max_ms)
			break;
	}
	*delay_ms = delay > p->backoff_max_ms ? p->backoff_max_ms : delay;
	return SUP_RESTART;
}
