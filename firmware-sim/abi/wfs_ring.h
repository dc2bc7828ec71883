/* SPDX-License-Identifier: MIT */
/*
 * wfs_ring.h - index arithmetic of the firmware's command and completion
 * rings, shared by the device (firmware-sim) and the driver (kmod).
 *
 * A ring has a power-of-two number of entries and two free-running 32-bit
 * indices: the producer's tail and the consumer's head.  They are never
 * reduced modulo the ring size; the slot of index i is (i & (size - 1)) and
 * the fill level is (tail - head), computed modulo 2^32.  Because the
 * indices run freely, "full" (tail - head == size) and "empty"
 * (tail == head) are told apart without wasting a slot, and the indices
 * wrap around 2^32 without any special case.
 *
 * Everything here is pure arithmetic on values the caller has already read
 * from the register block; nothing touches memory.
 */
#ifndef WFS_RING_H
#define WFS_RING_H

#include "wfs_compat.h"

/**
 * wfs_ring_size_valid() - is @size a usable ring size?
 * @size: entries
 * @max: the largest size the caller accepts (a power of two)
 *
 * Return: 1 if @size is a power of two in [2, @max], else 0.
 */
static inline int wfs_ring_size_valid(u32 size, u32 max)
{
	return size >= 2 && size <= max && (size & (size - 1)) == 0;
}

/**
 * wfs_ring_count() - entries published but not yet consumed
 * @head: consumer index
 * @tail: producer index
 *
 * Return: tail - head modulo 2^32.  A value larger than the ring size means
 * one side wrote a bogus index; see wfs_ring_indices_valid().
 */
static inline u32 wfs_ring_count(u32 head, u32 tail)
{
	return tail - head;
}

/**
 * wfs_ring_indices_valid() - are @head and @tail consistent for @size?
 * @head: consumer index
 * @tail: producer index
 * @size: ring size (a power of two)
 *
 * Return: 1 if 0 <= tail - head <= size (mod 2^32), else 0.
 */
static inline int wfs_ring_indices_valid(u32 head, u32 tail, u32 size)
{
	return wfs_ring_count(head, tail) <= size;
}

/**
 * wfs_ring_space() - free entries the producer may still fill
 * @head: consumer index
 * @tail: producer index
 * @size: ring size (a power of two)
 *
 * Return: size - (tail - head), or 0 if the indices are inconsistent.
 */
static inline u32 wfs_ring_space(u32 head, u32 tail, u32 size)
{
	u32 n = wfs_ring_count(head, tail);

	return n > size ? 0 : size - n;
}

/**
 * wfs_ring_empty() - nothing to consume?
 * @head: consumer index
 * @tail: producer index
 *
 * Return: 1 if empty.
 */
static inline int wfs_ring_empty(u32 head, u32 tail)
{
	return head == tail;
}

/**
 * wfs_ring_full() - nothing more can be produced?
 * @head: consumer index
 * @tail: producer index
 * @size: ring size (a power of two)
 *
 * Return: 1 if full (or the indices are inconsistent).
 */
static inline int wfs_ring_full(u32 head, u32 tail, u32 size)
{
	return wfs_ring_space(head, tail, size) == 0;
}

/**
 * wfs_ring_slot() - array slot of a free-running index
 * @idx: index
 * @size: ring size (a power of two)
 *
 * Return: idx & (size - 1), always < size.
 */
static inline u32 wfs_ring_slot(u32 idx, u32 size)
{
	return idx & (size - 1);
}

/**
 * wfs_ring_entry_addr() - device address of the entry for index @idx
 * @base: device address of slot 0
 * @idx: free-running index
 * @size: ring size (a power of two)
 * @entry_bytes: bytes per entry
 *
 * Return: base + slot * entry_bytes.
 */
static inline u64 wfs_ring_entry_addr(u64 base, u32 idx, u32 size,
				      u32 entry_bytes)
{
	return base + (u64)wfs_ring_slot(idx, size) * entry_bytes;
}

/**
 * wfs_ring_advance_valid() - may a consumer move its head to @new_head?
 * @head: current consumer index
 * @new_head: proposed consumer index
 * @tail: producer index
 *
 * A consumer may only move forward, and not past the producer.
 *
 * Return: 1 if head <= new_head <= tail (modulo 2^32 distances), else 0.
 */
static inline int wfs_ring_advance_valid(u32 head, u32 new_head, u32 tail)
{
	return new_head - head <= tail - head;
}

/**
 * wfs_ring_snapshot_valid() - check a full (head, tail) pair for a ring
 * @head: consumer index
 * @tail: producer index
 * @size: ring size
 * @max: the largest ring size accepted
 *
 * Return: 1 if @size is valid and the indices are consistent with it.
 */
int wfs_ring_snapshot_valid(u32 head, u32 tail, u32 size, u32 max);

#endif /* WFS_RING_H */
