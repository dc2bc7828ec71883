// SPDX-License-Identifier: MIT
/*
 * userlib_stream.c - weight streaming through libwafer, in process.
 *
 * stories260K (int8 and int4) on in-process devices too small to hold it
 * resident: WAFER_STREAM_OFF is -ENOSPC, AUTO streams (and says it fell
 * back), ON streams; the greedy text each generates is byte-identical to
 * the resident run on the default device, which AUTO leaves resident.
 * Bad modes are -EINVAL; a device too small even to stream is -ENOSPC,
 * with both errors in the message.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wafer.h"
#include "wt_util.h"

#define STEPS	96

struct text {
	char s[8192];
	size_t n;
};

static int on_piece(void *arg, int token, const char *piece, int from_prompt)
{
	struct text *t = arg;
	size_t l = strlen(piece);

	(void)token;
	(void)from_prompt;
	if (t->n + l < sizeof(t->s)) {
		memcpy(t->s + t->n, piece, l + 1);
		t->n += l;
	}
	return 0;
}

/*
 * Load on a fresh in-process device (@stages x @kib, 0: the profile's) with
 * @stream, generate greedily into @t; the load's status, or -1.
 */
static int run(const char *ckpt, const struct wafer_tokenizer *tok, unsigned int wbits,
	       unsigned int stages, unsigned int kib, int stream, struct wafer_model_info *mi,
	       struct text *t)
{
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_INPROC, .profile = "asic",
				     .stages = stages, .sram_bytes = (uint64_t)kib << 10 };
	struct wafer_convert_opts conv = { .wbits = wbits, .group_size = 32, .stream = stream };
	struct wafer_gen_opts go = { .steps = STEPS, .on_piece = on_piece, .arg = t };
	struct wafer_model *m = NULL;
	struct wafer_ctx *ctx = NULL;
	struct wafer_dev *dev;
	int ret = wafer_open(&o, &dev);

	memset(t, 0, sizeof(*t));
	if (ret)
		return -1;
	ret = wafer_model_load_file(dev, ckpt, &conv, &m);
	if (!ret) {
		*mi = *wafer_model_get_info(m);
		if (wafer_ctx_create(m, 1, STEPS, &ctx) ||
		    wafer_generate(ctx, tok, "Once upon a time", &go, NULL))
			ret = -1;
	}
	wafer_ctx_destroy(ctx);
	wafer_model_unload(m);
	wafer_close(dev);
	return ret;
}

static void quant(const char *ckpt, const struct wafer_tokenizer *tok, unsigned int wbits,
		  unsigned int kib)
{
	static struct text res, t;
	struct wafer_model_info mi;
	int ret;

	ret = run(ckpt, tok, wbits, 0, 0, WAFER_STREAM_AUTO, &mi, &res);
	if (!wt_ok(!ret && !mi.weights_streamed && res.n > 20,
		   "int%u: auto on asic/4 x 1 MiB stays resident: \"%.40s...\"", wbits, res.s))
		return;
	ret = run(ckpt, tok, wbits, 1, kib, WAFER_STREAM_OFF, &mi, &t);
	wt_ok(ret == -ENOSPC, "int%u: off on asic/1 x %u KiB: -ENOSPC (%d): %s", wbits, kib,
	      ret, wafer_last_error());
	ret = run(ckpt, tok, wbits, 1, kib, WAFER_STREAM_AUTO, &mi, &t);
	wt_ok(!ret && mi.weights_streamed && mi.stream_fallback && !strcmp(t.s, res.s),
	      "int%u: auto on asic/1 x %u KiB streams (fell back) and writes the resident text",
	      wbits, kib);
	ret = run(ckpt, tok, wbits, 0, 0, WAFER_STREAM_ON, &mi, &t);
	wt_ok(!ret && mi.weights_streamed && !mi.stream_fallback && !strcmp(t.s, res.s),
	      "int%u: on, where it fits, streams and writes the resident text", wbits);
	ret = run(ckpt, tok, wbits, 1, 128, WAFER_STREAM_AUTO, &mi, &t);
	wt_ok(ret == -ENOSPC && strstr(wafer_last_error(), "streaming the weights"),
	      "int%u: auto where even streaming does not fit: -ENOSPC: %s", wbits,
	      wafer_last_error());
	ret = run(ckpt, tok, wbits, 0, 0, 3, &mi, &t);
	wt_ok(ret == -EINVAL, "stream mode 3 is -EINVAL: %s", wafer_last_error());
}

int main(void)
{
	char *ckpt = wt_model_path("stories260K.bin") ? strdup(wt_model_path("stories260K.bin")) :
		     NULL;
	const char *tp = wt_model_path("tok512.bin");
	struct wafer_tokenizer *tok = NULL;

	if (!wt_ok(ckpt && tp && !wafer_tokenizer_load(tp, 512, &tok), "the shared model"))
		return wt_done();
	quant(ckpt, tok, 8, 480);
	quant(ckpt, tok, 4, 352);
	wafer_tokenizer_free(tok);
	free(ckpt);
	return wt_done();
}
