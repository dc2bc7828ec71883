// SPDX-License-Identifier: MIT
/*
 * The AFD backend's WAFER_JOB_TIMES (see wafer_afd.h): one struct
 * wafer_chunk_time per step of each micro-batch, micro-batch b's step s
 * (the attention part of layer s / 2 when s is even, its FFN part when
 * odd) at record b * 2 L + s of the job's times area:
 *   @stage    the first stage of the member that ran it, counted over the
 *             members in order (member k's: the stages of members
 *             0..k-1), so a trace puts it on that member;
 *   @start_ns   the member's completion of the step minus its modelled
 *             time;
 *   @hop_end_ns   where the activations' link hop to the other group ends:
 *             the t_ns the step's last activation record carries
 *             (WAFER_CHUNK_LINK); the last step's is its completion (its
 *             results go to the host);
 *   @end_ns   where the member was done with it: @hop_end_ns minus the
 *             link the firmware charged for the step's records (its
 *             profile's wfs_timing_link_cycles(), as wfs_stage.c does);
 *             the last step's, its completion.
 * The members share one timeline (each takes a step no earlier than its
 * records arrive), member 0's, so the records of every member line up.
 */
#include <errno.h>
#include <string.h>

#include "wafer_afd.h"
#include "wfs_profile.h"
#include "wfs_timing.h"

#define REC	sizeof(struct wafer_chunk_time)

uint64_t wafer_afd_times_len(const struct wafer_dev *dev, unsigned int n_tokens)
{
	const struct afd *a = afd_of(dev);
	unsigned int i, L = 0;

	/* Steps of a micro-batch: 2 a layer, 4 + 2 ne with expert devices. */
	for (i = 0; i < AFD_MAX_MODELS; i++)
		if (a->models[i].used && a->models[i].spl * a->models[i].L > L)
			L = a->models[i].spl * a->models[i].L;
	return (uint64_t)((n_tokens + a->mb - 1) / a->mb) * L * REC;
}

int wafer_afd_times_check(const struct afd *a, const struct wafer_job_hw *j, unsigned int i)
{
	const struct afd_model *am = &a->models[a->ctxs[j->ctx_id - 1].model];
	uint64_t need = (uint64_t)((j->n_tokens + a->mb - 1) / a->mb) * am->spl * am->L * REC;

	if (!(j->flags & WAFER_JOB_TIMES) || j->times_len >= need)
		return 0;
	return wafer_set_error(-EINVAL, "job %u: times_len %u, its %u micro-batches' %u layer "
			       "parts each write %llu bytes", i, j->times_len,
			       (j->n_tokens + a->mb - 1) / a->mb, am->spl * am->L,
			       (unsigned long long)need);
}

/* Micro-batch @r's step @r->step came back from member @k (@c): its record. */
void wafer_afd_times_step(struct afd *a, const struct afd_rec *r, unsigned int k,
			  const struct wafer_completion *c)
{
	const struct afd_model *am = &a->models[a->ctxs[r->job.ctx_id - 1].model];
	unsigned int stage0, last = r->step + 1 == am->spl * am->L;
	struct wafer_chunk_time *t;
	const uint8_t *rec;
	uint64_t t_ns, link = 0;
	struct wfs_profile prof;
	struct afd_step st;

	if (!(r->job.flags & WAFER_JOB_TIMES) || c->status)
		return;
	stage0 = wafer_chain_stage0(&a->ch, k);
	t = (struct wafer_chunk_time *)((uint8_t *)r->job.out->map + r->job.out_offset +
					r->job.times_offset) + (uint64_t)r->no * am->spl * am->L +
	    r->step;
	*t = (struct wafer_chunk_time){
		.stage = stage0, .pos0 = r->job.start_pos, .n_tokens = r->job.n_tokens,
		.flags = WAFER_CHUNK_VALID | (last ? 0 : WAFER_CHUNK_LINK),
		.start_ns = c->done_ns > c->device_ns ? c->done_ns - c->device_ns : 0,
		.end_ns = c->done_ns, .hop_end_ns = c->done_ns,
	};
	if (last)
		return;
	/* Step s wrote half (s + 1) % 2 of its slot; its last record's t_ns. */
	rec = (const uint8_t *)am->buf->map +
	      ((uint64_t)(r - a->rec) * am->nhalf + (r->step + 1) % 2) * am->half +
	      (uint64_t)(r->job.n_tokens - 1) * am->act_size;
	if (a->ne) {
		/* Expert parallelism: the step's own buffer (its link: the payload's). */
		wafer_afd_ep_step(a, r, &st);
		rec = afd_half(a, r, st.out) + (uint64_t)(r->job.n_tokens - 1) * st.out_rec;
	}
	t_ns = wafer_chain_rec_t_ns(rec);
	if (t_ns < t->start_ns)
		return;
	t->hop_end_ns = t_ns;
	t->end_ns = t_ns;
	if (a->ne)
		return;
	if (!wfs_profile_find(a->ch.m[k]->info.profile_name, &prof))
		link = wfs_timing_ns(&prof, wfs_timing_link_cycles(&prof, (uint64_t)r->job.n_tokens *
								   am->act_size));
	t->end_ns = t_ns - link > t->start_ns ? t_ns - link : t->start_ns;
}
