// SPDX-License-Identifier: MIT
/*
 * device_afd.c - attention-FFN disaggregation in the firmware: LOAD_MODEL
 * part WFW_PART_ATTN on some devices, WFW_PART_FFN on others, and the
 * ping-pong of RUN_JOBs of one layer part each (WFW_JOB_LAYER), the
 * activation records going attention -> FFN -> attention ... every layer.
 *
 * Every result record (argmax, top-k logits) of a prefill of PREFILL
 * positions and a greedy decode of DECODE tokens, NSEQ sequences, is
 * bit-identical to one device running whole layers, int8 and int4, for
 * 1:1 (asic devices), 1:1 with the FFN on a wafer device, and 2:2 (layer
 * ranges of the parts).  Each part holds only its tensors (and the
 * attention part the KV: an FFN part's context has none), GET_INFO says
 * which part a device holds, and the part/layer fields that do not fit
 * fail with -EINVAL, a part too big with -ENOSPC naming it.  Modelled
 * time: an attention part's records cross the inter-device link (the
 * last stage's hop is the link's formula, the record's t_ns its end) and
 * the FFN part's come back over it.
 */
#include "device_harness.h"
#include "wfs_pack.h"
#include "wt_util.h"

#define NSEQ	2
#define PREFILL	21	/* > one 16-token chunk */
#define DECODE	64
#define NPOS	(PREFILL + DECODE)
#define CTX	96
#define TOPK	4
#define REC	WFW_OUT_REC_SIZE(TOPK)
#define MAXDEV	4

/* The devices of one run: whole layers (na = 1, nf = 0) or parts. */
struct afd {
	int na, nf;
	u32 L;
	struct dh *a[MAXDEV], *f[MAXDEV];
	u32 ca[MAXDEV], cf[MAXDEV];
	u32 dim;		/* the model's width */
	u32 act;		/* bytes of an activation record */
	u8 *in, *mid, *res;	/* job input, activations, results */
	u8 *out;		/* NSEQ x NPOS result records */
	u64 link_ns;		/* modelled: summed job latencies */
};

static u32 prompt[NSEQ][PREFILL];

static void device_down(struct dh *h)
{
	if (h) {
		dh_fini(h);
		free(h);
	}
}

static int load_part(struct dh *h, void *blob, size_t len, u32 part,
		     u32 first, u32 count, struct wfw_cpl *cpl)
{
	return dh_load_range(h, blob, len, 0, first, count, part, cpl);
}

static const size_t in_size = (size_t)PREFILL * 4096 + 64;

/* Device @i of @n of a group: layers [i L / n, (i + 1) L / n). */
static int group_up(struct afd *x, struct dh **hs, u32 *ctxs, int n,
		    const char *profile, u32 part, void *blob, size_t len)
{
	struct wfw_cpl cpl;
	int i, ret;

	for (i = 0; i < n; i++) {
		u32 first = part ? (u32)i * x->L / n : 0;
		u32 count = part ? (u32)(i + 1) * x->L / n - first : 0;
		int64_t id;

		hs[i] = dh_new(profile, strcmp(profile, "asic") ? 0 : 4, 0);
		if (!hs[i])
			return -1;
		dh_region_add(hs[i], blob, len);
		dh_region_add(hs[i], x->in, in_size);
		dh_region_add(hs[i], x->mid, (size_t)PREFILL * x->act);
		dh_region_add(hs[i], x->res, (size_t)PREFILL * REC);
		ret = load_part(hs[i], blob, len, part, first, count, &cpl);
		if (ret) {
			wt_diag("load of part %u, layers %u+%u: %d", part, first,
				count, ret);
			return -1;
		}
		id = dh_ctx_create(hs[i], NSEQ, CTX, &cpl);
		if (id <= 0)
			return -1;
		ctxs[i] = (u32)id;
	}
	return 0;
}

static void afd_down(struct afd *x)
{
	int i;

	for (i = 0; i < x->na; i++)
		device_down(x->a[i]);
	for (i = 0; i < x->nf; i++)
		device_down(x->f[i]);
	free(x->in);
	free(x->mid);
	free(x->res);
	free(x->out);
}

/* nf == 0: whole layers on one device (the reference). */
static int afd_up(struct afd *x, int na, int nf, const char *pa,
		  const char *pf, void *blob, size_t len, u32 L, u32 dim)
{
	memset(x, 0, sizeof(*x));
	x->na = na;
	x->nf = nf;
	x->L = L;
	x->dim = dim;
	x->act = WFW_ACT_REC_SIZE(dim);
	x->in = dh_alloc(in_size);
	x->mid = dh_alloc((size_t)PREFILL * x->act);
	x->res = dh_alloc((size_t)PREFILL * REC);
	x->out = dh_alloc((size_t)NSEQ * NPOS * REC);
	if (group_up(x, x->a, x->ca, na, pa, nf ? WFW_PART_ATTN : 0, blob, len))
		return -1;
	return group_up(x, x->f, x->cf, nf, pf, WFW_PART_FFN, blob, len);
}

/*
 * One RUN_JOB of @n positions of sequence @s at @pos; @src: @n token ids
 * or records; @layer >= 0: WFW_JOB_LAYER (the u32 after the input).
 */
static int job(struct afd *x, struct dh *h, u32 ctx, int s, u32 pos, u32 n,
	       const void *src, int in_act, int out_act, int layer)
{
	u32 in_bytes = n * (in_act ? x->act : 4);
	u16 flags = (in_act ? WFW_JOB_IN_ACT : 0) |
		    (out_act ? WFW_JOB_OUT_ACT : 0) |
		    (layer >= 0 ? WFW_JOB_LAYER : 0);
	struct wfw_cmd c;
	struct wfw_cpl cpl;

	memmove(x->in, src, in_bytes);
	memcpy(x->in + in_bytes, &layer, 4);
	if (!out_act && n > 1)
		flags |= WFW_JOB_ALL_POSITIONS;
	dh_job_cmd(&c, ctx, (u32)s, pos, n, (const u32 *)x->in,
		   out_act ? x->mid : x->res,
		   out_act ? n * x->act : n * REC, out_act ? 0 : TOPK, flags, 0);
	if (dh_exec(h, &c, &cpl, 20000))
		return -ETIMEDOUT;
	x->link_ns += cpl.device_ns;
	return cpl.status;
}

/* One step of sequence @s: results into x->res. */
static int step(struct afd *x, int s, u32 pos, u32 n, const u32 *tok)
{
	u32 l;
	int ret, ia, iff;

	if (!x->nf)
		return job(x, x->a[0], x->ca[0], s, pos, n, tok, 0, 0, -1);
	for (l = 0; l < x->L; l++) {
		/* the device whose range holds layer l in each group */
		for (ia = 0; (u32)(ia + 1) * x->L / x->na <= l; ia++)
			;
		for (iff = 0; (u32)(iff + 1) * x->L / x->nf <= l; iff++)
			;
		ret = job(x, x->a[ia], x->ca[ia], s, pos, n,
			  l ? (const void *)x->mid : tok, l != 0, 1, (int)l);
		if (!ret)
			ret = job(x, x->f[iff], x->cf[iff], s, pos, n, x->mid, 1,
				  l + 1 < x->L, (int)l);
		if (ret)
			return ret;
	}
	return 0;
}

/* Prefill and greedy decode of every sequence; records into x->out. */
static int run(struct afd *x)
{
	int s, j, ret;
	u32 tok;

	for (s = 0; s < NSEQ; s++) {
		u8 *o = x->out + (size_t)s * NPOS * REC;

		ret = step(x, s, 0, PREFILL, prompt[s]);
		if (ret)
			return ret;
		memcpy(o, x->res, (size_t)PREFILL * REC);
		for (j = 0; j < DECODE; j++) {
			tok = ((struct wfw_out_rec *)x->res)[0].argmax;
			if (j == 0)
				tok = ((struct wfw_out_rec *)(x->res +
					(PREFILL - 1) * REC))->argmax;
			ret = step(x, s, PREFILL + (u32)j, 1, &tok);
			if (ret)
				return ret;
			memcpy(o + (size_t)(PREFILL + j) * REC, x->res, REC);
		}
	}
	return 0;
}

static u64 sram_used(struct dh *h)
{
	struct wfw_info i;

	return dh_info(h, &i) ? 0 : i.sram_used;
}

/* What a part device says, and the SRAM each part takes. */
static void check_parts(struct afd *x, struct afd *ref)
{
	struct wfw_info a, f;
	u64 whole = sram_used(ref->a[0]);
	int ret = dh_info(x->a[0], &a);

	ret = ret ? ret : dh_info(x->f[0], &f);
	wt_ok(!ret && a.model_flags == (WFW_MODEL_ATTN | WFW_MODEL_EMBED) &&
	      f.model_flags == (WFW_MODEL_FFN | WFW_MODEL_HEAD) &&
	      a.n_layers == x->L && f.n_layers == x->L &&
	      a.kv_bytes_per_pos && !f.kv_bytes_per_pos,
	      "GET_INFO: attention part (+embed, KV %llu B/pos), FFN part (+head, no KV), %u layers each",
	      (unsigned long long)a.kv_bytes_per_pos, f.n_layers);
	wt_ok(a.sram_used < whole && f.sram_used < whole,
	      "each part takes less SRAM than the whole model: attention %llu KiB, FFN %llu KiB, whole %llu KiB",
	      (unsigned long long)(a.sram_used >> 10),
	      (unsigned long long)(f.sram_used >> 10),
	      (unsigned long long)(whole >> 10));
}

/* Part and layer fields that do not fit fail with -EINVAL, nothing runs. */
static void check_bad_jobs(struct afd *x, struct afd *ref)
{
	static const u32 tok[2] = { 1, 2 };
	struct {
		const char *what;
		struct dh *h;
		u32 ctx;
		int in_act, out_act, layer;
	} bad[] = {
		{ "a part job without WFW_JOB_LAYER", x->a[0], x->ca[0], 0, 1, -1 },
		{ "WFW_JOB_LAYER on whole layers", ref->a[0], ref->ca[0], 0, 0, 0 },
		{ "a layer past the range", x->a[0], x->ca[0], 1, 1, (int)x->L },
		{ "token ids into the attention of layer 1", x->a[0], x->ca[0], 0, 1, 1 },
		{ "records into the attention of layer 0 (the embedding's)",
		  x->a[0], x->ca[0], 1, 1, 0 },
		{ "results from an attention part", x->a[0], x->ca[0], 0, 0, 0 },
		{ "token ids into an FFN part", x->f[0], x->cf[0], 0, 1, 0 },
		{ "results from the FFN of layer 0", x->f[0], x->cf[0], 1, 0, 0 },
		{ "records out of the FFN of the last layer (the head's)",
		  x->f[0], x->cf[0], 1, 1, (int)x->L - 1 },
	};
	size_t i;
	int ret;

	memset(x->mid, 0, x->act);
	((struct wfw_act_rec *)x->mid)->dim = x->dim;	/* a valid record */
	for (i = 0; i < WFS_ARRAY_SIZE(bad); i++) {
		ret = job(x, bad[i].h, bad[i].ctx, 0, 0, 1,
			  bad[i].in_act ? (const void *)x->mid : tok,
			  bad[i].in_act, bad[i].out_act, bad[i].layer);
		wt_ok(ret == -WFS_EINVAL, "RUN_JOB: %s -> -EINVAL (%d)",
		      bad[i].what, ret);
	}
}

/*
 * The link each way: an attention part job's last stage hops over the
 * inter-device link (WFW_CHUNK_LINK, link_hop_cycles + ceil(A / link B
 * per cycle) at 1 GHz on asic), its record arrives then (t_ns), and the
 * FFN part job of the same layer starts no earlier.  Decodes position
 * PREFILL + DECODE of slot 0 (after run()).
 */
static void check_link(struct afd *x)
{
	struct wfw_info in;
	struct wfw_chunk_time t[8];
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	const struct wfw_act_rec *r = (const struct wfw_act_rec *)x->mid;
	u32 pos = PREFILL + DECODE, tok = 1, n_st, l = 1, times_at;
	u64 link_ns, t_att = 0, t_ffn = 0;
	int ret;

	ret = dh_info(x->a[0], &in);
	n_st = in.stages_used;
	link_ns = in.link_hop_cycles + (x->act + in.link_bytes_per_cycle - 1) /
		  in.link_bytes_per_cycle;	/* asic: 1 GHz */
	ret = ret ? ret : job(x, x->a[0], x->ca[0], 0, pos, 1, &tok, 0, 1, 0);
	/* layer 1's attention again, with its chunk times after the record */
	memcpy(x->in, x->mid, x->act);
	memcpy(x->in + x->act, &l, 4);
	times_at = x->act;
	dh_job_cmd(&c, x->ca[0], 0, pos, 1, (const u32 *)x->in, x->mid,
		   times_at + n_st * (u32)sizeof(t[0]), 0,
		   WFW_JOB_IN_ACT | WFW_JOB_OUT_ACT | WFW_JOB_LAYER | WFW_JOB_TIMES, 0);
	c.job.times_offset = times_at;
	c.job.times_len = n_st * (u32)sizeof(t[0]);
	ret = ret ? ret : dh_exec(x->a[0], &c, &cpl, 5000) ? -ETIMEDOUT : cpl.status;
	if (!ret && n_st <= 8) {
		memcpy(t, x->mid + times_at, n_st * sizeof(t[0]));
		t_att = r->t_ns;
		ret = job(x, x->f[0], x->cf[0], 0, pos, 1, x->mid, 1, 1, 1);
		t_ffn = r->t_ns;
	}
	wt_ok(!ret && n_st <= 8 && (t[n_st - 1].flags & WFW_CHUNK_LINK) &&
	      t[n_st - 1].hop_end_ns - t[n_st - 1].end_ns == link_ns &&
	      t_att == t[n_st - 1].hop_end_ns && cpl.value == t_att &&
	      t_ffn > t_att + link_ns,
	      "the attention part's record crosses the link (%llu ns: 500 cycles + %u B at 64 B/cycle), arrives at t_ns %llu; the FFN part's, after its work and the link back, at %llu",
	      (unsigned long long)link_ns, x->act, (unsigned long long)t_att,
	      (unsigned long long)t_ffn);
}

/* An FFN part's context has no KV; a part too big is -ENOSPC naming it. */
static void check_load_fields(void *blob, size_t len, u32 L)
{
	struct wfw_cpl cpl;
	struct dh *h = dh_new("asic", 4, 0);
	char *log = malloc(65536);
	int64_t id;
	int ret;

	if (!h || !log)
		goto out;
	dh_region_add(h, blob, len);
	ret = load_part(h, blob, len, WFW_PART_FFN, 1, L - 1, &cpl);
	id = ret ? ret : dh_ctx_create(h, 4, CTX, &cpl);
	wt_ok(id > 0 && cpl.value == 0,
	      "an FFN part's context allocates no KV (%lld, %llu bytes)",
	      (long long)id, (unsigned long long)cpl.value);
	device_down(h);
	h = dh_new("asic", 1, 64 << 10);
	if (!h)
		goto out;
	dh_region_add(h, blob, len);
	ret = load_part(h, blob, len, WFW_PART_ATTN, 0, L, &cpl);
	dh_read_log(h, log, 65536);
	wt_ok(ret == -WFS_ENOSPC && strstr(log, "attention part of layers"),
	      "an attention part too big for the device: -ENOSPC, the log names the part (%d)",
	      ret);
out:
	device_down(h);
	free(log);
}

static void run_all(const char *name, const struct wfs_ckpt *ck,
		    const struct wfs_pack_opts *o)
{
	static const struct {
		int na, nf;
		const char *pa, *pf;
	} cfg[] = {
		{ 1, 1, "asic", "asic" },
		{ 1, 1, "asic", "wafer" },
		{ 2, 2, "asic", "asic" },
	};
	size_t total = (size_t)NSEQ * NPOS * REC, len;
	u32 L = (u32)ck->n_layers, dim = (u32)ck->dim;
	struct afd ref, x;
	void *blob;
	size_t i;
	int ret;

	if (!wt_ok(!wfs_pack(ck, o, &blob, &len), "%s: pack", name))
		return;
	ret = afd_up(&ref, 1, 0, "asic", NULL, blob, len, L, dim);
	ret = ret ? ret : run(&ref);
	if (!wt_ok(!ret, "%s: whole layers on one device: prefill %d + greedy decode %d, %d sequences (%d)",
		   name, PREFILL, DECODE, NSEQ, ret))
		goto out;
	for (i = 0; i < WFS_ARRAY_SIZE(cfg); i++) {
		ret = afd_up(&x, cfg[i].na, cfg[i].nf, cfg[i].pa, cfg[i].pf,
			     blob, len, L, dim);
		ret = ret ? ret : run(&x);
		wt_ok(!ret && !memcmp(x.out, ref.out, total),
		      "%s: --afd %d:%d (attention on %s, FFN on %s): every record bit-identical to whole layers (%d)",
		      name, cfg[i].na, cfg[i].nf, cfg[i].pa, cfg[i].pf, ret);
		wt_diag("%s %d:%d %s/%s: modelled device time %llu us over %d jobs",
			name, cfg[i].na, cfg[i].nf, cfg[i].pa, cfg[i].pf,
			(unsigned long long)(x.link_ns / 1000),
			NSEQ * (DECODE + 1) * 2 * (int)L);
		if (!ret && i == 0) {
			check_parts(&x, &ref);
			check_bad_jobs(&x, &ref);
			check_link(&x);
		}
		afd_down(&x);
	}
	if (o->wbits == 8)
		check_load_fields(blob, len, L);
out:
	afd_down(&ref);
	free(blob);
}

int main(void)
{
	const char *path = wt_model_path("stories260K.bin");
	struct wfs_pack_opts o8 = { .wbits = 8, .group_size = 64 };
	struct wfs_pack_opts o4 = { .wbits = 4, .group_size = 32 };
	struct wfs_ckpt ck;
	struct wt_rng r;
	int s, p;

	if (!wt_ok(path && wfs_ckpt_load(path, &ck) == 0, "load %s",
		   path ? path : "stories260K.bin"))
		return wt_done();
	wt_rng_seed(&r, 12);
	for (s = 0; s < NSEQ; s++) {
		prompt[s][0] = 1;
		for (p = 1; p < PREFILL; p++)
			prompt[s][p] = (u32)wt_rng_range(&r, 3, ck.vocab_size - 1);
	}
	run_all("int8", &ck, &o8);
	run_all("int4", &ck, &o4);
	wfs_ckpt_free(&ck);
	return wt_done();
}
