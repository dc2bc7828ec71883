// SPDX-License-Identifier: MIT
/*
 * A chain's objects destroyed while work that uses them is in flight (see
 * wafer_chain.h).  Hooked members move the work on from their own threads,
 * step by step, with the caller's buffers, its context and its model's
 * buffers: had one of them gone by then, the next step would use freed
 * memory.  So destroying a buffer, a context or a model first waits for
 * the work in flight that uses it to finish, as the kernel keeps an object
 * alive until its jobs are done; a member that fails ends its work at
 * once (wafer_chain_fail()), a hung one is bounded by the device's job
 * timeout.  A polled chain moves work on only in the caller's reap:
 * nothing runs on its own, so nothing to wait for (reaping that work after
 * destroying what it uses is the caller's error); the client's @running
 * op is still asked once, to let go of what it would take from the object
 * later.
 */
#include "wafer_chain.h"

/* Whether job @j (its context's model: @model, an id) uses what @g says. */
int wafer_chain_uses(const struct wafer_job_hw *j, uint32_t model,
		     const struct wafer_chain_gone *g)
{
	if (g->bo)
		return j->in == g->bo || j->out == g->bo;
	if (g->ctx)
		return j->ctx_id == g->ctx;
	return model == g->model;
}

/* Without a job timeout (0: none set), how long a destroy waits at most. */
#define DRAIN_DEFAULT_MS	10000u

/** struct drain - what wafer_chain_wait() passes back: the chain, the object */
struct drain {
	struct wafer_chain *ch;
	struct wafer_chain_gone g;
};

static int drained(void *arg)
{
	struct drain *d = arg;

	return !d->ch->ops->running(d->ch, &d->g);
}

/* Waits (hooked) until no work in flight that uses @g's object runs. */
void wafer_chain_drain(struct wafer_chain *ch, struct wafer_chain_gone g, uint32_t timeout_ms)
{
	struct drain d = { .ch = ch, .g = g };

	pthread_mutex_lock(&ch->lock);
	if (ch->hooked)
		wafer_chain_wait(ch, wafer_now_ns() +
				 (uint64_t)(timeout_ms ? timeout_ms : DRAIN_DEFAULT_MS) * 1000000ull,
				 drained, NULL, &d);
	else
		ch->ops->running(ch, &g);
	pthread_mutex_unlock(&ch->lock);
}
