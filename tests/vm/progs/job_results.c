// SPDX-License-Identifier: MIT
/*
 * VM test: a file that submits jobs and waits only on their out-syncobjs,
 * never calling WAIT, retains a bounded number of results: at most
 * DRM_WAFER_MAX_UNWAITED finished ones (plus those still running), the
 * oldest dropped first.  WAIT still reports a recent job; a dropped one is
 * -ENOENT.  The count comes from debugfs "results retained".
 */
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "wt_dev.h"
#include "wt_util.h"

#define JOBS	(3 * DRM_WAFER_MAX_UNWAITED)
#define BATCH	128

static long retained(void)
{
	FILE *f = fopen("/sys/kernel/debug/accel/wafer.0/jobs", "r");
	char line[256];
	long n = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		sscanf(line, "results retained: %ld", &n);
	fclose(f);
	return n;
}

int main(void)
{
	struct drm_syncobj_create sc = { 0 };
	struct drm_syncobj_wait sw = { .count_handles = 1 };
	struct drm_wafer_submit s = { .job = { .n_tokens = 1, .top_k = 1 } };
	struct wt_dev_model m;
	struct wt_bo in, out;
	uint64_t first = 0;
	unsigned int i;
	long n;
	int fd, ret = 0;

	fd = wt_dev_open(0);
	if (fd < 0 || wt_dev_load_model(fd, 8, 1, 16, &m) || wt_bo_new(fd, &in, 4096) ||
	    wt_bo_new(fd, &out, 4096) || wt_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &sc)) {
		printf("not ok - setup\n");
		return 1;
	}
	((uint32_t *)in.map)[0] = 1;
	s.job.ctx_id = m.ctx_id;
	s.job.in_handle = in.handle;
	s.job.out_handle = out.handle;
	s.job.out_syncobj = sc.handle;
	sw.handles = (uintptr_t)&sc.handle;
	/* The syncobj holds the latest job's fence; the file's fences signal in order. */
	for (i = 0; i < JOBS && !ret; i++) {
		ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &s);
		if (!first)
			first = s.seqno;
		if (!ret && (i % BATCH == BATCH - 1 || i == JOBS - 1)) {
			sw.timeout_nsec = wt_deadline_ms(120000);
			ret = wt_ioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &sw);
		}
	}
	wt_ok(!ret, "%u jobs submitted, waited on their out-syncobj only (%d)", i, ret);
	n = retained();
	wt_ok(n >= 0 && n <= DRM_WAFER_MAX_UNWAITED,
	      "results retained after %u unwaited jobs: %ld (at most %u)", i, n,
	      DRM_WAFER_MAX_UNWAITED);
	ret = wt_wait_job(fd, s.seqno, NULL);
	wt_ok(!ret, "WAIT on the latest job still reports it (%d)", ret);
	ret = wt_wait_job(fd, first, NULL);
	wt_ok(ret == -ENOENT, "WAIT on the oldest, dropped, job is -ENOENT (%d)", ret);
	/* A mapping holds the file open: unmap first. */
	munmap(in.map, in.size);
	munmap(out.map, out.size);
	close(fd);
	n = retained();
	wt_ok(n == 0, "no result retained once the file is closed (%ld)", n);
	return wt_done();
}
