// SPDX-License-Identifier: MIT
/*
 * device_moe_ep.c - expert parallelism across devices in the firmware
 * (ABI 1.7): an attention part (WFW_PART_ATTN), the FFN home
 * (WFW_PART_XHOME: norm, router, shared experts) and N expert shards
 * (WFW_PART_XSHARD, routed experts [first, first + count)), on separate
 * devices; per layer the host runs attention, ROUTE on the home, UP on
 * every shard (their W1/W3 units copied into the home's record), GLU on
 * the home, DOWN on every shard (their s64 partial sums added), FIN on
 * the home.
 *
 * Every result record of a prefill (two chunks) and a greedy decode, two
 * sequences, is bit-identical to one device of whole layers: stories260K
 * upcycled to 4 experts top-2 + 1 shared (softmax), to 5 top-5 + 1 (unit
 * gates: also the dense model's records) and to 6 top-3 without shared
 * experts (normalised sigmoids), int8 and int4, over 1, 2 and 3 shards.  The home counts the routing: its expert load equals the
 * whole-layer device's.  The parts' SRAM, GET_INFO's flags and record
 * size, bad LOAD_MODEL fields (each named in the log) and bad jobs and
 * records (-EINVAL), and the dispatch's modelled link hop are checked.
 */
#include <stdio.h>
#include <string.h>

#include "device_harness.h"
#include "wafer.h"
#include "wfs_model.h"
#include "wfs_pack.h"
#include "wt_util.h"

#define NSEQ	2
#define PREFILL	21	/* > one 16-token chunk */
#define DECODE	24
#define NPOS	(PREFILL + DECODE)
#define CTX	64
#define TOPK	4
#define REC	WFW_OUT_REC_SIZE(TOPK)
#define MAXSH	3
#define LOG_LEN	65536
#define LOAD_MAX 64

/* One run: whole layers on a[0] (ns == 0), or attention, home, shards. */
struct ep {
	int ns;
	u32 L, dim, hid;
	struct dh *a, *home, *sh[MAXSH];
	u32 ca, ch, cs[MAXSH];
	u32 act, x;		/* activation and expert record bytes */
	u8 *in, *mid, *hrec, *hrec2, *srec, *res, *out;
	u64 dev_ns;		/* summed modelled job latencies */
};

static u32 prompt[NSEQ][PREFILL];
static char *logbuf;

static void dev_down(struct dh *h)
{
	if (h) {
		dh_fini(h);
		free(h);
	}
}

static int load_ep(struct dh *h, void *blob, size_t len, u32 part, u32 xfirst,
		   u32 xcount, u32 group, struct wfw_cpl *cpl)
{
	return dh_load_experts(h, blob, len, 0, 0, 0, part, group, xfirst, xcount, cpl);
}

static size_t buf_size(const struct ep *x)
{
	return (size_t)PREFILL * x->x + 64;
}

/* A device of @part with a context; NULL on failure. */
static struct dh *dev_up(struct ep *x, void *blob, size_t len, u32 part,
			 u32 xfirst, u32 xcount, u32 *ctx)
{
	struct dh *h = dh_new("asic", 2, 0);
	struct wfw_cpl cpl;
	int64_t id;
	int ret;

	if (!h)
		return NULL;
	dh_region_add(h, blob, len);
	dh_region_add(h, x->in, buf_size(x));
	dh_region_add(h, x->srec, buf_size(x));
	dh_region_add(h, x->hrec2, buf_size(x));
	dh_region_add(h, x->mid, buf_size(x));
	dh_region_add(h, x->res, (size_t)PREFILL * REC);
	ret = load_ep(h, blob, len, part, xfirst, xcount, 0, &cpl);
	id = ret ? ret : dh_ctx_create(h, NSEQ, CTX, &cpl);
	if (id <= 0) {
		wt_diag("part %u experts %u+%u: %d", part, xfirst, xcount, (int)id);
		dev_down(h);
		return NULL;
	}
	*ctx = (u32)id;
	return h;
}

static void ep_down(struct ep *x)
{
	int i;

	dev_down(x->a);
	dev_down(x->home);
	for (i = 0; i < x->ns; i++)
		dev_down(x->sh[i]);
	free(x->in);
	free(x->mid);
	free(x->hrec);
	free(x->hrec2);
	free(x->srec);
	free(x->res);
	free(x->out);
}

/* Shard @i of @n: E / n experts, the first E % n shards one more. */
static void shard_range(u32 e, int n, int i, u32 *first, u32 *count)
{
	u32 q = e / (u32)n, r = e % (u32)n;

	*first = (u32)i * q + ((u32)i < r ? (u32)i : r);
	*count = q + ((u32)i < r);
}

static int ep_up(struct ep *x, int ns, void *blob, size_t len,
		 const struct wfs_model_info *mi)
{
	u32 first, count;
	int i;

	memset(x, 0, sizeof(*x));
	x->L = mi->n_layers;
	x->dim = mi->dim;
	x->hid = mi->hidden_dim;
	x->act = WFW_ACT_REC_SIZE(x->dim);
	x->x = WFW_XREC_SIZE(x->dim, x->hid);
	x->in = dh_alloc(buf_size(x));
	x->mid = dh_alloc(buf_size(x));
	x->hrec = dh_alloc(buf_size(x));
	x->hrec2 = dh_alloc(buf_size(x));
	x->srec = dh_alloc(buf_size(x));
	x->res = dh_alloc((size_t)PREFILL * REC);
	x->out = dh_alloc((size_t)NSEQ * NPOS * REC);
	x->a = dev_up(x, blob, len, ns ? WFW_PART_ATTN : 0, 0, 0, &x->ca);
	if (!x->a || !ns)
		return x->a ? 0 : -1;
	x->home = dev_up(x, blob, len, WFW_PART_XHOME, 0, 0, &x->ch);
	if (!x->home)
		return -1;
	for (i = 0; i < ns; i++) {
		shard_range(mi->n_experts, ns, i, &first, &count);
		x->sh[i] = dev_up(x, blob, len, WFW_PART_XSHARD, first, count,
				  &x->cs[i]);
		if (!x->sh[i])
			return -1;
		x->ns++;
	}
	return 0;
}

/*
 * One RUN_JOB: @n records of @rec bytes (0: token ids) from @src, the
 * LAYER word @lw after them (-1: none); @orec records out into @dst, or
 * (0) results into x->res.
 */
static int xjob(struct ep *x, struct dh *h, u32 ctx, int s, u32 pos, u32 n,
		const void *src, u32 rec, s64 lw, void *dst, u32 orec)
{
	u32 in_bytes = n * (rec ? rec : 4), w = (u32)lw;
	u16 flags = (rec ? WFW_JOB_IN_ACT : 0) | (orec ? WFW_JOB_OUT_ACT : 0) |
		    (lw >= 0 ? WFW_JOB_LAYER : 0);
	struct wfw_cmd c;
	struct wfw_cpl cpl;

	memmove(x->in, src, in_bytes);
	memcpy(x->in + in_bytes, &w, 4);
	if (!orec && n > 1)
		flags |= WFW_JOB_ALL_POSITIONS;
	dh_job_cmd(&c, ctx, (u32)s, pos, n, (const u32 *)x->in,
		   orec ? dst : x->res, orec ? n * orec : n * REC,
		   orec ? 0 : TOPK, flags, 0);
	if (dh_exec(h, &c, &cpl, 20000))
		return -ETIMEDOUT;
	x->dev_ns += cpl.device_ns;
	return cpl.status;
}

static u32 lword(u32 l, u32 phase)
{
	return l | phase << WFW_XPHASE_SHIFT;
}

static struct wfw_xrec_hdr *xhdr(const struct ep *x, u8 *rec)
{
	return (struct wfw_xrec_hdr *)(rec + WFW_XREC_HDR_OFF(x->dim));
}

static void take_time(u8 *to, const u8 *from)
{
	u64 a, b;

	memcpy(&a, to + 8, 8);
	memcpy(&b, from + 8, 8);
	if (b > a)
		memcpy(to + 8, &b, 8);
}

/* UP's units [u0, u1) (or DOWN's sum) of every record into the home's. */
static void merge(struct ep *x, u32 n, int down)
{
	u32 d = x->dim, hd = x->hid, i, j;

	for (i = 0; i < n; i++) {
		u8 *hr = x->hrec + (size_t)i * x->x, *sr = x->srec + (size_t)i * x->x;
		const struct wfw_xrec_hdr *sh = xhdr(x, sr);
		s64 *hy = (s64 *)(hr + WFW_XREC_Y_OFF(d, hd));
		const s64 *sy = (const s64 *)(sr + WFW_XREC_Y_OFF(d, hd));
		size_t off = 8ull * sh->u0, b = 8ull * (sh->u1 - sh->u0);

		take_time(hr, sr);
		if (down) {
			for (j = 0; j < d; j++)
				hy[j] = (s64)((u64)hy[j] + (u64)sy[j]);
			continue;
		}
		memcpy(hr + WFW_XREC_A1_OFF(d) + off, sr + WFW_XREC_A1_OFF(d) + off, b);
		memcpy(hr + WFW_XREC_A3_OFF(d, hd) + off,
		       sr + WFW_XREC_A3_OFF(d, hd) + off, b);
	}
}

/* A home phase: x->hrec in, x->hrec out. */
static int home_phase(struct ep *x, int s, u32 pos, u32 n, u32 l, u32 ph)
{
	int ret = xjob(x, x->home, x->ch, s, pos, n, x->hrec, x->x,
		       lword(l, ph), x->hrec2, x->x);

	memcpy(x->hrec, x->hrec2, (size_t)n * x->x);
	return ret;
}

static int shards_phase(struct ep *x, int s, u32 pos, u32 n, u32 l, u32 ph)
{
	int i, ret = 0;

	for (i = 0; i < x->ns && !ret; i++) {
		ret = xjob(x, x->sh[i], x->cs[i], s, pos, n, x->hrec, x->x,
			   lword(l, ph), x->srec, x->x);
		if (!ret)
			merge(x, n, ph == WFW_XPHASE_DOWN);
	}
	return ret;
}

/* The FFN of layer @l: x->mid's records in, out (or results). */
static int ffn(struct ep *x, int s, u32 pos, u32 n, u32 l)
{
	int last = l + 1 == x->L, ret;
	u32 i;

	memset(x->hrec, 0, (size_t)n * x->x);
	for (i = 0; i < n; i++)
		memcpy(x->hrec + (size_t)i * x->x, x->mid + (size_t)i * x->act, x->act);
	ret = home_phase(x, s, pos, n, l, WFW_XPHASE_ROUTE);
	ret = ret ? ret : shards_phase(x, s, pos, n, l, WFW_XPHASE_UP);
	ret = ret ? ret : home_phase(x, s, pos, n, l, WFW_XPHASE_GLU);
	ret = ret ? ret : shards_phase(x, s, pos, n, l, WFW_XPHASE_DOWN);
	if (ret)
		return ret;
	ret = xjob(x, x->home, x->ch, s, pos, n, x->hrec, x->x,
		   lword(l, WFW_XPHASE_FIN), x->hrec2, last ? 0 : x->x);
	for (i = 0; !ret && !last && i < n; i++)
		memcpy(x->mid + (size_t)i * x->act, x->hrec2 + (size_t)i * x->x, x->act);
	return ret;
}

static int step(struct ep *x, int s, u32 pos, u32 n, const u32 *tok)
{
	u32 l;
	int ret;

	if (!x->ns)
		return xjob(x, x->a, x->ca, s, pos, n, tok, 0, -1, NULL, 0);
	for (l = 0; l < x->L; l++) {
		ret = xjob(x, x->a, x->ca, s, pos, n, l ? (const void *)x->mid : tok,
			   l ? x->act : 0, l, x->mid, x->act);
		ret = ret ? ret : ffn(x, s, pos, n, l);
		if (ret)
			return ret;
	}
	return 0;
}

static int run(struct ep *x)
{
	int s, j, ret;
	u32 tok;

	for (s = 0; s < NSEQ; s++) {
		u8 *o = x->out + (size_t)s * NPOS * REC;

		ret = step(x, s, 0, PREFILL, prompt[s]);
		if (ret)
			return ret;
		memcpy(o, x->res, (size_t)PREFILL * REC);
		tok = ((struct wfw_out_rec *)(x->res + (PREFILL - 1) * REC))->argmax;
		for (j = 0; j < DECODE; j++) {
			ret = step(x, s, PREFILL + (u32)j, 1, &tok);
			if (ret)
				return ret;
			memcpy(o + (size_t)(PREFILL + j) * REC, x->res, REC);
			tok = ((struct wfw_out_rec *)x->res)->argmax;
		}
	}
	return 0;
}

/* Tokens per (layer, expert) the device counted (GET_EXPERT_LOAD). */
static int expert_load(struct dh *h, u64 *tok, u32 max)
{
	static struct wfw_expert_load e[LOAD_MAX];
	struct wfw_cpl cpl;
	u32 i, n;

	if (dh_read_cmd(h, WFW_OP_GET_EXPERT_LOAD, 0, 0, e, sizeof(e), &cpl))
		return -1;
	n = cpl.result0 < max ? cpl.result0 : max;
	for (i = 0; i < n; i++)
		tok[i] = e[i].tokens;
	return (int)n;
}

/* Bytes of the device's layer blocks named "L<n>.<@kind>" (GET_SRAM_MAP). */
static u64 layer_bytes(struct dh *h, const char *kind)
{
	static struct wfw_sram_entry e[256];
	struct wfw_cpl cpl;
	char name[24];
	u64 sum = 0;
	u32 s, i, l;

	for (s = 0; s < 2; s++) {
		if (dh_read_cmd(h, WFW_OP_GET_SRAM_MAP, 0, s, e, sizeof(e), &cpl))
			continue;
		for (i = 0; i < cpl.result0 && i < 256; i++)
			if (sscanf(e[i].name, "L%u.%23s", &l, name) == 2 &&
			    !strcmp(name, kind))
				sum += e[i].requested;
	}
	return sum;
}

/* What the parts say, their SRAM, and the home's expert load. */
static void check_parts(struct ep *x, struct ep *ref, const char *what)
{
	struct wfw_info hi, si, ri;
	u64 lr[LOAD_MAX], lh[LOAD_MAX], wh, w0, w1, wr;
	int nr, nh, ret;

	ret = dh_info(x->home, &hi);
	ret = ret ? ret : dh_info(x->sh[0], &si);
	ret = ret ? ret : dh_info(ref->a, &ri);
	wt_ok(!ret && hi.model_flags == (WFW_MODEL_XHOME | WFW_MODEL_HEAD) &&
	      si.model_flags == WFW_MODEL_XSHARD && !hi.kv_bytes_per_pos &&
	      !si.kv_bytes_per_pos && hi.act_rec_size == x->x &&
	      si.act_rec_size == x->x,
	      "%s: GET_INFO: the home (+head) and a shard: no KV, records of %u bytes",
	      what, x->x);
	wh = layer_bytes(x->home, "xhome");
	w0 = layer_bytes(x->sh[0], "xshard");
	w1 = layer_bytes(x->sh[1], "xshard");
	wr = layer_bytes(ref->a, "weights");
	/* The home keeps no attention, the shards only their experts. */
	wt_ok(!ret && wh && w0 && w1 && wh + w0 + w1 < wr,
	      "%s: SRAM of the layers' weights: home %llu B + shards %llu B and %llu B < whole layers %llu B",
	      what, (unsigned long long)wh, (unsigned long long)w0,
	      (unsigned long long)w1, (unsigned long long)wr);
	nr = expert_load(ref->a, lr, LOAD_MAX);
	nh = expert_load(x->home, lh, LOAD_MAX);
	wt_ok(nr > 0 && nr == nh && !memcmp(lr, lh, (size_t)nr * 8) &&
	      expert_load(x->sh[0], lh, LOAD_MAX) == 0 && !si.moe_layers,
	      "%s: the home's expert load equals the whole-layer device's (%d entries), a shard reports none",
	      what, nh);
}

/* The dispatch crosses the link: ROUTE's record arrives a link hop later. */
static void check_link(struct ep *x, const char *what)
{
	struct wfw_info in;
	u32 pos = PREFILL + DECODE, tok = 1, k;
	u64 t_att, t_route, t_up;
	int ret;

	ret = dh_info(x->home, &in);
	ret = ret ? ret : xjob(x, x->a, x->ca, 0, pos, 1, &tok, 0, 0, x->mid, x->act);
	memcpy(&t_att, x->mid + 8, 8);
	memset(x->hrec, 0, x->x);
	memcpy(x->hrec, x->mid, x->act);
	ret = ret ? ret : home_phase(x, 0, pos, 1, 0, WFW_XPHASE_ROUTE);
	memcpy(&t_route, x->hrec + 8, 8);
	k = xhdr(x, x->hrec)->n_sel;
	ret = ret ? ret : xjob(x, x->sh[0], x->cs[0], 0, pos, 1, x->hrec, x->x,
			       lword(0, WFW_XPHASE_UP), x->srec, x->x);
	memcpy(&t_up, x->srec + 8, 8);
	wt_ok(!ret && t_route > t_att + in.link_hop_cycles &&
	      t_up > t_route + in.link_hop_cycles,
	      "%s: modelled: attention's record at %llu ns, the dispatch (h and %u experts) at %llu, the shard's units back at %llu (link hop %u cycles)",
	      what, (unsigned long long)t_att, k, (unsigned long long)t_route,
	      (unsigned long long)t_up, in.link_hop_cycles);
}

/* Jobs and records the parts cannot take: -EINVAL. */
static void check_bad_jobs(struct ep *x, const char *what)
{
	struct wfw_xrec_hdr *h = xhdr(x, x->hrec);
	s64 *y = (s64 *)(x->hrec + WFW_XREC_Y_OFF(x->dim, x->hid));
	int r1, r2, r3, r4, r5, r6;

	/* r3: ROUTE, GLU and FIN of a good record succeed */
	u32 keep;

	memset(x->hrec, 0, x->x);
	((struct wfw_act_rec *)x->hrec)->dim = x->dim;
	r1 = xjob(x, x->sh[0], x->cs[0], 0, 0, 1, x->hrec, x->x,
		  lword(0, WFW_XPHASE_ROUTE), x->srec, x->x);
	r2 = xjob(x, x->home, x->ch, 0, 0, 1, x->hrec, x->x, 0, x->hrec2, x->x);
	r3 = home_phase(x, 0, 0, 1, 0, WFW_XPHASE_ROUTE);
	keep = h->expert[0];
	h->expert[0] = 1000;
	r4 = xjob(x, x->sh[0], x->cs[0], 0, 0, 1, x->hrec, x->x,
		  lword(0, WFW_XPHASE_UP), x->srec, x->x);
	h->expert[0] = keep;
	h->n_units++;
	r5 = xjob(x, x->home, x->ch, 0, 0, 1, x->hrec, x->x,
		  lword(0, WFW_XPHASE_GLU), x->srec, x->x);
	h->n_units--;
	r3 = r3 ? r3 : home_phase(x, 0, 0, 1, 0, WFW_XPHASE_GLU);
	memcpy(x->mid, x->hrec, x->x);
	y[0] = INT64_MIN;
	r6 = xjob(x, x->home, x->ch, 0, 0, 1, x->hrec, x->x,
		  lword(0, WFW_XPHASE_FIN), x->srec, x->x);
	r3 = r3 ? r3 : xjob(x, x->home, x->ch, 0, 0, 1, x->mid, x->x,
			    lword(0, WFW_XPHASE_FIN), x->srec, x->x);
	wt_ok(r1 == -WFS_EINVAL && r2 == -WFS_EINVAL && !r3 &&
	      r4 == -WFS_EINVAL && r5 == -WFS_EINVAL && r6 == -WFS_EINVAL,
	      "%s: ROUTE on a shard, a home job without a phase, an expert past the layer's, units that are not the selection's, a sum outside s64's range: -EINVAL (%d %d %d %d %d %d)",
	      what, r1, r2, r3, r4, r5, r6);
}

static void bad_load(void *blob, size_t len, u32 part, u32 first, u32 count,
		     u32 group, const char *field, const char *what)
{
	struct dh *h = dh_new("asic", 2, 0);
	struct wfw_cpl cpl;
	struct wfw_info in;
	int ret = -1;

	if (h) {
		dh_region_add(h, blob, len);
		ret = load_ep(h, blob, len, part, first, count, group, &cpl);
		dh_read_log(h, logbuf, LOG_LEN);
	}
	wt_ok(ret == -WFS_EINVAL && strstr(logbuf, field) && h &&
	      !dh_info(h, &in) && !in.model_loaded,
	      "LOAD_MODEL %s: -EINVAL, the log names %s, nothing loaded (%d)",
	      what, field, ret);
	dev_down(h);
}

static void check_bad_loads(void *blob, size_t len, void *dense, size_t dlen,
			    u32 e)
{
	bad_load(blob, len, WFW_PART_XSHARD, 0, 0, 0, "expert_count",
		 "a shard of 0 experts");
	bad_load(blob, len, WFW_PART_XSHARD, e - 1, 2, 0, "expert_count",
		 "a shard past the last expert");
	bad_load(dense, dlen, WFW_PART_XSHARD, 0, 1, 0, "dense",
		 "a shard of a dense model");
	bad_load(dense, dlen, WFW_PART_XHOME, 0, 0, 0, "dense",
		 "the home of a dense model");
	bad_load(blob, len, WFW_PART_XSHARD, 0, 1, 1, "expert_group",
		 "expert_group on a shard");
	bad_load(blob, len, WFW_PART_FFN, 1, 1, 0, "expert_first",
		 "expert_first / expert_count on an FFN part");
	bad_load(blob, len, WFW_PART_XHOME, 0, 1, 0, "expert_count",
		 "expert_count on the home");
}

static void one_model(const char *what, void *blob, size_t len, void *dense,
		      size_t dlen, int dense_too)
{
	struct wfs_model_info mi;
	struct ep ref, x, dref;
	size_t total = (size_t)NSEQ * NPOS * REC;
	int ns, ret;

	if (!wt_ok(!wfs_model_parse(blob, len, &mi), "%s: parse", what))
		return;
	ret = ep_up(&ref, 0, blob, len, &mi);
	ret = ret ? ret : run(&ref);
	if (!wt_ok(!ret, "%s: whole layers on one device: prefill %d + decode %d, %d sequences",
		   what, PREFILL, DECODE, NSEQ))
		goto out;
	if (dense_too) {
		ret = ep_up(&dref, 0, dense, dlen, &mi);
		ret = ret ? ret : run(&dref);
		wt_ok(!ret && !memcmp(dref.out, ref.out, total),
		      "%s: the MoE model's records are the dense model's", what);
		ep_down(&dref);
	}
	for (ns = 1; ns <= MAXSH; ns++) {
		ret = ep_up(&x, ns, blob, len, &mi);
		ret = ret ? ret : run(&x);
		wt_ok(!ret && !memcmp(x.out, ref.out, total),
		      "%s: attention, home and %d expert shard(s) on %d devices: every record bit-identical to whole layers (%d; modelled %llu us in jobs)",
		      what, ns, ns + 2, ret, (unsigned long long)(x.dev_ns / 1000));
		if (!ret && ns == 2) {
			check_parts(&x, &ref, what);
			check_link(&x, what);
			check_bad_jobs(&x, what);
		}
		ep_down(&x);
	}
out:
	ep_down(&ref);
}

static void one_width(const struct wfs_ckpt *ck, u32 wbits)
{
	static const struct {
		struct wafer_moe_opts mo;
		int dense_too;
	} cfg[] = {
		{ { .n_experts = 4, .top_k = 2, .n_shared = 1, .gate = 0 }, 0 },
		{ { .n_experts = 5, .top_k = 5, .n_shared = 1, .gate = 2 }, 1 },
		{ { .n_experts = 6, .top_k = 3, .n_shared = 0, .gate = 1 }, 0 },
	};
	struct wfs_pack_opts po = { .wbits = wbits, .group_size = 32 };
	void *dense = NULL, *blob;
	size_t dlen, len, i;
	char what[64];

	if (!wt_ok(!wfs_pack(ck, &po, &dense, &dlen), "int%u: pack", wbits))
		return;
	for (i = 0; i < WFS_ARRAY_SIZE(cfg); i++) {
		snprintf(what, sizeof(what), "int%u %u experts top-%u + %u shared, %s gates",
			 wbits, cfg[i].mo.n_experts, cfg[i].mo.top_k,
			 cfg[i].mo.n_shared, (const char *[]){ "softmax", "sigmoid",
							       "unit" }[cfg[i].mo.gate]);
		if (!wt_ok(!wafer_moe_upcycle(dense, dlen, &cfg[i].mo, &blob, &len),
			   "%s: upcycle", what))
			continue;
		one_model(what, blob, len, dense, dlen, cfg[i].dense_too);
		if (wbits == 8 && i == 0)
			check_bad_loads(blob, len, dense, dlen, cfg[i].mo.n_experts);
		free(blob);
	}
	free(dense);
}

int main(void)
{
	const char *path = wt_model_path("stories260K.bin");
	struct wfs_ckpt ck;
	struct wt_rng r;
	int s, p;

	logbuf = malloc(LOG_LEN);
	if (!wt_ok(logbuf && path && wfs_ckpt_load(path, &ck) == 0, "load %s",
		   path ? path : "stories260K.bin"))
		return wt_done();
	wt_rng_seed(&r, 14);
	for (s = 0; s < NSEQ; s++) {
		prompt[s][0] = 1;
		for (p = 1; p < PREFILL; p++)
			prompt[s][p] = (u32)wt_rng_range(&r, 3, ck.vocab_size - 1);
	}
	one_width(&ck, 8);
	one_width(&ck, 4);
	wfs_ckpt_free(&ck);
	free(logbuf);
	return wt_done();
}
