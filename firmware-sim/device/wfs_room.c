// SPDX-License-Identifier: MIT
/*
 * wfs_room.c - the SRAM the other models leave a stage (see wfs_room.h).
 */
#include "wfs_device_priv.h"

/*
 * SRAM the other models leave a stage: its free bytes, less the minimum KV
 * (and slot table) of each other model without a context yet, which
 * placement promised it.
 */
u64 wfs_stage_room(struct wfs_device *dev, const struct wfs_model_state *m,
		   u32 s)
{
	struct wfs_stage *st = &dev->stages[s];
	u64 room, keep;
	u32 i;

	/* The models' presence and their contexts, as the CP changes them. */
	wfs_os_mutex_lock(dev->sync.lock);
	room = wfs_sram_free_bytes(&st->sram);
	for (i = 0; i < WFS_MAX_MODELS; i++) {
		const struct wfs_model_state *o = &dev->models.m[i];

		if (!o->loaded || o == m || wfs_ctx_count(dev, i))
			continue;
		keep = (u64)st->mdl[i].n_layers * o->table.a[WFS_A_KV].count *
		       wfs_sram_block_size(o->table.a[WFS_A_KV].bytes);
		if (!s)
			keep += wfs_sram_block_size(o->table.a[WFS_A_SLOTS].bytes);
		room = room > keep ? room - keep : 0;
	}
	wfs_os_mutex_unlock(dev->sync.lock);
	return room;
}
