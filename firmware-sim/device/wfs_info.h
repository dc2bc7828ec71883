/* SPDX-License-Identifier: MIT */
/*
 * wfs_info.h - the reporting commands: GET_INFO, GET_STATS, GET_SRAM_MAP,
 * READ_LOG and GET_EXPERT_LOAD.  They read every part of the device (each under its lock)
 * and change none.  The payloads are validated by the command processor.
 * GET_INFO, GET_STATS, GET_SRAM_MAP and GET_EXPERT_LOAD describe the model
 * struct wfw_cmd.model names (0: the lowest-index one; GET_SRAM_MAP: all
 * blocks); -ENOENT for an id that names no loaded model.
 */
#ifndef WFS_INFO_H
#define WFS_INFO_H

#include "wfw_abi.h"

struct wfs_device;

int wfs_info_get(struct wfs_device *dev, const struct wfw_cmd *cmd,
		 struct wfw_cpl *c);
int wfs_info_stats(struct wfs_device *dev, const struct wfw_cmd *cmd,
		   struct wfw_cpl *c);
int wfs_info_sram_map(struct wfs_device *dev, const struct wfw_cmd *cmd,
		      struct wfw_cpl *c);
int wfs_info_expert_load(struct wfs_device *dev, const struct wfw_cmd *cmd,
			 struct wfw_cpl *c);
int wfs_info_read_log(struct wfs_device *dev, const struct wfw_cmd_buf *p,
		      struct wfw_cpl *c);

#endif /* WFS_INFO_H */
