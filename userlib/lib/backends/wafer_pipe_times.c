// SPDX-License-Identifier: MIT
/*
 * The pipeline backend's WAFER_JOB_TIMES: a job's chunk times from every
 * member it passes, in the caller's times area one after another (part
 * 0's first, n_tokens * its member's stages records each), with @stage
 * renumbered to the pipeline's stages (member k's stage s is the stages
 * of members 0..k-1 plus s; wafer_info.stages of a pipeline counts them
 * all).  The last part writes its records straight into the caller's
 * buffer; the others into their link slot after the activation records,
 * copied out when the job finishes.
 *
 * Times are each member's modelled clock as its firmware keeps it.  They
 * form one timeline: a member past the first takes a chunk no earlier
 * than the t_ns its activation records carry (the previous member's
 * finish plus the link), and its stages start from 0 at the model's load,
 * so a chain runs on member 0's clock.
 */
#include <errno.h>
#include <string.h>

#include "wafer_pipe.h"

#define REC	sizeof(struct wafer_chunk_time)

/* Bytes of part @k's records in a job of @n tokens, and where they go. */
static uint64_t part_len(const struct pipe_model *pm, unsigned int k, unsigned int n)
{
	return (uint64_t)n * (pm->stage0[k + 1] - pm->stage0[k]) * REC;
}

static uint64_t part_at(const struct pipe_model *pm, unsigned int k, unsigned int n)
{
	return (uint64_t)n * pm->stage0[k] * REC;
}

static const struct pipe_model *job_model(const struct pipe *p, const struct wafer_job_hw *j)
{
	return &p->models[p->ctxs[j->ctx_id - 1].model];
}

/* Job @i's times area holds every part's records (wafer_times_len()). */
int pipe_times_check(const struct pipe *p, const struct wafer_job_hw *j, unsigned int i)
{
	const struct pipe_model *pm;
	uint64_t need;

	if (!(j->flags & WAFER_JOB_TIMES))
		return 0;
	pm = job_model(p, j);
	need = part_at(pm, pm->n, j->n_tokens);
	if (j->times_len < need)
		return wafer_set_error(-EINVAL, "job %u: times_len %u, the %u devices of its "
				       "model write up to %llu bytes", i, j->times_len, pm->n,
				       (unsigned long long)need);
	return 0;
}

static char *slot_times(const struct pipe *p, const struct pipe_model *pm,
			const struct pipe_rec *r, unsigned int k)
{
	return (char *)pm->link[k]->map + (uint64_t)(r - p->rec) * pm->stride + pm->times_at;
}

/*
 * Part @k of record @r: its records' place, in its link slot (cleared: a
 * slot's earlier job may have left more) or the caller's area.
 */
void pipe_times_part(const struct pipe *p, const struct pipe_model *pm, const struct pipe_rec *r,
		     unsigned int k, struct wafer_job_hw *j)
{
	if (!(j->flags & WAFER_JOB_TIMES))
		return;
	j->times_len = (uint32_t)part_len(pm, k, r->job.n_tokens);
	if (k + 1 < pm->n) {
		j->times_offset = (uint32_t)pm->times_at;
		j->out_len = pm->times_at + j->times_len;
		memset(slot_times(p, pm, r, k), 0, j->times_len);
	} else {
		j->times_offset = r->job.times_offset +
				  (uint32_t)part_at(pm, k, r->job.n_tokens);
	}
}

/*
 * Record @r finished well: every part's records into the caller's area,
 * renumbered (a failed job's are not the caller's to read).
 */
void pipe_times_gather(const struct pipe *p, const struct pipe_model *pm,
		       const struct pipe_rec *r)
{
	const struct wafer_job_hw *j = &r->job;
	char *area;
	unsigned int k, i, recs;

	if (!(j->flags & WAFER_JOB_TIMES))
		return;
	area = (char *)j->out->map + j->out_offset + j->times_offset;
	for (k = 0; k < pm->n; k++) {
		struct wafer_chunk_time *t = (void *)(area + part_at(pm, k, j->n_tokens));

		recs = (unsigned int)(part_len(pm, k, j->n_tokens) / REC);
		if (k + 1 < pm->n)
			memcpy(t, slot_times(p, pm, r, k), recs * REC);
		for (i = 0; i < recs; i++)
			if (t[i].flags & WAFER_CHUNK_VALID)
				t[i].stage += pm->stage0[k];
	}
}
