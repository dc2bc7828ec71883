/* SPDX-License-Identifier: MIT */
/*
 * wfs_simd.h - vector versions of the forward pass's hot loops, chosen at
 * run time.
 *
 * Each wfs_simd_*() call either does the whole job with vector kernels and
 * returns 1, or does nothing and returns 0, and the caller runs its scalar
 * code (the reference).  Results are bit-identical to the scalar code: all
 * sums are exact integer sums (no intermediate can overflow: see the bounds
 * at each kernel in wfs_simd_x86.c), so the order of additions is free.
 *
 * The vector kernels run inside wfs_os_simd_begin()/wfs_os_simd_end()
 * (kernel_fpu_begin()/end() in wafer.ko), entered for bounded chunks of
 * about WFS_SIMD_CHUNK_MACS multiply-accumulates so that the kernel does
 * not hold off preemption for long.
 */
#ifndef WFS_SIMD_H
#define WFS_SIMD_H

#include "wfs_compat.h"
#include "wfs_math.h"

/* Work per vector section: ~10-30 us of scalar-equivalent work. */
#define WFS_SIMD_CHUNK_MACS	(64u * 1024u)

/*
 * x86-64 kernels exist in this build: everywhere but in UML (whose
 * "kernel" has no kernel_fpu_begin()).
 */
#if defined(__x86_64__) && !(defined(__KERNEL__) && defined(CONFIG_UML))
#define WFS_SIMD_X86	1
#endif

int wfs_simd_matvec_rows(const struct wfs_qmat *w, const s16 *x, s64 *y,
			 u32 row_begin, u32 row_end);
int wfs_simd_attn_dots(const s16 *q, const u8 *k, u64 stride, u32 npos,
		       u32 hs, u32 esz, s64 *dots);
int wfs_simd_attn_accum(const s64 *p, const u8 *v, u64 stride, u32 npos,
			u32 hs, u32 esz, s64 *o);
int wfs_simd_softmax_exp(s64 *x, u32 n, s64 mx, u64 *sum);
int wfs_simd_softmax_scale(s64 *x, u32 n, u64 rcp, u32 sh);
u32 wfs_simd_attn_wshift(s64 *p, const u8 *ve, u64 stride, u32 npos,
			 s32 evmax);
int wfs_simd_vec_orabs(const s64 *v, u32 n, u64 *m);
int wfs_simd_vec_negabs(s64 *v, u32 n);
u32 wfs_simd_vec_rshr(const s64 *in, u32 n, u32 k, s64 lim, void *out,
		      u32 osz);
u32 wfs_simd_attn_scale(s64 *sc, const u8 *ke, const u8 *ve, u64 stride,
			u32 npos, s32 e0, s64 lim, s64 *scmax, s32 *evmax);

#ifdef WFS_SIMD_X86
/* AVX2 kernels (wfs_simd_x86.c): call only inside wfs_os_simd_begin(). */
void wfs_simd_x86_matvec_rows(const struct wfs_qmat *w, const s16 *x,
			      s64 *y, u32 row_begin, u32 row_end);
void wfs_simd_x86_attn_dots(const s16 *q, const u8 *k, u64 stride,
			    u32 npos, u32 hs, u32 esz, s64 *dots);
void wfs_simd_x86_attn_accum(const s64 *p, const u8 *v, u64 stride,
			     u32 npos, u32 hs, u32 esz, s64 *o);
u64 wfs_simd_x86_softmax_exp(s64 *x, u32 n, s64 mx);
void wfs_simd_x86_softmax_scale(s64 *x, u32 n, u64 rcp, u32 sh);
void wfs_simd_x86_attn_wshift(s64 *p, const u8 *ve, u64 stride, u32 npos,
			      s32 evmax);
u64 wfs_simd_x86_vec_orabs(const s64 *v, u32 n);
u64 wfs_simd_x86_vec_or(const s64 *v, u32 n);
void wfs_simd_x86_vec_negabs(s64 *v, u32 n);
void wfs_simd_x86_vec_rshr(const s64 *in, u32 n, u32 k, s64 lim, void *out,
			   u32 osz);
void wfs_simd_x86_attn_scale(s64 *sc, const u8 *ke, const u8 *ve,
			     u64 stride, u32 npos, s32 e0, s64 lim, s64 *mx,
			     s64 *evx);
#endif

#endif /* WFS_SIMD_H */
