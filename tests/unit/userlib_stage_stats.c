// SPDX-License-Identifier: MIT
/*
 * wafer_dev_stage_stats() in process: on one device and on a pipeline of
 * two (member after member, each entry naming its member), after a greedy
 * generation of the shared model: every stage holding layers ran every
 * position (tokens = the positions run) and was busy in modelled time,
 * every stage holding none ran nothing; the layers over the stages sum to
 * the model's; a short @out gets @max entries and the full count back; a
 * pipeline's busy time adds up to what one device's stages show.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wafer.h"
#include "wt_util.h"

#define STEPS	24
#define MAX	64

/* One greedy run of STEPS positions on @dev; its stage counters into @st: their count. */
static int run(struct wafer_dev *dev, const char *model, const char *tok,
	       struct wafer_stage_stats *st, unsigned int *n_layers)
{
	struct wafer_convert_opts conv = { .wbits = 8, .group_size = 32 };
	struct wafer_gen_opts go = { .steps = STEPS };
	struct wafer_tokenizer *t = NULL;
	struct wafer_model *m = NULL;
	struct wafer_ctx *ctx = NULL;
	struct wafer_gen_stats gs;
	int n = -1;

	if (!wafer_model_load_file(dev, model, &conv, &m) &&
	    !wafer_tokenizer_load(tok, wafer_model_get_info(m)->vocab_size, &t) &&
	    !wafer_ctx_create(m, 1, STEPS, &ctx) &&
	    !wafer_generate(ctx, t, "Once upon a time", &go, &gs)) {
		*n_layers = wafer_model_get_info(m)->n_layers;
		n = wafer_dev_stage_stats(dev, st, MAX);
	} else {
		wt_diag("run: %s", wafer_last_error());
	}
	wafer_ctx_destroy(ctx);
	wafer_tokenizer_free(t);
	wafer_model_unload(m);
	return n;
}

/* Stages with layers ran STEPS tokens and were busy; the others nothing. */
static int consistent(const struct wafer_stage_stats *st, int n, unsigned int n_layers,
		      uint64_t *busy)
{
	unsigned int layers = 0;
	int i, ok = 1;

	*busy = 0;
	for (i = 0; i < n; i++) {
		layers += st[i].n_layers;
		*busy += st[i].modelled_busy_ns;
		if (st[i].n_layers ? st[i].tokens != STEPS || !st[i].modelled_busy_ns :
				     st[i].tokens || st[i].modelled_busy_ns) {
			wt_diag("member %u stage %u: %u layers, %llu tokens, %llu ns", st[i].member,
				st[i].stage, st[i].n_layers, (unsigned long long)st[i].tokens,
				(unsigned long long)st[i].modelled_busy_ns);
			ok = 0;
		}
	}
	return ok && layers == n_layers;
}

int main(void)
{
	char *model = wt_model_path("stories260K.bin") ? strdup(wt_model_path("stories260K.bin")) :
		      NULL;
	char *tok = wt_model_path("tok512.bin") ? strdup(wt_model_path("tok512.bin")) : NULL;
	struct wafer_open_opts o[2] = { { .backend = WAFER_BACKEND_INPROC },
					{ .backend = WAFER_BACKEND_INPROC } };
	struct wafer_pipe_opts po = { .n_devices = 2, .devices = o };
	static struct wafer_stage_stats one[MAX], two[MAX], few[4];
	struct wafer_dev *dev = NULL, *pipe = NULL;
	unsigned int layers = 0, members = 1;
	uint64_t busy1 = 0, busy2 = 0;
	int n1 = -1, n2 = -1, i;

	if (!wt_ok(model && tok, "the shared model and tokenizer"))
		goto out;
	if (!wafer_open(&o[0], &dev))
		n1 = run(dev, model, tok, one, &layers);
	wt_ok(n1 == 16 && consistent(one, n1, layers, &busy1) && !one[15].member,
	      "one device: 16 stages, those with the %u layers ran %d positions, busy; the rest "
	      "idle", layers, STEPS);
	wt_ok(wafer_dev_stage_stats(dev, few, 4) == 16 && few[3].stage == 3 && few[3].tokens,
	      "a short array: 4 entries written, 16 returned");
	wt_ok(wafer_dev_stage_stats(dev, NULL, 0) == 16, "none asked for: the count");
	wt_ok(wafer_dev_stage_stats(NULL, few, 4) == -EINVAL, "no device: -EINVAL");
	if (!wafer_open_pipeline(&po, &pipe))
		n2 = run(pipe, model, tok, two, &layers);
	for (i = 1; i < n2; i++)
		members += two[i].member != two[i - 1].member;
	wt_ok(n2 == 32 && consistent(two, n2, layers, &busy2) && members == 2 &&
	      !two[15].member && two[16].member == 1 && two[16].stage == 0,
	      "a pipeline of two: 32 stages, member 0's then member 1's, the same rule");
	wt_ok(busy1 && busy2 == busy1, "the stages' modelled busy time is one device's (%llu ns)",
	      (unsigned long long)busy1);
out:
	wafer_close(pipe);
	wafer_close(dev);
	free(model);
	free(tok);
	return wt_done();
}
