// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer buffer objects.  Job inputs and outputs and model blobs live in
 * shmem-backed GEM objects; userspace maps them through the device fd.
 * Each file is charged for the BOs it creates, up to max_file_bo_mib.
 */
#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/iosys-map.h>
#include <linux/slab.h>

#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/wafer_accel.h>

#include "wdrv_drv.h"
#include "wdrv_gem.h"
#include "wdrv_uapi.h"

static void wdrv_bo_free(struct drm_gem_object *obj)
{
	struct wdrv_bo *bo = to_wafer_bo(obj);
	struct wdrv_file *owner = bo->owner;
	size_t size = obj->size;

	if (!iosys_map_is_null(&bo->kept))
		drm_gem_vunmap_unlocked(obj, &bo->kept);
	drm_gem_shmem_free(&bo->base);
	if (owner) {
		atomic64_sub(size, &owner->bo_bytes);
		wdrv_file_put(owner);
	}
}

/*
 * mmap through the device fd.  An imported BO maps its dma-buf, as
 * drm_gem_shmem_mmap() does, but that helper passes obj->dma_buf, which DRM
 * clears when the BO's last handle is closed while a racing mmap still
 * holds the object (uapi_fuzz: a WARN in dma_buf_mmap()).  The attachment's
 * dma-buf lives as long as the BO does.
 */
static int wdrv_bo_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma)
{
	int ret;

	if (!obj->import_attach)
		return drm_gem_shmem_object_mmap(obj, vma);
	/* The dma-buf exporter sets its own (or none). */
	vma->vm_private_data = NULL;
	vma->vm_ops = NULL;
	ret = dma_buf_mmap(obj->import_attach->dmabuf, vma, 0);
	/* The mapping holds the dma-buf: drop drm_gem_mmap_obj()'s reference. */
	if (!ret)
		drm_gem_object_put(obj);
	return ret;
}

static const struct drm_gem_object_funcs wdrv_bo_funcs = {
	.free = wdrv_bo_free,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = wdrv_bo_mmap,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

/* drm_driver.gem_create_object: every wafer GEM object is a wdrv_bo. */
struct drm_gem_object *wdrv_gem_create_object(struct drm_device *dev, size_t size)
{
	struct wdrv_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL);

	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->base.base.funcs = &wdrv_bo_funcs;
	bo->base.map_wc = false;
	return &bo->base.base;
}

/**
 * wdrv_gem_vmap() - map a BO the firmware reaches through the CPU
 * @obj: the BO, ours or imported by PRIME
 * @map: out: its kernel mapping, in system memory
 *
 * The firmware model reads and writes buffers with plain loads, stores and
 * memcpy(), so a dma-buf its exporter maps as I/O memory cannot be used.
 *
 * Return: 0, -EOPNOTSUPP for I/O memory, or drm_gem_vmap_unlocked()'s error.
 */
int wdrv_gem_vmap(struct drm_gem_object *obj, struct iosys_map *map)
{
	int ret = drm_gem_vmap_unlocked(obj, map);

	if (ret)
		return ret;
	if (map->is_iomem) {
		drm_gem_vunmap_unlocked(obj, map);
		iosys_map_clear(map);
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * A BO this driver backs with shmem: the ones it imported from another
 * exporter are mapped by that exporter, which may sleep every time.
 */
static bool bo_is_own_shmem(struct drm_gem_object *obj)
{
	return obj->funcs == &wdrv_bo_funcs && !obj->import_attach;
}

/**
 * wdrv_gem_vmap_job() - map a job's buffer, without sleeping if asked to
 * @obj: the BO
 * @map: out: its kernel mapping; release with drm_gem_vunmap_unlocked()
 * @nowait: io_uring's inline issue: fail rather than sleep
 *
 * The first job of one of our BOs maps it once more and keeps that mapping
 * (and so its pages) until the BO is freed: later jobs then only count a
 * use of it under a dma_resv trylock, which never sleeps.
 *
 * Return: 0, -EAGAIN when @nowait and mapping would sleep (the BO is not
 * mapped yet, is imported, or its lock is held), or wdrv_gem_vmap()'s error.
 */
int wdrv_gem_vmap_job(struct drm_gem_object *obj, struct iosys_map *map, bool nowait)
{
	struct wdrv_bo *bo;
	int ret = 0;

	if (!bo_is_own_shmem(obj))
		return nowait ? -EAGAIN : wdrv_gem_vmap(obj, map);
	bo = to_wafer_bo(obj);
	if (!nowait)
		dma_resv_lock(obj->resv, NULL);
	else if (!dma_resv_trylock(obj->resv))
		return -EAGAIN;
	if (iosys_map_is_null(&bo->kept)) {
		if (nowait)
			ret = -EAGAIN;
		else
			ret = drm_gem_shmem_vmap(&bo->base, &bo->kept);
	}
	/* With the kept mapping in place this only counts a use. */
	if (!ret)
		ret = drm_gem_shmem_vmap(&bo->base, map);
	dma_resv_unlock(obj->resv);
	return ret;
}

int wdrv_bo_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_wafer_bo_create *args = data;
	struct wdrv_file *wfile = to_wafer_file(file);
	u64 limit = (u64)wdrv_max_file_bo_mib << 20;
	struct drm_gem_shmem_object *shmem;
	u64 size;
	u32 handle;
	int ret;

	ret = wdrv_check_bo_create(dev, args, limit);
	if (ret)
		return ret;
	size = PAGE_ALIGN(args->size);
	if (atomic64_add_return(size, &wfile->bo_bytes) > limit) {
		atomic64_sub(size, &wfile->bo_bytes);
		drm_dbg(dev, "BO_CREATE: the file's %llu-byte BO quota is used up\n", limit);
		return -EDQUOT;
	}

	shmem = drm_gem_shmem_create(dev, size);
	if (IS_ERR(shmem)) {
		atomic64_sub(size, &wfile->bo_bytes);
		ret = PTR_ERR(shmem);
		/* shmem says -ENOSPC when it cannot allocate the inode. */
		return ret == -ENOSPC ? -ENOMEM : ret;
	}
	/* From here the BO's free releases the charge. */
	kref_get(&wfile->ref);
	container_of(shmem, struct wdrv_bo, base)->owner = wfile;

	ret = drm_gem_handle_create(file, &shmem->base, &handle);
	drm_gem_object_put(&shmem->base);
	if (ret)
		return ret;
	args->handle = handle;
	return 0;
}

int wdrv_bo_info_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_wafer_bo_info *args = data;
	struct drm_gem_object *obj;
	int ret;

	if (args->pad)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	ret = drm_gem_create_mmap_offset(obj);
	if (!ret) {
		args->size = obj->size;
		args->mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
	}
	drm_gem_object_put(obj);
	return ret;
}

#if IS_ENABLED(CONFIG_DRM_ACCEL_WAFER_KUNIT_TEST)
#include "tests/wdrv_gem_test.c"
#endif
