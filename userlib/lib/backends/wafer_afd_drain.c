// SPDX-License-Identifier: MIT
/*
 * The AFD device's objects destroyed while jobs that use them are in
 * flight (see wafer_afd.h).  Hooked members move each micro-batch on from
 * their completion threads, step by step, with the caller's buffers, its
 * context and its model's buffers, so destroying one of them first waits
 * for the micro-batches that use it (wafer_chain_drain()).  A finished
 * job's completion holds nothing of them.
 */
#include "wafer_afd.h"

/* Micro-batches in flight that use @g's object (wafer_chain_ops). */
unsigned int wafer_afd_running(struct wafer_chain *ch, const struct wafer_chain_gone *g)
{
	struct afd *a = afd_of_chain(ch);
	unsigned int i, running = 0;
	struct afd_rec *r;

	for (i = 0; i < AFD_MAX_INFLIGHT; i++) {
		r = &a->rec[i];
		running += r->used &&
			   wafer_chain_uses(&r->job, a->ctxs[r->job.ctx_id - 1].model + 1, g);
	}
	return running;
}
