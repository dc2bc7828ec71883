// SPDX-License-Identifier: MIT
/*
 * The AFD backend's members that fail (see wafer_afd.h).  A member whose
 * reap returns a fatal error (wafer_members_fatal(): a device that died, a
 * completion ring that broke) will not complete the steps it holds: it is
 * dead from then on.  Every micro-batch whose step it holds, or that waits
 * for room on it, is over with that error, so its job completes with it,
 * once (as the kernel driver completes every job of a device that died
 * with -ENODEV or -EIO).  Every micro-batch crosses every member, so the
 * others fail as they reach it (step_post()), and a job submitted later
 * fails at once.  The member's late completions (its hook may still be
 * called) are dropped: their micro-batches are over and their slots may
 * hold others by then.
 */
#include "wafer_afd.h"

/* Member @k's group and its number there (*@i), for messages. */
static const char *group_of(const struct afd *a, unsigned int k, unsigned int *i)
{
	if (k < a->na) {
		*i = k;
		return "attention";
	}
	if (k < a->na + a->nf) {
		*i = k - a->na;
		return "FFN";
	}
	*i = k - a->na - a->nf;
	return "expert";
}

/* Member @k failed with @err (lock held): what it holds or queues is over. */
void wafer_afd_member_fail(struct afd *a, unsigned int k, int err)
{
	struct afd_step st;
	struct afd_rec *r;
	const char *group;
	unsigned int i;

	if (a->dead[k])
		return;
	a->dead[k] = err;
	a->inflight[k] = 0;	/* nothing to wait for there */
	group = group_of(a, k, &i);
	wafer_prefix_error(err, "%s device %u failed", group, i);
	for (i = 0; i < AFD_MAX_INFLIGHT; i++) {
		r = &a->rec[i];
		if (!r->used)
			continue;
		wafer_afd_step_of(a, r, &st);
		if (st.k != k)
			continue;	/* held by a live member: failed when it reaches @k */
		if (r->pend) {
			r->pend = 0;
			a->n_pend[k]--;
		}
		wafer_afd_rec_done(a, r, err, 0);
	}
}

/* The first dead member's error, or 0: a job needs every member. */
int wafer_afd_dead(const struct afd *a)
{
	unsigned int k;

	for (k = 0; k < afd_members(a); k++)
		if (a->dead[k])
			return a->dead[k];
	return 0;
}
