// SPDX-License-Identifier: MIT
/*
 * libwafer: a device backend's submission posted in batches of at most
 * WAFER_SUBMIT_BATCH jobs (the kernel and in-process backends' @submit).
 */
#include "../wafer_backend.h"

int wafer_submit_batches(struct wafer_dev *dev, const struct wafer_job_hw *jobs, unsigned int n,
			 int (*post)(struct wafer_dev *dev, const struct wafer_job_hw *jobs,
				     unsigned int n))
{
	unsigned int done = 0, m;
	int ret = 0;

	while (done < n) {
		m = n - done < WAFER_SUBMIT_BATCH ? n - done : WAFER_SUBMIT_BATCH;
		ret = post(dev, jobs + done, m);
		if (ret <= 0)
			break;
		done += (unsigned int)ret;
		if ((unsigned int)ret < m)
			break;
	}
	return done ? (int)done : ret;
}
