// SPDX-License-Identifier: MIT
/*
 * wfs_ring.c - out-of-line ring helpers (see wfs_ring.h).
 */
#include "wfs_ring.h"

int wfs_ring_snapshot_valid(u32 head, u32 tail, u32 size, u32 max)
{
	return wfs_ring_size_valid(size, max) &&
	       wfs_ring_indices_valid(head, tail, size);
}
