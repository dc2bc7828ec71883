// SPDX-License-Identifier: MIT
/* wt_jobs.c - see wt_jobs.h */
#include "wt_jobs.h"

#define WT_REAP_MAX	64

int wt_run_jobs(struct wafer_dev *dev, struct wafer_job *jobs, unsigned int n,
		uint64_t *first_ns)
{
	struct wafer_completion c[WT_REAP_MAX];
	unsigned int done = 0, i;
	int ret = wafer_submit(dev, jobs, n), bad = ret != (int)n;

	while (!bad && done < n) {
		ret = wafer_reap(dev, c, WT_REAP_MAX, 1, 20000);
		if (ret <= 0)
			return -1;
		for (i = 0; i < (unsigned int)ret; i++)
			bad |= c[i].status != 0;
		if (first_ns && !done)
			*first_ns = c[0].device_ns;
		done += (unsigned int)ret;
	}
	return bad ? -1 : 0;
}
