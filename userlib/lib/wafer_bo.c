// SPDX-License-Identifier: MIT
/* libwafer: buffers the device reads job inputs from and writes results to. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "wafer_backend.h"

int wafer_bo_create(struct wafer_dev *dev, size_t size, struct wafer_bo **out)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct wafer_bo *bo;
	int ret;

	if (!dev || !out)
		return wafer_set_error(-EINVAL, "wafer_bo_create: NULL argument");
	*out = NULL;
	if (!size || size > (SIZE_MAX - page) ||
	    (dev->info.max_bo_size && size > dev->info.max_bo_size))
		return wafer_set_error(-EINVAL, "buffer size %zu is 0 or above the limit of %llu",
				       size, (unsigned long long)dev->info.max_bo_size);
	bo = calloc(1, sizeof(*bo));
	if (!bo)
		return wafer_set_error(-ENOMEM, "out of memory");
	bo->dev = dev;
	bo->size = (size + page - 1) / page * page;
	ret = dev->ops->bo_create(dev, bo);
	if (ret) {
		free(bo);
		return ret;
	}
	*out = bo;
	return 0;
}

int wafer_bo_import(struct wafer_dev *dev, const struct wafer_bo *src, struct wafer_bo **out)
{
	struct wafer_bo *bo;
	int ret;

	*out = NULL;
	if (dev->ops != src->dev->ops || !dev->ops->bo_import)
		return wafer_set_error(-EINVAL, "a %s buffer cannot be shared with a %s device",
				       src->dev->ops->name, dev->ops->name);
	bo = calloc(1, sizeof(*bo));
	if (!bo)
		return wafer_set_error(-ENOMEM, "out of memory");
	bo->dev = dev;
	bo->view_of = src;
	ret = dev->ops->bo_import(dev, src, bo);
	if (ret) {
		free(bo);
		return ret;
	}
	*out = bo;
	return 0;
}

void *wafer_bo_map(const struct wafer_bo *bo)
{
	return bo->map;
}

size_t wafer_bo_size(const struct wafer_bo *bo)
{
	return bo->size;
}

void wafer_bo_destroy(struct wafer_bo *bo)
{
	if (!bo)
		return;
	bo->dev->ops->bo_destroy(bo->dev, bo);
	free(bo);
}
