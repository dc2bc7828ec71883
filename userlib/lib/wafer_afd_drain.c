// SPDX-License-Identifier: MIT
/*
 * The AFD device's objects destroyed while jobs that use them are in
 * flight (see wafer_afd.h).  Hooked members move each micro-batch on from
 * their completion threads, step by step, with the caller's buffers, its
 * context and its model's buffers: had one of them gone by then, the step
 * would use freed memory.  So destroying a buffer, a context or a model
 * first waits for the micro-batches in flight that use it to finish
 * (wafer_members_drain()), as the kernel keeps an object alive until its
 * jobs are done; a member that fails ends its micro-batches at once
 * (wafer_afd_fail.c), a hung one is bounded by the device's job timeout.
 * A polled device moves micro-batches on only in the caller's reap:
 * nothing runs on its own, so nothing to wait for.  A finished job's
 * completion holds nothing of them.
 */
#include "wafer_afd.h"
#include "wafer_members.h"

/** struct drain - what wafer_members_drain() passes back: the device, the object */
struct drain {
	struct afd *a;
	struct wafer_members_gone g;
};

/* Micro-batches in flight that use the object. */
static unsigned int drain_running(void *arg)
{
	struct drain *d = arg;
	struct afd *a = d->a;
	unsigned int i, running = 0;
	struct afd_rec *r;

	for (i = 0; i < AFD_MAX_INFLIGHT; i++) {
		r = &a->rec[i];
		running += r->used &&
			   wafer_members_uses(&r->job, a->ctxs[r->job.ctx_id - 1].model + 1, &d->g);
	}
	return running;
}

static void drain_check(void *arg)
{
	wafer_afd_members_check(((struct drain *)arg)->a);
}

/* Waits (hooked) until no micro-batch in flight that uses @g's object runs. */
void wafer_afd_drain(struct afd *a, struct wafer_members_gone g, uint32_t timeout_ms)
{
	struct drain d = { .a = a, .g = g };

	if (a->polled)
		return;
	pthread_mutex_lock(&a->lock);
	wafer_members_drain(&a->lock, &a->cond, drain_running, drain_check, &d, timeout_ms);
	pthread_mutex_unlock(&a->lock);
}
