// SPDX-License-Identifier: MIT
/*
 * Mixture-of-experts layers: the sparse upcycling of stories260K
 * (libwafer's wafer_moe_upcycle()) run by firmware-sim's integer forward
 * pass in process.  With every expert active and unit gates the greedy
 * tokens are the dense model's, int8 and int4, with and without a shared
 * expert; with top-k < E the model differs and is deterministic; the
 * validator rejects each bad MoE field with its errno and names it;
 * `wafer run --backend inproc --moe` through the device prints the dense
 * text byte for byte; its --expert-load table is consistent and the same
 * every run, and `wafer bench --moe` prints each layer's load imbalance.
 * Experts upcycled as copies of the dense FFN (--moe-copies), each of the
 * k that run weighing 1/k: the dense greedy tokens at any top-k; the
 * CLI's default gate (unit) gives the dense text at top-k = E, and says
 * when the experts a token drops change the model.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wafer.h"
#include "wfs_model.h"
#include "wfs_pack.h"
#include "wt_model.h"
#include "wt_util.h"

#define STEPS	200

static struct wfs_ckpt ck;

/* Greedy tokens from BOS; returns how many were produced (or -1). */
static int greedy(const void *blob, size_t len, uint32_t *toks)
{
	struct wfs_topk_entry tk[1];
	struct wt_model m;
	uint32_t t = 1;
	int i;

	if (wt_model_open(&m, blob, len, STEPS, 0))
		return -1;
	for (i = 0; i < STEPS; i++) {
		t = wt_model_step(&m, t, (uint32_t)i, 1, tk);
		toks[i] = t;
	}
	wt_model_close(&m);
	return STEPS;
}

static int pack(unsigned int wbits, void **b, size_t *len)
{
	struct wfs_pack_opts o = { .wbits = wbits, .group_size = 32 };

	return wfs_pack(&ck, &o, b, len);
}

static int moe(const void *dense, size_t dlen, unsigned int e, unsigned int k, unsigned int s,
	       unsigned int gate, void **b, size_t *len)
{
	struct wafer_moe_opts o = { .n_experts = e, .top_k = k, .n_shared = s, .gate = gate };

	return wafer_moe_upcycle(dense, dlen, &o, b, len);
}

/* MoE with every expert and unit gates == dense, token for token. */
static void test_exact(unsigned int wbits)
{
	static const unsigned int shapes[][2] = { { 4, 0 }, { 3, 1 }, { 6, 0 }, { 2, 2 } };
	uint32_t dt[STEPS], mt[STEPS];
	void *dense, *b;
	size_t dlen, len, i;

	if (!wt_ok(pack(wbits, &dense, &dlen) == 0 && greedy(dense, dlen, dt) == STEPS,
		   "int%u dense model packs and runs", wbits))
		return;
	for (i = 0; i < 4; i++) {
		unsigned int e = shapes[i][0], s = shapes[i][1];

		wt_ok(moe(dense, dlen, e, e, s, WFS_GATE_UNIT, &b, &len) == 0 &&
		      greedy(b, len, mt) == STEPS && !memcmp(dt, mt, sizeof(dt)),
		      "int%u: %u experts + %u shared, top-%u, unit gates: the dense model's %d greedy tokens",
		      wbits, e, s, e, STEPS);
		free(b);
	}
	free(dense);
}

static int moe_copies(const void *dense, size_t dlen, unsigned int e, unsigned int k,
		      unsigned int s, void **b, size_t *len)
{
	struct wafer_moe_opts o = { .n_experts = e, .top_k = k, .n_shared = s, .copies = 1 };

	return wafer_moe_upcycle(dense, dlen, &o, b, len);
}

/*
 * Copies: the dense model's greedy tokens at every top-k whose k (with the
 * shared experts) is a power of two; the router still picks different
 * experts for different tokens; another k is refused.
 */
static void test_copies(unsigned int wbits)
{
	static const unsigned int shapes[][3] = { { 4, 4, 0 }, { 4, 2, 0 }, { 4, 1, 0 },
						  { 3, 1, 1 }, { 5, 2, 2 } };
	uint32_t dt[STEPS], mt[STEPS];
	struct wfs_model_info mi;
	void *dense, *b;
	size_t dlen, len, i;

	if (!wt_ok(pack(wbits, &dense, &dlen) == 0 && greedy(dense, dlen, dt) == STEPS,
		   "int%u dense model packs and runs", wbits))
		return;
	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		unsigned int e = shapes[i][0], k = shapes[i][1], sh = shapes[i][2];

		b = NULL;
		wt_ok(moe_copies(dense, dlen, e, k, sh, &b, &len) == 0 &&
		      !wfs_model_parse(b, len, &mi) && mi.hidden_dim == (e + sh) * (unsigned int)ck.hidden_dim &&
		      greedy(b, len, mt) == STEPS && !memcmp(dt, mt, sizeof(dt)),
		      "int%u copies: %u experts + %u shared, top-%u: the dense model's %d greedy "
		      "tokens", wbits, e, sh, k, STEPS);
		free(b);
	}
	b = NULL;
	wt_ok(moe_copies(dense, dlen, 4, 3, 0, &b, &len) == -EINVAL &&
	      strstr(wafer_last_error(), "power of two"),
	      "copies with 3 experts running per token are refused: %s", wafer_last_error());
	free(dense);
}

/* top-k < E: another model, the same every run; every gate kind runs. */
static void test_sparse(void)
{
	uint32_t dt[STEPS], a[STEPS], c[STEPS];
	unsigned int gate, diff;
	void *dense, *b;
	size_t dlen, len, i;

	if (pack(8, &dense, &dlen) || greedy(dense, dlen, dt) != STEPS)
		return;
	for (gate = 0; gate <= WFS_GATE_MAX; gate++) {
		if (!wt_ok(moe(dense, dlen, 4, 2, 0, gate, &b, &len) == 0 &&
			   greedy(b, len, a) == STEPS && greedy(b, len, c) == STEPS,
			   "gate %u, top-2 of 4 runs", gate))
			continue;
		for (i = 0, diff = 0; i < STEPS; i++)
			diff += a[i] != dt[i];
		wt_ok(!memcmp(a, c, sizeof(a)), "gate %u, top-2 of 4: deterministic", gate);
		wt_ok(diff > 0, "gate %u, top-2 of 4: differs from dense (%u of %d tokens)", gate,
		      diff, STEPS);
		free(b);
	}
	/* all experts but weighted by softmax: not the dense model */
	if (moe(dense, dlen, 4, 4, 0, WFS_GATE_SOFTMAX, &b, &len) == 0 &&
	    greedy(b, len, a) == STEPS)
		wt_ok(memcmp(a, dt, sizeof(a)) != 0, "top-4 of 4 with softmax gates is not dense");
	free(b);
	wt_ok(moe(dense, dlen, 7, 2, 0, WFS_GATE_UNIT, &b, &len) == -EINVAL,
	      "7 experts over 6 scale groups of W2 is refused (%s)", wafer_last_error());
	wt_ok(moe(dense, dlen, 4, 5, 0, WFS_GATE_UNIT, &b, &len) == -EINVAL, "top-5 of 4 refused");
	free(dense);
}

static uint8_t *work;
static size_t wlen;

static struct wfs_blob_header *hdr(void)
{
	return (struct wfs_blob_header *)work;
}

/* Descriptor @i of section @s. */
static struct wfs_tensor_desc *desc(unsigned int s, unsigned int i)
{
	struct wfs_section_entry *e = (struct wfs_section_entry *)(work +
					hdr()->section_table_offset) + s;

	return (struct wfs_tensor_desc *)(work + e->offset + sizeof(struct wfs_section_header)) + i;
}

static struct wfs_section_entry *entry(unsigned int s)
{
	return (struct wfs_section_entry *)(work + hdr()->section_table_offset) + s;
}

#define REJECT(err, field, what, stmt) do {					\
		struct wfs_model_info i_;					\
		int r_;								\
		memcpy(work, tmpl, wlen);					\
		stmt;								\
		r_ = wfs_model_parse(work, wlen, &i_);				\
		wt_ok(r_ == (err) && i_.bad_field &&				\
		      strstr(i_.bad_field, field), "rejects %s: %d (%s)", what,	\
		      r_, i_.bad_field ? i_.bad_field : "no field");		\
	} while (0)

/* Every MoE field and expert table fault -> its errno, the field named. */
static void test_rejects(void)
{
	struct wfs_model_info info;
	void *dense, *tmpl;
	size_t dlen;

	if (pack(8, &dense, &dlen) || moe(dense, dlen, 3, 2, 1, WFS_GATE_SIGMOID, &tmpl, &wlen))
		return;
	work = malloc(wlen);
	wt_ok(wfs_model_parse(tmpl, wlen, &info) == 0 && info.ffn_kind == WFS_FFN_MOE &&
	      info.n_experts == 3 && info.n_experts_active == 2 && info.n_shared_experts == 1 &&
	      info.gate_kind == WFS_GATE_SIGMOID, "the MoE blob parses with its fields");
	REJECT(-WFS_EINVAL, "n_experts_active", "top-k > E", hdr()->n_experts_active = 4);
	REJECT(-WFS_EINVAL, "n_experts_active", "top-k 0", hdr()->n_experts_active = 0);
	REJECT(-WFS_EINVAL, "n_experts", "zero experts", hdr()->n_experts = 0);
	REJECT(-WFS_EINVAL, "n_experts", "too many experts", hdr()->n_experts = WFS_MAX_EXPERTS + 1);
	REJECT(-WFS_EINVAL, "n_shared_experts", "too many shared",
	       hdr()->n_shared_experts = WFS_MAX_EXPERTS);
	REJECT(-WFS_EINVAL, "gate_kind", "unknown gate", hdr()->gate_kind = WFS_GATE_MAX + 1);
	REJECT(-WFS_EINVAL, "flags", "MoE without its flag", hdr()->flags &= ~WFS_MF_MOE);
	REJECT(-WFS_EOPNOTSUPP, "ffn_kind", "unknown ffn kind", hdr()->ffn_kind = 9);
	REJECT(-WFS_EINVAL, "section header", "one expert more than the table holds",
	       hdr()->n_experts = 4);
	REJECT(-WFS_EFAULT, "truncated", "an expert table longer than its section",
	       hdr()->n_experts = 500);
	REJECT(-WFS_EINVAL, "tensor", "router rows", desc(1, 6)->rows = 2);
	REJECT(-WFS_EINVAL, "expert width", "an expert of width 0", desc(1, 7)->rows = 0);
	REJECT(-WFS_EINVAL, "tensor", "W2 cols != the expert's width", desc(1, 8)->cols += 1);
	REJECT(-WFS_EINVAL, "expert scale_exp", "experts with different W2 exponents",
	       desc(1, 11)->scale_exp += 1);
	REJECT(-WFS_EINVAL, "tensor", "expert roles swapped", desc(1, 9)->role = WFS_T_W2);
	REJECT(-WFS_EINVAL, "widths", "widths not summing to hidden_dim", hdr()->hidden_dim += 1);
	REJECT(-WFS_EFAULT, "truncated", "a layer section cut to its header",
	       entry(1)->size = 64);
	free(work);
	free(tmpl);
	free(dense);
}

/* Runs `wafer run` in process; stdout into @out (64 KiB). */
static int cli(const char *model, const char *tok, const char *args, char *out)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char cmd[2048];
	size_t n = 0, r;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s/bin/wafer run %s -z %s -n 150 --backend inproc %s 2>/dev/null",
		 build, model, tok, args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while ((r = fread(out + n, 1, 65535 - n, p)) > 0)
		n += r;
	out[n] = '\0';
	return pclose(p);
}

/* wafer convert writes a blob wafer run takes, upcycled there or later. */
static void test_convert(const char *model, const char *tok, char *d, char *m)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char dense[64], moe[64], cmd[2048];

	snprintf(dense, sizeof(dense), "/tmp/wafer-moe-%d-dense.blob", (int)getpid());
	snprintf(moe, sizeof(moe), "/tmp/wafer-moe-%d-moe.blob", (int)getpid());
	snprintf(cmd, sizeof(cmd), "%s/bin/wafer convert %s %s 2>/dev/null && "
		 "%s/bin/wafer convert %s %s --moe 4,4 --moe-gate unit 2>/dev/null", build,
		 model, dense, build, model, moe);
	if (!wt_ok(system(cmd) == 0, "wafer convert writes a dense and an MoE blob"))
		return;
	wt_ok(cli(model, tok, "", d) == 0 && cli(dense, tok, "", m) == 0 && !strcmp(d, m),
	      "wafer run on the converted dense blob prints the checkpoint's text");
	wt_ok(cli(moe, tok, "", m) == 0 && !strcmp(d, m),
	      "wafer run on the converted MoE blob (top-4 of 4, unit) prints the dense text");
	wt_ok(cli(dense, tok, "--moe 2,2,1 --moe-gate unit", m) == 0 && !strcmp(d, m),
	      "wafer run --moe upcycles a dense blob on the fly: the dense text");
	wt_ok(cli(moe, tok, "--moe 2,2", m) != 0, "an MoE blob is not upcycled again");
	snprintf(cmd, sizeof(cmd), "%s/bin/wafer convert %s /tmp/x.blob --moe 0,0 2>/dev/null",
		 build, model);
	wt_ok(system(cmd) != 0, "wafer convert --moe 0,0 is a usage error");
	snprintf(cmd, sizeof(cmd), "%s/bin/wafer info -b inproc -m %s 2>/dev/null | grep -q "
		 "'mixture of experts in every layer (0-4): 4 routed + 0 shared, top-4, unit gates'",
		 build, moe);
	wt_ok(system(cmd) == 0, "wafer info -m says which layers have experts");
	snprintf(cmd, sizeof(cmd), "%s/bin/wafer bench %s --quick --backend inproc --moe 4,1 "
		 "2>/dev/null | grep -q 'upcycled: 4 experts + 0 shared, top-1'", build, model);
	wt_ok(system(cmd) == 0, "wafer bench --moe runs its rows on the upcycled model");
	unlink(dense);
	unlink(moe);
}

/* A file into @buf (64 KiB); its length or -1. */
static long slurp(const char *path, char *buf)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, 65535, f);
	buf[n] = '\0';
	fclose(f);
	return (long)n;
}

/* Layers of an --expert-load table whose routed tokens are shared x @k. */
static int table_layers_ok(char *t, unsigned int k, int *layers)
{
	unsigned long long tok, shared[16] = { 0 }, routed[16] = { 0 };
	unsigned int l, top, ok = 0;
	char ex[16], *line = strchr(t, '\n');

	*layers = 0;
	for (; line && sscanf(line + 1, "%u %15s %u %llu", &l, ex, &top, &tok) == 4;
	     line = strchr(line + 1, '\n')) {
		if (l >= 16 || top != k)
			return 0;
		if (ex[0] == 's')
			shared[l] += tok;
		else
			routed[l] += tok;
		*layers = l + 1 > (unsigned int)*layers ? (int)l + 1 : *layers;
	}
	for (l = 0; l < (unsigned int)*layers; l++)
		ok += shared[l] && routed[l] == shared[l] * k;
	return ok == (unsigned int)*layers && *layers > 0;
}

/*
 * wafer run --expert-load: the firmware's table, the same on a second run;
 * wafer bench --moe: a max/mean per layer in each row, within [1, E/k].
 */
static void test_expert_load(const char *model, const char *tok, char *a, char *b)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char fa[64], fb[64], args[256], cmd[1024], row[512];
	double v[5];
	int layers = 0, ok = 0, i;
	FILE *p;

	snprintf(fa, sizeof(fa), "/tmp/wafer-moe-%d-a.txt", (int)getpid());
	snprintf(fb, sizeof(fb), "/tmp/wafer-moe-%d-b.txt", (int)getpid());
	snprintf(args, sizeof(args), "-t 0 --moe 4,2,1 --expert-load %s", fa);
	ok = cli(model, tok, args, a) == 0 && slurp(fa, a) > 0 && table_layers_ok(a, 2, &layers);
	wt_ok(ok, "wafer run --expert-load: %d layers, each routing shared tokens x top-2", layers);
	ok = 0;
	snprintf(args, sizeof(args), "-t 0 --moe 4,2,1 --expert-load %s", fb);
	wt_ok(cli(model, tok, args, b) == 0 && slurp(fb, b) > 0 && slurp(fa, a) > 0 &&
	      !strcmp(a, b), "wafer run --expert-load: the same table on a second run");
	unlink(fa);
	unlink(fb);
	snprintf(cmd, sizeof(cmd), "%s/bin/wafer bench %s --quick --backend inproc --moe 4,1 "
		 "2>/dev/null | grep -A2 '^single sequence' | tail -1", build, model);
	p = popen(cmd, "r");
	if (p && fgets(row, sizeof(row), p) &&
	    sscanf(row, "%*s %*s %*u %*f %*f %*f %*f %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2],
		   &v[3], &v[4]) == 5)
		for (i = 0, ok = 1; i < 5; i++)
			ok &= v[i] >= 1.0 && v[i] <= 4.0;
	if (p)
		pclose(p);
	wt_ok(ok, "wafer bench --moe 4,1: expert max/mean of 5 layers in [1, 4] (%.2f .. %.2f)",
	      ok ? v[0] : 0, ok ? v[4] : 0);
}

/* `wafer run ARGS`'s stderr has @what (or, @has 0, has not). */
static int says(const char *model, const char *tok, const char *args, const char *what)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "%s/bin/wafer run %s -z %s -n 8 --backend inproc %s 2>&1 "
		 ">/dev/null | grep -q '%s'", build, model, tok, args, what);
	return system(cmd) == 0;
}

/*
 * What a user meets: --moe 4,4 without a gate is the dense text; --moe 4,2
 * with copies too; --moe 4,2 of slices says the dropped experts change
 * the model, and copies do not say it.
 */
static void test_default(const char *model, const char *tok, char *d, char *m)
{
	wt_ok(cli(model, tok, "", d) == 0 && cli(model, tok, "--moe 4,4", m) == 0 &&
	      strlen(d) > 100 && !strcmp(d, m), "wafer run --moe 4,4 (the default gate) prints "
	      "the dense text");
	wt_ok(cli(model, tok, "--moe 4,2 --moe-copies", m) == 0 && !strcmp(d, m),
	      "wafer run --moe 4,2 --moe-copies prints the dense text");
	wt_ok(cli(model, tok, "--moe 4,1,1 --moe-copies", m) == 0 && !strcmp(d, m),
	      "wafer run --moe 4,1,1 --moe-copies prints the dense text");
	wt_ok(cli(model, tok, "--moe 4,3 --moe-copies", m) != 0,
	      "wafer run --moe 4,3 --moe-copies: 3 running experts are refused");
	wt_ok(says(model, tok, "--moe 4,2", "the ones it drops change the model"),
	      "wafer run --moe 4,2 says the dropped experts change the model");
	wt_ok(!says(model, tok, "--moe 4,2 --moe-copies", "change the model") &&
	      !says(model, tok, "--moe 4,4", "note:"),
	      "copies, and all experts with unit gates, say nothing of the kind");
	wt_ok(says(model, tok, "--moe 4,4 --moe-gate softmax", "not the dense model"),
	      "softmax gates over all the slices say they are not the dense model");
}

/* Through the device (stage workers, SRAM copies): the dense text. */
static void test_cli(const char *model, const char *tok)
{
	char *d = malloc(65536), *m = malloc(65536);

	wt_ok(cli(model, tok, "", d) == 0 && cli(model, tok, "--moe 4,4 --moe-gate unit", m) == 0 &&
	      strlen(d) > 100 && !strcmp(d, m),
	      "wafer run --moe 4,4 --moe-gate unit prints the dense text (int8)");
	wt_ok(cli(model, tok, "--quant int4", d) == 0 &&
	      cli(model, tok, "--quant int4 --moe 3,3,1 --moe-gate unit", m) == 0 &&
	      strlen(d) > 100 && !strcmp(d, m),
	      "wafer run --quant int4 --moe 3,3,1 --moe-gate unit prints the dense text");
	wt_ok(cli(model, tok, "--moe 4,2", m) == 0 && strlen(m) > 20 && strcmp(d, m),
	      "wafer run --moe 4,2 runs and prints another text");
	wt_ok(cli(model, tok, "--moe 4,5", m) != 0, "wafer run --moe 4,5 is a usage error");
	test_default(model, tok, d, m);
	test_convert(model, tok, d, m);
	test_expert_load(model, tok, d, m);
	free(d);
	free(m);
}

int main(void)
{
	char *model = wt_model_path("stories260K.bin") ? strdup(wt_model_path("stories260K.bin")) :
							 NULL;
	char *tok = wt_model_path("tok512.bin") ? strdup(wt_model_path("tok512.bin")) : NULL;

	if (!wt_ok(model && tok && wfs_ckpt_load(model, &ck) == 0, "the shared model loads"))
		return wt_done();
	test_exact(8);
	test_exact(4);
	test_copies(8);
	test_copies(4);
	test_sparse();
	test_rejects();
	test_cli(model, tok);
	wfs_ckpt_free(&ck);
	free(model);
	free(tok);
	return wt_done();
}
