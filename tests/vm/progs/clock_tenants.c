// SPDX-License-Identifier: MIT
/*
 * VM test: one file's modelled times do not move another file's clock.
 *
 * File B runs a decode step, waits for it, and runs the next; between the
 * two, file A (on the same device) runs a job whose activation record
 * says t_ns = 2^63 (WAIT status -EINVAL: past the latest modelled time),
 * one at t_ns = 2^62 and one with a NOT_BEFORE floor of 2^62 (the latest
 * the uapi allows), each completing at 2^62 or later on A's clock.  B's
 * second step must advance B's clock (done_ns) and take (device_ns)
 * exactly what it does when A does nothing in between.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "wt_dev.h"
#include "wt_util.h"

#define TIME_MAX	DRM_WAFER_NOT_BEFORE_MAX

struct done {
	int status;
	uint64_t device_ns;
	uint64_t done_ns;
};

static int run_job(int fd, struct drm_wafer_job *j, struct done *d)
{
	struct drm_wafer_submit s = { .job = *j };
	struct drm_wafer_wait w = { .timeout_ns = wt_deadline_ms(60000) };
	int ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &s);

	if (ret)
		return ret;
	w.seqno = s.seqno;
	ret = wt_ioctl(fd, DRM_IOCTL_WAFER_WAIT, &w);
	if (ret)
		return ret;
	d->status = w.status;
	d->device_ns = w.device_ns;
	d->done_ns = w.done_ns;
	return 0;
}

/* A one-token job of @m at @pos; @floor: a NOT_BEFORE floor (0: none). */
static int token_job(int fd, struct wt_dev_model *m, struct wt_bo *in, struct wt_bo *out,
		     uint32_t pos, uint64_t floor, struct done *d)
{
	struct drm_wafer_job j = {
		.ctx_id = m->ctx_id, .start_pos = pos, .n_tokens = 1, .top_k = 1,
		.in_handle = in->handle, .out_handle = out->handle,
	};
	uint32_t *ids = in->map;

	ids[0] = 1 + 7 * pos;
	if (floor) {
		memcpy(&ids[1], &floor, sizeof(floor));
		j.flags = DRM_WAFER_JOB_NOT_BEFORE;
	}
	return run_job(fd, &j, d);
}

/* A one-record job of the range @m at @pos, the record arriving at @t_ns. */
static int record_job(int fd, struct wt_dev_model *m, struct wt_bo *in, struct wt_bo *out,
		      uint32_t pos, uint32_t dim, uint64_t t_ns, struct done *d)
{
	struct drm_wafer_job j = {
		.ctx_id = m->ctx_id, .start_pos = pos, .n_tokens = 1, .top_k = 1,
		.in_handle = in->handle, .out_handle = out->handle,
		.flags = DRM_WAFER_JOB_IN_ACT,
	};
	struct drm_wafer_act_rec *r = in->map;

	memset(in->map, 0, m->act_size);
	r->dim = dim;
	r->t_ns = t_ns;
	return run_job(fd, &j, d);
}

/* File A's jobs: 0 if each ended as it should. */
static int tenant_a(uint32_t n_layers, uint32_t dim)
{
	struct wt_dev_model full, range;
	struct wt_bo in, out;
	struct done d[3];
	int fd = wt_dev_open(0), ok;

	if (fd < 0 || wt_dev_load_model(fd, 8, 1, 16, &full) ||
	    wt_dev_load_range(fd, 8, 1, n_layers - 1, 1, 16, &range) ||
	    wt_bo_new(fd, &in, 4096) || wt_bo_new(fd, &out, 4096)) {
		printf("not ok - file A: setup\n");
		return -1;
	}
	ok = !record_job(fd, &range, &in, &out, 0, dim, 1ull << 63, &d[0]) &&
	     !token_job(fd, &full, &in, &out, 0, TIME_MAX, &d[1]) &&
	     !record_job(fd, &range, &in, &out, 1, dim, TIME_MAX, &d[2]);
	ok = wt_ok(ok && d[0].status == -EINVAL && !d[1].status && !d[2].status &&
		   d[1].done_ns - d[1].device_ns == TIME_MAX && d[2].done_ns > TIME_MAX,
		   "file A: t_ns 2^63 fails with -EINVAL (%d); a floor of 2^62 starts "
		   "there (%llu), a record at 2^62 completes after it (%llu)",
		   d[0].status, (unsigned long long)(d[1].done_ns - d[1].device_ns),
		   (unsigned long long)d[2].done_ns);
	close(fd);
	return ok ? 0 : -1;
}

/*
 * File B's two steps, file A's jobs between them if @with_a; *@advance:
 * B's clock from the first step's completion to the second's, *@took the
 * second's device_ns.
 */
static int tenant_b(int with_a, uint64_t *advance, uint64_t *took)
{
	struct wt_dev_model m;
	struct wt_bo in, out;
	struct done d1, d2 = { 0 };
	int fd = wt_dev_open(0), ret;

	if (fd < 0 || wt_dev_load_model(fd, 8, 1, 16, &m) ||
	    wt_bo_new(fd, &in, 4096) || wt_bo_new(fd, &out, 4096) ||
	    token_job(fd, &m, &in, &out, 0, 0, &d1) || d1.status) {
		printf("not ok - file B: setup and first step\n");
		return -1;
	}
	ret = with_a ? tenant_a(m.n_layers, 64) : 0;
	if (token_job(fd, &m, &in, &out, 1, 0, &d2) || d2.status) {
		printf("not ok - file B: second step\n");
		ret = -1;
	}
	*advance = d2.done_ns - d1.done_ns;
	*took = d2.device_ns;
	close(fd);
	return ret;
}

int main(void)
{
	uint64_t adv0 = 0, took0 = 0, adv1 = 0, took1 = 0;
	int ret;

	ret = tenant_b(0, &adv0, &took0) || tenant_b(1, &adv1, &took1);
	wt_ok(!ret && adv1 == adv0 && took1 == took0,
	      "file B's second step: its clock advanced %llu ns, the step took %llu ns; "
	      "without file A in between %llu, %llu",
	      (unsigned long long)adv1, (unsigned long long)took1,
	      (unsigned long long)adv0, (unsigned long long)took0);
	return wt_done();
}
