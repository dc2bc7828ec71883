// SPDX-License-Identifier: MIT
/* wafer plan: libwafer's error messages in the words of the command line. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/*
 * wafer_plan() names the fields of its options (and of the shape); the
 * user gave flags.  A field followed by its value (a number or a quoted
 * name) is said as its flag; the shape's only for `custom`, whose shape
 * the flags gave (a checkpoint's or blob's came from the file).
 */
static const char *const opt_flags[][2] = {
	{ "weight_bits", "--weight-bits" }, { "batch", "--batch" },
	{ "context", "--context" }, { "prompt", "--prompt" },
	{ "draft_accept", "--draft-accept" }, { "draft_tokens", "--draft-tokens" },
	{ "profile", "--profile" }, { "devices", "--devices" },
	{ "hosts", "--hosts" }, { "host_link", "--link-profile" },
};

static const char *const shape_flags[][2] = {
	{ "n_layers", "--layers" }, { "dim", "--dim" }, { "hidden_dim", "--hidden" },
	{ "n_heads", "--heads" }, { "n_kv_heads", "--kv-heads" }, { "head_dim", "--head-dim" },
	{ "vocab", "--vocab" }, { "n_experts", "--experts" }, { "n_active", "--active" },
	{ "n_shared", "--shared" }, { "expert_hidden", "--expert-hidden" },
	{ "moe_every", "--moe-every" },
};

/* The flag field @w (of @len characters, followed by a value) stands for, or NULL. */
static const char *flag_for(const char *w, size_t len, int custom)
{
	unsigned int i;

	for (i = 0; i < sizeof(opt_flags) / sizeof(opt_flags[0]); i++)
		if (strlen(opt_flags[i][0]) == len && !strncmp(w, opt_flags[i][0], len))
			return opt_flags[i][1];
	for (i = 0; custom && i < sizeof(shape_flags) / sizeof(shape_flags[0]); i++)
		if (strlen(shape_flags[i][0]) == len && !strncmp(w, shape_flags[i][0], len))
			return shape_flags[i][1];
	return NULL;
}

const char *cli_plan_error(const char *msg, int custom)
{
	static char out[512];
	size_t o = 0, len;
	const char *p = msg, *flag;

	if (!strncmp(p, "plan: ", 6))
		p += 6;
	while (*p && o + 1 < sizeof(out)) {
		len = strspn(p, "abcdefghijklmnopqrstuvwxyz_");
		flag = len && (p == msg || !strchr("abcdefghijklmnopqrstuvwxyz_-", p[-1])) &&
		       p[len] == ' ' && (strchr("0123456789'", p[len + 1]) && p[len + 1]) ?
		       flag_for(p, len, custom) : NULL;
		if (flag) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%s", flag);
			p += len;
		} else if (len) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%.*s", (int)len, p);
			p += len;
		} else {
			out[o++] = *p++;
		}
		if (o >= sizeof(out))
			o = sizeof(out) - 1;
	}
	out[o] = '\0';
	return out;
}
