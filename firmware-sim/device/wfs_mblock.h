/* SPDX-License-Identifier: MIT */
/*
 * wfs_mblock.h - a model's named blocks in a stage's SRAM arena, owned by
 * the model so that unloading it frees exactly its blocks.
 */
#ifndef WFS_MBLOCK_H
#define WFS_MBLOCK_H

#include "wfs_compat.h"

struct wfs_stage;
struct wfs_model_state;

/*
 * Allocate a named block of model @m in a stage's SRAM ("%u" in @fmt takes
 * @arg; a model of index i > 0 prefixes "m<i>.").
 */
void *wfs_stage_alloc(struct wfs_stage *st, const struct wfs_model_state *m,
		      u64 bytes, const char *fmt, u32 arg);

#endif /* WFS_MBLOCK_H */
