/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer module parameters: device shape and per-file limits.  Read once per
 * device at probe time (the values a device runs with are in its struct).
 */
#ifndef WDRV_PARAMS_H
#define WDRV_PARAMS_H

#include <linux/types.h>

#define WDRV_MAX_DEVICES	64
/* WFS_STAGE_WORKERS_MAX */
#define WDRV_STAGE_WORKERS_MAX	1024

extern unsigned int wdrv_num_devices;
extern unsigned int wdrv_job_timeout_ms;
extern int wdrv_stage_workers;
extern unsigned int wdrv_max_file_bo_mib;
extern unsigned int wdrv_max_file_contexts;
extern unsigned int wdrv_max_file_models;
extern unsigned int wdrv_max_file_inflight;
extern bool wdrv_fault_inject;
extern bool wdrv_uring_inline;

int wdrv_check_num_devices(unsigned int n);
int wdrv_numa_node_param(unsigned int index);
void wdrv_shape_param(unsigned int index, const char **profile, unsigned int *stages,
		      unsigned int *sram_kib);

#endif /* WDRV_PARAMS_H */
