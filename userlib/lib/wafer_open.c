// SPDX-License-Identifier: MIT
/* libwafer: opening a device with a backend, querying it, closing it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wafer_backend.h"

/* AUTO: the kernel backend when a wafer device node exists. */
static const struct wafer_backend_ops *pick(const struct wafer_open_opts *o)
{
	switch (o->backend) {
	case WAFER_BACKEND_KERNEL:
		return &wafer_kernel_backend;
	case WAFER_BACKEND_INPROC:
		return &wafer_inproc_backend;
	case WAFER_BACKEND_AUTO: {
		struct wafer_device_desc d[64];
		int n = wafer_list_devices(d, 64), i;

		/*
		 * A wafer device this user may not open is an error that the
		 * kernel backend reports, not a reason to quietly run inproc.
		 */
		if (n < 0)
			return &wafer_kernel_backend;
		if (o->index < 0)
			return n > 0 ? &wafer_kernel_backend : &wafer_inproc_backend;
		for (i = 0; i < n && i < 64; i++)
			if (d[i].index == o->index)
				return &wafer_kernel_backend;
		return &wafer_inproc_backend;
	}
	}
	return NULL;
}

int wafer_open(const struct wafer_open_opts *opts, struct wafer_dev **out)
{
	struct wafer_open_opts def = { .index = -1 };
	const struct wafer_open_opts *o = opts ? opts : &def;
	struct wafer_dev *dev;
	int ret;

	if (!out)
		return wafer_set_error(-EINVAL, "wafer_open: no output pointer");
	*out = NULL;
	if (o->submit > WAFER_SUBMIT_URING)
		return wafer_set_error(-EINVAL, "wafer_open: unknown submit path %d", o->submit);
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return wafer_set_error(-ENOMEM, "out of memory");
	dev->ops = pick(o);
	if (!dev->ops) {
		free(dev);
		return wafer_set_error(-EINVAL, "wafer_open: unknown backend %d", o->backend);
	}
	ret = dev->ops->open(dev, o);
	if (ret) {
		free(dev);
		return ret;
	}
	/* The thread that opens is the one that submits. */
	wafer_numa_bind_thread(dev->info.numa_node);
	*out = dev;
	return 0;
}

void wafer_close(struct wafer_dev *dev)
{
	if (!dev)
		return;
	dev->ops->close(dev);
	free(dev);
}

unsigned int wafer_pipe_size(const struct wafer_dev *dev)
{
	unsigned int n = 1;

	if (dev->ops->member)
		dev->ops->member((struct wafer_dev *)dev, 0, &n);
	return n;
}

struct wafer_dev *wafer_pipe_member(struct wafer_dev *dev, unsigned int i)
{
	unsigned int n = 1;

	if (!dev)
		return NULL;
	if (dev->ops->member)
		return dev->ops->member(dev, i, &n);
	return i ? NULL : dev;
}

const char *wafer_backend_name(const struct wafer_dev *dev)
{
	return dev->ops->name;
}

int wafer_device_index(const struct wafer_dev *dev)
{
	return dev->index;
}

const char *wafer_submit_name(const struct wafer_dev *dev)
{
	return dev->ops->submit_name(dev);
}

int wafer_query(struct wafer_dev *dev, struct wafer_info *info)
{
	if (!dev || !info)
		return wafer_set_error(-EINVAL, "wafer_query: NULL argument");
	*info = dev->info;
	return 0;
}

int wafer_dev_stage_stats(struct wafer_dev *dev, struct wafer_stage_stats *out,
			  unsigned int max)
{
	unsigned int k, n = 0;
	struct wafer_dev *m;
	int ret;

	if (!dev || (!out && max))
		return wafer_set_error(-EINVAL, "wafer_dev_stage_stats: NULL argument");
	for (k = 0; k < wafer_pipe_size(dev); k++) {
		m = wafer_pipe_member(dev, k);
		if (!m || !m->ops->stage_stats)
			return wafer_set_error(-EOPNOTSUPP, "the %s backend reports no per-stage "
					       "counters",
					       m ? m->ops->name : dev->ops->name);
		ret = m->ops->stage_stats(m, n < max ? out + n : NULL, n < max ? max - n : 0);
		if (ret < 0)
			return ret;
		while (ret-- > 0) {
			if (n < max)
				out[n].member = k;
			n++;
		}
	}
	return (int)n;
}

int wafer_dev_stats(struct wafer_dev *dev, struct wafer_dev_stats *st)
{
	if (!dev || !st)
		return wafer_set_error(-EINVAL, "wafer_dev_stats: NULL argument");
	memset(st, 0, sizeof(*st));
	if (!dev->ops->stats)
		return wafer_set_error(-EOPNOTSUPP, "the %s backend reports no counters",
				       dev->ops->name);
	return dev->ops->stats(dev, st);
}
