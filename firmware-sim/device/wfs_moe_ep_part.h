/* SPDX-License-Identifier: MIT */
/*
 * wfs_moe_ep_part.h - the layer parts of expert parallelism across devices
 * (WFW_PART_XHOME, WFW_PART_XSHARD): what LOAD_MODEL checks, places and
 * copies of them.  Their phases are the compute layer's (wfs_moe_ep.h).
 */
#ifndef WFS_MOE_EP_PART_H
#define WFS_MOE_EP_PART_H

#include "wfs_compat.h"
#include "wfs_model.h"
#include "wfw_abi.h"

struct wfs_log;

int wfs_ep_check_load(struct wfs_log *log, const struct wfs_model_info *info,
		      const struct wfw_cmd_load_model *p);
u64 wfs_ep_part_bytes(const struct wfs_layer_view *v, u32 part, u32 first,
		      u32 count);
void wfs_ep_part_copy(struct wfs_layer_view *v, u32 part, u32 first,
		      u32 count, u8 *dst);
u32 wfs_ep_rec_bytes(const struct wfs_model_info *info);

#endif /* WFS_MOE_EP_PART_H */
