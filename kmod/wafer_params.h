/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer module parameters: device shape and per-file limits.  Read once per
 * device at probe time (the values a device runs with are in its struct).
 */
#ifndef WAFER_PARAMS_H
#define WAFER_PARAMS_H

#include <linux/types.h>

#define WAFER_MAX_DEVICES	16

extern unsigned int wafer_num_devices;
extern char *wafer_profile;
extern unsigned int wafer_stages;
extern unsigned int wafer_sram_kib;
extern unsigned int wafer_job_timeout_ms;
extern unsigned int wafer_max_file_bo_mib;
extern unsigned int wafer_max_file_contexts;
extern unsigned int wafer_max_file_inflight;
extern bool wafer_fault_inject;

int wafer_check_num_devices(unsigned int n);
int wafer_numa_node_param(unsigned int index);

#endif /* WAFER_PARAMS_H */
