/* SPDX-License-Identifier: MIT */
/*
 * wfs_compat.h - the one portability header of firmware-sim.
 *
 * firmware-sim is freestanding C compiled twice: into wafer.ko (gnu11,
 * kernel headers) and into a userspace library (C11, libc headers used only
 * for types and memcpy/memset).  Everything in firmware-sim includes this
 * header instead of any system header.  Both builds must compute identical
 * bits, so the helpers below define integer behaviour that C leaves to the
 * implementation (right shifts of negative values) and hide the 64-bit
 * division the kernel does not allow with a plain '/'.
 */
#ifndef WFS_COMPAT_H
#define WFS_COMPAT_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#else
#include <stdint.h>
#include <stddef.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

#ifndef BIT
#define BIT(n)		(1UL << (n))
#endif
#ifndef BIT_ULL
#define BIT_ULL(n)	(1ULL << (n))
#endif
#endif

/* Blobs and ABI structures are little-endian; so must the host be. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "firmware-sim assumes a little-endian host"
#endif

/* The only libc functions firmware-sim may use. */
#define WFS_MEMCPY(d, s, n)	memcpy((d), (s), (n))
#define WFS_MEMSET(d, c, n)	memset((d), (c), (n))

/*
 * Error codes: negative return values, numerically equal to the Linux errno
 * values so the driver can pass them through unchanged.
 */
#define WFS_EPERM	1
#define WFS_ENOENT	2
#define WFS_EIO		5
#define WFS_E2BIG	7
#define WFS_ENOEXEC	8
#define WFS_EAGAIN	11
#define WFS_ENOMEM	12
#define WFS_EFAULT	14
#define WFS_EBUSY	16
#define WFS_EEXIST	17
#define WFS_EINVAL	22
#define WFS_EMFILE	24
#define WFS_ENOSPC	28
#define WFS_ERANGE	34
#define WFS_ENOSYS	38
#define WFS_EPROTO	71
#define WFS_EOVERFLOW	75
#define WFS_EBADMSG	74
#define WFS_EOPNOTSUPP	95
#define WFS_ETIMEDOUT	110
#define WFS_ECANCELED	125

#define WFS_STATIC_ASSERT(cond, msg)	_Static_assert(cond, msg)
#define WFS_ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define WFS_MIN(a, b)			((a) < (b) ? (a) : (b))
#define WFS_MAX(a, b)			((a) > (b) ? (a) : (b))
/* @a must be a power of two; no overflow check (see wfs_align_up_chk). */
#define WFS_ALIGN_UP(x, a)		(((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))
#define WFS_IS_ALIGNED(x, a)		(((x) & ((__typeof__(x))(a) - 1)) == 0)

/* Overflow-checked arithmetic: return true on overflow (GCC and clang). */
#define WFS_ADD_OVF(a, b, res)		__builtin_add_overflow((a), (b), (res))
#define WFS_MUL_OVF(a, b, res)		__builtin_mul_overflow((a), (b), (res))

/**
 * wfs_align_up_chk() - round @x up to a power-of-two @a, overflow-checked
 * @x: value
 * @a: alignment, a power of two
 * @res: rounded value
 *
 * Return: true if the result does not fit in 64 bits.
 */
static inline int wfs_align_up_chk(u64 x, u64 a, u64 *res)
{
	if (WFS_ADD_OVF(x, a - 1, res))
		return 1;
	*res &= ~(a - 1);
	return 0;
}

/**
 * wfs_asr32() - arithmetic shift right, defined for negative values
 * @x: value
 * @n: shift count, 0..31
 *
 * Return: floor(@x / 2^@n).  Written without shifting a negative value, so
 * the result does not depend on implementation-defined behaviour; compilers
 * turn it into one 'sar'.
 */
static inline s32 wfs_asr32(s32 x, unsigned int n)
{
	return x < 0 ? ~(~x >> n) : x >> n;
}

/**
 * wfs_asr64() - 64-bit arithmetic shift right (floor division by 2^@n)
 * @x: value
 * @n: shift count, 0..63
 *
 * Return: floor(@x / 2^@n).
 */
static inline s64 wfs_asr64(s64 x, unsigned int n)
{
	return x < 0 ? ~(~x >> n) : x >> n;
}

/**
 * wfs_rshr64() - rounding arithmetic shift right, round half up
 * @x: value, |@x| < 2^62
 * @n: shift count, 0..62
 *
 * Return: floor((@x + 2^(@n-1)) / 2^@n), i.e. @x / 2^@n rounded to nearest.
 */
static inline s64 wfs_rshr64(s64 x, unsigned int n)
{
	if (n == 0)
		return x;
	return wfs_asr64(x + ((s64)1 << (n - 1)), n);
}

/**
 * wfs_sat16() - saturate to the int16 range
 * @x: value
 *
 * Return: @x clamped to [-32768, 32767].
 */
static inline s32 wfs_sat16(s64 x)
{
	return x > 32767 ? 32767 : x < -32768 ? -32768 : (s32)x;
}

/**
 * wfs_sat32() - saturate to the int32 range
 * @x: value
 *
 * Return: @x clamped to [S32_MIN, S32_MAX].
 */
static inline s32 wfs_sat32(s64 x)
{
	return x > 2147483647LL ? 2147483647 :
	       x < -2147483647LL - 1 ? (s32)(-2147483647LL - 1) : (s32)x;
}

/**
 * wfs_div_u64() - unsigned 64 by 32 bit division
 * @a: dividend
 * @b: divisor, non-zero
 *
 * Return: @a / @b, truncated.
 */
static inline u64 wfs_div_u64(u64 a, u32 b)
{
#ifdef __KERNEL__
	return div_u64(a, b);
#else
	return a / b;
#endif
}

/**
 * wfs_div64_u64() - unsigned 64 by 64 bit division
 * @a: dividend
 * @b: divisor, non-zero
 *
 * Return: @a / @b, truncated.
 */
static inline u64 wfs_div64_u64(u64 a, u64 b)
{
#ifdef __KERNEL__
	return div64_u64(a, b);
#else
	return a / b;
#endif
}

/**
 * wfs_div_s64() - signed 64 by 32 bit division, truncating toward zero
 * @a: dividend
 * @b: divisor, non-zero
 *
 * Return: @a / @b, truncated toward zero (C semantics).
 */
static inline s64 wfs_div_s64(s64 a, s32 b)
{
#ifdef __KERNEL__
	return div_s64(a, b);
#else
	return a / b;
#endif
}

#endif /* WFS_COMPAT_H */
