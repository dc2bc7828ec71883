/* SPDX-License-Identifier: MIT */
/*
 * wfs_room.h - the SRAM of a stage that the other loaded models leave a
 * model: what placement may budget and expert groups may take.
 */
#ifndef WFS_ROOM_H
#define WFS_ROOM_H

#include "wfs_compat.h"

struct wfs_device;
struct wfs_model_state;

/*
 * SRAM the other models leave stage @s for @m: its free bytes, less the
 * minimum KV (and slot table) of each other model without a context yet.
 */
u64 wfs_stage_room(struct wfs_device *dev, const struct wfs_model_state *m,
		   u32 s);

#endif /* WFS_ROOM_H */
