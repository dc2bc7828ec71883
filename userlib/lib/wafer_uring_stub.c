// SPDX-License-Identifier: MIT
/*
 * Placeholder for the io_uring submission path until wafer_uring.c lands:
 * it defines wafer_submit_uring itself, and this file is deleted then.
 */
#include <errno.h>
#include <stddef.h>

#include "wafer_internal.h"
#include "wafer_submit.h"

static int uring_init(int fd, const struct wafer_info *info, void **priv)
{
	(void)fd;
	(void)info;
	*priv = NULL;
	return wafer_set_error(-EOPNOTSUPP,
			       "io_uring submission is not implemented in this libwafer yet; "
			       "use --submit ioctl");
}

const struct wafer_submit_ops wafer_submit_uring = {
	.name = "uring",
	.init = uring_init,
};
