// SPDX-License-Identifier: MIT
/*
 * test_moe_accuracy.c - the integer device on an upcycled model against
 * the fp32 mixture-of-experts reference (tests/common/ref_moe.h) on
 * stories260K.  The reference runs the upcycled model's own weights: the
 * int8 weights de-quantised and the blob's router, so what differs is the
 * integer arithmetic.  Both are teacher-forced over the dense fp32 model's
 * greedy text (the MoE models' own greedy text repeats a token or two:
 * they are not fine-tuned), and the device's top-1 (an in-process device,
 * jobs of every position) is the reference's at >= 98 % of the 399
 * positions, for top-k < E with softmax and sigmoid gates, with and
 * without a shared expert.  Controls: the MoE reference's top-1 is the
 * dense model's at < 90 % of them; agreement with fp32 on the checkpoint's
 * unrounded weights is printed (lower: the untrained routers and experts
 * leave small logit margins that int8 rounding flips).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_moe.h"
#include "wafer.h"
#include "wfs_model.h"
#include "wt_model.h"
#include "wt_util.h"

#define NTOK	400	/* the reference's greedy text: 399 teacher-forced positions */
#define JOB	100	/* tokens per job */
#define GROUP	32

/* The fp32 model's argmax at each position of @toks (teacher-forced). */
static int ref_top1(const struct wfs_ckpt *c, const struct ref_moe *moe, const int *toks,
		    int *top1)
{
	struct ref_state s;
	int i;

	if (ref_init(&s, c, NTOK))
		return -1;
	s.moe = moe;
	for (i = 0; i + 1 < NTOK; i++)
		top1[i] = ref_argmax(ref_forward(&s, toks[i], i), c->vocab_size);
	ref_free(&s);
	return 0;
}

/* Positions of @toks where the device's argmax is @top1's (or -1). */
static int device_agree(const void *blob, size_t len, const int *toks, const int *top1)
{
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_INPROC };
	struct wafer_bo *in = NULL, *out = NULL;
	struct wafer_completion c;
	struct wafer_model *m = NULL;
	struct wafer_ctx *ctx = NULL;
	struct wafer_dev *dev;
	int pos, i, agree = -1;

	if (wafer_open(&o, &dev))
		return -1;
	if (wafer_model_load(dev, blob, len, &m) || wafer_ctx_create(m, 1, NTOK, &ctx) ||
	    wafer_bo_create(dev, NTOK * 4, &in) ||
	    wafer_bo_create(dev, JOB * WAFER_RESULT_SIZE(0), &out))
		goto out;
	for (i = 0; i < NTOK; i++)
		((uint32_t *)wafer_bo_map(in))[i] = (uint32_t)toks[i];
	agree = 0;
	for (pos = 0; pos + 1 < NTOK && agree >= 0; pos += JOB) {
		int n = NTOK - 1 - pos < JOB ? NTOK - 1 - pos : JOB;
		struct wafer_job j = { .ctx = ctx, .start_pos = pos, .n_tokens = n,
				       .flags = WAFER_JOB_ALL_POSITIONS, .in = in,
				       .in_offset = (uint64_t)pos * 4, .out = out };

		if (wafer_submit(dev, &j, 1) != 1 || wafer_reap(dev, &c, 1, 1, -1) != 1 ||
		    c.status) {
			agree = -1;
			break;
		}
		for (i = 0; i < n; i++)
			agree += (int)wafer_result(out, 0, 0, i)->argmax == top1[pos + i];
	}
out:
	wafer_bo_destroy(out);
	wafer_bo_destroy(in);
	wafer_ctx_destroy(ctx);
	wafer_model_unload(m);
	wafer_close(dev);
	return agree;
}

static int text[NTOK], dense_top1[NTOK];

/* Positions where @a and @b agree. */
static int same(const int *a, const int *b)
{
	int i, n = 0;

	for (i = 0; i + 1 < NTOK; i++)
		n += a[i] == b[i];
	return n;
}

/* The blob's routers into @ref (0 or -1). */
static int blob_routers(struct ref_moe *ref, const void *blob, size_t len)
{
	struct wt_model wm;
	unsigned int l;
	int ret = 0;

	if (wt_model_open(&wm, blob, len, 1, 0))
		return -1;
	for (l = 0; l < wm.info.n_layers && !ret; l++)
		ret = ref_moe_router_from(ref, (int)l, &wm.lv[l].router);
	wt_model_close(&wm);
	return ret ? -1 : 0;
}

static void shape(const struct wfs_ckpt *c, const struct wfs_ckpt *dq, const void *dense, size_t dlen, unsigned int e,
		  unsigned int k, unsigned int s, unsigned int gate)
{
	struct wafer_moe_opts mo = { .n_experts = e, .top_k = k, .n_shared = s, .gate = gate };
	static int top1[NTOK];
	struct ref_moe ref;
	int agree, ctl, ok;
	size_t len;
	void *blob;

	if (!wt_ok(wafer_moe_upcycle(dense, dlen, &mo, &blob, &len) == 0, "upcycle the int8 blob"))
		return;
	ok = ref_moe_init(&ref, c, e, k, s, gate, GROUP) == 0 && blob_routers(&ref, blob, len) == 0 &&
	     ref_top1(c, &ref, text, top1) == 0;
	agree = ok ? device_agree(blob, len, text, top1) : -1;
	wt_diag("%u+%u top-%u gate %u: the device vs fp32 on the checkpoint's own weights: %.1f %%",
		e, s, k, gate, 100.0 * agree / (NTOK - 1));
	ok = ok && ref_top1(dq, &ref, text, top1) == 0;
	ref_moe_free(&ref);
	if (!wt_ok(ok, "fp32 MoE %u+%u top-%u gate %u (the blob's weights): top-1 at %d positions",
		   e, s, k, gate, NTOK - 1)) {
		free(blob);
		return;
	}
	agree = device_agree(blob, len, text, top1);
	wt_ok(agree >= 0 && agree * 100 >= 98 * (NTOK - 1),
	      "%u experts + %u shared, top-%u, gate %u: the int8 device's top-1 is the fp32 MoE "
	      "reference's at %d of %d positions (%.1f %%, >= 98 %%)", e, s, k, gate, agree,
	      NTOK - 1, 100.0 * agree / (NTOK - 1));
	/* The control: the MoE model is another model than the dense one. */
	ctl = same(top1, dense_top1);
	wt_ok(ctl * 100 < 90 * (NTOK - 1),
	      "... a different model: its fp32 top-1 is the dense model's at only %d (%.1f %%)", ctl,
	      100.0 * ctl / (NTOK - 1));
	free(blob);
}

int main(void)
{
	const char *path = wt_model_path("stories260K.bin");
	struct wfs_pack_opts po = { .wbits = 8, .group_size = GROUP };
	struct wfs_ckpt c, dq;
	size_t dlen;
	void *dense;

	if (!wt_ok(path && wfs_ckpt_load(path, &c) == 0 && wfs_pack(&c, &po, &dense, &dlen) == 0,
		   "the shared model loads and packs at int8") ||
	    !wt_ok(ref_greedy(&c, NTOK, text) == 0 && ref_top1(&c, NULL, text, dense_top1) == 0,
		   "the dense fp32 model's greedy text of %d tokens", NTOK) ||
	    !wt_ok(wfs_pack_dequant(&c, &po, &dq) == 0, "the int8 weights de-quantised"))
		return wt_done();
	shape(&c, &dq, dense, dlen, 4, 2, 0, WFS_GATE_SOFTMAX);
	shape(&c, &dq, dense, dlen, 4, 1, 1, WFS_GATE_SOFTMAX);
	shape(&c, &dq, dense, dlen, 4, 2, 1, WFS_GATE_SIGMOID);
	shape(&c, &dq, dense, dlen, 5, 3, 1, WFS_GATE_SOFTMAX);
	free(dense);
	wfs_ckpt_free(&dq);
	wfs_ckpt_free(&c);
	return wt_done();
}
