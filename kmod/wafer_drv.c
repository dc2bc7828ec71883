// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer: DRM accel driver for a simulated wafer-scale LLM inference device.
 *
 * The simulated devices are platform devices the module creates itself, one
 * per num_devices, so that they can be unbound and rebound through sysfs
 * like real hardware.  Each bound device brings up its firmware
 * (firmware-sim, behind the firmware ABI) and registers /dev/accel/accelN.
 */
#include <linux/module.h>
#include <linux/numa.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <drm/wafer_accel.h>

#include "wafer_drv.h"
#include "wafer_gem.h"
#include "wafer_heartbeat.h"
#include "wafer_job.h"
#include "wafer_model.h"
#include "wafer_sysfs.h"
#include "wafer_uapi.h"
#include "wafer_uring.h"
#include "wfw_uapi_ties.h"	/* compile-time: firmware ABI == uapi */

static void wafer_file_release(struct kref *ref)
{
	struct wafer_file *wfile = container_of(ref, struct wafer_file, ref);

	WARN_ON(atomic64_read(&wfile->bo_bytes));
	mutex_destroy(&wfile->lock);
	kfree(wfile);
}

void wafer_file_put(struct wafer_file *wfile)
{
	kref_put(&wfile->ref, wafer_file_release);
}

static int wafer_open(struct drm_device *dev, struct drm_file *file)
{
	struct wafer_file *wfile;
	int ret;

	wfile = kzalloc(sizeof(*wfile), GFP_KERNEL);
	if (!wfile)
		return -ENOMEM;
	wfile->wdev = to_wafer_device(dev);
	kref_init(&wfile->ref);
	atomic64_set(&wfile->bo_bytes, 0);
	mutex_init(&wfile->lock);
	xa_init_flags(&wfile->contexts, XA_FLAGS_ALLOC1);
	ret = wafer_file_jobs_init(wfile);
	if (ret) {
		xa_destroy(&wfile->contexts);
		wafer_file_put(wfile);
		return ret;
	}
	file->driver_priv = wfile;
	return 0;
}

static void wafer_postclose(struct drm_device *dev, struct drm_file *file)
{
	struct wafer_file *wfile = to_wafer_file(file);

	/* Jobs first (they hold contexts), then contexts, then the model. */
	wafer_file_jobs_fini(wfile);
	wafer_file_release_models(wfile);
	xa_destroy(&wfile->contexts);
	wafer_file_put(wfile);
}

static int wafer_get_info_ioctl(struct drm_device *dev, void *data,
				struct drm_file *file)
{
	struct wafer_device *wdev = to_wafer_device(dev);
	struct drm_wafer_get_info *args = data;
	struct drm_wafer_device_info info = {};
	struct wfw_info *fi;
	struct wfw_cpl cpl;
	u32 len;
	int ret;

	ret = wafer_check_get_info(dev, args);
	if (ret)
		return ret;
	/* Fresh from the firmware: SRAM use changes with models and contexts. */
	fi = kzalloc(sizeof(*fi), GFP_KERNEL);
	if (!fi)
		return -ENOMEM;
	ret = wafer_fw_ctrl_read(&wdev->fw, WFW_OP_GET_INFO, 0, 0, fi, sizeof(*fi), &cpl);
	if (ret) {
		kfree(fi);
		return ret;
	}

	info.size = sizeof(info);
	info.api_version = DRM_WAFER_API_VERSION;
	info.caps = DRM_WAFER_CAP_INT4 | DRM_WAFER_CAP_INT8 | DRM_WAFER_CAP_PRIME |
		    DRM_WAFER_CAP_URING_SUBMIT;
	if (fi->caps & WFW_CAP_ALL_POSITIONS)
		info.caps |= DRM_WAFER_CAP_ALL_POSITIONS;
	info.fw_version_major = WFW_ABI_VERSION_MAJOR(fi->abi_version);
	info.fw_version_minor = WFW_ABI_VERSION_MINOR(fi->abi_version);
	info.profile = fi->profile;
	info.stages = fi->num_stages;
	info.sram_bytes_per_stage = fi->sram_bytes;
	info.sram_bytes_free = fi->sram_bytes * fi->num_stages - fi->sram_used;
	info.clock_hz = fi->clock_hz;
	info.macs_per_cycle = fi->macs_per_cycle;
	info.numa_node = wdev->numa_node;
	info.max_bo_size = (u64)wafer_max_file_bo_mib << 20;
	info.max_models = 1;
	info.max_contexts = wafer_max_file_contexts;
	info.max_inflight_jobs = wafer_max_file_inflight;
	info.max_tokens_per_job = WAFER_MAX_TOKENS_PER_JOB;
	info.max_in_syncobjs = WAFER_MAX_IN_SYNCOBJS;
	info.models_loaded = fi->model_loaded;
	info.contexts = fi->contexts;
	info.jobs_inflight = wafer_job_queue_inflight(wdev);
	info.job_timeout_ms = wafer_job_timeout_ms;

	kfree(fi);

	len = min_t(u32, args->info_size, sizeof(info));
	if (copy_to_user(u64_to_user_ptr(args->info_ptr), &info, len))
		return -EFAULT;
	args->info_size = len;
	return 0;
}

static const struct drm_ioctl_desc wafer_ioctls[] = {
	DRM_IOCTL_DEF_DRV(WAFER_GET_INFO, wafer_get_info_ioctl, 0),
	DRM_IOCTL_DEF_DRV(WAFER_BO_CREATE, wafer_bo_create_ioctl, 0),
	DRM_IOCTL_DEF_DRV(WAFER_BO_INFO, wafer_bo_info_ioctl, 0),
	DRM_IOCTL_DEF_DRV(WAFER_MODEL_LOAD, wafer_model_load_ioctl, 0),
	DRM_IOCTL_DEF_DRV(WAFER_MODEL_UNLOAD, wafer_model_unload_ioctl, 0),
	DRM_IOCTL_DEF_DRV(WAFER_CTX_CREATE, wafer_ctx_create_ioctl, 0),
	DRM_IOCTL_DEF_DRV(WAFER_CTX_DESTROY, wafer_ctx_destroy_ioctl, 0),
	DRM_IOCTL_DEF_DRV(WAFER_SUBMIT, wafer_submit_ioctl, 0),
	DRM_IOCTL_DEF_DRV(WAFER_WAIT, wafer_wait_ioctl, 0),
};

/* fdinfo: the file's modelled device time and its buffer memory. */
static void wafer_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct wafer_file *wfile = to_wafer_file(file);

	drm_printf(p, "drm-engine-wafer:\t%llu ns\n", atomic64_read(&wfile->busy_ns));
	drm_printf(p, "drm-wafer-jobs-inflight:\t%d\n", atomic_read(&wfile->unfinished));
	drm_show_memory_stats(p, file);
}

static const struct file_operations wafer_accel_fops = {
	.owner = THIS_MODULE,
	DRM_ACCEL_FOPS,
	.show_fdinfo = drm_show_fdinfo,
	.uring_cmd = wafer_uring_cmd,
};

static const struct drm_driver wafer_drm_driver = {
	.driver_features = DRIVER_COMPUTE_ACCEL | DRIVER_GEM | DRIVER_SYNCOBJ,
	.open = wafer_open,
	.postclose = wafer_postclose,
	.gem_create_object = wafer_gem_create_object,
	.gem_prime_import_sg_table = drm_gem_shmem_prime_import_sg_table,
	.show_fdinfo = wafer_show_fdinfo,
	.ioctls = wafer_ioctls,
	.num_ioctls = ARRAY_SIZE(wafer_ioctls),
	.fops = &wafer_accel_fops,
	.name = WAFER_DRIVER_NAME,
	.desc = WAFER_DRIVER_DESC,
	.major = WAFER_DRIVER_MAJOR,
	.minor = WAFER_DRIVER_MINOR,
	.patchlevel = WAFER_DRIVER_PATCHLEVEL,
};

/*
 * Teardown, in the one safe order: nothing queues firmware commands any
 * more, then the firmware's threads (which complete jobs into the queue and
 * report faults to it) stop, and only then the queue goes.
 */
static void wafer_dev_release(struct drm_device *drm, void *arg)
{
	struct wafer_device *wdev = arg;

	wafer_heartbeat_stop(wdev);
	wafer_sysfs_fini(wdev);
	wafer_fw_fini(&wdev->fw);
	wafer_job_queue_fini(wdev);
	destroy_workqueue(wdev->wq);
}

static int wafer_probe(struct platform_device *pdev)
{
	struct wafer_fw_config cfg = {
		.profile = wafer_profile,
		.stages = wafer_stages,
		.sram_bytes = (u64)wafer_sram_kib << 10,
		.fault_inject = wafer_fault_inject,
		/*
		 * A control command queued behind a hung job must not time out
		 * first: the hang is the job's timeout to report and recover.
		 */
		.ctrl_timeout_ms = 2 * wafer_job_timeout_ms,
		.job_cpl = wafer_job_fw_cpl,
		.fault = wafer_job_fw_fault,
	};
	struct wafer_device *wdev;
	int ret;

	wdev = devm_drm_dev_alloc(&pdev->dev, &wafer_drm_driver,
				  struct wafer_device, drm);
	if (IS_ERR(wdev))
		return PTR_ERR(wdev);
	wdev->index = pdev->id;
	wdev->numa_node = wafer_numa_node_param(pdev->id);
	platform_set_drvdata(pdev, wdev);
	ret = drmm_mutex_init(&wdev->drm, &wdev->model_lock);
	if (ret)
		return ret;

	cfg.numa_node = wdev->numa_node;
	cfg.index = pdev->id;
	cfg.owner = wdev;
	wafer_sysfs_init(wdev);
	ret = wafer_fw_init(&wdev->fw, &cfg);
	if (ret)
		return dev_err_probe(&pdev->dev, ret, "firmware bring-up failed\n");
	wdev->wq = alloc_ordered_workqueue("wafer%u", 0, wdev->index);
	if (!wdev->wq) {
		ret = -ENOMEM;
		goto err_fw;
	}
	ret = wafer_job_queue_init(wdev);
	if (ret)
		goto err_wq;
	wafer_heartbeat_start(wdev);
	/* Registered after the queue's drmm allocation, so it runs first. */
	ret = drmm_add_action_or_reset(&wdev->drm, wafer_dev_release, wdev);
	if (ret)
		return ret;

	ret = drm_dev_register(&wdev->drm, 0);
	if (ret)
		return dev_err_probe(&pdev->dev, ret, "drm_dev_register failed\n");
	wafer_debugfs_init(wdev);
	drm_info(&wdev->drm, "%s profile, %u stages x %llu KiB SRAM, NUMA node %d\n",
		 wdev->fw.info.profile_name, wdev->fw.info.num_stages,
		 wdev->fw.info.sram_bytes >> 10, wdev->numa_node);
	return 0;

err_wq:
	destroy_workqueue(wdev->wq);
err_fw:
	wafer_fw_fini(&wdev->fw);
	return ret;
}

static void wafer_remove(struct platform_device *pdev)
{
	struct wafer_device *wdev = platform_get_drvdata(pdev);

	drm_dev_unplug(&wdev->drm);
	wafer_job_queue_unplug(wdev);
}

static struct platform_driver wafer_platform_driver = {
	.probe = wafer_probe,
	.remove = wafer_remove,
	.driver = {
		.name = WAFER_DRIVER_NAME,
		.dev_groups = wafer_sysfs_groups,
	},
};

static struct platform_device *wafer_pdevs[WAFER_MAX_DEVICES];

static void wafer_destroy_devices(void)
{
	int i;

	for (i = WAFER_MAX_DEVICES - 1; i >= 0; i--) {
		if (wafer_pdevs[i])
			platform_device_unregister(wafer_pdevs[i]);
		wafer_pdevs[i] = NULL;
	}
}

static int __init wafer_init(void)
{
	unsigned int i;
	int ret;

	ret = wafer_check_num_devices(wafer_num_devices);
	if (ret)
		return ret;

	ret = platform_driver_register(&wafer_platform_driver);
	if (ret)
		return ret;

	for (i = 0; i < wafer_num_devices; i++) {
		struct platform_device *pdev;

		pdev = platform_device_register_simple(WAFER_DRIVER_NAME, i,
						       NULL, 0);
		if (IS_ERR(pdev)) {
			ret = PTR_ERR(pdev);
			pr_err("wafer: creating device %u failed: %d\n", i, ret);
			wafer_destroy_devices();
			platform_driver_unregister(&wafer_platform_driver);
			return ret;
		}
		wafer_pdevs[i] = pdev;
	}
	return 0;
}

static void __exit wafer_exit(void)
{
	wafer_destroy_devices();
	platform_driver_unregister(&wafer_platform_driver);
}

module_init(wafer_init);
module_exit(wafer_exit);

MODULE_DESCRIPTION(WAFER_DRIVER_DESC);
MODULE_LICENSE("GPL");
