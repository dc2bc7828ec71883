// SPDX-License-Identifier: MIT
/*
 * The pipeline backend's modelled clock, per sequence slot.
 *
 * A member's firmware decides when a job is ready by its own view of the
 * slot ("Timeline" in wfs_timing.h): at the completion of the slot's
 * previous job if that had completed, at the device's clock if the device
 * sat idle.  Member 0 cannot see when the slot's previous token left the
 * last member, so on its own it would start a decode loop's next token as
 * soon as its own part of the last one was done, overlapping the later
 * members' parts.  The pipeline applies the firmware's rule to the whole
 * chain instead and gives part 0 the answer as its floor:
 *
 *   floor = the slot's jobs in flight ? 0 : the slot's latest completion
 *   floor = max(floor, the latest completion the caller has reaped)
 *
 * where a completion is the last part's (its done_ns).  The second term is the host's modelled "now": it cannot have submitted
 * the job before it learned of the completions it had reaped (a batch
 * run in lockstep reaps the whole step, so its next step starts at the
 * step's makespan).  Jobs that finished but were not reaped yet do not
 * count, so micro-batches kept in flight (the caller reaps one, submits
 * its next step, reaps the next) each start when their own previous step
 * left the chain, whatever the host's threads did meanwhile.  The floor
 * stands in for member 0's own idle clock (its firmware leaves that out
 * for a floored job: member 0's completions include the link hop).
 *
 * Part 0's member
 * takes the floor as a u64 after the token ids (WAFER_JOB_HW_NOT_BEFORE,
 * WFW_JOB_NOT_BEFORE); the caller's buffer has no room for it, so the
 * ids are copied to a slot of the model's staging buffer on member 0.
 * The last part is asked for its done_ns (WAFER_JOB_HW_DONE_NS).
 *
 * A job's device_ns is its makespan across the parts: the last part's
 * completion minus part 0's start, which is part 0's completion (the t_ns
 * of its last activation record, where the link hop ends) minus part 0's
 * device_ns.  Where a member cannot take a floor (a kernel without
 * WAFER_CAP_NOT_BEFORE), none of this happens: the floor stays 0 and
 * device_ns the sum of the parts'.  A model on one member needs none of
 * it either: its firmware's own rule is the chain's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wafer_pipe.h"

static const struct pipe_model *clock_model(const struct pipe *p, const struct pipe_rec *r)
{
	return &p->models[p->ctxs[r->job.ctx_id - 1].model];
}

static struct pipe_slot *clock_slot(struct pipe *p, const struct pipe_rec *r)
{
	return &p->ctxs[r->job.ctx_id - 1].slot[r->job.slot];
}

/* Part 0's staging buffer: a slot per job in flight, token ids then the floor. */
int pipe_clock_model(struct pipe *p, struct pipe_model *pm)
{
	uint64_t len = (uint64_t)WAFER_PIPE_MAX_TOKENS * sizeof(uint32_t) + sizeof(uint64_t);
	int ret;

	unsigned int k;

	if (pm->n < 2)
		return 0;
	/* Members that cannot take a floor (an older kernel): no clock. */
	for (k = 0; k < pm->n; k++)
		if (!(p->ch.m[k]->info.caps & WAFER_CAP_NOT_BEFORE))
			return 0;
	pm->in_stride = (len + 63) & ~63ull;
	ret = wafer_bo_create(p->ch.m[0], pm->in_stride * PIPE_MAX_INFLIGHT, &pm->stage_in);
	return ret ? wafer_prefix_error(ret, "device 0 (the staging of inputs)") : 0;
}

void pipe_clock_model_free(struct pipe_model *pm)
{
	if (pm->stage_in)
		wafer_bo_destroy(pm->stage_in);
	pm->stage_in = NULL;
}

int pipe_clock_ctx(struct pipe_ctx *pc, unsigned int slots)
{
	pc->slot = calloc(slots, sizeof(*pc->slot));
	if (!pc->slot)
		return wafer_set_error(-ENOMEM, "out of memory for %u slots", slots);
	pc->slots = slots;
	return 0;
}

void pipe_clock_ctx_free(struct pipe_ctx *pc)
{
	free(pc->slot);
	pc->slot = NULL;
	pc->slots = 0;
}

/* Record @r enters the pipeline (in submission order): its floor. */
void pipe_clock_admit(struct pipe *p, struct pipe_rec *r)
{
	struct pipe_slot *sl = clock_slot(p, r);

	r->floor = sl->pending ? 0 : sl->done_ns;
	if (p->reaped_ns > r->floor)
		r->floor = p->reaped_ns;
	sl->pending++;
	r->clocked = 1;
}

/* Record @r did not enter after all (or left): uncount it. */
void pipe_clock_unadmit(struct pipe *p, struct pipe_rec *r)
{
	if (!r->clocked)
		return;
	clock_slot(p, r)->pending--;
	r->clocked = 0;
}

/* Part @k's job @j of record @r: part 0 staged with its floor; the last asked for done_ns. */
void pipe_clock_part(const struct pipe *p, const struct pipe_model *pm, const struct pipe_rec *r,
		     unsigned int k, struct wafer_job_hw *j)
{
	uint64_t at = (uint64_t)(r - p->rec) * pm->in_stride, ids;
	const char *src;
	char *dst;

	if (!pm->stage_in)
		return;
	if (k + 1 == pm->n)
		j->flags |= WAFER_JOB_HW_DONE_NS;
	if (k)
		return;
	ids = (uint64_t)r->job.n_tokens * sizeof(uint32_t);
	src = (const char *)pipe_bo_on(r->job.in, 0)->map + r->job.in_offset;
	dst = (char *)pm->stage_in->map + at;
	memcpy(dst, src, ids);
	memcpy(dst + ids, &r->floor, sizeof(r->floor));
	j->in = pm->stage_in;
	j->in_offset = at;
	j->flags |= WAFER_JOB_HW_NOT_BEFORE;
}

/* Part @k of record @r completed with @c: part 0's start, the last part's end. */
void pipe_clock_completed(const struct pipe *p, struct pipe_rec *r, unsigned int k,
			  const struct wafer_completion *c)
{
	const struct pipe_model *pm = clock_model(p, r);
	uint64_t t;
	const char *rec;

	if (!pm->stage_in || c->status)
		return;
	if (k + 1 == pm->n)
		r->done_ns = c->done_ns;
	if (k)
		return;
	rec = (const char *)pm->link[0]->map + (uint64_t)(r - p->rec) * pm->stride +
	      (uint64_t)(r->job.n_tokens - 1) * pm->act_size;
	t = wafer_chain_rec_t_ns(rec);
	r->start_ns = t - c->device_ns;
	r->started = t >= c->device_ns;
}

/* The caller reaped record @r: the host's modelled now moves to its completion. */
void pipe_clock_reaped(struct pipe *p, const struct pipe_rec *r, int status)
{
	if (!status && r->done_ns > p->reaped_ns)
		p->reaped_ns = r->done_ns;
}

/* Record @r finished with @status: its slot's clock, its makespan. */
void pipe_clock_retire(struct pipe *p, struct pipe_rec *r, int status)
{
	struct pipe_slot *sl;

	if (!r->clocked)
		return;
	sl = clock_slot(p, r);
	pipe_clock_unadmit(p, r);
	if (status || !r->done_ns)
		return;
	if (r->done_ns > sl->done_ns)
		sl->done_ns = r->done_ns;
	if (r->started && r->done_ns >= r->start_ns)
		r->device_ns = r->done_ns - r->start_ns;
}
