// SPDX-License-Identifier: MIT
/*
 * libwafer: the model shapes wafer_plan() knows by name (wafer plan
 * --model), below the projection and its published figures, which both
 * look them up.
 */
#include <stddef.h>
#include <string.h>

#include "wafer.h"

/*
 * Published configurations.  Mixture-of-experts presets have experts in
 * every layer but llama4-maverick (every other one; the rest dense):
 * kimi-k2's one dense first layer is counted as the others; its
 * latent attention (as DeepSeek-V3's: query latent 1,536, KV latent 512,
 * a 64-wide rotary part) caches 576 values per position and layer.  sol is the seed articles' estimate (~3 T total,
 * ~150 B active, 80 layers), not a published shape.
 */
static const struct wafer_plan_shape presets[] = {
	{ "llama3.1-8b", 32, 4096, 14336, 32, 8, 128, 128256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "llama3.1-70b", 80, 8192, 28672, 64, 8, 128, 128256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "llama3.1-405b", 126, 16384, 53248, 128, 8, 128, 128256, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "qwen3-32b", 64, 5120, 25600, 64, 8, 128, 151936, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "qwen3-235b-a22b", 94, 4096, 0, 64, 4, 128, 151936, 128, 8, 0, 1536, 1, 0, 0, 0, 0, 0 },
	{ "gpt-oss-120b", 36, 2880, 0, 64, 8, 64, 201088, 128, 4, 0, 2880, 1, 0, 0, 0, 0, 0 },
	{ "kimi-k2", 61, 7168, 0, 64, 1, 128, 163840, 384, 8, 1, 2048, 1, 0, 0, 0, 1536, 512 },
	{ "llama4-maverick", 48, 5120, 16384, 40, 8, 128, 202048, 128, 1, 1, 8192, 2, 0, 0, 0, 0, 0 },
	{ "sol", 80, 8192, 0, 64, 8, 128, 200000, 256, 10, 1, 6144, 1, 0, 0, 0, 0, 0 },
};

const struct wafer_plan_shape *wafer_plan_preset(unsigned int i)
{
	return i < sizeof(presets) / sizeof(presets[0]) ? &presets[i] : NULL;
}

const struct wafer_plan_shape *wafer_plan_preset_find(const char *name)
{
	const struct wafer_plan_shape *s;
	unsigned int i;

	for (i = 0; (s = wafer_plan_preset(i)); i++)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}
