// SPDX-License-Identifier: MIT
/*
 * VM test (module parameters fault_inject=1 job_timeout_ms=...): firmware
 * faults are detected and recovered.
 *
 *  - hang: the next job never completes; the driver's timeout fails it with
 *    -ETIMEDOUT, resets the device, and the next job is correct;
 *  - drop: the next completion is lost; the driver notices the gap (or the
 *    timeout does), the job fails, later jobs are correct;
 *  - corrupt: the next completion fails its check; the job fails, later
 *    jobs are correct.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "wt_dev.h"
#include "wt_model.h"
#include "wt_util.h"

#define TOPK 4

static int fd;
static struct wt_dev_model m;
static struct wt_bo in, out;

/* Runs BOS at position 0 of slot 0; returns the job status. */
static int run_one(uint32_t *argmax)
{
	struct drm_wafer_submit sub = { .job = {
		.ctx_id = m.ctx_id, .n_tokens = 1, .top_k = TOPK,
		.in_handle = in.handle, .out_handle = out.handle } };
	int ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &sub);

	if (ret)
		return ret;
	ret = wt_wait_job(fd, sub.seqno, NULL);
	*argmax = wt_result(&out, 0, TOPK, 0)->argmax;
	return ret;
}

int main(void)
{
	static const struct { const char *fault; int want; } cases[] = {
		{ "hang", -ETIMEDOUT },
		{ "drop", -EIO },
		{ "corrupt", -EIO },
	};
	struct wfs_topk_entry topk[TOPK];
	struct wt_model ref;
	uint32_t expect, got;
	unsigned int i;
	int ret;

	fd = wt_dev_open(0);
	if (fd < 0 || wt_dev_load_model(fd, 8, 2, 64, &m) || wt_bo_new(fd, &in, 4096) ||
	    wt_bo_new(fd, &out, 4096) || wt_model_open(&ref, m.blob, m.blob_len, 64, 0)) {
		printf("not ok - setup\n");
		return 1;
	}
	((uint32_t *)in.map)[0] = 1;
	expect = wt_model_step(&ref, 1, 0, TOPK, topk);

	ret = run_one(&got);
	wt_ok(!ret && got == expect, "a job before any fault is correct (%d)", ret);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ret = wt_inject_fault(0, cases[i].fault);
		if (!wt_ok(!ret, "inject %s (%d)", cases[i].fault, ret))
			continue;
		ret = run_one(&got);
		/* A lost completion is caught by the sequence gap only when a later
		 * one arrives; otherwise the timeout catches it (-ETIMEDOUT). */
		wt_ok(ret == cases[i].want || (!strcmp(cases[i].fault, "drop") && ret == -ETIMEDOUT),
		      "%s: the job fails with %d (want %d)", cases[i].fault, ret, cases[i].want);
		ret = run_one(&got);
		wt_ok(!ret && got == expect, "%s: the next job is correct (%d, argmax %u vs %u)",
		      cases[i].fault, ret, got, expect);
	}
	wt_model_close(&ref);
	close(fd);
	return wt_done();
}
