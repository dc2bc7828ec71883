/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer buffer objects: GEM shmem objects with per-file memory accounting.
 */
#ifndef WDRV_GEM_H
#define WDRV_GEM_H

#include <linux/iosys-map.h>

#include <drm/drm_gem_shmem_helper.h>

struct drm_device;
struct drm_file;
struct wdrv_file;

/**
 * struct wdrv_bo - a buffer object
 * @base: the shmem object
 * @owner: file charged for its memory (NULL for imported BOs)
 * @kept: a kernel mapping held from the BO's first job until it is freed
 *	(under the BO's dma_resv lock), so that later jobs map it without
 *	sleeping (wdrv_gem_vmap_job())
 */
struct wdrv_bo {
	struct drm_gem_shmem_object base;
	struct wdrv_file *owner;
	struct iosys_map kept;
};

static inline struct wdrv_bo *to_wafer_bo(struct drm_gem_object *obj)
{
	return container_of(to_drm_gem_shmem_obj(obj), struct wdrv_bo, base);
}

struct drm_gem_object *wdrv_gem_create_object(struct drm_device *dev, size_t size);
int wdrv_gem_vmap(struct drm_gem_object *obj, struct iosys_map *map);
int wdrv_gem_vmap_job(struct drm_gem_object *obj, struct iosys_map *map, bool nowait);
int wdrv_bo_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int wdrv_bo_info_ioctl(struct drm_device *dev, void *data, struct drm_file *file);

#endif /* WDRV_GEM_H */
