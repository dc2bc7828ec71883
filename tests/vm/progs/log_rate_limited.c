// SPDX-License-Identifier: MIT
/*
 * VM test program: a user repeating a failing request at will.  Loads the
 * shared model N times on a device too small for it (run with
 * stages=1 sram_kib=64): each load must fail with -ENOSPC.  The case script
 * then counts what the kernel log got from it.
 *
 * Usage: log_rate_limited [N]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wt_dev.h"
#include "wt_util.h"

int main(int argc, char **argv)
{
	unsigned int n = argc > 1 ? (unsigned int)strtoul(argv[1], NULL, 0) : 40, i, nospc;
	struct drm_wafer_model_load ml = { 0 };
	struct wt_dev_model m;
	struct wt_bo b;
	int fd = wt_dev_open(0);

	if (!wt_ok(fd >= 0, "device opened"))
		return wt_done();
	/* The first packs the model; the rest repeat the ioctl back to back. */
	nospc = wt_dev_load_model(fd, 8, 1, 16, &m) == -ENOSPC;
	if (!wt_ok(m.blob && !wt_bo_new(fd, &b, m.blob_len), "model blob in a BO"))
		return wt_done();
	memcpy(b.map, m.blob, m.blob_len);
	ml.bo_handle = b.handle;
	ml.blob_size = m.blob_len;
	for (i = 1; i < n; i++)
		nospc += wt_ioctl(fd, DRM_IOCTL_WAFER_MODEL_LOAD, &ml) == -ENOSPC;
	wt_ok(nospc == n, "%u of %u MODEL_LOADs failed with -ENOSPC", nospc, n);
	return wt_done();
}
