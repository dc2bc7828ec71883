// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer: DRM accel driver for a simulated wafer-scale LLM inference device.
 *
 * The simulated devices are platform devices the module creates itself, one
 * per num_devices, so that they can be unbound and rebound through sysfs
 * like real hardware.  Each bound device brings up its firmware
 * (firmware-sim, behind the firmware ABI) and registers /dev/accel/accelN.
 */
#include <linux/compat.h>
#include <linux/lockdep.h>
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

#include "wdrv_drv.h"
#include "wdrv_gem.h"
#include "wdrv_heartbeat.h"
#include "wdrv_job.h"
#include "wdrv_model.h"
#include "wdrv_sysfs.h"
#include "wdrv_uapi.h"
#include "wdrv_uring.h"
#include "wfw_uapi_ties.h"	/* compile-time: firmware ABI == uapi */

static void wdrv_file_release(struct kref *ref)
{
	struct wdrv_file *wfile = container_of(ref, struct wdrv_file, ref);

	WARN_ON(atomic64_read(&wfile->bo_bytes));
	wdrv_job_pool_drain(&wfile->job_pool);
	mutex_destroy(&wfile->lock);
	kfree(wfile);
}

void wdrv_file_put(struct wdrv_file *wfile)
{
	kref_put(&wfile->ref, wdrv_file_release);
}

static int wdrv_open(struct drm_device *dev, struct drm_file *file)
{
	struct wdrv_file *wfile;
	int ret;

	wfile = kzalloc(sizeof(*wfile), GFP_KERNEL);
	if (!wfile)
		return -ENOMEM;
	wfile->wdev = to_wafer_device(dev);
	kref_init(&wfile->ref);
	wdrv_job_pool_init(&wfile->job_pool);
	atomic64_set(&wfile->bo_bytes, 0);
	mutex_init(&wfile->lock);
	xa_init_flags(&wfile->contexts, XA_FLAGS_ALLOC1);
	ret = wdrv_file_jobs_init(wfile);
	if (ret) {
		xa_destroy(&wfile->contexts);
		wdrv_file_put(wfile);
		return ret;
	}
	file->driver_priv = wfile;
	return 0;
}

static void wdrv_postclose(struct drm_device *dev, struct drm_file *file)
{
	struct wdrv_file *wfile = to_wafer_file(file);

	/* Jobs first (they hold contexts), then contexts, then the model. */
	wdrv_file_jobs_fini(wfile);
	wdrv_file_release_models(wfile);
	xa_destroy(&wfile->contexts);
	wdrv_file_put(wfile);
}

/*
 * The model GET_INFO describes, its firmware id in *@fw_id (0: the
 * lowest-index model, for the device fields only); model_lock held.
 */
static int info_model(struct wdrv_device *wdev, struct wdrv_file *wfile, u32 id,
		      struct wdrv_model **model, u32 *fw_id)
{
	lockdep_assert_held(&wdev->model_lock);
	*model = id ? wdrv_model_table_find(&wdev->models, wfile, id) :
		      wdrv_model_table_owned(&wdev->models, wfile);
	if (*model && (*model)->lost)
		*model = NULL;
	*fw_id = *model ? (*model)->fw_id : 0;
	if (!id || *model)
		return 0;
	drm_dbg(&wdev->drm, "GET_INFO: model_id %u is not loaded by this file\n", id);
	return -ENOENT;
}

/* The described model's members of the reply. */
static void info_fill_model(struct drm_wafer_device_info *info, const struct wdrv_model *model,
			    const struct wfw_info *fi)
{
	if (!model)
		return;
	info->model_id = model->id;
	info->model_sram_bytes = model->sram_bytes;
	info->model_kv_bytes_per_pos = fi->kv_bytes_per_pos;
	info->model_layers = model->n_layers;
	info->model_max_ctx = fi->max_ctx;
	info->model_slots_at_max_ctx = fi->max_slots_at_max_ctx;
	info->model_flags = model->flags;
}

static void info_fill(struct wdrv_device *wdev, struct drm_wafer_device_info *info,
		      const struct wfw_info *fi)
{
	info->size = sizeof(*info);
	info->api_version = DRM_WAFER_API_VERSION;
	info->caps = DRM_WAFER_CAP_INT4 | DRM_WAFER_CAP_INT8 | DRM_WAFER_CAP_PRIME |
		     DRM_WAFER_CAP_URING_SUBMIT | DRM_WAFER_CAP_NOT_BEFORE;
	if (fi->caps & WFW_CAP_ALL_POSITIONS)
		info->caps |= DRM_WAFER_CAP_ALL_POSITIONS;
	/* LOAD_STREAM came with firmware ABI 1.2. */
	if (WFW_ABI_VERSION_MINOR(fi->abi_version) >= 2)
		info->caps |= DRM_WAFER_CAP_WEIGHT_STREAM;
	if (WFW_ABI_VERSION_MINOR(fi->abi_version) >= WDRV_FW_MINOR_PARTS)
		info->caps |= DRM_WAFER_CAP_LAYER_PARTS;
	if (WFW_ABI_VERSION_MINOR(fi->abi_version) >= WDRV_FW_MINOR_EXPERT_GROUPS)
		info->caps |= DRM_WAFER_CAP_EXPERT_GROUPS;
	if (WFW_ABI_VERSION_MINOR(fi->abi_version) >= WDRV_FW_MINOR_EXPERT_PARALLEL)
		info->caps |= DRM_WAFER_CAP_EXPERT_PARALLEL;
	info->stream_bytes_per_cycle = fi->stream_bytes_per_cycle;
	info->stream_latency_cycles = fi->stream_latency_cycles;
	info->fw_version_major = WFW_ABI_VERSION_MAJOR(fi->abi_version);
	info->fw_version_minor = WFW_ABI_VERSION_MINOR(fi->abi_version);
	info->profile = fi->profile;
	info->stages = fi->num_stages;
	info->sram_bytes_per_stage = fi->sram_bytes;
	info->sram_bytes_free = fi->sram_bytes * fi->num_stages - fi->sram_used;
	info->clock_hz = fi->clock_hz;
	info->macs_per_cycle = fi->macs_per_cycle;
	info->numa_node = wdev->numa_node;
	info->max_bo_size = (u64)wdrv_max_file_bo_mib << 20;
	info->max_models = min(wdrv_max_file_models, wdev->models.max);
	info->device_max_models = wdev->models.max;
	info->max_contexts = wdrv_max_file_contexts;
	info->max_inflight_jobs = wdrv_max_file_inflight;
	info->max_tokens_per_job = WDRV_MAX_TOKENS_PER_JOB;
	info->max_in_syncobjs = WDRV_MAX_IN_SYNCOBJS;
	/* Models loaded, of every file (firmware ABI 1.3 counts them). */
	info->models_loaded = fi->models ? fi->models : fi->model_loaded;
	info->contexts = fi->contexts;
	info->jobs_inflight = wdrv_job_queue_inflight(wdev);
	info->job_timeout_ms = wdrv_job_timeout_ms;
}

/* Fresh from the firmware: SRAM use changes with models and contexts. */
static int info_query(struct wdrv_device *wdev, struct wdrv_file *wfile, u32 id,
		      struct drm_wafer_device_info *info)
{
	struct wfw_info *fi = kzalloc(sizeof(*fi), GFP_KERNEL);
	struct wdrv_model *model;
	struct wfw_cpl cpl;
	u32 fw_id;
	int ret;

	if (!fi)
		return -ENOMEM;
	/*
	 * A reference keeps the model the file's (and its firmware id valid)
	 * meanwhile; the firmware is waited for without model_lock.
	 */
	ret = mutex_lock_killable(&wdev->model_lock);
	if (ret)
		goto out_free;
	ret = info_model(wdev, wfile, id, &model, &fw_id);
	if (model)
		wdrv_model_get(model);
	mutex_unlock(&wdev->model_lock);
	if (!ret)
		ret = wdrv_fw_ctrl_read_model(&wdev->fw, WFW_OP_GET_INFO, fw_id, 0, 0, fi,
					      sizeof(*fi), &cpl);
	if (!ret) {
		info_fill(wdev, info, fi);
		info_fill_model(info, model, fi);
	}
	if (model)
		wdrv_model_put(model);
out_free:
	kfree(fi);
	return ret;
}

static int wdrv_get_info_ioctl(struct drm_device *dev, void *data,
			       struct drm_file *file)
{
	struct wdrv_device *wdev = to_wafer_device(dev);
	struct drm_wafer_get_info *args = data;
	struct drm_wafer_device_info info = {};
	u32 len;
	int ret;

	ret = wdrv_check_get_info(dev, args);
	if (!ret)
		ret = info_query(wdev, to_wafer_file(file), args->model_id, &info);
	if (ret)
		return ret;
	len = min_t(u32, args->info_size, sizeof(info));
	if (copy_to_user(u64_to_user_ptr(args->info_ptr), &info, len))
		return -EFAULT;
	args->info_size = len;
	return 0;
}

static const struct drm_ioctl_desc wdrv_ioctls[] = {
	DRM_IOCTL_DEF_DRV(WAFER_GET_INFO, wdrv_get_info_ioctl, 0),
	DRM_IOCTL_DEF_DRV(WAFER_BO_CREATE, wdrv_bo_create_ioctl, 0),
	DRM_IOCTL_DEF_DRV(WAFER_BO_INFO, wdrv_bo_info_ioctl, 0),
	DRM_IOCTL_DEF_DRV(WAFER_MODEL_LOAD, wdrv_model_load_ioctl, 0),
	DRM_IOCTL_DEF_DRV(WAFER_MODEL_UNLOAD, wdrv_model_unload_ioctl, 0),
	DRM_IOCTL_DEF_DRV(WAFER_CTX_CREATE, wdrv_ctx_create_ioctl, 0),
	DRM_IOCTL_DEF_DRV(WAFER_CTX_DESTROY, wdrv_ctx_destroy_ioctl, 0),
	DRM_IOCTL_DEF_DRV(WAFER_SUBMIT, wdrv_submit_ioctl, 0),
	DRM_IOCTL_DEF_DRV(WAFER_WAIT, wdrv_wait_ioctl, 0),
};

/*
 * fdinfo: the file's modelled device time, each stage's share of it (a
 * drm-engine-stage<N> key per stage its jobs were timed on, from their
 * DRM_WAFER_JOB_TIMES records), its buffer memory, and how its io_uring
 * submissions were issued (wdrv_uring.c).
 */
static void wdrv_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct wdrv_file *wfile = to_wafer_file(file);
	u32 i, stages = min_t(u32, wfile->wdev->fw.info.num_stages, WDRV_MAX_STAGES);
	u64 ns;

	drm_printf(p, "drm-engine-wafer:\t%llu ns\n", atomic64_read(&wfile->busy_ns));
	for (i = 0; i < stages; i++) {
		ns = atomic64_read(&wfile->stage_ns[i]);
		if (ns)
			drm_printf(p, "drm-engine-stage%u:\t%llu ns\n", i, ns);
	}
	drm_printf(p, "drm-wafer-jobs-inflight:\t%d\n", atomic_read(&wfile->unfinished));
	drm_printf(p, "drm-wafer-uring-inline:\t%lld\n", atomic64_read(&wfile->uring_inline));
	drm_printf(p, "drm-wafer-uring-punted:\t%lld\n", atomic64_read(&wfile->uring_punted));
	drm_printf(p, "drm-wafer-uring-blocking:\t%lld\n", atomic64_read(&wfile->uring_blocking));
	drm_show_memory_stats(p, file);
}

/*
 * DRM_IOCTL_WAFER_SUBMIT of userspace built before &drm_wafer_job.layer:
 * an 80-byte struct whose seqno sits where the job's layer and pad are
 * now.  The DRM core would zero-extend it and return the seqno 8 bytes
 * past its end, so the ioctl's size tells it apart and the old layout is
 * read and answered here.
 */
struct wdrv_submit_v1 {
	u8 job[offsetof(struct drm_wafer_job, layer)];
	u64 seqno;
};

#define WDRV_IOCTL_SUBMIT_V1 \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_WAFER_SUBMIT, struct wdrv_submit_v1)

static_assert(sizeof(struct wdrv_submit_v1) == 80);
static_assert(sizeof(struct drm_wafer_submit) != sizeof(struct wdrv_submit_v1));

static long wdrv_submit_v1(struct file *filp, void __user *arg)
{
	struct wdrv_submit_v1 __user *u = arg;
	struct drm_wafer_submit s = {};
	long ret;

	if (copy_from_user(&s.job, u->job, sizeof(u->job)))
		return -EFAULT;
	ret = drm_ioctl_kernel(filp, wdrv_submit_ioctl, &s, 0);
	/* As drm_ioctl(): the struct goes back whatever the outcome. */
	if (put_user(s.seqno, &u->seqno))
		return -EFAULT;
	return ret;
}

/**
 * wdrv_ioctl() - file_operations.unlocked_ioctl of the accel node
 * @filp: the file
 * @cmd: ioctl number
 * @arg: its argument
 *
 * Return: drm_ioctl()'s, or the old SUBMIT's result.
 */
long wdrv_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	if (cmd == WDRV_IOCTL_SUBMIT_V1)
		return wdrv_submit_v1(filp, (void __user *)arg);
	return drm_ioctl(filp, cmd, arg);
}

#ifdef CONFIG_COMPAT
/**
 * wdrv_compat_ioctl() - file_operations.compat_ioctl of the accel node
 * @filp: the file
 * @cmd: ioctl number
 * @arg: its argument (a 32-bit process's)
 *
 * Return: drm_compat_ioctl()'s, or the old SUBMIT's result.
 */
long wdrv_compat_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	if (cmd == WDRV_IOCTL_SUBMIT_V1)
		return wdrv_submit_v1(filp, compat_ptr(arg));
	return drm_compat_ioctl(filp, cmd, arg);
}
#endif

/*
 * DRM_ACCEL_FOPS spelled out, but for the ioctl entries: an old-sized
 * SUBMIT is taken first (wdrv_ioctl() above), then drm_ioctl().
 * As in 6.12's include/drm/drm_accel.h: compare with a newer kernel's
 * macro when building for it (DKMS), nothing warns if it grew an entry.
 */
static const struct file_operations wdrv_accel_fops = {
	.owner = THIS_MODULE,
	.open = accel_open,
	.release = drm_release,
	.unlocked_ioctl = wdrv_ioctl,
#ifdef CONFIG_COMPAT
	.compat_ioctl = wdrv_compat_ioctl,
#endif
	.poll = drm_poll,
	.read = drm_read,
	.llseek = noop_llseek,
	.mmap = drm_gem_mmap,
#ifdef FOP_UNSIGNED_OFFSET
	.fop_flags = FOP_UNSIGNED_OFFSET,
#endif
	.show_fdinfo = drm_show_fdinfo,
	.uring_cmd = wdrv_uring_cmd,
};

static const struct drm_driver wdrv_drm_driver = {
	.driver_features = DRIVER_COMPUTE_ACCEL | DRIVER_GEM | DRIVER_SYNCOBJ,
	.open = wdrv_open,
	.postclose = wdrv_postclose,
	.gem_create_object = wdrv_gem_create_object,
	.gem_prime_import_sg_table = drm_gem_shmem_prime_import_sg_table,
	.show_fdinfo = wdrv_show_fdinfo,
	.ioctls = wdrv_ioctls,
	.num_ioctls = ARRAY_SIZE(wdrv_ioctls),
	.fops = &wdrv_accel_fops,
	.name = WDRV_DRIVER_NAME,
	.desc = WDRV_DRIVER_DESC,
	.major = WDRV_DRIVER_MAJOR,
	.minor = WDRV_DRIVER_MINOR,
	.patchlevel = WDRV_DRIVER_PATCHLEVEL,
};

/*
 * Teardown, in the one safe order: every job is freed (a closing file's
 * wait for them is bounded, so some may outlive it), and the context and
 * model releases they queued, which talk to the firmware, have run; then
 * the firmware's threads (which complete jobs into the queue and report
 * faults to it) stop, and only then the queue goes.
 */
static void wdrv_dev_release(struct drm_device *drm, void *arg)
{
	struct wdrv_device *wdev = arg;

	wdrv_job_queue_drain(wdev);
	flush_workqueue(wdev->wq);
	wdrv_heartbeat_stop(wdev);
	wdrv_sysfs_fini(wdev);
	wdrv_fw_fini(&wdev->fw);
	wdrv_job_queue_fini(wdev);
	destroy_workqueue(wdev->wq);
}

static int wdrv_probe(struct platform_device *pdev)
{
	struct wdrv_fw_config cfg = {
		.fault_inject = wdrv_fault_inject,
		.stage_workers = wdrv_stage_workers,
		/*
		 * A control command queued behind a hung job must not time out
		 * first: the hang is the job's timeout to report and recover.
		 */
		.ctrl_timeout_ms = 2 * wdrv_job_timeout_ms,
		.job_cpl = wdrv_job_fw_cpl,
		.fault = wdrv_job_fw_fault,
	};
	unsigned int sram_kib;
	struct wdrv_device *wdev;
	int ret;

	wdrv_shape_param(pdev->id, &cfg.profile, &cfg.stages, &sram_kib);
	cfg.sram_bytes = (u64)sram_kib << 10;
	wdev = devm_drm_dev_alloc(&pdev->dev, &wdrv_drm_driver,
				  struct wdrv_device, drm);
	if (IS_ERR(wdev))
		return PTR_ERR(wdev);
	wdev->index = pdev->id;
	wdev->numa_node = wdrv_numa_node_param(pdev->id);
	platform_set_drvdata(pdev, wdev);
	ret = drmm_mutex_init(&wdev->drm, &wdev->model_lock);
	if (ret)
		return ret;

	cfg.numa_node = wdev->numa_node;
	cfg.index = pdev->id;
	cfg.owner = wdev;
	wdrv_sysfs_init(wdev);
	ret = wdrv_fw_init(&wdev->fw, &cfg);
	if (ret)
		return dev_err_probe(&pdev->dev, ret, "firmware bring-up failed\n");
	wdrv_model_table_init(&wdev->models, wdev->fw.info.abi_version);
	wdev->wq = alloc_ordered_workqueue("wafer%u", 0, wdev->index);
	if (!wdev->wq) {
		ret = -ENOMEM;
		goto err_fw;
	}
	ret = wdrv_job_queue_init(wdev);
	if (ret)
		goto err_wq;
	wdrv_heartbeat_start(wdev);
	/* Registered after the queue's drmm allocation, so it runs first. */
	ret = drmm_add_action_or_reset(&wdev->drm, wdrv_dev_release, wdev);
	if (ret)
		return ret;

	ret = drm_dev_register(&wdev->drm, 0);
	if (ret)
		return dev_err_probe(&pdev->dev, ret, "drm_dev_register failed\n");
	wdrv_debugfs_init(wdev);
	drm_info(&wdev->drm, "%s profile, %u stages x %llu KiB SRAM, NUMA node %d\n",
		 wdev->fw.info.profile_name, wdev->fw.info.num_stages,
		 wdev->fw.info.sram_bytes >> 10, wdev->numa_node);
	return 0;

err_wq:
	destroy_workqueue(wdev->wq);
err_fw:
	wdrv_fw_fini(&wdev->fw);
	return ret;
}

static void wdrv_remove(struct platform_device *pdev)
{
	struct wdrv_device *wdev = platform_get_drvdata(pdev);

	drm_dev_unplug(&wdev->drm);
	wdrv_job_queue_unplug(wdev);
}

static struct platform_driver wdrv_platform_driver = {
	.probe = wdrv_probe,
	.remove = wdrv_remove,
	.driver = {
		.name = WDRV_DRIVER_NAME,
		.dev_groups = wdrv_sysfs_groups,
	},
};

static struct platform_device *wdrv_pdevs[WDRV_MAX_DEVICES];

static void wdrv_destroy_devices(void)
{
	int i;

	for (i = WDRV_MAX_DEVICES - 1; i >= 0; i--) {
		if (wdrv_pdevs[i])
			platform_device_unregister(wdrv_pdevs[i]);
		wdrv_pdevs[i] = NULL;
	}
}

static int __init wdrv_init(void)
{
	unsigned int i;
	int ret;

	ret = wdrv_check_num_devices(wdrv_num_devices);
	if (ret)
		return ret;

	ret = platform_driver_register(&wdrv_platform_driver);
	if (ret)
		return ret;

	for (i = 0; i < wdrv_num_devices; i++) {
		struct platform_device *pdev;

		pdev = platform_device_register_simple(WDRV_DRIVER_NAME, i,
						       NULL, 0);
		if (IS_ERR(pdev)) {
			ret = PTR_ERR(pdev);
			pr_err("wafer: creating device %u failed: %d\n", i, ret);
			wdrv_destroy_devices();
			platform_driver_unregister(&wdrv_platform_driver);
			return ret;
		}
		wdrv_pdevs[i] = pdev;
	}
	return 0;
}

static void __exit wdrv_exit(void)
{
	wdrv_destroy_devices();
	platform_driver_unregister(&wdrv_platform_driver);
}

module_init(wdrv_init);
module_exit(wdrv_exit);

MODULE_DESCRIPTION(WDRV_DRIVER_DESC);
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
