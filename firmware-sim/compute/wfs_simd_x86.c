// SPDX-License-Identifier: MIT
/*
 * wfs_simd_x86.c - AVX2 kernels of the forward pass (see wfs_simd.h).
 *
 * Integer vector code only, written with the compiler's vector extensions
 * and two builtins (vpmaddwd, vpmuldq), so no intrinsics header is needed
 * in the kernel.  wafer.ko compiles this one file with -mavx2 (Kbuild);
 * its functions may only run between wfs_os_simd_begin() and _end(), which
 * is why nothing else lives here.  Userspace compiles it with the build's
 * normal flags and marks each function target("avx2") instead.
 *
 * Exactness: every product and partial sum below is exact, so the results
 * equal the scalar code's bit for bit whatever the order of additions:
 * - vpmaddwd adds two s16 x s16 products into s32; it wraps only for
 *   (-32768)^2 twice, and one factor is never -32768 here (weights are
 *   s8 or int4, queries are clamped to +-32767);
 * - a matvec group sums at most WFS_MAX_GROUP products of |q| <= 128 and
 *   |x| <= 32768 (< 2^31) in s32 lanes, then each lane times its u16
 *   scale goes to s64 (vpmuldq);
 * - attention sums go to s64 lanes after each vpmaddwd; p * v uses vpmuldq
 *   on p < 2^31 (the caller checks) and a sign-extended value.
 */
#include "wfs_simd.h"

/* sparse (__CHECKER__) does not model GCC's vector extensions */
#if defined(WFS_SIMD_X86) && !defined(__CHECKER__)

#ifdef __KERNEL__
#define WFS_AVX2
#else
#define WFS_AVX2	__attribute__((target("avx2")))
#endif
#define WFS_ALWAYS_INLINE	__attribute__((__always_inline__))
#define WFS_NOINLINE	__attribute__((__noinline__))
/*
 * "#pragma GCC unroll" below: a loop over an array of vectors, unrolled
 * whatever the optimisation level.  Kbuild compiles at -O2, which leaves
 * such loops rolled, and the array then lives on the stack (zeroed on
 * entry, each step a load and a store) instead of in registers: the
 * matvec ran at half the speed of userspace's -O3 build.
 */

typedef s8 wfs_v16qi __attribute__((vector_size(16)));
typedef u8 wfs_v16qu __attribute__((vector_size(16)));
typedef s8 wfs_v8qi __attribute__((vector_size(8)));
typedef u8 wfs_v8qu __attribute__((vector_size(8)));
typedef s8 wfs_v4qi __attribute__((vector_size(4)));
typedef s16 wfs_v16hi __attribute__((vector_size(32)));
typedef s16 wfs_v8hi __attribute__((vector_size(16)));
typedef s16 wfs_v4hi __attribute__((vector_size(8)));
typedef s32 wfs_v8si __attribute__((vector_size(32)));
typedef u32 wfs_v8su __attribute__((vector_size(32)));
typedef s32 wfs_v4si __attribute__((vector_size(16)));
typedef s64 wfs_v4di __attribute__((vector_size(32)));
typedef u64 wfs_v4du __attribute__((vector_size(32)));

/* Unaligned, aliasing views for loads and stores. */
typedef s8 wfs_v16qi_u __attribute__((vector_size(16), aligned(1), may_alias));
typedef u8 wfs_v16qu_u __attribute__((vector_size(16), aligned(1), may_alias));
typedef s8 wfs_v8qi_u __attribute__((vector_size(8), aligned(1), may_alias));
typedef u8 wfs_v8qu_u __attribute__((vector_size(8), aligned(1), may_alias));
typedef s8 wfs_v4qi_u __attribute__((vector_size(4), aligned(1), may_alias));
typedef s16 wfs_v16hi_u __attribute__((vector_size(32), aligned(1), may_alias));
typedef s16 wfs_v8hi_u __attribute__((vector_size(16), aligned(1), may_alias));
typedef u16 wfs_v8hu_u __attribute__((vector_size(16), aligned(1), may_alias));
typedef s16 wfs_v4hi_u __attribute__((vector_size(8), aligned(1), may_alias));
typedef s64 wfs_v4di_u __attribute__((vector_size(32), aligned(1), may_alias));
typedef s32 wfs_v4si_u __attribute__((vector_size(16), aligned(1), may_alias));
typedef s32 wfs_v8si_u __attribute__((vector_size(32), aligned(1), may_alias));

/* the builtins' own vector types (s64 is long in userspace) */
#define WFS_V4LL	long long __attribute__((vector_size(32)))
#define WFS_V2LL	long long __attribute__((vector_size(16)))
#define WFS_V16QC	char __attribute__((vector_size(16)))

/* s16 pairs multiplied and added into s32 lanes (vpmaddwd). */
static inline WFS_AVX2 wfs_v8si wfs_madd256(wfs_v16hi a, wfs_v16hi b)
{
	return (wfs_v8si)__builtin_ia32_pmaddwd256(a, b);
}

static inline WFS_AVX2 wfs_v4si wfs_madd128(wfs_v8hi a, wfs_v8hi b)
{
	return (wfs_v4si)__builtin_ia32_pmaddwd128(a, b);
}

/* Even s32 lanes of a and b multiplied into s64 lanes (vpmuldq). */
static inline WFS_AVX2 wfs_v4di wfs_mul_even(wfs_v8si a, wfs_v8si b)
{
	return (wfs_v4di)__builtin_ia32_pmuldq256(a, b);
}

/* The s32 lanes of @a times @b, summed into s64 lanes. */
static inline WFS_AVX2 wfs_v4di wfs_widen_mul(wfs_v8si a, wfs_v8si b)
{
	wfs_v8si odd = (wfs_v8si)((wfs_v4du)a >> 32);

	return wfs_mul_even(a, b) + wfs_mul_even(odd, b);
}

static inline WFS_AVX2 s64 wfs_hsum4(wfs_v4di a)
{
	return a[0] + a[1] + a[2] + a[3];
}

static inline WFS_AVX2 s32 wfs_hsum4si(wfs_v4si a)
{
	return a[0] + a[1] + a[2] + a[3];
}

/*
 * Sixteen s8 or u8 widened to s16: one vpmovsxbw/vpmovzxbw (GCC 12 turns
 * __builtin_convertvector() of u8 into two 8-byte halves).
 */
static inline WFS_AVX2 wfs_v16hi wfs_cvt16s(wfs_v16qi v)
{
#ifdef __clang__
	return __builtin_convertvector(v, wfs_v16hi);
#else
	return (wfs_v16hi)__builtin_ia32_pmovsxbw256((WFS_V16QC)v);
#endif
}

static inline WFS_AVX2 wfs_v16hi wfs_cvt16u(wfs_v16qu v)
{
#ifdef __clang__
	return __builtin_convertvector(v, wfs_v16hi);
#else
	return (wfs_v16hi)__builtin_ia32_pmovzxbw256((WFS_V16QC)v);
#endif
}

/* Sixteen s8 or u8 at @p, widened to s16. */
static inline WFS_AVX2 wfs_v16hi wfs_ld16s(const s8 *p)
{
	return wfs_cvt16s(*(const wfs_v16qi_u *)p);
}

static inline WFS_AVX2 wfs_v16hi wfs_ld16u(const u8 *p)
{
	return wfs_cvt16u(*(const wfs_v16qu_u *)p);
}

/* One int8 group: full 16-wide steps into @s, the rest returned. */
static inline WFS_AVX2 s32 wfs_grp_i8(const s8 *w, const s16 *x, u32 n,
				      wfs_v8si *s)
{
	wfs_v8si acc = { 0 };
	s32 rest = 0;
	u32 i;

	for (i = 0; i + 16 <= n; i += 16) {
		wfs_v16hi wv = wfs_ld16s(w + i);

		acc += wfs_madd256(wv, *(const wfs_v16hi_u *)(x + i));
	}
	if (i + 8 <= n) {
		wfs_v8hi wv = __builtin_convertvector(*(const wfs_v8qi_u *)(w + i),
						      wfs_v8hi);

		rest = wfs_hsum4si(wfs_madd128(wv, *(const wfs_v8hi_u *)(x + i)));
		i += 8;
	}
	for (; i < n; i++)
		rest += (s32)w[i] * x[i];
	*s = acc;
	return rest;
}

/*
 * One int4 group in split-halves order (see struct wfs_qmat): byte i holds
 * weight i (low nibble) and weight h + i (high nibble), each q + 8.
 */
static inline WFS_AVX2 s32 wfs_grp_i4(const u8 *b, const s16 *x, u32 n,
				      wfs_v8si *s)
{
	u32 h = (n + 1) >> 1, m = n - h, i;
	const s16 *xh = x + h;
	wfs_v8si acc = { 0 };
	s32 rest = 0;

	for (i = 0; i + 16 <= m; i += 16) {
		wfs_v16hi v = wfs_ld16u(b + i);
		wfs_v16hi lo = (v & 15) - 8, hi = (v >> 4) - 8;

		acc += wfs_madd256(lo, *(const wfs_v16hi_u *)(x + i));
		acc += wfs_madd256(hi, *(const wfs_v16hi_u *)(xh + i));
	}
	if (i + 8 <= m) {
		wfs_v8hi v = __builtin_convertvector(*(const wfs_v8qu_u *)(b + i),
						     wfs_v8hi);
		wfs_v8hi lo = (v & 15) - 8, hi = (v >> 4) - 8;

		rest = wfs_hsum4si(wfs_madd128(lo, *(const wfs_v8hi_u *)(x + i)) +
				   wfs_madd128(hi, *(const wfs_v8hi_u *)(xh + i)));
		i += 8;
	}
	for (; i < m; i++)
		rest += ((s32)(b[i] & 15) - 8) * x[i] +
			((s32)(b[i] >> 4) - 8) * xh[i];
	if (h != m)
		rest += ((s32)(b[h - 1] & 15) - 8) * x[h - 1];
	*s = acc;
	return rest;
}

/*
 * Full int8 groups of a row when @gs is a multiple of 16: no tails inside
 * the loop.  Inlined with a constant @gs for the common group size so the
 * inner loop unrolls.
 */
static inline WFS_AVX2 WFS_ALWAYS_INLINE wfs_v4di
wfs_row_i8(const s8 *w, const u16 *sc, const s16 *x, u32 ng, u32 gs)
{
	wfs_v4di acc = { 0 };
	u32 g, i;

	for (g = 0; g < ng; g++, w += gs, x += gs) {
		wfs_v8si s = { 0 }, scale = { 0 };

		for (i = 0; i < gs; i += 16)
			s += wfs_madd256(wfs_ld16s(w + i),
					 *(const wfs_v16hi_u *)(x + i));
		scale += (s32)sc[g];
		acc += wfs_widen_mul(s, scale);
	}
	return acc;
}

/* Full int4 groups of a row when @gs is a multiple of 32 (h = @gs / 2). */
static inline WFS_AVX2 WFS_ALWAYS_INLINE wfs_v4di
wfs_row_i4(const u8 *b, const u16 *sc, const s16 *x, u32 ng, u32 gs)
{
	u32 g, i, h = gs / 2;
	wfs_v4di acc = { 0 };

	for (g = 0; g < ng; g++, b += h, x += gs) {
		wfs_v8si s = { 0 }, scale = { 0 };

		for (i = 0; i < h; i += 16) {
			wfs_v16hi v = wfs_ld16u(b + i);
			wfs_v16hi lo = (v & 15) - 8, hi = (v >> 4) - 8;

			s += wfs_madd256(lo, *(const wfs_v16hi_u *)(x + i)) +
			     wfs_madd256(hi, *(const wfs_v16hi_u *)(x + h + i));
		}
		scale += (s32)sc[g];
		acc += wfs_widen_mul(s, scale);
	}
	return acc;
}

/* { a0 + a1, a2 + a3, b0 + b1, b2 + b3 | the same of the high halves } */
static inline WFS_AVX2 wfs_v8si wfs_hadd(wfs_v8si a, wfs_v8si b)
{
	return (wfs_v8si)__builtin_ia32_phaddd256(a, b);
}

/* The two 128-bit halves of @a swapped. */
static inline WFS_AVX2 wfs_v8si wfs_swap128(wfs_v8si a)
{
#ifdef __clang__
	return __builtin_shufflevector(a, a, 4, 5, 6, 7, 0, 1, 2, 3);
#else
	const wfs_v8si swap = { 4, 5, 6, 7, 0, 1, 2, 3 };

	return __builtin_shuffle(a, swap);
#endif
}

/*
 * Lane i: the sum of the eight lanes of s[i].  Exact in s32: each s[i] is
 * one group's products, whose every partial sum stays below 2^31.
 */
static inline WFS_AVX2 wfs_v8si wfs_hsum8x8(const wfs_v8si *s)
{
	wfs_v8si e = wfs_hadd(wfs_hadd(s[0], s[1]), wfs_hadd(s[2], s[3]));
	wfs_v8si f = wfs_hadd(wfs_hadd(s[4], s[5]), wfs_hadd(s[6], s[7]));

#ifdef __clang__
	return __builtin_shufflevector(e, f, 0, 1, 2, 3, 8, 9, 10, 11) +
	       __builtin_shufflevector(e, f, 4, 5, 6, 7, 12, 13, 14, 15);
#else
	const wfs_v8si lo = { 0, 1, 2, 3, 8, 9, 10, 11 };
	const wfs_v8si hi = { 4, 5, 6, 7, 12, 13, 14, 15 };

	return __builtin_shuffle(e, f, lo) + __builtin_shuffle(e, f, hi);
#endif
}

/*
 * Group sums of one group of eight rows (lane i: row i), full int8
 * groups of @gs, a multiple of 16.  The eight rows share each load of x.
 */
static inline WFS_AVX2 WFS_ALWAYS_INLINE wfs_v8si
wfs_grp8_i8(const s8 *w, u64 rb, const s16 *x, u32 gs)
{
	wfs_v8si s[8] = { { 0 } };
	u32 i, k;

	for (i = 0; i < gs; i += 16) {
		wfs_v16hi xv = *(const wfs_v16hi_u *)(x + i);

#pragma GCC unroll 8
		for (k = 0; k < 8; k++)
			s[k] += wfs_madd256(wfs_ld16s(w + k * rb + i), xv);
	}
	return wfs_hsum8x8(s);
}

/*
 * wfs_grp8_i8() for int4 groups of @nb bytes a row (a multiple of 16):
 * the low nibbles meet @xl, the high ones @xh.  The stored nibbles n = q + 8
 * times x, less 8 * (the sum of x), which is the same for the eight rows
 * (all sums exact in s32: 15 * 2^15 * 256).
 */
static inline WFS_AVX2 WFS_ALWAYS_INLINE wfs_v8si
wfs_grp8_i4(const u8 *b, u64 rb, const s16 *xl, const s16 *xh, u32 nb)
{
	const wfs_v16hi eight = { 8, 8, 8, 8, 8, 8, 8, 8,
				  8, 8, 8, 8, 8, 8, 8, 8 };
	wfs_v8si s[8] = { { 0 } }, c = { 0 };
	u32 i, k;

	for (i = 0; i < nb; i += 16) {
		wfs_v16hi lo = *(const wfs_v16hi_u *)(xl + i);
		wfs_v16hi hi = *(const wfs_v16hi_u *)(xh + i);

		c += wfs_madd256(lo, eight) + wfs_madd256(hi, eight);
#pragma GCC unroll 8
		for (k = 0; k < 8; k++) {
			wfs_v16hi v = wfs_ld16u(b + k * rb + i);

			s[k] += wfs_madd256(v & 15, lo) +
				wfs_madd256(v >> 4, hi);
		}
	}
	/* every lane of c: the sum of c's eight lanes */
	c = wfs_hadd(c, c);
	c = wfs_hadd(c, c);
	c += wfs_swap128(c);
	return wfs_hsum8x8(s) - c;
}

/*
 * A matrix's short last group (n < group size values), for eight rows at
 * a time: its inputs copied with zeros after them to whole steps of 16, so
 * each row's loads may run past the group into bytes that meet zeros.
 * int8: x[0..nb) against the nb bytes from @off; int4: x[0..nb) against the
 * low nibbles, x[nb..2 nb) against the high ones.
 */
struct wfs_mv_tail {
	s16 x[WFS_MAX_GROUP];
	u32 nb;
	u32 off;
};

static inline WFS_AVX2 void wfs_tail_init(const struct wfs_qmat *w,
					  const s16 *x, struct wfs_mv_tail *t)
{
	u32 j = (w->n_groups - 1) * w->group_size, n = w->cols - j, h, i;

	if (w->qtype == WFS_QT_INT8) {
		t->nb = (n + 15) & ~15u;
		t->off = j;
		for (i = 0; i < t->nb; i++)
			t->x[i] = i < n ? x[j + i] : 0;
		return;
	}
	h = (n + 1) / 2;
	t->nb = (h + 15) & ~15u;
	t->off = j / 2;
	for (i = 0; i < t->nb; i++) {
		t->x[i] = i < h ? x[j + i] : 0;
		t->x[t->nb + i] = i < n - h ? x[j + h + i] : 0;
	}
}

/* Whether rows @r..@r+7's tail loads stay inside the matrix's data. */
static inline int wfs_tail_ok(const struct wfs_qmat *w,
			      const struct wfs_mv_tail *t, u32 r)
{
	return (u64)(r + 7) * w->row_bytes + t->off + t->nb <=
	       (u64)w->rows * w->row_bytes;
}

/*
 * The scales of group @g of eight rows (lane i: row i) from their @ng * 8
 * contiguous ones at @sc: one load when @ng is 1 or 2 (a model's narrow
 * matrices), else eight.
 */
static inline WFS_AVX2 wfs_v8si wfs_scales8(const u16 *sc, u32 ng, u32 g)
{
	wfs_v8si v, lo16 = { 0 };
	const u16 *p = sc + g;

	lo16 += 0xffff;
	if (ng == 2) {
		v = *(const wfs_v8si_u *)sc;
		return g ? (wfs_v8si)((wfs_v8su)v >> 16) : v & lo16;
	}
	if (ng == 1)
		return __builtin_convertvector(*(const wfs_v8hu_u *)sc,
					       wfs_v8si);
	{
		wfs_v8si m = { p[0], p[ng], p[2 * ng], p[3 * ng], p[4 * ng],
			       p[5 * ng], p[6 * ng], p[7 * ng] };

		return m;
	}
}

/* y[0..7] = { a0, b0, a1, b1, a2, b2, a3, b3 }, two vector stores */
static inline WFS_AVX2 void wfs_store_zip(s64 *y, wfs_v4di a, wfs_v4di b)
{
#ifdef __clang__
	*(wfs_v4di_u *)y = __builtin_shufflevector(a, b, 0, 4, 1, 5);
	*(wfs_v4di_u *)(y + 4) = __builtin_shufflevector(a, b, 2, 6, 3, 7);
#else
	const wfs_v4di lo = { 0, 4, 1, 5 }, hi = { 2, 6, 3, 7 };

	*(wfs_v4di_u *)y = __builtin_shuffle(a, b, lo);
	*(wfs_v4di_u *)(y + 4) = __builtin_shuffle(a, b, hi);
#endif
}

/* Scale and add a group's eight row sums @s (lanes i) into @ae, @ao. */
static inline WFS_AVX2 void wfs_acc8(wfs_v8si s, wfs_v8si m, wfs_v4di *ae,
				     wfs_v4di *ao)
{
	*ae += wfs_mul_even(s, m);
	*ao += wfs_mul_even((wfs_v8si)((wfs_v4du)s >> 32),
			    (wfs_v8si)((wfs_v4du)m >> 32));
}

/*
 * y[0..7] = the full groups (@nfast) of rows @r..@r+7, and the short last
 * one when @t: per group, eight rows' exact s32 sums in one vector, times
 * their eight scales (vpmuldq on the even and the odd lanes) into s64.
 */
static inline WFS_AVX2 WFS_ALWAYS_INLINE void
wfs_rows8(const struct wfs_qmat *w, const s16 *x, u32 r, u32 nfast, u32 gs,
	  const struct wfs_mv_tail *t, s64 *y)
{
	const u8 *d = w->data + (u64)r * w->row_bytes, *row = d;
	const u16 *sc = w->scales + (u64)r * w->n_groups;
	u32 g, ng = w->n_groups, step = w->qtype == WFS_QT_INT8 ? gs : gs / 2;
	u64 rb = w->row_bytes;
	wfs_v4di ae = { 0 }, ao = { 0 };
	wfs_v8si s;

	for (g = 0; g < nfast; g++, d += step, x += gs) {
		if (w->qtype == WFS_QT_INT8)
			s = wfs_grp8_i8((const s8 *)d, rb, x, gs);
		else
			s = wfs_grp8_i4(d, rb, x, x + gs / 2, gs / 2);
		wfs_acc8(s, wfs_scales8(sc, ng, g), &ae, &ao);
	}
	if (t) {
		if (w->qtype == WFS_QT_INT8)
			s = wfs_grp8_i8((const s8 *)row + t->off, rb, t->x,
					t->nb);
		else
			s = wfs_grp8_i4(row + t->off, rb, t->x, t->x + t->nb,
					t->nb);
		wfs_acc8(s, wfs_scales8(sc, ng, ng - 1), &ae, &ao);
	}
	/* rows in order, stored as vectors (the next kernel loads vectors) */
	wfs_store_zip(y, ae, ao);
}

/* The full groups of one row (@nfast of them, or none). */
static inline WFS_AVX2 WFS_ALWAYS_INLINE s64
wfs_row1(const struct wfs_qmat *w, const s16 *x, u32 r, u32 nfast, u32 gs)
{
	const u8 *row = w->data + (u64)r * w->row_bytes;
	const u16 *sc = w->scales + (u64)r * w->n_groups;

	if (w->qtype == WFS_QT_INT8)
		return wfs_hsum4(wfs_row_i8((const s8 *)row, sc, x, nfast, gs));
	return wfs_hsum4(wfs_row_i4(row, sc, x, nfast, gs));
}

/* The groups of row @r from @g0 on, through wfs_grp_i8/i4(). */
static inline WFS_AVX2 s64 wfs_row_rest(const struct wfs_qmat *w,
					const s16 *x, u32 r, u32 g0)
{
	const u8 *row = w->data + (u64)r * w->row_bytes;
	const u16 *sc = w->scales + (u64)r * w->n_groups;
	u32 g, j, gs = w->group_size;
	wfs_v4di acc = { 0 };
	s64 rest = 0;

	for (g = g0, j = g0 * gs; g < w->n_groups; g++, j += gs) {
		u32 n = WFS_MIN(gs, w->cols - j);
		wfs_v8si s, scale = { 0 };
		s32 t;

		if (w->qtype == WFS_QT_INT8)
			t = wfs_grp_i8((const s8 *)row + j, x + j, n, &s);
		else
			t = wfs_grp_i4(row + j / 2, x + j, n, &s);
		scale += (s32)sc[g];
		acc += wfs_widen_mul(s, scale);
		rest += (s64)t * sc[g];
	}
	return wfs_hsum4(acc) + rest;
}

/*
 * Rows @r..@end-1: full groups by eight rows at a time, with @gs, and the
 * short last group (@t) with them where its loads stay inside the data;
 * other rows' short groups through wfs_row_rest().
 */
static inline WFS_AVX2 WFS_ALWAYS_INLINE void
wfs_rows(const struct wfs_qmat *w, const s16 *x, s64 *y, u32 r, u32 end,
	 u32 nfast, u32 gs, const struct wfs_mv_tail *t)
{
	u32 k;

	for (; r + 8 <= end; r += 8) {
		int tail = t && wfs_tail_ok(w, t, r);

		wfs_rows8(w, x, r, nfast, gs, tail ? t : NULL, y + r);
		for (k = 0; t && !tail && k < 8; k++)
			y[r + k] += wfs_row_rest(w, x, r + k, nfast);
	}
	for (; r < end; r++)
		y[r] = wfs_row1(w, x, r, nfast, gs) +
		       (t ? wfs_row_rest(w, x, r, nfast) : 0);
}

/*
 * The two copies of wfs_rows() in frames of their own (noinline): inlined
 * side by side into one function, their vectors and the tail's copy of x
 * took over 2 KiB of kernel stack under KASAN.
 */
static WFS_NOINLINE WFS_AVX2 void
wfs_rows_gs32(const struct wfs_qmat *w, const s16 *x, s64 *y, u32 r, u32 end,
	      const struct wfs_mv_tail *t)
{
	wfs_rows(w, x, y, r, end, w->cols / 32, 32, t);
}

static WFS_NOINLINE WFS_AVX2 void
wfs_rows_any(const struct wfs_qmat *w, const s16 *x, s64 *y, u32 r, u32 end,
	     const struct wfs_mv_tail *t)
{
	wfs_rows(w, x, y, r, end, w->cols / w->group_size, w->group_size, t);
}

/*
 * A matrix with a short last group: its padded inputs (520 bytes) in a
 * frame of their own, so that the kernel's -ftrivial-auto-var-init=zero
 * clears them only for such matrices, not on every call.
 */
static WFS_NOINLINE WFS_AVX2 void
wfs_rows_tail(const struct wfs_qmat *w, const s16 *x, s64 *y, u32 r, u32 end)
{
	struct wfs_mv_tail tail;

	wfs_tail_init(w, x, &tail);
	if (w->group_size == 32)
		wfs_rows_gs32(w, x, y, r, end, &tail);
	else
		wfs_rows_any(w, x, y, r, end, &tail);
}

/**
 * wfs_simd_x86_matvec_rows() - wfs_matvec_rows() with AVX2
 * @w: quantised matrix (INT8 or INT4)
 * @x: @w->cols inputs
 * @y: outputs y[row_begin..row_end)
 * @row_begin: first row
 * @row_end: one past the last row
 *
 * When the group size allows (int8: a multiple of 16, int4: of 32; 32
 * gets its own unrolled copy), eight rows at a time with the paths above,
 * the short last group included; other group sizes go through
 * wfs_grp_i8/i4(), a row at a time.
 */
WFS_AVX2 void wfs_simd_x86_matvec_rows(const struct wfs_qmat *w,
				       const s16 *x, s64 *y, u32 row_begin,
				       u32 row_end)
{
	u32 r, gs = w->group_size;
	int i8 = w->qtype == WFS_QT_INT8;

	if (i8 ? gs % 16 : gs % 32) {
		for (r = row_begin; r < row_end; r++)
			y[r] = wfs_row_rest(w, x, r, 0);
		return;
	}
	if (w->cols % gs)
		wfs_rows_tail(w, x, y, row_begin, row_end);
	else if (gs == 32)
		wfs_rows_gs32(w, x, y, row_begin, row_end, NULL);
	else
		wfs_rows_any(w, x, y, row_begin, row_end, NULL);
}

/* { a0 + a1, a2 + a3, b0 + b1, b2 + b3 } */
static inline WFS_AVX2 wfs_v4di wfs_pair_sums(wfs_v4di a, wfs_v4di b)
{
#ifdef __clang__
	return __builtin_shufflevector(a, b, 0, 2, 4, 6) +
	       __builtin_shufflevector(a, b, 1, 3, 5, 7);
#else
	const wfs_v4di ev = { 0, 2, 4, 6 }, od = { 1, 3, 5, 7 };

	return __builtin_shuffle(a, b, ev) + __builtin_shuffle(a, b, od);
#endif
}

/* @a in the low half, @b in the high half (vinserti128). */
static inline WFS_AVX2 wfs_v16hi wfs_cat8hi(wfs_v8hi a, wfs_v8hi b)
{
#ifdef __clang__
	return __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
				       11, 12, 13, 14, 15);
#else
	WFS_V4LL lo = (WFS_V4LL)__builtin_ia32_si256_si((wfs_v4si)a);

	return (wfs_v16hi)__builtin_ia32_insert128i256(lo, (WFS_V2LL)b, 1);
#endif
}

/*
 * Eight s16 keys of each of two positions, @k and @k + @stride, in one
 * register, built in registers (a store of two halves read back as one
 * would stall on store forwarding).
 */
static inline WFS_AVX2 wfs_v16hi wfs_ld2x8k(const u8 *k, u64 stride,
					    u32 esz)
{
	if (esz == 1) {
		u64 q0, q1;

		__builtin_memcpy(&q0, k, 8);
		__builtin_memcpy(&q1, k + stride, 8);
		{
			WFS_V2LL v = { (long long)q0, (long long)q1 };

			return wfs_cvt16s((wfs_v16qi)v);
		}
	}
	return wfs_cat8hi(*(const wfs_v8hi_u *)k,
			  *(const wfs_v8hi_u *)(k + stride));
}

/* Pair sums of two positions' s16 products, widened to s64 lanes. */
static inline WFS_AVX2 wfs_v4di wfs_dots_pair(wfs_v16hi qq, const u8 *k,
					      u64 stride, u32 esz)
{
	wfs_v8si one = { 1, 1, 1, 1, 1, 1, 1, 1 };

	return wfs_widen_mul(wfs_madd256(qq, wfs_ld2x8k(k, stride, esz)), one);
}

/*
 * Head size 8, four positions per step: a vpmaddwd of two positions gives
 * four s32 pair sums of each (exact, as in wfs_simd_x86_attn_dots()),
 * widened to s64 by pairs, then added across; @npos is a multiple of 4.
 */
static inline WFS_AVX2 WFS_ALWAYS_INLINE void
wfs_dots4_hs8(const s16 *q, const u8 *k, u64 stride, u32 npos, u32 esz,
	      s64 *dots)
{
	union { wfs_v8hi h[2]; wfs_v16hi v; } qq;
	wfs_v4di a, b;
	u32 t;

	qq.h[0] = *(const wfs_v8hi_u *)q;
	qq.h[1] = qq.h[0];
	for (t = 0; t < npos; t += 4, k += 4 * stride) {
		a = wfs_dots_pair(qq.v, k, stride, esz);
		b = wfs_dots_pair(qq.v, k + 2 * stride, stride, esz);
		*(wfs_v4di_u *)(dots + t) = wfs_pair_sums(a, b);
	}
}

/* wfs_simd_x86_attn_dots() for one element size @esz (a constant). */
static inline WFS_AVX2 WFS_ALWAYS_INLINE void
wfs_dots_esz(const s16 *q, const u8 *k, u64 stride, u32 npos, u32 hs,
	     u32 esz, s64 *dots)
{
	wfs_v8si one = { 1, 1, 1, 1, 1, 1, 1, 1 };
	u32 t = 0, i;

	if (hs == 8) {
		t = npos & ~3u;
		wfs_dots4_hs8(q, k, stride, t, esz, dots);
		k += t * stride;
	}
	for (; t < npos; t++, k += stride) {
		wfs_v4di acc = { 0 };
		s64 rest = 0;

		for (i = 0; i + 16 <= hs; i += 16) {
			wfs_v16hi kv;

			if (esz == 1)
				kv = wfs_ld16s((const s8 *)k + i);
			else
				kv = *(const wfs_v16hi_u *)(k + 2 * i);

			acc += wfs_widen_mul(wfs_madd256(*(const wfs_v16hi_u *)(q + i), kv),
					     one);
		}
		if (i + 8 <= hs) {
			wfs_v8hi kv;

			if (esz == 1)
				kv = __builtin_convertvector(*(const wfs_v8qi_u *)(k + i),
							     wfs_v8hi);
			else
				kv = *(const wfs_v8hi_u *)(k + 2 * i);

			acc += __builtin_convertvector(wfs_madd128(*(const wfs_v8hi_u *)(q + i),
								   kv),
						       wfs_v4di);
			i += 8;
		}
		for (; i < hs; i++)
			rest += (s32)q[i] * (esz == 1 ? ((const s8 *)k)[i] :
						      ((const s16 *)k)[i]);
		dots[t] = wfs_hsum4(acc) + rest;
	}
}

/**
 * wfs_simd_x86_attn_dots() - attention dot products with AVX2
 * @q: @hs queries in [-32767, 32767]
 * @k: position 0's keys, position t at @k + t * @stride
 * @stride: bytes between positions
 * @npos: positions
 * @hs: head size
 * @esz: 1 (s8 keys) or 2 (s16 keys)
 * @dots: @npos outputs
 *
 * One copy of the loops per element size (-O2, Kbuild's level, does not
 * unswitch loops: the test of @esz would stay in them).
 */
WFS_AVX2 void wfs_simd_x86_attn_dots(const s16 *q, const u8 *k, u64 stride,
				     u32 npos, u32 hs, u32 esz, s64 *dots)
{
	if (esz == 1)
		wfs_dots_esz(q, k, stride, npos, hs, 1, dots);
	else
		wfs_dots_esz(q, k, stride, npos, hs, 2, dots);
}

/* Four values of position @vp at index @d, sign-extended to s64 lanes. */
static inline WFS_AVX2 wfs_v8si wfs_ld4v(const u8 *vp, u32 d, u32 esz)
{
	if (esz == 1)
		return (wfs_v8si)__builtin_convertvector(*(const wfs_v4qi_u *)(vp + d),
							 wfs_v4di);
	return (wfs_v8si)__builtin_convertvector(*(const wfs_v4hi_u *)(vp + 2 * d),
						 wfs_v4di);
}

/* Eight values of position @vp at index @d, sign-extended to s32 lanes. */
static inline WFS_AVX2 wfs_v8si wfs_ld8v(const u8 *vp, u32 d, u32 esz)
{
#ifdef __clang__
	if (esz == 1)
		return __builtin_convertvector(*(const wfs_v8qi_u *)(vp + d),
					       wfs_v8si);
	return __builtin_convertvector(*(const wfs_v8hi_u *)(vp + 2 * d),
				       wfs_v8si);
#else
	/*
	 * GCC 12 widens 8 bytes one by one: vpmovsxbd/vpmovsxwd instead, on
	 * a register loaded by vmovq (not through the stack: store forwarding)
	 */
	u64 q;

	if (esz == 1) {
		__builtin_memcpy(&q, vp + d, 8);
		{
			WFS_V2LL b = { (long long)q, 0 };

			return (wfs_v8si)__builtin_ia32_pmovsxbd256((WFS_V16QC)b);
		}
	}
	return (wfs_v8si)__builtin_ia32_pmovsxwd256(*(const wfs_v8hi_u *)(vp + 2 * d));
#endif
}

/* wfs_simd_x86_attn_accum() for one element size @esz (a constant). */
static inline WFS_AVX2 WFS_ALWAYS_INLINE void
wfs_accum_esz(const s64 *p, const u8 *v, u64 stride, u32 npos, u32 hs,
	      u32 esz, s64 *o)
{
	const u8 *vp;
	u32 t, d;

	for (d = 0; d + 8 <= hs; d += 8) {
		/* even and odd values of d..d+7 in turn */
		wfs_v4di ae = { 0 }, ao = { 0 };
		u32 j;

		for (t = 0, vp = v; t < npos; t++, vp += stride) {
			wfs_v8si pv = { 0 }, x = wfs_ld8v(vp, d, esz);

			pv += (s32)p[t];
			ae += wfs_mul_even(x, pv);
			ao += wfs_mul_even((wfs_v8si)((wfs_v4du)x >> 32), pv);
		}
		for (j = 0; j < 4; j++) {
			o[d + 2 * j] += ae[j];
			o[d + 2 * j + 1] += ao[j];
		}
	}
	if (d + 4 <= hs) {
		wfs_v4di a0 = *(const wfs_v4di_u *)(o + d);

		for (t = 0, vp = v; t < npos; t++, vp += stride) {
			wfs_v8si pv = { 0 };

			pv += (s32)p[t];
			a0 += wfs_mul_even(wfs_ld4v(vp, d, esz), pv);
		}
		*(wfs_v4di_u *)(o + d) = a0;
		d += 4;
	}
	for (; d < hs; d++)
		for (t = 0, vp = v; t < npos; t++, vp += stride)
			o[d] += p[t] * (esz == 1 ? ((const s8 *)vp)[d] :
						   ((const s16 *)vp)[d]);
}

/**
 * wfs_simd_x86_attn_accum() - o[d] += sum_t p[t] * v_t[d] with AVX2
 * @p: @npos weights in [0, 2^31)
 * @v: position 0's values, position t at @v + t * @stride
 * @stride: bytes between positions
 * @npos: positions
 * @hs: head size
 * @esz: 1 (s8 values) or 2 (s16 values)
 * @o: @hs accumulators
 *
 * One copy per element size, as wfs_simd_x86_attn_dots().
 */
WFS_AVX2 void wfs_simd_x86_attn_accum(const s64 *p, const u8 *v, u64 stride,
				      u32 npos, u32 hs, u32 esz, s64 *o)
{
	if (esz == 1)
		wfs_accum_esz(p, v, stride, npos, hs, 1, o);
	else
		wfs_accum_esz(p, v, stride, npos, hs, 2, o);
}

/* Constants of wfs_exp_neg_q30() (wfs_exp.h), repeated for the lanes. */
#define WFS_X_LN2_Q32		2977044472ULL
#define WFS_X_INV_LN2_LO	1901360723ULL	/* 2^32 / ln(2) - 2^32 */
#define WFS_X_EXP_LIMIT		(22LL << 24)

static const u32 wfs_x_inv_fact_q30[11] = {
	1073741824, 1073741824, 536870912, 178956971, 44739243,
	8947849, 1491308, 213044, 26631, 2959, 296,
};

/* Unsigned even s32 lanes of a and b multiplied into u64 lanes (vpmuludq). */
static inline WFS_AVX2 wfs_v4du wfs_mulu_even(wfs_v4du a, wfs_v4du b)
{
	return (wfs_v4du)__builtin_ia32_pmuludq256((wfs_v8si)a, (wfs_v8si)b);
}

static inline WFS_AVX2 wfs_v4du wfs_splat(u64 v)
{
	wfs_v4du r = { v, v, v, v };

	return r;
}

/*
 * The steps of wfs_exp4() before the polynomial: @d clamped (@big: past
 * the limit), @z the power of two, @r the reduced argument.
 */
static inline WFS_AVX2 WFS_ALWAYS_INLINE void
wfs_exp4_pre(wfs_v4di *d, wfs_v4di *big, wfs_v4du *z, wfs_v4du *r)
{
	wfs_v4di sr, one = { 1, 1, 1, 1 };
	wfs_v4di ln2 = one * (s64)WFS_X_LN2_Q32;
	wfs_v4du du;

	*big = *d >= WFS_X_EXP_LIMIT;
	*d &= ~*big;
	du = (wfs_v4du)*d;
	*z = ((du << 32) + wfs_mulu_even(du, wfs_splat(WFS_X_INV_LN2_LO))) >> 56;
	sr = (wfs_v4di)((du << 8) - wfs_mulu_even(*z, wfs_splat(WFS_X_LN2_Q32)));
	/* one correction step each way, as the scalar loops take */
	*z -= (wfs_v4du)(sr < 0) & (wfs_v4du)one;
	sr += (sr < 0) & ln2;
	*z += (wfs_v4du)(sr >= ln2) & (wfs_v4du)one;
	sr -= (sr >= ln2) & ln2;
	*r = ((wfs_v4du)sr + 2) >> 2;
}

/* ... and after it: the polynomial's @p shifted by @z, 0 when @big. */
static inline WFS_AVX2 WFS_ALWAYS_INLINE wfs_v4di
wfs_exp4_post(wfs_v4du p, wfs_v4du z, wfs_v4di big)
{
	wfs_v4du one = { 1, 1, 1, 1 }, half;

	/* rshr(p, z) = (p + 2^z / 2) >> z for p >= 0, z < 64 */
	half = (one << z) >> 1;
	return (wfs_v4di)((p + half) >> z) & ~big;
}

/*
 * wfs_exp_neg_q30() of four lanes, step for step: d < 2^29 (larger d give
 * 0), so d * (2^32 / ln 2) is d << 32 plus a 32 x 32-bit product; z < 32;
 * the reduced r < 2^30 and every Horner value p is in [0, 2^31), so each
 * p * r is one vpmuludq.  The reciprocal estimate of z is off by at most
 * one either way (checked for every d < 22 << 24 when written; test_simd
 * checks every d < 2^25 and both sides of each z step).
 */
static inline WFS_AVX2 wfs_v4di wfs_exp4(wfs_v4di d)
{
	wfs_v4di big;
	wfs_v4du z, r, p;
	int k;

	wfs_exp4_pre(&d, &big, &z, &r);
	p = wfs_splat(wfs_x_inv_fact_q30[10]);
#pragma GCC unroll 10
	for (k = 9; k >= 0; k--)
		p = wfs_x_inv_fact_q30[k] - (wfs_mulu_even(p, r) >> 30);
	return wfs_exp4_post(p, z, big);
}

/*
 * wfs_exp4() of three vectors, their Horner steps interleaved: each chain
 * is a run of dependent multiplies, and three in step keep the
 * multipliers busier than one after the other (two: 5-15 % faster than
 * one, three: another ~10 % here).
 */
static inline WFS_AVX2 WFS_ALWAYS_INLINE void wfs_exp12(wfs_v4di *d,
							wfs_v4di *e)
{
	wfs_v4di b[3];
	wfs_v4du z[3], r[3], p[3];
	int k, j;

#pragma GCC unroll 3
	for (j = 0; j < 3; j++) {
		wfs_exp4_pre(&d[j], &b[j], &z[j], &r[j]);
		p[j] = wfs_splat(wfs_x_inv_fact_q30[10]);
	}
#pragma GCC unroll 10
	for (k = 9; k >= 0; k--) {
#pragma GCC unroll 3
		for (j = 0; j < 3; j++)
			p[j] = wfs_x_inv_fact_q30[k] -
			       (wfs_mulu_even(p[j], r[j]) >> 30);
	}
#pragma GCC unroll 3
	for (j = 0; j < 3; j++)
		e[j] = wfs_exp4_post(p[j], z[j], b[j]);
}

/**
 * wfs_simd_x86_softmax_exp() - x[i] = wfs_exp_neg_q30(mx - x[i]) with AVX2
 * @x: @n scores (|x| < 2^62, <= @mx), in place
 * @n: a multiple of 4
 * @mx: the largest score
 *
 * Return: the sum of the @n results.
 */
WFS_AVX2 u64 wfs_simd_x86_softmax_exp(s64 *x, u32 n, s64 mx)
{
	wfs_v4di acc = { 0 }, d[3], e[3], small, z = { 0 };
	u32 i = 0, j;

	/* three independent Horner chains at a time (wfs_exp12()) */
	for (; i + 12 <= n; i += 12) {
		small = z;
#pragma GCC unroll 3
		for (j = 0; j < 3; j++) {
			d[j] = mx - *(const wfs_v4di_u *)(x + i + 4 * j);
			small |= d[j] < WFS_X_EXP_LIMIT;
		}
		/* all twelve past the limit (often, here): zeros */
		if (__builtin_ia32_ptestz256((WFS_V4LL)small, (WFS_V4LL)small)) {
			for (j = 0; j < 3; j++)
				*(wfs_v4di_u *)(x + i + 4 * j) = z;
			continue;
		}
		wfs_exp12(d, e);
#pragma GCC unroll 3
		for (j = 0; j < 3; j++) {
			*(wfs_v4di_u *)(x + i + 4 * j) = e[j];
			acc += e[j];
		}
	}
	for (; i < n; i += 4) {
		d[0] = mx - *(const wfs_v4di_u *)(x + i);
		small = d[0] < WFS_X_EXP_LIMIT;
		/* all four past the limit: four zeros */
		if (__builtin_ia32_ptestz256((WFS_V4LL)small, (WFS_V4LL)small)) {
			*(wfs_v4di_u *)(x + i) = z;
			continue;
		}
		e[0] = wfs_exp4(d[0]);
		*(wfs_v4di_u *)(x + i) = e[0];
		acc += e[0];
	}
	return (u64)wfs_hsum4(acc);
}

/**
 * wfs_simd_x86_softmax_scale() - x[i] = rshr(x[i] * @rcp, @sh) with AVX2
 * @x: @n values in [0, 2^31), in place
 * @n: a multiple of 4
 * @rcp: multiplier, < 2^32
 * @sh: shift, 1..63; x * rcp + 2^(sh - 1) must stay below 2^64
 */
WFS_AVX2 void wfs_simd_x86_softmax_scale(s64 *x, u32 n, u64 rcp, u32 sh)
{
	wfs_v4du m = wfs_splat(rcp), h = wfs_splat(1ULL << (sh - 1));
	u32 i;

	for (i = 0; i < n; i += 4) {
		wfs_v4du v = (wfs_v4du)*(const wfs_v4di_u *)(x + i);

		*(wfs_v4di_u *)(x + i) = (wfs_v4di)((wfs_mulu_even(v, m) + h) >>
						    sh);
	}
}

/**
 * wfs_simd_x86_attn_wshift() - p[t] = wfs_rshr(p[t], evmax - ve_t) with AVX2
 * @p: @npos weights in [0, 2^62), in place
 * @ve: s16 value exponent of position 0, position t at @ve + t * @stride
 * @stride: bytes between positions
 * @npos: a multiple of 4
 * @evmax: exponent, >= every ve_t
 *
 * (p + 2^sh / 2) >> sh is wfs_rshr() for p >= 0, with per-lane shifts
 * (vpsllvq, vpsrlvq).
 */
WFS_AVX2 void wfs_simd_x86_attn_wshift(s64 *p, const u8 *ve, u64 stride,
				       u32 npos, s32 evmax)
{
	wfs_v4di one = { 1, 1, 1, 1 }, big, half;
	s16 e0, e1, e2, e3;
	u32 t;

	for (t = 0; t < npos; t += 4, ve += 4 * stride) {
		__builtin_memcpy(&e0, ve, 2);
		__builtin_memcpy(&e1, ve + stride, 2);
		__builtin_memcpy(&e2, ve + 2 * stride, 2);
		__builtin_memcpy(&e3, ve + 3 * stride, 2);
		{
			wfs_v4di sh = { evmax - e0, evmax - e1, evmax - e2,
					evmax - e3 };

			/* p < 2^62: a shift of 63 gives 0 as 64 and more do */
			big = sh > 63;
			sh = (sh & ~big) | (big & 63);
			half = (wfs_v4di)((wfs_v4du)(one << sh) >> 1);
			*(wfs_v4di_u *)(p + t) = (wfs_v4di)
				((wfs_v4du)(*(const wfs_v4di_u *)(p + t) + half) >>
				 (wfs_v4du)sh);
		}
	}
}

/* Per-lane shifts (vpsllvq, vpsrlvq): counts of 64 and more give 0. */
static inline WFS_AVX2 wfs_v4di wfs_sllv(wfs_v4di a, wfs_v4di n)
{
	return (wfs_v4di)__builtin_ia32_psllv4di((WFS_V4LL)a, (WFS_V4LL)n);
}

static inline WFS_AVX2 wfs_v4di wfs_srlv(wfs_v4di a, wfs_v4di n)
{
	return (wfs_v4di)__builtin_ia32_psrlv4di((WFS_V4LL)a, (WFS_V4LL)n);
}

/* Lanes of @a where @m is all ones, else of @b. */
static inline WFS_AVX2 wfs_v4di wfs_sel(wfs_v4di m, wfs_v4di a, wfs_v4di b)
{
	return (a & m) | (b & ~m);
}

/* The two halves of wfs_scale4() for lanes of one kind. */
static inline WFS_AVX2 wfs_v4di wfs_scale4_left(wfs_v4di x, wfs_v4di sh,
						wfs_v4di neg, wfs_v4di l)
{
	wfs_v4di sat = ((sh >= 62) | (((x ^ neg) - neg) > wfs_srlv(l, sh))) &
		       (x != 0);

	return wfs_sel(sat, (l ^ neg) - neg, wfs_sllv(x, sh));
}

static inline WFS_AVX2 wfs_v4di wfs_scale4_right(wfs_v4di x, wfs_v4di sh,
						 wfs_v4di neg, wfs_v4di l)
{
	wfs_v4di xs = x ^ neg, one = { 1, 1, 1, 1 }, r, r1;

	r = wfs_srlv(xs, -sh) ^ neg;
	r1 = wfs_srlv(xs, -sh - 1) ^ neg;
	r += r1 & one;
	return wfs_sel(r > l, l, wfs_sel(r < -l, -l, r));
}

/*
 * wfs_scale_pow2(x, sh, @lim) of four lanes, |x| < 2^63, @lim < 2^62:
 * - sh >= 0: x * 2^sh, or +-@lim when sh >= 62 or |x| > @lim >> sh (and
 *   x != 0);
 * - sh < 0: n = -sh; wfs_rshr(x, n), then clamped: the arithmetic shifts
 *   done as logical ones on x ^ sign (shifts of 64 and more give the sign,
 *   and rshr's sum 0, as wfs_rshr() for n > 63).
 * Lanes of one kind (the usual case) compute only their half.
 */
static inline WFS_AVX2 wfs_v4di wfs_scale4(wfs_v4di x, wfs_v4di sh, s64 lim)
{
	wfs_v4di z = { 0 }, l = z + lim, neg = x < 0, left = sh >= 0;

	if (__builtin_ia32_ptestz256((WFS_V4LL)left, (WFS_V4LL)left))
		return wfs_scale4_right(x, sh, neg, l);
	if (__builtin_ia32_ptestc256((WFS_V4LL)left, (WFS_V4LL)(z - 1)))
		return wfs_scale4_left(x, sh, neg, l);
	return wfs_sel(left, wfs_scale4_left(x, sh, neg, l),
		       wfs_scale4_right(x, sh, neg, l));
}

/* Four s16 at @p, @p + @stride, ..., sign-extended to s64 lanes. */
static inline WFS_AVX2 wfs_v4di wfs_ld4e(const u8 *p, u64 stride)
{
	s16 e0, e1, e2, e3;

	__builtin_memcpy(&e0, p, 2);
	__builtin_memcpy(&e1, p + stride, 2);
	__builtin_memcpy(&e2, p + 2 * stride, 2);
	__builtin_memcpy(&e3, p + 3 * stride, 2);
	{
		wfs_v4di e = { e0, e1, e2, e3 };

		return e;
	}
}

static inline WFS_AVX2 wfs_v4di wfs_max4(wfs_v4di a, wfs_v4di b)
{
	return wfs_sel(a > b, a, b);
}

/**
 * wfs_simd_x86_attn_scale() - the attention scores' per-position scaling
 * @sc: @npos raw dot products (|x| < 2^63), in place: sc[t] becomes
 *	wfs_scale_pow2(sc[t], @e0 + ke_t, @lim)
 * @ke: s16 key exponent of position 0, position t at @ke + t * @stride
 * @ve: s16 value exponent of position 0, likewise
 * @stride: bytes between positions
 * @npos: a multiple of 4, >= 4
 * @e0: exponent added to each ke_t
 * @lim: saturation bound, < 2^62
 * @mx: four lanes, each the largest result of its positions
 * @evx: four lanes, each the largest ve_t of its positions
 */
WFS_AVX2 void wfs_simd_x86_attn_scale(s64 *sc, const u8 *ke, const u8 *ve,
				      u64 stride, u32 npos, s32 e0, s64 lim,
				      s64 *mx, s64 *evx)
{
	wfs_v4di m = { 0 }, em = { 0 }, r;
	u32 t;

	for (t = 0; t < npos; t += 4, ke += 4 * stride, ve += 4 * stride) {
		r = wfs_scale4(*(const wfs_v4di_u *)(sc + t),
			       wfs_ld4e(ke, stride) + e0, lim);
		*(wfs_v4di_u *)(sc + t) = r;
		m = t ? wfs_max4(m, r) : r;
		em = t ? wfs_max4(em, wfs_ld4e(ve, stride)) :
			 wfs_ld4e(ve, stride);
	}
	*(wfs_v4di_u *)mx = m;
	*(wfs_v4di_u *)evx = em;
}

/**
 * wfs_simd_x86_vec_or() - the OR of @n values, as u64
 * @v: values
 * @n: number of values
 *
 * Return: their OR.
 */
WFS_AVX2 u64 wfs_simd_x86_vec_or(const s64 *v, u32 n)
{
	wfs_v4di m = { 0 };
	u32 i;
	u64 r;

	for (i = 0; i + 4 <= n; i += 4)
		m |= *(const wfs_v4di_u *)(v + i);
	r = (u64)(m[0] | m[1] | m[2] | m[3]);
	for (; i < n; i++)
		r |= (u64)v[i];
	return r;
}

/**
 * wfs_simd_x86_vec_negabs() - v[i] = -|v[i]|
 * @v: @n values, |v| < 2^63
 * @n: number of values
 */
WFS_AVX2 void wfs_simd_x86_vec_negabs(s64 *v, u32 n)
{
	wfs_v4di x;
	u32 i;

	for (i = 0; i + 4 <= n; i += 4) {
		x = *(const wfs_v4di_u *)(v + i);
		*(wfs_v4di_u *)(v + i) = wfs_sel(x < 0, x, -x);
	}
	for (; i < n; i++)
		v[i] = v[i] < 0 ? v[i] : -v[i];
}

/**
 * wfs_simd_x86_vec_orabs() - the OR of the magnitudes of @n values
 * @v: values
 * @n: a multiple of 4
 *
 * Return: the OR of wfs_abs64(v[i]).
 */
WFS_AVX2 u64 wfs_simd_x86_vec_orabs(const s64 *v, u32 n)
{
	wfs_v4di m = { 0 }, x, neg;
	u32 i;

	for (i = 0; i < n; i += 4) {
		x = *(const wfs_v4di_u *)(v + i);
		neg = x < 0;
		m |= (x ^ neg) - neg;
	}
	return (u64)(m[0] | m[1] | m[2] | m[3]);
}

/* wfs_simd_x86_vec_rshr() for one output size @osz (a constant). */
static inline WFS_AVX2 WFS_ALWAYS_INLINE void
wfs_rshr_osz(const s64 *in, u32 n, u32 k, s64 lim, void *out, u32 osz)
{
	wfs_v4di z = { 0 }, l = z + lim, one = z + 1, x, neg, xs, r;
	u32 i;

	for (i = 0; i < n; i += 4) {
		x = *(const wfs_v4di_u *)(in + i);
		neg = x < 0;
		xs = x ^ neg;
		r = ((wfs_v4di)((wfs_v4du)xs >> k) ^ neg) +
		    (((wfs_v4di)((wfs_v4du)xs >> (k - 1)) ^ neg) & one);
		r = wfs_sel(r > l, l, wfs_sel(r < -l, -l, r));
		if (osz == 8) {
			*(wfs_v4di_u *)((s64 *)out + i) = r;
		} else {
			wfs_v4si w = { (s32)r[0], (s32)r[1], (s32)r[2],
				       (s32)r[3] };

			if (osz == 4)
				*(wfs_v4si_u *)((s32 *)out + i) = w;
			else
				*(wfs_v4hi_u *)((s16 *)out + i) =
					__builtin_convertvector(w, wfs_v4hi);
		}
	}
}

/**
 * wfs_simd_x86_vec_rshr() - out[i] = wfs_rshr(in[i], @k) clamped to +-@lim
 * @in: @n values
 * @n: a multiple of 4
 * @k: shift, 1..63
 * @lim: clamp, < 2^31 when @osz is 4 or 2 (and < 2^15 when 2)
 * @out: @n outputs of @osz bytes (8, 4 or 2); may be @in when 8
 * @osz: output size
 *
 * The arithmetic shifts as logical ones on x ^ sign (vpsrlq); one copy
 * per output size, as wfs_simd_x86_attn_dots().
 */
WFS_AVX2 void wfs_simd_x86_vec_rshr(const s64 *in, u32 n, u32 k, s64 lim,
				    void *out, u32 osz)
{
	if (osz == 8)
		wfs_rshr_osz(in, n, k, lim, out, 8);
	else if (osz == 4)
		wfs_rshr_osz(in, n, k, lim, out, 4);
	else
		wfs_rshr_osz(in, n, k, lim, out, 2);
}

#endif /* WFS_SIMD_X86 && !__CHECKER__ */
