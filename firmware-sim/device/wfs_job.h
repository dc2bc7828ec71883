/* SPDX-License-Identifier: MIT */
/*
 * wfs_job.h - the job lifecycle: the only code that admits a RUN_JOB into
 * the job table (and feeds it to stage 0), retires it when its last chunk
 * leaves the last stage, or drops it in a reset.  A NOP job (WFW_JOB_NOP)
 * is retired as soon as it is admitted: no stage sees it.
 *
 *   FREE --wfs_job_submit()--> ACTIVE --wfs_job_retire()--> FREE
 *                                     --wfs_job_drop_all_locked()--> FREE
 */
#ifndef WFS_JOB_H
#define WFS_JOB_H

#include "wfs_compat.h"
#include "wfw_abi.h"

struct wfs_device;
struct wfs_ctx;

/* Job states */
#define WFS_JOB_FREE		0
#define WFS_JOB_ACTIVE		1

/**
 * struct wfs_job - a RUN_JOB in flight
 * @state: WFS_JOB_* (state lock)
 * @cookie: the command's cookie
 * @args: the validated payload
 * @ctx: its context
 * @status: 0, or the first error a stage hit (later stages skip work)
 * @n_chunks: chunks the job was split into
 * @hang: injected hang: stage 0 stalls on it until reset
 * @records: output records written
 * @t_ready: modelled time the job's input was available
 * @t_start: modelled time its first chunk started on stage 0
 * @host_t0: host time the CP fetched it
 * @layer: WFW_JOB_LAYER: the layer whose part the job runs (an index into
 *	the blob's layers, as &wfs_stage_model.first_layer)
 */
struct wfs_job {
	u32 state;
	u64 cookie;
	struct wfw_cmd_run_job args;
	struct wfs_ctx *ctx;
	s32 status;
	u32 n_chunks;
	u32 hang;
	u32 records;
	u64 t_ready;
	u64 t_start;
	u64 host_t0;
	u32 layer;
};

/**
 * struct wfs_job_table - the jobs and what they did (all: state lock)
 * @jobs: @max entries
 * @max: entries of @jobs
 * @active: jobs in flight
 * @hang_armed: the next RUN_JOB hangs
 * @completed: RUN_JOBs completed
 * @tokens: tokens run
 * @makespan_ns: latest modelled completion time
 */
struct wfs_job_table {
	struct wfs_job *jobs;
	u32 max;
	u32 active;
	u32 hang_armed;
	u64 completed;
	u64 tokens;
	u64 makespan_ns;
};

/**
 * wfs_job_submit() - admit a validated RUN_JOB and feed it to stage 0
 * @dev: device (CP thread)
 * @cookie: the command's cookie
 * @p: the payload (checked against @ctx)
 * @ctx: its context
 * @not_before: the host's floor for its ready time (WFW_JOB_NOT_BEFORE; 0:
 *	none)
 * @layer: WFW_JOB_LAYER: the layer whose part it runs, as an index into
 *	the blob's layers (checked against the range); else 0
 *
 * Waits while the job table is full, then while stage 0's FIFO is.
 *
 * Return: WFS_CPL_DEFERRED (the last stage completes the job, or a reset
 * drops it; a NOP is completed here), or -WFS_EIO.
 */
int wfs_job_submit(struct wfs_device *dev, u64 cookie,
		   const struct wfw_cmd_run_job *p, struct wfs_ctx *ctx,
		   u64 not_before, u32 layer);

/* The job a FIFO entry belongs to. */
struct wfs_job *wfs_job_get(struct wfs_device *dev, u32 idx);

/**
 * wfs_job_retire() - complete a job whose last chunk passed the last stage
 * @dev: device (the last stage's worker)
 * @job: the job
 * @t_done: modelled time its last result left the pipeline
 */
void wfs_job_retire(struct wfs_device *dev, struct wfs_job *job, u64 t_done);

/* Forget every job without completions (reset: all parked, state lock). */
u32 wfs_job_drop_all_locked(struct wfs_device *dev);

/* Arm (or disarm) a hang of the next RUN_JOB (FAULT_INJECT). */
void wfs_job_arm_hang(struct wfs_device *dev, u32 on);

#endif /* WFS_JOB_H */
