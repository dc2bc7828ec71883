// SPDX-License-Identifier: MIT
/*
 * What the backends built of other devices share (see wafer_members.h).
 */
#include <errno.h>
#include <string.h>

#include "wafer_members.h"

void wafer_members_info(struct wafer_info *i, struct wafer_dev *const *m, unsigned int n)
{
	unsigned int k;

	*i = m[0]->info;
	i->numa_node = -1;
	for (k = 1; k < n; k++) {
		const struct wafer_info *o = &m[k]->info;

		i->caps &= o->caps;
		if (strcmp(i->profile_name, o->profile_name))
			strcpy(i->profile_name, "mixed");
		i->stages += o->stages;
		i->sram_bytes_free += o->sram_bytes_free;
		i->max_bo_size = MIN_NZ(i->max_bo_size, o->max_bo_size);
		i->max_models = MIN_NZ(i->max_models, o->max_models);
		i->max_contexts = MIN_NZ(i->max_contexts, o->max_contexts);
		i->max_tokens_per_job = MIN_NZ(i->max_tokens_per_job, o->max_tokens_per_job);
		i->max_inflight_jobs = MIN_NZ(i->max_inflight_jobs, o->max_inflight_jobs);
		i->job_timeout_ms += o->job_timeout_ms;
	}
}

void wafer_members_bo_destroy(struct wafer_bo **on, unsigned int n)
{
	while (n--) {
		wafer_bo_destroy(on[n]);	/* the views before the buffer */
		on[n] = NULL;
	}
}

int wafer_members_bo_create(struct wafer_dev *const *m, unsigned int n, struct wafer_bo *bo,
			    struct wafer_bo **on)
{
	unsigned int k;
	int ret = wafer_bo_create(m[0], bo->size, &on[0]);

	for (k = 1; k < n && !ret; k++)
		ret = wafer_bo_import(m[k], on[0], &on[k]);
	if (ret) {
		wafer_members_bo_destroy(on, n);
		return ret;
	}
	bo->map = on[0]->map;
	bo->size = on[0]->size;
	return 0;
}

int wafer_members_stats(struct wafer_dev *const *m, unsigned int n, struct wafer_dev_stats *st)
{
	struct wafer_dev_stats s;
	unsigned int k;
	int ret;

	for (k = 0; k < n; k++) {
		ret = wafer_dev_stats(m[k], &s);
		if (ret)
			return ret;
		if (s.jobs_completed) {
			st->jobs_completed = s.jobs_completed;
			st->tokens = s.tokens;
			st->modelled_makespan_ns = s.modelled_makespan_ns;
		}
		st->modelled_busy_ns += s.modelled_busy_ns;
		if (s.bottleneck_busy_ns > st->bottleneck_busy_ns)
			st->bottleneck_busy_ns = s.bottleneck_busy_ns;
		if (s.moe_imbalance_milli > st->moe_imbalance_milli)
			st->moe_imbalance_milli = s.moe_imbalance_milli;
	}
	return 0;
}
