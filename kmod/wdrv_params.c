// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer module parameters.  Defaults run the shared stories260K model on
 * the "wafer" profile.
 */
#include <linux/kstrtox.h>
#include <linux/moduleparam.h>
#include <linux/numa.h>
#include <linux/printk.h>
#include <linux/nodemask.h>

#include "wdrv_params.h"

unsigned int wdrv_num_devices = 1;
module_param_named(num_devices, wdrv_num_devices, uint, 0444);
MODULE_PARM_DESC(num_devices, "Number of simulated devices to create (1-64, default 1)");

/*
 * Device shape: one value for every device, or a comma separated list, one
 * per device, the last value going on to the devices beyond the list
 * (profile=asic,wafer: device 0 asic, the rest wafer).
 */
static char *profile_arr[WDRV_MAX_DEVICES];
static unsigned int profile_count;
module_param_array_named(profile, profile_arr, charp, &profile_count, 0444);
MODULE_PARM_DESC(profile, "Device profile, per device, comma separated: wafer (many stages, large SRAM, default), asic (few, small), wse3 or wse2 (Cerebras's figures; give stages or sram_kib smaller), lpu (a Groq-LPU-like chip)");

static unsigned int stages_arr[WDRV_MAX_DEVICES];
static unsigned int stages_count;
module_param_array_named(stages, stages_arr, uint, &stages_count, 0444);
MODULE_PARM_DESC(stages, "Pipeline stages, per device, comma separated (0: the profile's)");

static unsigned int sram_kib_arr[WDRV_MAX_DEVICES];
static unsigned int sram_kib_count;
module_param_array_named(sram_kib, sram_kib_arr, uint, &sram_kib_count, 0444);
MODULE_PARM_DESC(sram_kib, "SRAM per stage in KiB, per device, comma separated (0: the profile's)");

static int numa_node_arr[WDRV_MAX_DEVICES] = {
	[0 ... WDRV_MAX_DEVICES - 1] = NUMA_NO_NODE
};

static unsigned int numa_node_count;
module_param_array_named(numa_node, numa_node_arr, int, &numa_node_count, 0444);
MODULE_PARM_DESC(numa_node, "NUMA node per device, comma separated (-1: any)");

/* 0 would time every job out at once; an hour is far past any job. */
#define WDRV_JOB_TIMEOUT_MAX_MS	3600000

static int job_timeout_set(const char *val, const struct kernel_param *kp)
{
	int ret = param_set_uint_minmax(val, kp, 1, WDRV_JOB_TIMEOUT_MAX_MS);

	if (ret)
		pr_err("wafer: job_timeout_ms=%s is out of range 1..%u\n", val,
		       WDRV_JOB_TIMEOUT_MAX_MS);
	return ret;
}

static const struct kernel_param_ops job_timeout_ops = {
	.set = job_timeout_set,
	.get = param_get_uint,
};

unsigned int wdrv_job_timeout_ms = 5000;
module_param_cb(job_timeout_ms, &job_timeout_ops, &wdrv_job_timeout_ms, 0444);
MODULE_PARM_DESC(job_timeout_ms,
		 "A job running longer is failed and the device reset (ms, 1-3600000, default 5000)");

static int stage_workers_set(const char *val, const struct kernel_param *kp)
{
	int n;

	if (kstrtoint(val, 0, &n) || n < -1 || n > WDRV_STAGE_WORKERS_MAX) {
		pr_err("wafer: stage_workers=%s is out of range -1..%d\n", val,
		       WDRV_STAGE_WORKERS_MAX);
		return -EINVAL;
	}
	*(int *)kp->arg = n;
	return 0;
}

static const struct kernel_param_ops stage_workers_ops = {
	.set = stage_workers_set,
	.get = param_get_int,
};

/*
 * stage_workers: the kthreads that run a device's pipeline stages (struct
 * wfs_device_config.stage_workers).  -1 (default): one per online CPU, a
 * pool shared by the stages when that is fewer than the stages; 0: one per
 * stage (the most interleaving, for tests); N: at most N.  Results and the
 * modelled timeline do not depend on it.  Read at probe.
 */
int wdrv_stage_workers = -1;
module_param_cb(stage_workers, &stage_workers_ops, &wdrv_stage_workers, 0444);
MODULE_PARM_DESC(stage_workers,
		 "Kthreads running a device's stages: -1 one per online CPU (default), 0 one per stage, N at most N (up to 1024)");

unsigned int wdrv_max_file_bo_mib = 1024;
module_param_named(max_file_bo_mib, wdrv_max_file_bo_mib, uint, 0444);
MODULE_PARM_DESC(max_file_bo_mib, "Buffer-object memory one open file may hold (MiB, default 1024)");

/*
 * The per-file defaults leave most of a device's models and contexts to
 * the other files: a device holds 64 firmware contexts and 4 models, and
 * no one file may take them all (set them higher for a device one tenant
 * has to itself).  A file may queue twice the firmware's 128-entry job
 * table: the scheduler's credit limit keeps the firmware's ring from
 * overflowing, its entities share the ring between files, and control
 * commands have their own ring, so a full queue stalls no one else.
 */
unsigned int wdrv_max_file_contexts = 8;
module_param_named(max_file_contexts, wdrv_max_file_contexts, uint, 0444);
MODULE_PARM_DESC(max_file_contexts,
		 "Contexts one open file may hold (default 8, of the firmware's 64)");

unsigned int wdrv_max_file_models = 2;
module_param_named(max_file_models, wdrv_max_file_models, uint, 0444);
MODULE_PARM_DESC(max_file_models,
		 "Models one open file may hold loaded at once (default 2: a target and its draft; a device holds at most as many as its firmware does, 4)");

unsigned int wdrv_max_file_inflight = 256;
module_param_named(max_file_inflight, wdrv_max_file_inflight, uint, 0444);
MODULE_PARM_DESC(max_file_inflight,
		 "Jobs one open file may have in flight (default 256, twice the firmware's job table)");

bool wdrv_uring_inline = true;
module_param_named(uring_inline, wdrv_uring_inline, bool, 0644);
MODULE_PARM_DESC(uring_inline,
		 "Submit io_uring commands inline when io_uring issues them non-blocking (default on; off: every one goes through an io-wq worker, for comparison)");

bool wdrv_fault_inject;
module_param_named(fault_inject, wdrv_fault_inject, bool, 0444);
MODULE_PARM_DESC(fault_inject, "Allow the test-only firmware fault injection in debugfs (default off)");

/**
 * wdrv_check_num_devices() - validate the num_devices module parameter
 * @n: the requested device count
 *
 * Return: 0, or -EINVAL (with a message) when @n is outside 1..64.
 */
int wdrv_check_num_devices(unsigned int n)
{
	if (n < 1 || n > WDRV_MAX_DEVICES) {
		pr_err("wafer: num_devices=%u is out of range 1..%d\n",
		       n, WDRV_MAX_DEVICES);
		return -EINVAL;
	}
	return 0;
}

/* Entry @index of a per-device list of @count values; the last one goes on. */
static unsigned int per_device(unsigned int count, unsigned int index)
{
	return index < count ? index : count - 1;
}

/**
 * wdrv_shape_param() - the profile, stages and SRAM asked for device @index
 * @index: device index
 * @profile: set to the profile's name
 * @stages: set to the stage count (0: the profile's)
 * @sram_kib: set to the SRAM per stage in KiB (0: the profile's)
 */
void wdrv_shape_param(unsigned int index, const char **profile, unsigned int *stages,
		      unsigned int *sram_kib)
{
	*profile = profile_count ? profile_arr[per_device(profile_count, index)] : "wafer";
	*stages = stages_count ? stages_arr[per_device(stages_count, index)] : 0;
	*sram_kib = sram_kib_count ? sram_kib_arr[per_device(sram_kib_count, index)] : 0;
}

/**
 * wdrv_numa_node_param() - the NUMA node asked for device @index
 * @index: device index
 *
 * Return: a valid online node, or NUMA_NO_NODE when none (or an offline
 * one, with a warning in the log) was given.
 */
int wdrv_numa_node_param(unsigned int index)
{
	int node;

	if (index >= numa_node_count)
		return NUMA_NO_NODE;
	node = numa_node_arr[index];
	if (node == NUMA_NO_NODE)
		return NUMA_NO_NODE;
	if (node < 0 || node >= MAX_NUMNODES || !node_online(node)) {
		pr_warn("wafer: device %u: numa_node=%d is not an online node; using any\n",
			index, node);
		return NUMA_NO_NODE;
	}
	return node;
}
