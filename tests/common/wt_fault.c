// SPDX-License-Identifier: MIT
/* wt_fault.c - see wt_fault.h */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "wfw_abi.h"
#include "wt_fault.h"
#include "wt_util.h"

struct wt_flaky wt_fl;

const char *wt_fault_model(void)
{
	static char path[4096];
	const char *p = wt_model_path("stories260K.bin");

	if (!p)
		return NULL;
	snprintf(path, sizeof(path), "%s", p);	/* wt_model_path()'s buffer is reused */
	return path;
}

void wt_rig_members(struct wafer_open_opts *o, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		o[i] = (struct wafer_open_opts){ .backend = WAFER_BACKEND_INPROC,
						 .profile = "asic", .stages = 2 };
}

int wt_rig_load(struct wt_rig *r, const char *model, const struct wafer_convert_opts *conv)
{
	int ret = wafer_model_load_file(r->dev, model, conv, &r->m);

	ret = ret ? ret : wafer_ctx_create(r->m, WT_FAULT_NJOBS, WT_FAULT_CTX, &r->ctx);
	ret = ret ? ret : wafer_bo_create(r->dev, 4096, &r->in);
	ret = ret ? ret : wafer_bo_create(r->dev, (size_t)WT_FAULT_NREC * WT_FAULT_REC, &r->res);
	if (ret)
		wt_diag("rig: %s", wafer_last_error());
	return ret;
}

void wt_rig_close(struct wt_rig *r)
{
	wafer_bo_destroy(r->in);
	wafer_bo_destroy(r->res);
	wafer_ctx_destroy(r->ctx);
	wafer_model_unload(r->m);
	wafer_close(r->dev);
	memset(r, 0, sizeof(*r));
}

int wt_fault_submit(struct wt_rig *r, uint64_t ud0)
{
	uint32_t *ids = wafer_bo_map(r->in);
	struct wafer_job j[WT_FAULT_NJOBS];
	unsigned int i;

	for (i = 0; i < WT_FAULT_NREC; i++)
		ids[i] = i ? 3 + (i * 41) % 500 : 1;
	j[0] = (struct wafer_job){ .ctx = r->ctx, .n_tokens = WT_FAULT_PREFILL,
				   .top_k = WT_FAULT_TOPK, .in = r->in, .out = r->res,
				   .flags = WAFER_JOB_ALL_POSITIONS, .user_data = ud0 };
	for (i = 1; i < WT_FAULT_NJOBS; i++)
		j[i] = (struct wafer_job){
			.ctx = r->ctx, .slot = i, .n_tokens = 1, .top_k = WT_FAULT_TOPK,
			.in = r->in, .in_offset = 4ull * (WT_FAULT_PREFILL + i), .out = r->res,
			.out_offset = (uint64_t)(WT_FAULT_PREFILL + i) * WT_FAULT_REC,
			.user_data = ud0 + i };
	return wafer_submit(r->dev, j, WT_FAULT_NJOBS);
}

struct wt_tally wt_fault_reap(struct wt_rig *r, uint64_t ud0)
{
	struct wafer_completion c[WT_FAULT_NJOBS];
	struct wt_tally t = { 0 };
	unsigned int seen = 0, i, b;
	int n;

	while (t.n < WT_FAULT_NJOBS) {
		n = wafer_reap(r->dev, c, WT_FAULT_NJOBS, 1, WT_FAULT_REAP_MS);
		if (n <= 0) {
			wt_diag("reap: %d (%s)", n, n < 0 ? wafer_last_error() : "none");
			break;
		}
		for (i = 0; i < (unsigned int)n; i++) {
			b = (unsigned int)(c[i].user_data - ud0);
			if (b >= WT_FAULT_NJOBS || (seen & 1u << b)) {
				t.twice++;
				continue;
			}
			seen |= 1u << b;
			t.st[b] = c[i].status;
		}
		t.n += (unsigned int)n;
	}
	return t;
}

int wt_fault_all_were(const struct wt_tally *t, int want, int or_ok)
{
	unsigned int i;

	if (t->n != WT_FAULT_NJOBS || t->twice)
		return 0;
	for (i = 0; i < WT_FAULT_NJOBS; i++)
		if (t->st[i] != want && (!or_ok || t->st[i]))
			return 0;
	return 1;
}

int wt_fault_batch_was(struct wt_rig *r, uint64_t ud0, int want, int or_ok)
{
	struct wt_tally t;

	if (wt_fault_submit(r, ud0) != WT_FAULT_NJOBS)
		return 0;
	t = wt_fault_reap(r, ud0);
	return wt_fault_all_were(&t, want, or_ok) && !wafer_inflight(r->dev);
}

int wt_fault_foreign(struct wt_rig *r, unsigned int k, int *ret)
{
	struct wafer_completion c[WT_FAULT_NJOBS];
	struct wt_tally t;
	int ok;

	wt_flaky_wrap(r->dev, k, (struct wt_flaky){ .reap_err = -EEXIST });
	ok = wt_fault_submit(r, 100) == WT_FAULT_NJOBS;
	*ret = wafer_reap(r->dev, c, WT_FAULT_NJOBS, WT_FAULT_NJOBS, WT_FAULT_REAP_MS);
	wt_fl.reap_err = 0;
	t = wt_fault_reap(r, 100);
	wt_flaky_unwrap();
	return ok && wt_fault_all_were(&t, 0, 0) && !wafer_inflight(r->dev);
}

int wt_fault_close_unreaped(struct wt_rig *r, int victim)
{
	int ok = victim < 0 ||
		 !wafer_inproc_fault(wafer_pipe_member(r->dev, (unsigned int)victim),
				     WFW_FAULT_CORRUPT_NEXT_CPL);

	ok = ok && wt_fault_submit(r, 100) == WT_FAULT_NJOBS;
	ok = ok && wafer_inflight(r->dev) == WT_FAULT_NJOBS;
	wt_rig_close(r);
	return ok;
}

const char *wt_mode_name(int polled)
{
	return polled ? "polled" : "hooked";
}

static int flaky_reap(struct wafer_dev *dev, struct wafer_completion *out, unsigned int max,
		      unsigned int min, uint64_t deadline_ns)
{
	static const int soft[] = { -EAGAIN, -EINTR, -ETIME, -ETIMEDOUT };

	wt_fl.reaps++;
	if (wt_fl.reap_err) {
		wt_fl.reaps_dead += wt_fl.reaps > 1;
		return wt_fl.reap_err;
	}
	if (wt_fl.transient && wt_fl.reaps % 2)
		return soft[wt_fl.reaps / 2 % 4];
	return wt_fl.real->reap(dev, out, max, min, deadline_ns);
}

static int flaky_submit(struct wafer_dev *dev, const struct wafer_job_hw *jobs, unsigned int n)
{
	if (++wt_fl.submits == wt_fl.submit_fail)
		return wafer_set_error(-EIO, "test: submit %u refused", wt_fl.submits);
	return wt_fl.real->submit(dev, jobs, n);
}

void wt_flaky_wrap(struct wafer_dev *dev, unsigned int k, struct wt_flaky f)
{
	wt_fl = f;
	wt_fl.dev = wafer_pipe_member(dev, k);
	wt_fl.real = wt_fl.dev->ops;
	wt_fl.ops = *wt_fl.real;
	wt_fl.ops.reap = flaky_reap;
	wt_fl.ops.submit = flaky_submit;
	wt_fl.dev->ops = &wt_fl.ops;
}

void wt_flaky_unwrap(void)
{
	wt_fl.dev->ops = wt_fl.real;
}
