// SPDX-License-Identifier: MIT
/*
 * A chain's members (see wafer_chain.h): its lock, its hooks, its close.
 * The clients open the members themselves (each with its own options and
 * checks) into ch->m[], counting them in ch->n.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "wafer_chain.h"

/* The lock and the condition (CLOCK_MONOTONIC) the completion hooks use. */
int wafer_chain_init(struct wafer_chain *ch, const struct wafer_chain_ops *ops)
{
	pthread_condattr_t ca;
	int ret;

	ch->ops = ops;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	ret = pthread_cond_init(&ch->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (ret || pthread_mutex_init(&ch->lock, NULL)) {
		if (!ret)
			pthread_cond_destroy(&ch->cond);
		return wafer_set_error(-ENOMEM, "out of memory");
	}
	return 0;
}

/*
 * Completions straight from every member's thread where each can take a
 * hook (and the caller did not ask for @polled); else none is hooked.
 */
void wafer_chain_hook_members(struct wafer_chain *ch, int polled)
{
	unsigned int k;

	ch->hooked = !polled;
	for (k = 0; k < ch->n; k++)
		ch->hooked &= ch->m[k]->ops->set_cpl_hook != NULL;
	for (k = 0; k < ch->n && ch->hooked; k++) {
		ch->hook[k] = (struct wafer_chain_hook){ .ch = ch, .k = k };
		ch->m[k]->ops->set_cpl_hook(ch->m[k], wafer_chain_hook, &ch->hook[k]);
	}
}

void wafer_chain_close(struct wafer_chain *ch)
{
	unsigned int k;

	/*
	 * A member's hook may still run (steps left in flight) while another
	 * member is closed: from now on it posts nothing.  Closing a member
	 * joins its threads, so no hook runs once they are all closed.
	 */
	pthread_mutex_lock(&ch->lock);
	ch->closing = 1;
	pthread_mutex_unlock(&ch->lock);
	for (k = 0; k < ch->n; k++)
		wafer_close(ch->m[k]);
	pthread_cond_destroy(&ch->cond);
	pthread_mutex_destroy(&ch->lock);
}
