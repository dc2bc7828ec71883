// SPDX-License-Identifier: MIT
/* wt_rate.c - a modelled decode rate and the plan's for it (wt_rate.h) */
#include <stdint.h>
#include <string.h>

#include "wt_rate.h"

/* Sequence @i's job at position @pos (its token ids at i * @per). */
static struct wafer_job seq_job(struct wafer_ctx *ctx, struct wafer_bo *in, struct wafer_bo *out,
				unsigned int i, unsigned int pos, unsigned int per)
{
	return (struct wafer_job){
		.ctx = ctx, .slot = i, .start_pos = pos, .n_tokens = 1, .top_k = 1, .in = in,
		.in_offset = (uint64_t)(i * per + pos) * 4, .out = out,
		.out_offset = (uint64_t)i * WAFER_RESULT_SIZE(1), .user_data = i,
	};
}

/*
 * wafer bench's micro-batches, one sequence each: a job's floor is its own
 * previous token.
 *
 * One completion a reap: a device takes the latest completion the caller
 * reaped as the host's modelled now, so a reap that finds several (a
 * loaded host) would floor the others' next tokens at it and the rate
 * would follow the host's load.  The window is the reaped completions'
 * done_ns, not wafer_dev_stats()'s makespan: that counts jobs that
 * finished but were not reaped yet (the devices run ahead of the reaps),
 * which shortens the window by up to a step.
 */
int wt_decode_rate(struct wafer_dev *dev, struct wafer_model *m, unsigned int b,
		   unsigned int warm, unsigned int steps, double *rate)
{
	unsigned int pos[WT_RATE_MAX_SEQ] = { 0 }, per = warm + steps, total = b * per;
	unsigned int done = 0, from = 0, i;
	struct wafer_bo *in = NULL, *out = NULL;
	struct wafer_job jobs[WT_RATE_MAX_SEQ];
	struct wafer_ctx *ctx = NULL;
	struct wafer_completion c;
	uint64_t t0 = 0, t1 = 0;
	uint32_t *ids;
	int ret;

	if (!b || b > WT_RATE_MAX_SEQ || !warm || !steps)
		return -1;
	ret = wafer_ctx_create(m, b, per, &ctx) ||
	      wafer_bo_create(dev, (size_t)total * 4, &in) ||
	      wafer_bo_create(dev, (size_t)b * WAFER_RESULT_SIZE(1), &out);
	if (!ret) {
		ids = wafer_bo_map(in);
		for (i = 0; i < total; i++)
			ids[i] = 3 + i * 37 % 500;
		for (i = 0; i < b; i++)
			jobs[i] = seq_job(ctx, in, out, i, 0, per);
		ret = wafer_submit(dev, jobs, b) != (int)b;
	}
	while (!ret && done < total) {
		unsigned int u;

		if (wafer_reap(dev, &c, 1, 1, -1) != 1)
			break;
		ret |= c.status;
		done++;
		if (c.done_ns > t1)
			t1 = c.done_ns;
		if (done == b * warm) {
			from = done;
			t0 = t1;
		}
		u = (unsigned int)c.user_data;
		if (++pos[u] < per) {
			jobs[0] = seq_job(ctx, in, out, u, pos[u], per);
			if (wafer_submit(dev, jobs, 1) != 1)
				ret = -1;
		}
	}
	ret = ret || done < total || !from || t1 <= t0;
	if (!ret)
		*rate = (double)(total - from) * 1e9 / (double)(t1 - t0);
	wafer_bo_destroy(in);
	wafer_bo_destroy(out);
	wafer_ctx_destroy(ctx);
	return ret ? -1 : 0;
}

int wt_plan_rate(const void *blob, size_t len, unsigned int devices, unsigned int b,
		 unsigned int warm, unsigned int steps, struct wafer_plan *p)
{
	struct wafer_plan_opts o = { .profile = "wafer", .devices = devices, .batch = b,
				     .context = warm + steps / 2 + 1 };
	struct wafer_plan_shape s;

	memset(p, 0, sizeof(*p));
	if (wafer_plan_shape_from_blob(blob, len, "sol-synthetic", &s) || wafer_plan(&s, &o, p))
		return -1;
	return p->devices == devices ? 0 : -1;
}
