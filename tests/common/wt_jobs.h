/* SPDX-License-Identifier: MIT */
/* wt_jobs.h - running libwafer jobs in tests */
#ifndef WT_JOBS_H
#define WT_JOBS_H

#include <stdint.h>

#include "wafer.h"

/*
 * Submits @n jobs and reaps them all; 0 if every one completed with status
 * 0, else -1.  @first_ns, if not NULL: the modelled device time of the
 * first completion reaped.
 */
int wt_run_jobs(struct wafer_dev *dev, struct wafer_job *jobs, unsigned int n,
		uint64_t *first_ns);

#endif
