// SPDX-License-Identifier: MIT
/*
 * device_moe_place.c - expert groups placed across stages (LOAD_MODEL
 * expert_group, ABI 1.6), with stories260K upcycled to 4 experts top-2 +
 * 1 shared on 4-stage asic devices.
 *
 * A device whose stages are too small for the layers with their experts
 * places them in groups of one expert by itself (expert_group 0, a log
 * line says so); a device with room loads the model with every expert
 * local, the same layers per stage.  For int8
 * and int4: a prefill (one chunk) and a greedy decode give bit-identical
 * records, the GET_EXPERT_LOAD tables are equal, the SRAM map holds each
 * layer's weights once (smaller than local) and each group "L<l>.x<e>-<e>"
 * once, some on other stages than their layer, and the modelled stage
 * time is longer by exactly the documented hops: per chunk, layer and
 * group on another stage that n_g tokens used, 2 * (64 + n_g * A / 64)
 * cycles (asic: 1 GHz, hop 64 cycles, 64 B/cycle; A the record bytes).
 * A group that fits no stage fails with -ENOSPC naming the layer and its
 * experts (groups of 1 asked for explicitly fit there); stages too small
 * either way give the usual -ENOSPC; expert_group with weight streaming
 * or an attention part is -EINVAL.
 */
#include <stdio.h>
#include <string.h>

#include "device_harness.h"
#include "wafer.h"
#include "wfs_pack.h"
#include "wt_util.h"

#define STAGES	4
#define LAYERS	5
#define EXPERTS	4
#define PER	(EXPERTS + 1)	/* GET_EXPERT_LOAD: shared, then routed */
#define ALL	(LAYERS * PER)
#define PREFILL	16		/* one chunk */
#define DECODE	16
#define CTX	64
#define TOPK	4
#define REC	WFW_OUT_REC_SIZE(TOPK)
#define OUT_LEN	65536
#define TIMES	32768
/* Stages too small for local experts, big enough for the same layers. */
#define SMALL8	(184u << 10)
#define SMALL4	(148u << 10)
#define TIGHT	(160u << 10)	/* groups of 1 fit, of 4 not */
#define LOG_LEN	65536

/* A device and where the model's blocks are on it. */
struct dev {
	struct dh *h;
	u32 ctx;
	u8 *out;
	u64 ns[STAGES];			/* modelled stage time of the jobs */
	s32 wstage[LAYERS];		/* stage of L<l>.weights */
	u64 wbytes[LAYERS];
	s32 xstage[LAYERS][EXPERTS];	/* stage of L<l>.x<e>-<e> */
	u32 n_weights, n_groups;
};

static u32 *in;
static char *logbuf;

static int xload(struct dh *h, void *blob, size_t len, u32 group, u32 flags,
		 u32 part, struct wfw_cpl *cpl)
{
	return dh_load_group(h, blob, len, flags, 0, 0, part, group, cpl);
}

/* A job of @n tokens from @pos: every record, and each stage's time. */
static int job(struct dev *d, u32 pos, u32 n)
{
	struct wfw_chunk_time t[STAGES];
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	u32 s;

	dh_job_cmd(&c, d->ctx, 0, pos, n, in, d->out, OUT_LEN, TOPK,
		   WFW_JOB_ALL_POSITIONS | WFW_JOB_TIMES, 0);
	c.job.times_offset = TIMES;
	c.job.times_len = sizeof(t);
	if (dh_exec(d->h, &c, &cpl, 30000))
		return -ETIMEDOUT;
	if (cpl.status)
		return cpl.status;
	memcpy(t, d->out + TIMES, sizeof(t));
	for (s = 0; s < STAGES; s++)
		d->ns[t[s].stage] += t[s].end_ns - t[s].start_ns;
	return 0;
}

static int expert_load(struct dev *d, struct wfw_expert_load *e)
{
	struct wfw_cpl cpl;

	if (dh_read_cmd(d->h, WFW_OP_GET_EXPERT_LOAD, 0, 0, e, ALL * sizeof(*e), &cpl))
		return -1;
	return cpl.result0 == ALL ? 0 : -1;
}

/* Where the model's layer and expert group blocks are (GET_SRAM_MAP). */
static void read_map(struct dev *d)
{
	static struct wfw_sram_entry e[256];
	struct wfw_cpl cpl;
	u32 s, i, l, a, b;

	memset(d->wstage, 0xff, sizeof(d->wstage));
	memset(d->xstage, 0xff, sizeof(d->xstage));
	d->n_weights = 0;
	d->n_groups = 0;
	for (s = 0; s < STAGES; s++) {
		if (dh_read_cmd(d->h, WFW_OP_GET_SRAM_MAP, 0, s, e, sizeof(e), &cpl))
			continue;
		for (i = 0; i < cpl.result0 && i < 256; i++) {
			char tail;

			if (sscanf(e[i].name, "L%u.weight%c", &l, &tail) == 2 && l < LAYERS) {
				d->wstage[l] = (s32)s;
				d->wbytes[l] = e[i].requested;
				d->n_weights++;
			} else if (sscanf(e[i].name, "L%u.x%u-%u", &l, &a, &b) == 3 &&
				   l < LAYERS && a == b && a < EXPERTS) {
				d->xstage[l][a] = (s32)s;
				d->n_groups++;
			}
		}
	}
}

/*
 * The hops the spread device's jobs add, from the expert counts a job
 * added (@d: after - before): one chunk per job, so a group that n_g
 * tokens used costs 2 * (64 + n_g * A / 64) cycles = ns.
 */
static u64 hops_ns(const struct dev *d, const struct wfw_expert_load *before,
		   const struct wfw_expert_load *after, u32 act)
{
	u64 ns = 0, n;
	u32 l, e;

	for (l = 0; l < LAYERS; l++) {
		for (e = 0; e < EXPERTS; e++) {
			n = after[l * PER + 1 + e].tokens - before[l * PER + 1 + e].tokens;
			if (n && d->xstage[l][e] != d->wstage[l])
				ns += 2 * (64 + n * act / 64);
		}
	}
	return ns;
}

static u64 ns_sum(const struct dev *d)
{
	u64 t = 0;
	u32 s;

	for (s = 0; s < STAGES; s++)
		t += d->ns[s];
	return t;
}

/* Prefill, then greedy decode, on both devices: records and time. */
static void compare_runs(struct dev *loc, struct dev *spr, u32 act, const char *what)
{
	struct wfw_expert_load e0[ALL], e1[ALL], e2[ALL], el[ALL];
	u64 dl, ds, want_p, want_d = 0;
	u32 i, pos, same = 1;
	int ret;

	for (i = 0; i < PREFILL; i++)
		in[i] = 1 + (i * 37) % 500;
	ret = expert_load(spr, e0) || job(loc, 0, PREFILL) || job(spr, 0, PREFILL) ||
	      expert_load(spr, e1);
	same = !ret && !memcmp(loc->out, spr->out, PREFILL * REC);
	dl = ns_sum(loc);
	ds = ns_sum(spr);
	want_p = ret ? 0 : hops_ns(spr, e0, e1, act);
	wt_ok(same && want_p && ds - dl == want_p,
	      "%s: prefill of %d positions: records bit-identical; stage time %llu ns = local %llu + hops %llu",
	      what, PREFILL, (unsigned long long)ds, (unsigned long long)dl,
	      (unsigned long long)want_p);
	for (pos = PREFILL; !ret && pos < PREFILL + DECODE; pos++) {
		const struct wfw_out_rec *r =
			(const struct wfw_out_rec *)(loc->out + (pos == PREFILL ? PREFILL - 1 : 0) *
						     REC);

		in[0] = r->argmax;
		ret = job(loc, pos, 1) || job(spr, pos, 1) || expert_load(spr, e2);
		same &= !ret && !memcmp(loc->out, spr->out, REC);
		want_d += ret ? 0 : hops_ns(spr, e1, e2, act);
		memcpy(e1, e2, sizeof(e1));
	}
	dl = ns_sum(loc) - dl;
	ds = ns_sum(spr) - ds;
	wt_ok(!ret && same && want_d && ds - dl == want_d,
	      "%s: greedy decode of %d tokens: records bit-identical; stage time +%llu ns = the hops' %llu",
	      what, DECODE, (unsigned long long)(ds - dl), (unsigned long long)want_d);
	ret = ret || expert_load(loc, el) || expert_load(spr, e2);
	for (i = 0; !ret && i < ALL; i++) {
		u32 l = i / PER, e = i % PER - 1;
		u32 want = i % PER ? WFW_EXPERT_GROUP |
			   (u32)spr->xstage[l][e] << WFW_EXPERT_STAGE_SHIFT : WFW_EXPERT_SHARED;

		same &= e2[i].flags == want && WFW_EXPERT_STAGE(e2[i].flags) ==
			(i % PER ? (u32)spr->xstage[l][e] : 0);
		e2[i].flags = el[i].flags;
	}
	wt_ok(!ret && same && !memcmp(el, e2, sizeof(el)) && e2[1].tokens,
	      "%s: GET_EXPERT_LOAD tables equal (%d entries), each routed expert's flags naming its group's stage",
	      what, ALL);
}

/* The SRAM maps: the layers once each, the groups once each. */
static void check_maps(struct dev *loc, struct dev *spr, const char *what)
{
	u32 l, e, remote = 0, smaller = 1, placed = 1;

	read_map(loc);
	read_map(spr);
	for (l = 0; l < LAYERS; l++) {
		smaller &= spr->wbytes[l] < loc->wbytes[l] &&
			   spr->wstage[l] == loc->wstage[l];
		for (e = 0; e < EXPERTS; e++) {
			placed &= spr->xstage[l][e] >= 0 && loc->xstage[l][e] < 0;
			remote += spr->xstage[l][e] >= 0 && spr->xstage[l][e] != spr->wstage[l];
		}
	}
	wt_ok(spr->n_weights == LAYERS && spr->n_groups == LAYERS * EXPERTS && smaller &&
	      placed && loc->n_groups == 0 && remote > 0,
	      "%s: SRAM map: %u layer blocks (smaller than local, same stages), %u groups L<l>.x<e>-<e>, %u on another stage than their layer",
	      what, spr->n_weights, spr->n_groups, remote);
}

static struct dev *dev_new(u64 sram)
{
	struct dev *d = calloc(1, sizeof(*d));

	d->h = dh_new("asic", STAGES, sram);
	d->out = dh_alloc(OUT_LEN);
	dh_region_add(d->h, d->out, OUT_LEN);
	dh_region_add(d->h, in, 4 * PREFILL);
	return d;
}

static void dev_free(struct dev *d)
{
	dh_fini(d->h);
	free(d->h);
	free(d->out);
	free(d);
}

/*
 * On TIGHT KiB stages the layers fit without their experts and the
 * groups of one expert fit, a group of all four fits no stage: -ENOSPC
 * names it.
 */
static void check_enospc(void *blob, size_t len)
{
	struct wfw_cpl cpl = { 0 };
	struct dev *d = dev_new(TIGHT);
	char want[64];
	int ret;

	dh_region_add(d->h, blob, len);
	ret = xload(d->h, blob, len, EXPERTS, 0, 0, &cpl);
	dh_read_log(d->h, logbuf, LOG_LEN);
	snprintf(want, sizeof(want), "layer %u experts 0-3 (", cpl.result0);
	wt_ok(ret == -WFS_ENOSPC && strstr(logbuf, want) &&
	      strstr(logbuf, "fit no stage: largest free") && cpl.value > (u64)cpl.result1 << 10,
	      "groups of 4 experts on %u KiB stages: -ENOSPC, \"%s%llu KiB) fit no stage: largest free %u KiB\"",
	      TIGHT >> 10, want, (unsigned long long)(cpl.value >> 10), cpl.result1);
	ret = xload(d->h, blob, len, 1, 0, 0, &cpl);
	wt_ok(ret == 0, "groups of 1 expert on %u KiB stages load (%d)", TIGHT >> 10, ret);
	dh_simple(d->h, WFW_OP_UNLOAD_MODEL, &cpl);
	dh_simple(d->h, WFW_OP_UNLOAD_MODEL, &cpl);
	dev_free(d);
	d = dev_new(96u << 10);
	dh_region_add(d->h, blob, len);
	ret = xload(d->h, blob, len, 0, 0, 0, &cpl);
	dh_read_log(d->h, logbuf, LOG_LEN);
	wt_ok(ret == -WFS_ENOSPC && strstr(logbuf, "does not fit") &&
	      !strstr(logbuf, "experts placed"),
	      "96 KiB stages: no fit with experts local nor in groups: -ENOSPC, the placement without groups");
	ret = xload(d->h, blob, len, 1, WFW_LOAD_STREAM, 0, &cpl);
	wt_ok(ret == -WFS_EINVAL, "expert_group with weight streaming: -EINVAL");
	ret = xload(d->h, blob, len, 1, 0, WFW_PART_ATTN, &cpl);
	wt_ok(ret == -WFS_EINVAL, "expert_group with an attention part: -EINVAL");
	dev_free(d);
}

static void one_width(const struct wfs_ckpt *ck, u32 wbits)
{
	struct wafer_moe_opts mo = { .n_experts = EXPERTS, .top_k = 2, .n_shared = 1 };
	struct wfs_pack_opts po = { .wbits = wbits, .group_size = 32 };
	struct wfw_cpl cpl = { 0 };
	void *dense = NULL, *blob = NULL, *sblob;
	u32 small = wbits == 8 ? SMALL8 : SMALL4;
	struct dev *loc, *spr;
	size_t dlen, len;
	char what[16];
	int64_t c0, c1;
	int ret;

	snprintf(what, sizeof(what), "int%u", wbits);
	if (!wt_ok(wfs_pack(ck, &po, &dense, &dlen) == 0 &&
		   wafer_moe_upcycle(dense, dlen, &mo, &blob, &len) == 0,
		   "%s: upcycled to 4 experts top-2 + 1 shared", what))
		return;
	loc = dev_new(1u << 20);
	spr = dev_new(small);
	sblob = malloc(len);
	memcpy(sblob, blob, len);
	dh_region_add(loc->h, blob, len);
	dh_region_add(spr->h, sblob, len);
	ret = xload(spr->h, sblob, len, 0, 0, 0, &cpl);
	dh_read_log(spr->h, logbuf, LOG_LEN);
	wt_ok(ret == 0 && strstr(logbuf, "do not fit with their experts: experts placed in groups of 1"),
	      "%s: on %u KiB stages the layers do not fit with their experts: the load places them in groups of 1 (%d)",
	      what, small >> 10, ret);
	ret = ret ? ret : xload(loc->h, blob, len, 0, 0, 0, &cpl);
	/* Nothing of the spread model may still point into its blob. */
	memset(sblob, 0x5a, len);
	c0 = ret ? -1 : dh_ctx_create(loc->h, 1, CTX, &cpl);
	c1 = ret ? -1 : dh_ctx_create(spr->h, 1, CTX, &cpl);
	if (wt_ok(!ret && c0 > 0 && c1 > 0, "%s: local experts on 1 MiB stages load, contexts (%d)",
		  what, ret)) {
		loc->ctx = (u32)c0;
		spr->ctx = (u32)c1;
		check_maps(loc, spr, what);
		compare_runs(loc, spr, WFW_ACT_REC_SIZE((u32)ck->dim), what);
		if (wbits == 8)
			check_enospc(blob, len);
	}
	dev_free(loc);
	dev_free(spr);
	free(sblob);
	free(blob);
	free(dense);
}

int main(void)
{
	const char *path = wt_model_path("stories260K.bin");
	struct wfs_ckpt ck;

	in = dh_alloc(4 * PREFILL);
	logbuf = malloc(LOG_LEN);
	if (!wt_ok(path && wfs_ckpt_load(path, &ck) == 0, "stories260K"))
		return wt_done();
	one_width(&ck, 8);
	one_width(&ck, 4);
	wfs_ckpt_free(&ck);
	free(in);
	free(logbuf);
	return wt_done();
}
