// SPDX-License-Identifier: MIT
/*
 * wafer CLI: attention-FFN disaggregation (--afd A:F, --afd-profiles
 * PA:PF): two device lists, the attention parts of every layer on the
 * first, the FFN parts on the second (wafer_open_afd()): in process, or
 * /dev/accel/accelN devices with --backend kernel.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* "A:B" into its two halves (in @buf); 0 or -1. */
static int split2(const char *s, char *buf, size_t size, char **a, char **b)
{
	char *colon;

	if (strlen(s) >= size)
		return -1;
	strcpy(buf, s);
	colon = strchr(buf, ':');
	if (!colon || colon == buf || !colon[1] || strchr(colon + 1, ':'))
		return -1;
	*colon = '\0';
	*a = buf;
	*b = colon + 1;
	return 0;
}

int cli_parse_afd(const char *s, struct cli_devices *d)
{
	char buf[128], *a, *b;
	int na, nf;

	if (split2(s, buf, sizeof(buf), &a, &b))
		return -1;
	na = cli_parse_list(a, 0, 4095, d->afd_index[0], WAFER_AFD_MAX_GROUP);
	nf = cli_parse_list(b, 0, 4095, d->afd_index[1], WAFER_AFD_MAX_GROUP);
	if (na <= 0 || nf <= 0)
		return -1;
	d->afd[0] = (unsigned int)na;
	d->afd[1] = (unsigned int)nf;
	return 0;
}

int cli_parse_afd_profiles(const char *s, struct cli_devices *d)
{
	char *a, *b;

	if (split2(s, d->afd_buf, sizeof(d->afd_buf), &a, &b))
		return -1;
	d->afd_profile[0] = a;
	d->afd_profile[1] = b;
	return 0;
}

int cli_parse_expert_devices(const char *s, struct cli_devices *d)
{
	return cli_parse_uint(s, 1, WAFER_AFD_MAX_GROUP, &d->afd_experts);
}

int cli_afd_check(const struct cli_devices *d, const char *cmd)
{
	if (!d->afd[0]) {
		if (!d->afd_profile[0] && !d->afd_mb && !d->afd_experts)
			return 0;
		fprintf(stderr, "wafer %s: --%s needs --afd\n", cmd,
			d->afd_experts ? "expert-devices" :
			d->afd_mb ? "afd-micro-batch" : "afd-profiles");
		return 2;
	}
	if (d->n || d->n_split) {
		fprintf(stderr, "wafer %s: --afd gives the devices: no -d or --split with it\n",
			cmd);
		return 2;
	}
	return 0;
}

int cli_open_afd(const struct cli_devices *d, struct wafer_dev **dev)
{
	struct wafer_open_opts o[3][WAFER_AFD_MAX_GROUP];
	struct wafer_afd_opts ao = { .n_attn = d->afd[0], .attn = o[0],
				     .n_ffn = d->afd[1], .ffn = o[1],
				     .micro_batch_tokens = d->afd_mb,
				     .n_expert = d->afd_experts, .expert = o[2] };
	unsigned int g, i, k;

	for (g = 0; g < 2; g++) {
		for (i = 0; i < d->afd[g]; i++) {
			/* In process unless --backend kernel (accelN devices). */
			o[g][i] = d->base;
			o[g][i].index = (int)d->afd_index[g][i];
			if (d->afd_profile[g])
				o[g][i].profile = d->afd_profile[g];
		}
	}
	/*
	 * Expert devices, of the FFN group's profile: in process, or the
	 * accel devices after the highest --afd one (--backend kernel).
	 */
	for (g = 0, k = 0; g < 2; g++)
		for (i = 0; i < d->afd[g]; i++)
			if (d->afd_index[g][i] + 1 > k)
				k = d->afd_index[g][i] + 1;
	for (i = 0; i < d->afd_experts; i++) {
		o[2][i] = d->base;
		if (d->base.backend == WAFER_BACKEND_KERNEL)
			o[2][i].index = (int)(k + i);
		if (d->afd_profile[1])
			o[2][i].profile = d->afd_profile[1];
	}
	return wafer_open_afd(&ao, dev);
}

void cli_print_afd(struct wafer_dev *dev, const struct cli_devices *d, FILE *f)
{
	static const char *const what[] = { "attention (and KV)", "FFN", "routed experts" };
	unsigned int g, i, k = 0, n[3] = { d->afd[0], d->afd[1], d->afd_experts };

	for (g = 0; g < 3; g++) {
		for (i = 0; i < n[g]; i++, k++) {
			struct wafer_dev *m = wafer_pipe_member(dev, k);
			struct wafer_info in;

			if (!m || wafer_query(m, &in))
				continue;
			fprintf(f, "  %-6s %-2u %-18s profile %-6s %u stages x %llu KiB, "
				"%llu KiB free\n", wafer_backend_name(m), k, what[g],
				in.profile_name, in.stages,
				(unsigned long long)in.sram_bytes_per_stage >> 10,
				(unsigned long long)in.sram_bytes_free >> 10);
		}
	}
}

int cli_afd_info(const struct cli_devices *d)
{
	struct wafer_dev *dev = NULL;

	if (cli_open_afd(d, &dev)) {
		fprintf(stderr, "wafer: %s\n", wafer_last_error());
		return 1;
	}
	printf("devices:  attention-FFN disaggregation over %u + %u %s devices",
	       d->afd[0], d->afd[1], wafer_backend_name(wafer_pipe_member(dev, 0)));
	if (d->afd_experts)
		printf(", experts over %u more", d->afd_experts);
	printf("\n");
	cli_print_afd(dev, d, stdout);
	wafer_close(dev);
	return 0;
}
