/* SPDX-License-Identifier: MIT */
/*
 * wfs_moe_ep.h - expert parallelism across devices (ABI 1.7,
 * WFW_PART_XHOME / WFW_PART_XSHARD, the phases in wfw_abi.h).
 *
 * wfs_moe_ffn() cut at its two exchanges: the home routes and runs the
 * shared experts, the shards their routed experts' W1/W3 (UP) and W2
 * (DOWN), the home the one SwiGLU over all selected units (GLU) and the
 * residual add (FIN).  Every phase reads and writes one struct wfw_xrec
 * per position, so the same integer operations run in the same order as
 * on one device: the results are bit for bit wfs_layer_ffn()'s.
 *
 * Parts (the device's wfs_moe_ep_part.h): each keeps the section's header and
 * descriptors (a routed expert's shape is read there), then the home the
 * bytes from RMS_FFN to the first routed expert (norm, router, shared
 * experts; their descriptors moved to the copy), a shard its experts'
 * bytes as one group (struct wfs_xmap with per = 0: group 0 holds them).
 */
#ifndef WFS_MOE_EP_H
#define WFS_MOE_EP_H

#include "wfs_compat.h"
#include "wfs_model.h"
#include "wfs_profile.h"
#include "wfs_timing.h"
#include "wfw_abi.h"

/**
 * struct wfs_ep_work - what a chunk's records took in one phase
 * @phase: WFW_XPHASE_*
 * @macs: multiply-accumulates
 * @used: routed experts whose weights the chunk read (a bit each)
 * @shared: the chunk ran the shared experts
 */
struct wfs_ep_work {
	u32 phase;
	u64 macs;
	u64 used[WFS_MAX_EXPERTS / 64];
	u32 shared;
};

static inline int wfs_part_is_ep(u32 part)
{
	return part == WFW_PART_XHOME || part == WFW_PART_XSHARD;
}

int wfs_ep_phase_ok(u32 part, u32 phase);
int wfs_ep_rec_ok(const struct wfs_layer_view *v, u32 phase, const u8 *rec);
void wfs_ep_run(const struct wfs_layer_view *v, u32 phase, u8 *rec,
		void *scratch, struct wfs_ep_work *w);
const struct wfw_xrec_hdr *wfs_ep_hdr(const struct wfs_layer_view *v,
				      const u8 *rec);
u64 wfs_ep_link_bytes(u32 dim, u32 phase, const u8 *rec);
void wfs_ep_cost(const struct wfs_profile *p, const struct wfs_layer_view *v,
		 const struct wfs_ep_work *w, u32 n, u32 rec,
		 struct wfs_cost *cost);

#endif /* WFS_MOE_EP_H */
