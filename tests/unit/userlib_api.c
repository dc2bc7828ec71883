// SPDX-License-Identifier: MIT
/*
 * libwafer's device API on the inproc backend: query, buffers, model load,
 * contexts, batched submit/reap with several slots in flight and a prefill
 * returning every position, all bit for bit equal to firmware-sim run
 * in-process by tests/common/wt_model.h; and the errors (negative errno
 * plus a message) for bad jobs, bad options and a model that does not fit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wafer.h"
#include "wfs_pack.h"
#include "wt_model.h"
#include "wt_util.h"

#define N	40
#define SLOTS	4
#define TOPK	8

static uint32_t ref_arg[N];
static struct wfs_topk_entry ref_topk[N][TOPK];
static uint32_t toks[N + 1];

static int same(const struct wafer_token_result *r, unsigned int pos)
{
	int k;

	if (!r || r->position != pos || r->argmax != ref_arg[pos] || r->top_k != TOPK)
		return 0;
	for (k = 0; k < TOPK; k++)
		if (r->topk[k].token != ref_topk[pos][k].token ||
		    r->topk[k].logit != ref_topk[pos][k].logit)
			return 0;
	return 1;
}

static int reference(const void *blob, size_t len)
{
	struct wt_model m;
	unsigned int pos;

	if (wt_model_open(&m, blob, len, 256, 0))
		return -1;
	toks[0] = 1;
	for (pos = 0; pos < N; pos++) {
		ref_arg[pos] = wt_model_step(&m, toks[pos], pos, TOPK, ref_topk[pos]);
		toks[pos + 1] = ref_arg[pos];
	}
	wt_model_close(&m);
	return 0;
}

static void batched(struct wafer_dev *dev, struct wafer_ctx *ctx, struct wafer_bo *in,
		    struct wafer_bo *out)
{
	struct wafer_job jobs[SLOTS * N];
	struct wafer_completion cpl[SLOTS * N];
	unsigned int s, pos, n = 0, got = 0, bad = 0;
	int ret, i;

	for (pos = 0; pos < N; pos++)
		for (s = 0; s < SLOTS; s++, n++)
			jobs[n] = (struct wafer_job){
				.ctx = ctx, .slot = s, .start_pos = pos, .n_tokens = 1,
				.top_k = TOPK, .in = in, .in_offset = pos * 4, .out = out,
				.out_offset = (uint64_t)n * WAFER_RESULT_SIZE(TOPK),
				.user_data = 1000 + n,
			};
	for (n = 0; n < SLOTS * N; n += (unsigned int)ret) {
		ret = wafer_submit(dev, jobs + n, SLOTS * N - n);
		if (ret == -EAGAIN) {
			ret = wafer_reap(dev, cpl + got, SLOTS * N - got, 1, -1);
			if (ret < 0)
				break;
			got += (unsigned int)ret;
			ret = 0;
		} else if (ret < 0) {
			break;
		}
	}
	while (ret >= 0 && got < SLOTS * N) {
		ret = wafer_reap(dev, cpl + got, SLOTS * N - got, SLOTS * N - got, -1);
		if (ret <= 0)
			break;
		got += (unsigned int)ret;
	}
	for (i = 0; i < (int)got; i++) {
		unsigned int j = (unsigned int)(cpl[i].user_data - 1000);

		if (cpl[i].status || j >= SLOTS * N ||
		    !same(wafer_result(out, jobs[j].out_offset, TOPK, 0), j / SLOTS))
			bad++;
	}
	wt_ok(got == SLOTS * N && !bad && wafer_inflight(dev) == 0,
	      "%d slots x %d decode jobs submitted in batches: %u completions, %u wrong (%s)",
	      SLOTS, N, got, bad, ret < 0 ? wafer_last_error() : "ok");
}

/*
 * NOP jobs complete with status 0 and no device time (the decode after
 * them, batched(), still matches firmware-sim); fields of work are -EINVAL.
 */
static void nops(struct wafer_dev *dev, struct wafer_ctx *ctx, struct wafer_bo *in)
{
	struct wafer_job j[SLOTS];
	struct wafer_completion c[SLOTS];
	unsigned int i;
	int ret, got = 0, ok = 1;

	for (i = 0; i < SLOTS; i++)
		j[i] = (struct wafer_job){ .ctx = ctx, .slot = i, .flags = WAFER_JOB_NOP,
					   .user_data = 100 + i };
	ret = wafer_submit(dev, j, SLOTS);
	while (ret == SLOTS && got < SLOTS) {
		int r = wafer_reap(dev, c + got, SLOTS - got, 1, -1);

		if (r <= 0)
			break;
		got += r;
	}
	for (i = 0; i < (unsigned int)got; i++)
		ok &= c[i].status == 0 && c[i].device_ns == 0 && c[i].user_data >= 100;
	wt_ok(ret == SLOTS && got == SLOTS && ok,
	      "%d NOP jobs complete with status 0 and no device time", SLOTS);
#define NOP_BAD(field, v, what) do { struct wafer_job b = j[0]; b.field = (v); \
		ret = wafer_submit(dev, &b, 1); \
		wt_ok(ret == -EINVAL, "NOP with %s is -EINVAL: %s", what, wafer_last_error()); \
	} while (0)
	NOP_BAD(n_tokens, 1, "n_tokens");
	NOP_BAD(start_pos, 1, "start_pos");
	NOP_BAD(top_k, 1, "top_k");
	NOP_BAD(in, in, "an input buffer");
	NOP_BAD(out_offset, 8, "an output offset");
	NOP_BAD(flags, WAFER_JOB_NOP | WAFER_JOB_ALL_POSITIONS, "ALL_POSITIONS");
	NOP_BAD(slot, SLOTS, "a slot outside the context");
#undef NOP_BAD
}

static void errors(struct wafer_dev *dev, struct wafer_model *m, struct wafer_ctx *ctx,
		   struct wafer_bo *in, struct wafer_bo *out)
{
	struct wafer_job j = { .ctx = ctx, .slot = SLOTS, .n_tokens = 1, .in = in, .out = out };
	struct wafer_ctx *c2 = NULL;
	int ret;

	ret = wafer_submit(dev, &j, 1);
	wt_ok(ret == -EINVAL && strstr(wafer_last_error(), "slot"),
	      "a slot outside the context is -EINVAL: %s", wafer_last_error());
	j.slot = 0;
	j.start_pos = 255;
	j.n_tokens = 2;
	ret = wafer_submit(dev, &j, 1);
	wt_ok(ret == -EINVAL, "positions beyond the context length: %s", wafer_last_error());
	j.start_pos = 0;
	j.n_tokens = 1;
	j.out_offset = wafer_bo_size(out) - 8;
	ret = wafer_submit(dev, &j, 1);
	wt_ok(ret == -EINVAL, "results beyond the buffer: %s", wafer_last_error());
	j.out_offset = 0;
	j.top_k = WAFER_MAX_TOPK + 1;
	ret = wafer_submit(dev, &j, 1);
	wt_ok(ret == -EINVAL, "top_k above the maximum: %s", wafer_last_error());
	ret = wafer_ctx_create(m, 1, 100000, &c2);
	wt_ok(ret == -EINVAL && !c2, "a context longer than the model: %s", wafer_last_error());
	wt_ok(wafer_reap(dev, NULL, 0, 0, 0) == 0, "reaping with nothing in flight returns 0");
}

static void small_device(const void *blob, size_t len)
{
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_INPROC, .stages = 2,
				     .sram_bytes = 64 << 10 };
	struct wafer_model *m = NULL;
	struct wafer_dev *dev;
	int ret = wafer_open(&o, &dev);

	if (!wt_ok(ret == 0, "inproc device with 2 stages x 64 KiB"))
		return;
	ret = wafer_model_load(dev, blob, len, &m);
	wt_ok(ret == -ENOSPC && !m && strstr(wafer_last_error(), "needs"),
	      "a model that does not fit is -ENOSPC: %s", wafer_last_error());
	wafer_close(dev);
}

/*
 * wse3's 44 GB are refused as a simulated device (host memory); with its
 * SRAM per stage given smaller it runs, named wse3.
 */
static void wse3_device(const void *blob, size_t len)
{
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_INPROC, .profile = "wse3" };
	struct wafer_model *m = NULL;
	struct wafer_info info;
	struct wafer_dev *dev;
	int ret = wafer_open(&o, &dev);

	wt_ok(ret == -E2BIG && strstr(wafer_last_error(), "1 GiB"),
	      "wse3 at full size is -E2BIG: %s", wafer_last_error());
	o.sram_bytes = 1 << 20;
	ret = wafer_open(&o, &dev);
	if (!wt_ok(ret == 0, "wse3 with 1 MiB per stage opens"))
		return;
	ret = wafer_query(dev, &info);
	wt_ok(!ret && !strcmp(info.profile_name, "wse3") && info.stages == 44 &&
	      info.clock_hz == 1100000000ull, "query: profile %s, %u stages", info.profile_name,
	      info.stages);
	ret = wafer_model_load(dev, blob, len, &m);
	wt_ok(ret == 0, "the model loads on it");
	if (m)
		wafer_model_unload(m);
	wafer_close(dev);
}

/* WAFER_STAGE_WORKERS: auto, 0 and N open; anything else is -EINVAL, named. */
static void stage_workers_env(void)
{
	static const char *const good[] = { "auto", "0", "1", "1024" };
	static const char *const bad[] = { "-1", "1025", "two", "1x" };
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_INPROC };
	struct wafer_dev *dev;
	unsigned int i, ok = 0;

	for (i = 0; i < 4; i++) {
		setenv("WAFER_STAGE_WORKERS", good[i], 1);
		if (!wafer_open(&o, &dev)) {
			ok++;
			wafer_close(dev);
		}
	}
	wt_ok(ok == 4, "WAFER_STAGE_WORKERS=auto, 0, 1, 1024: the device opens (%u of 4)", ok);
	for (i = 0, ok = 0; i < 4; i++) {
		setenv("WAFER_STAGE_WORKERS", bad[i], 1);
		ok += wafer_open(&o, &dev) == -EINVAL &&
		      strstr(wafer_last_error(), "WAFER_STAGE_WORKERS");
	}
	unsetenv("WAFER_STAGE_WORKERS");
	wt_ok(ok == 4, "WAFER_STAGE_WORKERS=-1, 1025, two, 1x: -EINVAL naming it (%u of 4)", ok);
}

/* The in-process backend names itself and reports a wafer profile device. */
static void test_query(struct wafer_dev *dev)
{
	struct wafer_info info;
	int ret;

	wt_ok(!strcmp(wafer_backend_name(dev), "inproc") && !strcmp(wafer_submit_name(dev), "inproc"),
	      "backend and submit path are named inproc");
	ret = wafer_query(dev, &info);
	wt_ok(!ret && info.stages > 0 && info.sram_bytes_per_stage > 0 && info.fw_major == 1 &&
	      !strcmp(info.profile_name, "wafer") && (info.caps & WAFER_CAP_ALL_POSITIONS) &&
	      info.max_inflight_jobs > 0 && info.numa_node == -1,
	      "query: %u stages x %llu KiB, profile %s, firmware %u.%u", info.stages,
	      (unsigned long long)info.sram_bytes_per_stage >> 10, info.profile_name,
	      info.fw_major, info.fw_minor);
}

/* A prefill returning every position equals firmware-sim bit for bit. */
static void test_prefill_all_positions(struct wafer_dev *dev, struct wafer_ctx *ctx,
				       struct wafer_bo *in, struct wafer_bo *out)
{
	struct wafer_job j = { .ctx = ctx, .slot = 0, .n_tokens = N,
			       .flags = WAFER_JOB_ALL_POSITIONS, .top_k = TOPK,
			       .in = in, .out = out, .user_data = 7 };
	struct wafer_completion c;
	unsigned int pos;
	int ret, ok;

	ret = wafer_submit(dev, &j, 1);
	if (ret == 1)
		ret = wafer_reap(dev, &c, 1, 1, -1);
	ok = ret == 1 && c.user_data == 7 && c.status == 0 && c.device_ns > 0;
	for (pos = 0; pos < N && ok; pos++)
		ok = same(wafer_result(out, 0, TOPK, pos), pos);
	wt_ok(ok, "prefill of %d positions in one job matches firmware-sim bit for bit "
	      "(modelled %.1f us)", N, c.device_ns / 1e3);
}

/*
 * A device, the model, a context and buffers: the prefill, NOP jobs,
 * batched decode and bad jobs on them.  Returns -1 if the setup failed.
 */
static int test_device(const void *blob, size_t len)
{
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_INPROC };
	struct wafer_bo *in, *out;
	struct wafer_model *m;
	struct wafer_ctx *ctx;
	struct wafer_dev *dev;
	int ret;

	ret = wafer_open(&o, &dev);
	if (!wt_ok(ret == 0, "open the inproc backend"))
		return -1;
	test_query(dev);
	ret = wafer_model_load(dev, blob, len, &m);
	if (!wt_ok(ret == 0, "load the model"))
		return -1;
	wt_ok(wafer_model_get_info(m)->vocab_size == 512 && wafer_model_get_info(m)->dim == 64 &&
	      wafer_model_get_info(m)->sram_bytes > 0, "model info: dim 64, vocab 512, %llu bytes SRAM",
	      (unsigned long long)wafer_model_get_info(m)->sram_bytes);
	ret = wafer_ctx_create(m, SLOTS, 256, &ctx);
	if (!wt_ok(ret == 0, "context of %d slots x 256", SLOTS))
		return -1;
	ret = wafer_bo_create(dev, (N + 1) * 4, &in) ||
	      wafer_bo_create(dev, (size_t)SLOTS * N * WAFER_RESULT_SIZE(TOPK), &out);
	if (!wt_ok(!ret, "buffers"))
		return -1;
	memcpy(wafer_bo_map(in), toks, sizeof(toks));

	test_prefill_all_positions(dev, ctx, in, out);
	nops(dev, ctx, in);
	batched(dev, ctx, in, out);
	errors(dev, m, ctx, in, out);

	wafer_bo_destroy(in);
	wafer_bo_destroy(out);
	wafer_ctx_destroy(ctx);
	wafer_model_unload(m);
	wafer_close(dev);
	return 0;
}

/* io_uring submission in process, and a kernel device that is not there. */
static void test_open_refused(void)
{
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_INPROC,
				     .submit = WAFER_SUBMIT_URING };
	struct wafer_dev *dev;
	int ret;

	ret = wafer_open(&o, &dev);
	wt_ok(ret == -EOPNOTSUPP, "inproc refuses io_uring submission: %s", wafer_last_error());
	o = (struct wafer_open_opts){ .backend = WAFER_BACKEND_KERNEL, .index = 4000 };
	ret = wafer_open(&o, &dev);
	wt_ok(ret == -ENOENT, "kernel backend without the device is -ENOENT: %s",
	      wafer_last_error());
}

int main(void)
{
	struct wafer_convert_opts co = { .wbits = 8, .group_size = 32 };
	const char *path = wt_model_path("stories260K.bin");
	size_t len;
	void *blob;

	if (!wt_ok(path && wafer_convert(path, &co, &blob, &len) == 0,
		   "convert the shared model to int8") ||
	    !wt_ok(reference(blob, len) == 0, "in-process reference"))
		return wt_done();
	if (test_device(blob, len))
		return wt_done();
	small_device(blob, len);
	wse3_device(blob, len);
	stage_workers_env();
	test_open_refused();
	free(blob);
	return wt_done();
}
