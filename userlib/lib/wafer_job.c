// SPDX-License-Identifier: MIT
/* libwafer: job submission and completion reaping (backend independent). */
#include <errno.h>
#include <stdlib.h>

#include "wafer_backend.h"

#define REAP_MARGIN_MS	2000

static int check_range(const struct wafer_bo *bo, uint64_t off, uint64_t len)
{
	return bo && off <= bo->size && len <= bo->size - off;
}

/* WAFER_JOB_TIMES: the timeline past the results; *@out_len then ends it. */
static int check_times(const struct wafer_job *j, unsigned int i, uint64_t *out_len)
{
	if (!(j->flags & WAFER_JOB_TIMES)) {
		if (j->times_offset || j->times_len)
			return wafer_set_error(-EINVAL, "job %u: times_offset %u / times_len %u "
					       "without WAFER_JOB_TIMES", i, j->times_offset,
					       j->times_len);
		return 0;
	}
	if (!j->times_len || (j->times_offset & 7) || j->times_offset < *out_len ||
	    (uint64_t)j->times_offset + j->times_len > UINT32_MAX)
		return wafer_set_error(-EINVAL, "job %u: times at %u (+%u): empty, not 8-byte "
				       "aligned, inside the %llu bytes of results or past 4 GiB",
				       i, j->times_offset, j->times_len,
				       (unsigned long long)*out_len);
	*out_len = (uint64_t)j->times_offset + j->times_len;
	return 0;
}

uint64_t wafer_times_len(const struct wafer_dev *dev, unsigned int n_tokens)
{
	if (!dev)
		return 0;
	if (dev->ops->times_len)
		return dev->ops->times_len(dev, n_tokens);
	return (uint64_t)n_tokens * dev->info.stages * sizeof(struct wafer_chunk_time);
}

/* A NOP names a context and a slot of it, nothing else. */
static int prepare_nop(const struct wafer_job *j, unsigned int i, struct wafer_job_hw *hw)
{
	if (j->flags != WAFER_JOB_NOP)
		return wafer_set_error(-EINVAL, "job %u: NOP with other flags 0x%x", i, j->flags);
	if (j->n_tokens || j->start_pos || j->top_k)
		return wafer_set_error(-EINVAL, "job %u: NOP with n_tokens %u, start_pos %u or "
				       "top_k %u (must be 0)", i, j->n_tokens, j->start_pos,
				       j->top_k);
	if (j->in || j->out || j->in_offset || j->out_offset)
		return wafer_set_error(-EINVAL, "job %u: NOP with a buffer or offset", i);
	*hw = (struct wafer_job_hw){
		.ctx_id = j->ctx->id, .slot = j->slot, .flags = WAFER_JOB_NOP,
		.user_data = j->user_data,
	};
	return 0;
}

/* Validates @j (job @i of a batch on @dev) and converts it. */
static int prepare(struct wafer_dev *dev, const struct wafer_job *j, unsigned int i,
		   struct wafer_job_hw *hw)
{
	const struct wafer_ctx *c = j->ctx;
	uint64_t records, out_len;

	if (!c || c->model->dev != dev)
		return wafer_set_error(-EINVAL, "job %u: no context, or one of another device", i);
	if (j->flags & WAFER_JOB_NOP) {
		if (j->slot >= c->slots)
			return wafer_set_error(-EINVAL, "job %u: slot %u, the context has %u", i,
					       j->slot, c->slots);
		return prepare_nop(j, i, hw);
	}
	if (!j->in || !j->out || j->in->dev != dev || j->out->dev != dev)
		return wafer_set_error(-EINVAL, "job %u: buffers missing or of another device", i);
	if (j->slot >= c->slots)
		return wafer_set_error(-EINVAL, "job %u: slot %u, the context has %u", i,
				       j->slot, c->slots);
	if (!j->n_tokens || j->start_pos > c->ctx_len || j->n_tokens > c->ctx_len - j->start_pos)
		return wafer_set_error(-EINVAL, "job %u: positions %u..+%u outside the context "
				       "length %u", i, j->start_pos, j->n_tokens, c->ctx_len);
	if (dev->info.max_tokens_per_job && j->n_tokens > dev->info.max_tokens_per_job)
		return wafer_set_error(-EINVAL, "job %u: %u tokens, the device takes %u per job",
				       i, j->n_tokens, dev->info.max_tokens_per_job);
	if (j->flags & ~(WAFER_JOB_ALL_POSITIONS | WAFER_JOB_NOP | WAFER_JOB_TIMES))
		return wafer_set_error(-EINVAL, "job %u: unknown flags 0x%x", i, j->flags);
	if (j->top_k > WAFER_MAX_TOPK)
		return wafer_set_error(-EINVAL, "job %u: top_k %u above %d", i, j->top_k,
				       WAFER_MAX_TOPK);
	if ((j->in_offset & 3) || (j->out_offset & 7))
		return wafer_set_error(-EINVAL, "job %u: misaligned offsets (in 4, out 8 bytes)", i);
	records = (j->flags & WAFER_JOB_ALL_POSITIONS) ? j->n_tokens : 1;
	out_len = records * WAFER_RESULT_SIZE(j->top_k);
	if (check_times(j, i, &out_len))
		return -EINVAL;
	if (!check_range(j->in, j->in_offset, (uint64_t)j->n_tokens * 4) ||
	    !check_range(j->out, j->out_offset, out_len))
		return wafer_set_error(-EINVAL, "job %u: input or output beyond its buffer", i);
	*hw = (struct wafer_job_hw){
		.ctx_id = c->id, .slot = j->slot, .start_pos = j->start_pos,
		.n_tokens = j->n_tokens, .flags = j->flags, .top_k = j->top_k,
		.in = j->in, .in_offset = j->in_offset, .out = j->out,
		.out_offset = j->out_offset, .out_len = out_len, .user_data = j->user_data,
		.times_offset = j->times_offset, .times_len = j->times_len,
	};
	return 0;
}

int wafer_submit(struct wafer_dev *dev, const struct wafer_job *jobs, unsigned int n)
{
	struct wafer_job_hw *hw;
	unsigned int i;
	int ret = 0;

	if (!dev || (n && !jobs))
		return wafer_set_error(-EINVAL, "wafer_submit: NULL argument");
	if (!n)
		return 0;
	hw = malloc(n * sizeof(*hw));
	if (!hw)
		return wafer_set_error(-ENOMEM, "out of memory");
	for (i = 0; i < n && !ret; i++)
		ret = prepare(dev, &jobs[i], i, &hw[i]);
	if (!ret) {
		if (dev->info.max_inflight_jobs && dev->inflight + n > dev->info.max_inflight_jobs)
			n = dev->info.max_inflight_jobs > dev->inflight ?
			    dev->info.max_inflight_jobs - dev->inflight : 0;
		ret = n ? dev->ops->submit(dev, hw, n) :
			  wafer_set_error(-EAGAIN, "%u jobs in flight already: reap first",
					  dev->inflight);
		if (ret > 0)
			dev->inflight += (unsigned int)ret;
	}
	free(hw);
	return ret;
}

int wafer_reap(struct wafer_dev *dev, struct wafer_completion *out, unsigned int max,
	       unsigned int min, int timeout_ms)
{
	uint64_t deadline;
	int ret;

	if (!dev || (max && !out))
		return wafer_set_error(-EINVAL, "wafer_reap: NULL argument");
	if (min > max)
		min = max;
	if (min > dev->inflight)
		min = dev->inflight;
	if (!max || !dev->inflight)
		return 0;
	if (timeout_ms < 0)
		timeout_ms = (int)(dev->info.job_timeout_ms ? dev->info.job_timeout_ms : 5000) +
			     REAP_MARGIN_MS;
	deadline = wafer_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	ret = dev->ops->reap(dev, out, max, min, deadline);
	if (ret > 0)
		dev->inflight -= (unsigned int)ret;
	return ret;
}

unsigned int wafer_inflight(const struct wafer_dev *dev)
{
	return dev->inflight;
}

const struct wafer_token_result *wafer_result(const struct wafer_bo *out, uint64_t out_offset,
					      unsigned int top_k, unsigned int i)
{
	uint64_t off = out_offset + (uint64_t)i * WAFER_RESULT_SIZE(top_k);

	if (!out || top_k > WAFER_MAX_TOPK || !check_range(out, off, WAFER_RESULT_SIZE(top_k)))
		return NULL;
	return (const void *)((const char *)out->map + off);
}
