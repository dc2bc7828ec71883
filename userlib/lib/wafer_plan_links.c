// SPDX-License-Identifier: MIT
/*
 * libwafer: the links between hosts wafer_plan() knows by name (wafer
 * plan --link-profile): figures measured on libwafer's own RDMA transport
 * (wafer bench --link, docs/PERF.md "Host-to-host link").
 */
#include <stddef.h>
#include <string.h>

#include "wafer.h"

/*
 * Each: the typical (median) one-way latency of a 2-byte record and the
 * best bandwidth of the table's sizes, on Soft-RoCE (rxe) under TCG.
 */
static const struct wafer_plan_link links[] = {
	/* Both ends on one rxe device in one guest: 408 us, 12.71 MB/s at 64 KiB. */
	{ "rxe-1vm", 408000, 12710000 },
	/* Two guests over QEMU's socket netdev: 31,531 us, 3.04 MB/s at 1 MiB. */
	{ "rxe-2vm", 31531000, 3040000 },
};

const struct wafer_plan_link *wafer_plan_link_profile(unsigned int i)
{
	return i < sizeof(links) / sizeof(links[0]) ? &links[i] : NULL;
}

const struct wafer_plan_link *wafer_plan_link_find(const char *name)
{
	const struct wafer_plan_link *l;
	unsigned int i;

	for (i = 0; (l = wafer_plan_link_profile(i)); i++)
		if (!strcmp(l->name, name))
			return l;
	return NULL;
}

uint64_t wafer_plan_link_ns(const struct wafer_plan_link *l, uint64_t bytes,
			    unsigned int latency_pct)
{
	uint64_t wire = l->bytes_per_s ? (bytes * 1000000000ull + l->bytes_per_s - 1) /
					 l->bytes_per_s : 0;

	return l->latency_ns * latency_pct / 100 + wire;
}
