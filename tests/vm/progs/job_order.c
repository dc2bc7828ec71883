// SPDX-License-Identifier: MIT
/*
 * VM test: the fences of one file's jobs signal in submission order.
 *
 * A job the firmware rejects at intake (a token outside the vocabulary:
 * the driver does not read token values, the firmware does) is queued on
 * the same file behind long valid jobs.  When its out-syncobj signals, the
 * out-syncobjs of every earlier job of the file must have signalled too
 * (the dma-fence contract of one timeline); each job still reports its own
 * status.
 *
 *   job_order reject	the rejected job behind long jobs on other slots
 *   job_order hang	(fault_inject=1) as above, then a job that hangs
 *			the pipeline: the rejection, held behind the long
 *			job, keeps its status through the reset and still
 *			signals after the long job
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "wt_dev.h"
#include "wt_util.h"

#define TOPK		4
#define LONG_JOBS	3
#define LONG_TOKENS	192
/*
 * With a hang the long job must finish inside the job timeout however
 * slow the guest: a timeout that catches it resets the device before the
 * firmware has taken in the job it rejects (which then fails -EIO, as any
 * job the reset finds unstarted).  A third of the work suffices to hold
 * the rejection behind it.
 */
#define HANG_LONG_TOKENS	64
#define BAD_OFF		2048	/* in the input BO: the out-of-vocabulary token */

static int fd;
static struct wt_dev_model m;
static struct wt_bo in, out;

static int syncobj_new(uint32_t *h)
{
	struct drm_syncobj_create c = { 0 };
	int ret = wt_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);

	*h = c.handle;
	return ret;
}

/* 0 once @h has signalled by @deadline_ns (0: now), else -ETIME. */
static int syncobj_wait(uint32_t h, int64_t deadline_ns)
{
	struct drm_syncobj_wait w = {
		.handles = (uintptr_t)&h, .count_handles = 1, .timeout_nsec = deadline_ns,
	};

	return wt_ioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
}

static int submit(uint32_t slot, uint32_t n, uint32_t in_off, uint32_t sync, uint64_t *seqno)
{
	struct drm_wafer_submit s = { .job = {
		.ctx_id = m.ctx_id, .slot = slot, .n_tokens = n, .top_k = TOPK,
		.in_handle = in.handle, .in_offset = in_off,
		.out_handle = out.handle, .out_offset = slot * 1024, .out_syncobj = sync } };
	int ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &s);

	*seqno = s.seqno;
	return ret;
}

/* Submits @n_long jobs of @n_tok tokens on slots 0.., then the rejected one. */
static int submit_all(unsigned int n_long, uint32_t n_tok, uint32_t *sync,
		      uint64_t *seqno)
{
	unsigned int i;
	int ret;

	for (i = 0; i <= n_long; i++) {
		if (!wt_ok(!syncobj_new(&sync[i]), "syncobj create"))
			return -1;
	}
	for (i = 0; i < n_long; i++) {
		ret = submit(i, n_tok, 0, sync[i], &seqno[i]);
		if (!wt_ok(!ret, "submit long job %u (%d)", i, ret))
			return -1;
	}
	ret = submit(n_long, 1, BAD_OFF, sync[n_long], &seqno[n_long]);
	return wt_ok(!ret, "submit the job the firmware rejects (%d)", ret) ? 0 : -1;
}

/*
 * Queues @n_long long jobs and the rejected one (then, with @hang, a job
 * that hangs the pipeline); checks the order the rejected job's fence
 * signals in and every status.
 */
static void run(unsigned int n_long, int hang)
{
	uint32_t sync[LONG_JOBS + 1];
	uint64_t seqno[LONG_JOBS + 1], hung;
	unsigned int i, early = 0;
	int ret, st;

	if (submit_all(n_long, hang ? HANG_LONG_TOKENS : LONG_TOKENS, sync, seqno))
		return;
	if (hang) {
		ret = wt_inject_fault(0, "hang");
		if (ret || submit(n_long + 1, 1, 0, 0, &hung)) {
			wt_ok(0, "inject hang and submit the hanging job (%d)", ret);
			return;
		}
	}
	ret = syncobj_wait(sync[n_long], wt_deadline_ms(120000));
	if (!wt_ok(!ret, "the rejected job's out-syncobj signals (%d)", ret))
		return;
	for (i = 0; i < n_long; i++)
		early += syncobj_wait(sync[i], 0) != 0;
	wt_ok(!early, "%s: when the rejected job's fence signals, the %u earlier fences of its file have (%u have not)",
	      hang ? "hang" : "reject", n_long, early);

	for (i = 0; i < n_long; i++) {
		st = wt_wait_job(fd, seqno[i], NULL);
		/* With a hang the reset may catch it: then it fails. */
		wt_ok(!st || (hang && (st == -ETIMEDOUT || st == -EIO)),
		      "long job %u status %d", i, st);
	}
	st = wt_wait_job(fd, seqno[n_long], NULL);
	wt_ok(st == -EINVAL, "rejected job status %d (want -EINVAL)", st);
	if (hang) {
		st = wt_wait_job(fd, hung, NULL);
		wt_ok(st == -ETIMEDOUT || st == -EIO, "hanging job status %d", st);
	}
}

int main(int argc, char **argv)
{
	int hang = argc > 1 && !strcmp(argv[1], "hang");
	uint32_t *tok;
	unsigned int i;

	fd = wt_dev_open(0);
	if (fd < 0 || wt_dev_load_model(fd, 8, LONG_JOBS + 2, 256, &m) ||
	    wt_bo_new(fd, &in, 4096) || wt_bo_new(fd, &out, 8192)) {
		printf("not ok - setup\n");
		return 1;
	}
	tok = in.map;
	for (i = 0; i < LONG_TOKENS; i++)
		tok[i] = 1 + i % 100;
	tok[BAD_OFF / 4] = 0xffffffffu;
	run(hang ? 1 : LONG_JOBS, hang);
	close(fd);
	return wt_done();
}
