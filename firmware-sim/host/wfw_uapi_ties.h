/* SPDX-License-Identifier: MIT */
/*
 * wfw_uapi_ties.h - compile-time ties between the firmware ABI and the
 * kernel/userspace ABI.
 *
 * The device writes struct wfw_out_rec records straight into a user BO
 * that userspace reads as struct drm_wafer_token_result (and activation
 * records as struct drm_wafer_act_rec), and the driver passes the
 * firmware's profile id, limits and job and model flags through unchanged.  Any
 * translation unit that includes this header fails to build if the two
 * ABIs drift apart.  The userspace build compiles it through
 * tests/unit/device_cmd.c; including it from kmod/wdrv_drv.c (which passes
 * the profile and the records through) ties the kernel build too.
 */
#ifndef WFW_UAPI_TIES_H
#define WFW_UAPI_TIES_H

#include "drm/wafer_accel.h"
#include "wfw_abi.h"
#include "wfs_profile.h"

#define WFW_TIE(cond, what)	WFS_STATIC_ASSERT(cond, "fw ABI vs uapi: " what)
#define WFW_TIE_FIELD(a, fa, b, fb)					\
	WFW_TIE(__builtin_offsetof(struct a, fa) ==			\
		__builtin_offsetof(struct b, fb) &&			\
		sizeof(((struct a *)0)->fa) == sizeof(((struct b *)0)->fb), \
		#a "." #fa " vs " #b "." #fb)

WFW_TIE(WFW_MAX_TOPK == DRM_WAFER_MAX_TOPK, "top-k limit");
WFW_TIE(WFW_LOGIT_FRAC_BITS == DRM_WAFER_LOGIT_FRAC_BITS, "logit format");

/* Profile ids: GET_INFO's value is the uapi's drm_wafer_info.profile. */
WFW_TIE(WFS_PROFILE_WAFER == DRM_WAFER_PROFILE_WAFER, "profile wafer");
WFW_TIE(WFS_PROFILE_ASIC == DRM_WAFER_PROFILE_ASIC, "profile asic");
WFW_TIE(WFS_PROFILE_WSE3 == DRM_WAFER_PROFILE_WSE3, "profile wse3");
WFW_TIE(WFS_PROFILE_WSE2 == DRM_WAFER_PROFILE_WSE2, "profile wse2");
WFW_TIE(WFS_PROFILE_LPU == DRM_WAFER_PROFILE_LPU, "profile lpu");
WFW_TIE(WFS_PROFILE_COUNT == 5, "a new profile needs a DRM_WAFER_PROFILE_*");

/* Result records: same size for every k, same fields at the same places. */
WFW_TIE(WFW_OUT_REC_SIZE(0) == DRM_WAFER_RESULT_SIZE(0), "record size (k = 0)");
WFW_TIE(WFW_OUT_REC_SIZE(1) == DRM_WAFER_RESULT_SIZE(1), "record size (k = 1)");
WFW_TIE(WFW_OUT_REC_SIZE(WFW_MAX_TOPK) ==
	DRM_WAFER_RESULT_SIZE(DRM_WAFER_MAX_TOPK), "record size (max k)");
WFW_TIE(sizeof(struct wfw_out_rec) == sizeof(struct drm_wafer_token_result),
	"record header");
WFW_TIE(sizeof(struct wfw_out_rec) == WFW_OUT_REC_SIZE(0), "record header");
WFW_TIE_FIELD(wfw_out_rec, pos, drm_wafer_token_result, position);
WFW_TIE_FIELD(wfw_out_rec, argmax, drm_wafer_token_result, argmax);
WFW_TIE_FIELD(wfw_out_rec, argmax_logit, drm_wafer_token_result, argmax_logit);
WFW_TIE_FIELD(wfw_out_rec, k, drm_wafer_token_result, top_k);
WFW_TIE(__builtin_offsetof(struct wfw_out_rec, topk) ==
	__builtin_offsetof(struct drm_wafer_token_result, topk), "pairs offset");
WFW_TIE(sizeof(struct wfw_topk_pair) == sizeof(struct drm_wafer_topk),
	"pair size");
WFW_TIE_FIELD(wfw_topk_pair, token, drm_wafer_topk, token);
WFW_TIE_FIELD(wfw_topk_pair, logit, drm_wafer_topk, logit);

/* Activation records pass from device to device through user BOs. */
WFW_TIE(sizeof(struct wfw_act_rec) == sizeof(struct drm_wafer_act_rec),
	"activation record header");
WFW_TIE_FIELD(wfw_act_rec, dim, drm_wafer_act_rec, dim);
WFW_TIE_FIELD(wfw_act_rec, exp, drm_wafer_act_rec, exp);
WFW_TIE_FIELD(wfw_act_rec, t_ns, drm_wafer_act_rec, t_ns);
WFW_TIE(__builtin_offsetof(struct wfw_act_rec, x) ==
	__builtin_offsetof(struct drm_wafer_act_rec, x), "activation values");
WFW_TIE(WFW_ACT_REC_SIZE(1) == DRM_WAFER_ACT_REC_SIZE(1), "record size (1)");
WFW_TIE(WFW_ACT_REC_SIZE(4096) == DRM_WAFER_ACT_REC_SIZE(4096),
	"activation record size (4096)");
/* A range's kinds: GET_INFO's model_flags are the uapi's. */
WFW_TIE(WFW_MODEL_EMBED == DRM_WAFER_MODEL_EMBED, "model flag embed");
WFW_TIE(WFW_MODEL_HEAD == DRM_WAFER_MODEL_HEAD, "model flag head");
WFW_TIE(WFW_MODEL_STREAM == DRM_WAFER_MODEL_STREAM, "model flag stream");
WFW_TIE(WFW_MODEL_ATTN == DRM_WAFER_MODEL_ATTN, "model flag attn");
WFW_TIE(WFW_MODEL_FFN == DRM_WAFER_MODEL_FFN, "model flag ffn");
WFW_TIE(WFW_PART_WHOLE == DRM_WAFER_PART_WHOLE, "part whole");
WFW_TIE(WFW_PART_ATTN == DRM_WAFER_PART_ATTN, "part attn");
WFW_TIE(WFW_PART_FFN == DRM_WAFER_PART_FFN, "part ffn");
WFW_TIE(WFW_PART_XHOME == DRM_WAFER_PART_XHOME, "part xhome");
WFW_TIE(WFW_PART_XSHARD == DRM_WAFER_PART_XSHARD, "part xshard");
WFW_TIE(WFW_PART_MAX == DRM_WAFER_PART_MAX, "largest part");
WFW_TIE(WFW_MODEL_XHOME == DRM_WAFER_MODEL_XHOME, "model flag xhome");
WFW_TIE(WFW_MODEL_XSHARD == DRM_WAFER_MODEL_XSHARD, "model flag xshard");

/* Expert parallelism (1.7): the phase in the layer word, the records. */
WFW_TIE(WFW_XPHASE_SHIFT == DRM_WAFER_XPHASE_SHIFT, "phase shift");
WFW_TIE(WFW_JOB_LAYER_MASK == DRM_WAFER_JOB_LAYER_MASK, "layer mask");
WFW_TIE(WFW_XPHASE_ROUTE == DRM_WAFER_XPHASE_ROUTE, "phase route");
WFW_TIE(WFW_XPHASE_UP == DRM_WAFER_XPHASE_UP, "phase up");
WFW_TIE(WFW_XPHASE_GLU == DRM_WAFER_XPHASE_GLU, "phase glu");
WFW_TIE(WFW_XPHASE_DOWN == DRM_WAFER_XPHASE_DOWN, "phase down");
WFW_TIE(WFW_XPHASE_FIN == DRM_WAFER_XPHASE_FIN, "phase fin");
WFW_TIE(WFW_XREC_MAX_SEL == DRM_WAFER_XREC_MAX_SEL, "selected experts");
WFW_TIE(sizeof(struct wfw_xrec_hdr) == sizeof(struct drm_wafer_xrec_hdr),
	"expert record header");
WFW_TIE_FIELD(wfw_xrec_hdr, n_units, drm_wafer_xrec_hdr, n_units);
WFW_TIE_FIELD(wfw_xrec_hdr, u0, drm_wafer_xrec_hdr, u0);
WFW_TIE_FIELD(wfw_xrec_hdr, u1, drm_wafer_xrec_hdr, u1);
WFW_TIE_FIELD(wfw_xrec_hdr, n_sel, drm_wafer_xrec_hdr, n_sel);
WFW_TIE_FIELD(wfw_xrec_hdr, eh, drm_wafer_xrec_hdr, eh);
WFW_TIE_FIELD(wfw_xrec_hdr, ea1, drm_wafer_xrec_hdr, ea1);
WFW_TIE_FIELD(wfw_xrec_hdr, ea3, drm_wafer_xrec_hdr, ea3);
WFW_TIE_FIELD(wfw_xrec_hdr, eu, drm_wafer_xrec_hdr, eu);
WFW_TIE_FIELD(wfw_xrec_hdr, ey, drm_wafer_xrec_hdr, ey);
WFW_TIE_FIELD(wfw_xrec_hdr, reserved, drm_wafer_xrec_hdr, reserved);
WFW_TIE_FIELD(wfw_xrec_hdr, expert, drm_wafer_xrec_hdr, expert);
WFW_TIE_FIELD(wfw_xrec_hdr, gate, drm_wafer_xrec_hdr, gate);
WFW_TIE(WFW_XREC_H_OFF(288) == DRM_WAFER_XREC_H_OFF(288), "expert record h");
WFW_TIE(WFW_XREC_A3_OFF(288, 768) == DRM_WAFER_XREC_A3_OFF(288, 768),
	"expert record a3");
WFW_TIE(WFW_XREC_U_OFF(64, 173) == DRM_WAFER_XREC_U_OFF(64, 173),
	"expert record u");
WFW_TIE(WFW_XREC_Y_OFF(64, 173) == DRM_WAFER_XREC_Y_OFF(64, 173),
	"expert record y");
WFW_TIE(WFW_XREC_SIZE(64, 173) == DRM_WAFER_XREC_SIZE(64, 173),
	"expert record size");
WFW_TIE(WFW_XREC_SIZE(4096, 14336) == DRM_WAFER_XREC_SIZE(4096, 14336),
	"expert record size (large)");
WFW_TIE(WFW_JOB_LAYER == DRM_WAFER_JOB_LAYER, "job flag layer");
WFW_TIE(WFW_LOAD_STREAM == DRM_WAFER_LOAD_STREAM, "load flag stream");
WFW_TIE(WFW_LOAD_FLAGS_ALL == DRM_WAFER_LOAD_FLAGS, "load flags");
WFW_TIE(WFW_JOB_IN_ACT == DRM_WAFER_JOB_IN_ACT, "job flag in_act");
WFW_TIE(WFW_JOB_OUT_ACT == DRM_WAFER_JOB_OUT_ACT, "job flag out_act");
WFW_TIE(WFW_JOB_ALL_POSITIONS == DRM_WAFER_JOB_ALL_POSITIONS, "job flag all");
WFW_TIE(WFW_JOB_NOP == DRM_WAFER_JOB_NOP, "job flag nop");
WFW_TIE(WFW_JOB_TIMES == DRM_WAFER_JOB_TIMES, "job flag times");
WFW_TIE(!(DRM_WAFER_JOB_WAIT_SUBMIT & WFW_JOB_FLAGS_KNOWN), "wait_submit is the driver's");
WFW_TIE(WFW_JOB_NOT_BEFORE == DRM_WAFER_JOB_NOT_BEFORE, "job flag not_before");
WFW_TIE(WFW_NOT_BEFORE_MAX == DRM_WAFER_NOT_BEFORE_MAX, "latest not_before floor");
WFW_TIE(!(DRM_WAFER_JOB_DONE_NS & WFW_JOB_FLAGS_KNOWN), "done_ns is the driver's");

/* The modelled timeline a TIMES job writes into a user BO. */
WFW_TIE(sizeof(struct wfw_chunk_time) == sizeof(struct drm_wafer_chunk_time),
	"chunk time record");
WFW_TIE_FIELD(wfw_chunk_time, stage, drm_wafer_chunk_time, stage);
WFW_TIE_FIELD(wfw_chunk_time, pos0, drm_wafer_chunk_time, pos0);
WFW_TIE_FIELD(wfw_chunk_time, n, drm_wafer_chunk_time, n_tokens);
WFW_TIE_FIELD(wfw_chunk_time, flags, drm_wafer_chunk_time, flags);
WFW_TIE_FIELD(wfw_chunk_time, start_ns, drm_wafer_chunk_time, start_ns);
WFW_TIE_FIELD(wfw_chunk_time, end_ns, drm_wafer_chunk_time, end_ns);
WFW_TIE_FIELD(wfw_chunk_time, hop_end_ns, drm_wafer_chunk_time, hop_end_ns);
WFW_TIE(WFW_CHUNK_VALID == DRM_WAFER_CHUNK_VALID, "chunk flag valid");
WFW_TIE(WFW_CHUNK_LINK == DRM_WAFER_CHUNK_LINK, "chunk flag link");

#undef WFW_TIE_FIELD
#undef WFW_TIE

#endif /* WFW_UAPI_TIES_H */
