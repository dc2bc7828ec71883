// SPDX-License-Identifier: MIT
/*
 * A program of libwafer's users, built by tests/unit/userlib_install
 * against an installed prefix (pkg-config wafer, the shared library) and
 * against the build's static libraries: it may use only what wafer.h
 * declares.  Prints the greedy continuation of a prompt, token ids and
 * text, from the in-process backend.
 *
 * Usage: so_client MODEL.bin TOKENIZER.bin
 */
#include <stdio.h>

#include <wafer.h>

static int on_piece(void *arg, int token, const char *piece, int from_prompt)
{
	(void)arg;
	if (!from_prompt)
		printf("%d:%s\n", token, piece);
	return 0;
}

int main(int argc, char **argv)
{
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_INPROC, .index = -1 };
	struct wafer_gen_opts g = { .steps = 48, .on_piece = on_piece };
	struct wafer_tokenizer *tok = NULL;
	struct wafer_model *m = NULL;
	struct wafer_ctx *ctx = NULL;
	struct wafer_dev *dev = NULL;
	int ret;

	if (argc != 3)
		return 2;
	ret = wafer_open(&o, &dev);
	if (!ret)
		ret = wafer_model_load_file(dev, argv[1], NULL, &m);
	if (!ret)
		ret = wafer_tokenizer_load(argv[2], wafer_model_get_info(m)->vocab_size, &tok);
	if (!ret)
		ret = wafer_ctx_create(m, 1, 64, &ctx);
	if (!ret)
		ret = wafer_generate(ctx, tok, "Once upon a time", &g, NULL);
	if (ret)
		fprintf(stderr, "so_client: %s\n", wafer_last_error());
	wafer_ctx_destroy(ctx);
	wafer_tokenizer_free(tok);
	wafer_model_unload(m);
	wafer_close(dev);
	return ret ? 1 : 0;
}
