// SPDX-License-Identifier: MIT
/*
 * libwafer: a speculative draft on an in-process device of its own with
 * as few stages as hold it (or a given number), the per-stage figures
 * those of the target's profile.  A wafer's stage is a region of its core
 * mesh; the firmware spreads a model's layers over all the stages it has
 * (one layer per stage while there are more stages than layers), and each
 * stage's chunk pays a fabric hop of hop_cycles to the next stage or the
 * host.  A small draft does not need that many regions: on one stage its
 * layers run back to back (their costs add up in one stage's time,
 * firmware-sim/device/wfs_stage.c chunk_timing()) and its step crosses one hop.
 */
#include <errno.h>
#include <stddef.h>

#include "wafer_backend.h"
#include "wfs_profile.h"

void wafer_draft_dev_free(struct wafer_draft_dev *dd)
{
	if (!dd)
		return;
	wafer_ctx_destroy(dd->ctx);
	wafer_model_unload(dd->model);
	wafer_close(dd->dev);
	dd->ctx = NULL;
	dd->model = NULL;
	dd->dev = NULL;
	dd->stages = 0;
}

/* The draft and its context on a device of @stages stages; -ENOSPC: no room. */
static int try_stages(const struct wafer_open_opts *o, unsigned int stages,
		      const struct wafer_draft_spec *d, const char *target_ckpt,
		      const struct wafer_convert_opts *target_conv,
		      const struct wafer_model *target, unsigned int ctx_len,
		      struct wafer_draft_dev *dd)
{
	struct wafer_open_opts so = *o;
	int ret;

	so.stages = stages;
	ret = wafer_open(&so, &dd->dev);
	if (!ret)
		ret = wafer_draft_load(dd->dev, d, target_ckpt, target_conv, target,
				       &dd->model);
	if (!ret)
		ret = wafer_ctx_create(dd->model, 1, ctx_len, &dd->ctx);
	if (ret) {
		wafer_draft_dev_free(dd);
		return ret;
	}
	dd->stages = stages;
	return 0;
}

int wafer_draft_load_packed(const struct wafer_open_opts *o, unsigned int stages,
			    const struct wafer_draft_spec *d, const char *target_ckpt,
			    const struct wafer_convert_opts *target_conv,
			    const struct wafer_model *target, unsigned int ctx_len,
			    struct wafer_draft_dev *out)
{
	struct wfs_profile p;
	unsigned int s, max;
	int ret = -ENOSPC;

	if (!o || !d || !target || !out || !ctx_len)
		return wafer_set_error(-EINVAL, "wafer_draft_load_packed: NULL argument");
	*out = (struct wafer_draft_dev){ 0 };
	if (o->backend != WAFER_BACKEND_INPROC)
		return wafer_set_error(-EOPNOTSUPP, "a draft's stages are chosen for an in-process "
				       "device (a kernel device has the stages its module gave it)");
	if (wfs_profile_find(o->profile, &p))
		return wafer_set_error(-EINVAL, "profile '%s' unknown", o->profile);
	max = o->stages ? o->stages : p.stages;
	if (stages > WFS_MAX_STAGES)
		return wafer_set_error(-EINVAL, "a draft on %u stages: at most %d", stages,
				       WFS_MAX_STAGES);
	if (stages)
		return try_stages(o, stages, d, target_ckpt, target_conv, target, ctx_len, out);
	for (s = 1; s <= max && ret == -ENOSPC; s++)
		ret = try_stages(o, s, d, target_ckpt, target_conv, target, ctx_len, out);
	if (ret == -ENOSPC)
		return wafer_prefix_error(ret, "the draft fits no device of 1..%u stages", max);
	return ret;
}
