// SPDX-License-Identifier: MIT
/*
 * libwafer: how a model's layers are split across the devices of a
 * pipeline when the caller does not say (wafer_split_layers()).
 */
#include <errno.h>
#include <string.h>

#include "wafer_backend.h"

unsigned int wafer_split_even(unsigned int n_layers, unsigned int n_devices, unsigned int i)
{
	if (!n_devices || i >= n_devices)
		return 0;
	return n_layers / n_devices + (i < n_layers % n_devices);
}

int wafer_split_layers(unsigned int n_layers, unsigned int n_devices,
		       const uint64_t *capacity, unsigned int *out)
{
	uint64_t w[WAFER_PIPE_MAX_DEVICES], share[WAFER_PIPE_MAX_DEVICES];
	uint64_t top = 0, scale, total = 0, rem;
	unsigned int i, given = 0, best;

	if (!n_layers || !n_devices || n_devices > WAFER_PIPE_MAX_DEVICES || !out)
		return wafer_set_error(-EINVAL, "split of %u layers over %u devices: need "
				       "1..%d devices and at least one layer",
				       n_layers, n_devices, WAFER_PIPE_MAX_DEVICES);
	memset(out, 0, n_devices * sizeof(*out));
	if (n_devices >= n_layers) {
		for (i = 0; i < n_layers; i++)
			out[i] = 1;
		return (int)n_layers;
	}
	if (!capacity) {
		for (i = 0; i < n_devices; i++)
			out[i] = wafer_split_even(n_layers, n_devices, i);
		return (int)n_devices;
	}
	for (i = 0; i < n_devices; i++) {
		if (capacity && !capacity[i])
			return wafer_set_error(-EINVAL, "device %u reports no SRAM", i);
		if (capacity && capacity[i] > top)
			top = capacity[i];
	}
	/* Weights of at most 2^20, so that layers x weight fits 64 bits. */
	scale = (top >> 20) + 1;
	for (i = 0; i < n_devices; i++) {
		w[i] = capacity ? capacity[i] / scale + 1 : 1;
		total += w[i];
	}
	/*
	 * Every device one layer, the rest in proportion to capacity: whole
	 * parts first, then one each to the largest remainders (earlier
	 * devices first on ties, so the split is deterministic).
	 */
	rem = n_layers - n_devices;
	for (i = 0; i < n_devices; i++) {
		share[i] = rem * w[i];
		out[i] = 1 + (unsigned int)(share[i] / total);
		given += out[i];
		share[i] %= total;
	}
	while (given < n_layers) {
		best = 0;
		for (i = 1; i < n_devices; i++)
			if (share[i] > share[best])
				best = i;
		out[best]++;
		share[best] = 0;
		given++;
	}
	return (int)n_devices;
}
