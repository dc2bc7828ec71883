// SPDX-License-Identifier: MIT
/*
 * wfs_mblock.c - a model's named blocks in a stage's SRAM (see wfs_mblock.h).
 */
#include "wfs_device_priv.h"

void *wfs_stage_alloc(struct wfs_stage *st, const struct wfs_model_state *m,
		      u64 bytes, const char *fmt, u32 arg)
{
	char name[WFS_SRAM_NAME_LEN], full[WFS_SRAM_NAME_LEN];

	wfs_snprintf(name, sizeof(name), fmt, arg);
	if (m->idx)
		wfs_snprintf(full, sizeof(full), "m%u.%s", m->idx, name);
	return wfs_sram_alloc_owned(&st->sram, bytes, 0, m->idx ? full : name,
				    m->idx + 1);
}
