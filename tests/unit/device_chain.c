// SPDX-License-Identifier: MIT
/*
 * device_chain.c - one model across N devices as contiguous layer ranges
 * (LOAD_MODEL layer_first/layer_count, or layer-range blobs), activations
 * handed from device to device as struct wfw_act_rec (RUN_JOB IN_ACT /
 * OUT_ACT): every result record is bit-identical to one device running the
 * whole model, int8 and int4, N = 2 .. n_layers (one layer per device).
 *
 * NSEQ sequences run a prefill of PREFILL positions (every position's
 * record, crossing a pipeline chunk) and DECODE one-token steps; each step
 * is all sequences' jobs queued at once on device 0, then on device 1, ...
 * Prints the modelled figures of each chain (tests assert no timing): the
 * aggregate tokens/s over the chain's shared timeline and the latency of
 * one decode step through every device, against one device.
 * The job and load fields of a chain are checked too: kinds that do not
 * match the range, buffers too small, activation records out of range,
 * ranges outside the blob, and what GET_INFO says about a range.
 */
#include "device_harness.h"
#include "wfs_pack.h"
#include "wt_util.h"

#define NSEQ	4
#define PREFILL	21	/* > one 16-token chunk */
#define DECODE	6
#define NPOS	(PREFILL + DECODE)
#define CTX	64
#define TOPK	4
#define REC	WFW_OUT_REC_SIZE(TOPK)
#define MAXDEV	8

static u32 tokens[NSEQ][NPOS];

struct chain {
	int n;
	struct dh *h[MAXDEV];
	u32 ctx[MAXDEV];
	u8 *act[MAXDEV];	/* device i's OUT_ACT buffer */
	u32 act_size;		/* bytes of one record */
	u8 *out;		/* NSEQ * NPOS result records */
	u32 *in;
	const char *profile;	/* of every device; NULL: asic, 4 stages */
	int nseq;		/* sequences run (NSEQ unless measuring one) */
	u64 step_ns;		/* modelled, summed over decode steps */
};

static void make_tokens(u32 vocab)
{
	struct wt_rng r;
	int s, p;

	wt_rng_seed(&r, 7);
	for (s = 0; s < NSEQ; s++) {
		tokens[s][0] = 1;
		for (p = 1; p < NPOS; p++)
			tokens[s][p] = (u32)wt_rng_range(&r, 3, vocab - 1);
	}
}

static int load_range(struct dh *h, void *blob, size_t len, u32 first,
		      u32 count, struct wfw_cpl *cpl)
{
	return dh_load_range(h, blob, len, 0, first, count, 0, cpl);
}

static u64 small_sram;	/* SRAM per stage override of device_up(), 0: none */

static struct dh *device_up(const char *profile, u32 stages)
{
	return dh_new(profile, stages, small_sram);
}

/*
 * Device i of n gets layers [i * L / n, (i + 1) * L / n).  @blobs[i] is
 * what device i loads (the full blob or its layer-range blob); @ranged:
 * ask for the range in LOAD_MODEL (else the blob is the range).
 */
static int chain_up(struct chain *ch, int n, u32 n_layers, void **blobs,
		    size_t *lens, int ranged)
{
	struct wfw_info info;
	struct wfw_cpl cpl;
	int i, ret;

	const char *profile = ch->profile;

	memset(ch, 0, sizeof(*ch));
	ch->n = n;
	ch->profile = profile;
	ch->nseq = NSEQ;
	ch->in = dh_alloc(sizeof(tokens));
	ch->out = dh_alloc((size_t)NSEQ * NPOS * REC);
	memcpy(ch->in, tokens, sizeof(tokens));
	for (i = 0; i < n; i++) {
		u32 first = (u32)i * n_layers / n;
		u32 count = (u32)(i + 1) * n_layers / n - first;
		int64_t id;

		ch->h[i] = profile ? device_up(profile, 0) : device_up("asic", 4);
		if (!ch->h[i])
			return -1;
		dh_region_add(ch->h[i], blobs[i], lens[i]);
		ret = ranged ? load_range(ch->h[i], blobs[i], lens[i], first,
					  count, &cpl) :
			       dh_load(ch->h[i], blobs[i], lens[i], &cpl);
		if (ret || cpl.result1 != count) {
			wt_diag("device %d: load of layers %u+%u: %d (%u layers)",
				i, first, count, ret, cpl.result1);
			return -1;
		}
		id = dh_ctx_create(ch->h[i], NSEQ, CTX, &cpl);
		if (id <= 0 || dh_info(ch->h[i], &info))
			return -1;
		ch->ctx[i] = (u32)id;
		ch->act_size = info.act_rec_size;
	}
	for (i = 0; i < n; i++) {
		if (i < n - 1)
			ch->act[i] = dh_alloc((size_t)NSEQ * NPOS * ch->act_size);
		dh_region_add(ch->h[i], ch->in, sizeof(tokens));
		dh_region_add(ch->h[i], ch->out, (size_t)NSEQ * NPOS * REC);
		if (i)
			dh_region_add(ch->h[i], ch->act[i - 1],
				      (size_t)NSEQ * NPOS * ch->act_size);
		if (i < n - 1)
			dh_region_add(ch->h[i], ch->act[i],
				      (size_t)NSEQ * NPOS * ch->act_size);
	}
	return 0;
}

static void chain_down(struct chain *ch)
{
	int i;

	for (i = 0; i < ch->n; i++) {
		if (ch->h[i]) {
			dh_fini(ch->h[i]);
			free(ch->h[i]);
		}
		free(ch->act[i]);
	}
	free(ch->in);
	free(ch->out);
}

/* The RUN_JOB device @i runs for sequence @s at @pos (@n positions). */
static void chain_job(struct chain *ch, int i, struct wfw_cmd *c, int s,
		      u32 pos, u32 n)
{
	size_t at = (size_t)s * NPOS + pos;
	int first = i == 0, last = i == ch->n - 1;
	u16 flags = (first ? 0 : WFW_JOB_IN_ACT) | (last ? 0 : WFW_JOB_OUT_ACT);
	const void *in = first ? (const void *)&ch->in[at] :
				 ch->act[i - 1] + at * ch->act_size;
	void *out = last ? (void *)(ch->out + at * REC) :
			   ch->act[i] + at * ch->act_size;
	u32 out_len = last ? n * REC : n * ch->act_size;

	if (last && n > 1)
		flags |= WFW_JOB_ALL_POSITIONS;
	dh_job_cmd(c, ch->ctx[i], (u32)s, pos, n, in, out, out_len,
		   last ? TOPK : 0, flags, ((u64)i << 16) | ((u64)s << 8) | pos);
}

/* One step of every sequence through every device; 0 if all completed. */
static int chain_step(struct chain *ch, u32 pos, u32 n)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl = { 0 };
	int i, s, bad = 0;

	for (i = 0; i < ch->n; i++) {
		for (s = 0; s < ch->nseq; s++) {
			chain_job(ch, i, &c, s, pos, n);
			if (dh_submit(ch->h[i], &c))
				bad++;
		}
		for (s = 0; s < ch->nseq; s++) {
			if (!dh_poll(ch->h[i], &cpl, 20000) || cpl.status ||
			    cpl.result1 != (i == ch->n - 1 && n == 1 ? 1 : n))
				bad++;
			/* Sequence 0's step: from device 0's start to the end. */
			if (n != 1 || ((cpl.cookie >> 8) & 0xff))
				continue;
			if (i == 0)
				ch->step_ns -= cpl.value - cpl.device_ns;
			if (i == ch->n - 1)
				ch->step_ns += cpl.value;
		}
	}
	return bad;
}

/* Tokens per modelled second of the last device's (the chain's) timeline. */
static u64 chain_rate(struct chain *ch)
{
	struct wfw_info info;

	if (dh_info(ch->h[ch->n - 1], &info) || !info.modelled_makespan_ns)
		return 0;
	return info.tokens * 1000000000ull / info.modelled_makespan_ns;
}

static int chain_run(struct chain *ch)
{
	int bad = chain_step(ch, 0, PREFILL), j;

	for (j = 0; j < DECODE; j++)
		bad += chain_step(ch, PREFILL + j, 1);
	return bad;
}

/* The whole model on one device: the results every chain must give. */
static int run_single(void *blob, size_t len, u32 n_layers, u8 *golden)
{
	struct chain ch = { 0 };
	int bad;

	if (chain_up(&ch, 1, n_layers, &blob, &len, 0))
		return -1;
	bad = chain_run(&ch);
	memcpy(golden, ch.out, (size_t)NSEQ * NPOS * REC);
	chain_down(&ch);
	return bad;
}

/* A middle device's job fields, each wrong in one way. */
static void check_job_fields(struct chain *ch)
{
	struct dh *h = ch->h[1];
	struct wfw_cmd c;
	struct wfw_cpl cpl = { 0 };
	struct wfw_act_rec *rec;
	u8 *saved = malloc(ch->act_size);
	struct {
		const char *what;
		u16 clear, set;
		u16 topk;
		int short_out;
	} bad[] = {
		{ "token ids into a range without the embedding",
		  WFW_JOB_IN_ACT, 0, 0, 0 },
		{ "result records from a range without the head",
		  WFW_JOB_OUT_ACT, 0, 0, 0 },
		{ "OUT_ACT with topk", 0, 0, 2, 0 },
		{ "OUT_ACT with ALL_POSITIONS", 0, WFW_JOB_ALL_POSITIONS, 0, 0 },
		{ "OUT_ACT buffer one byte short", 0, 0, 0, 1 },
	};
	size_t i;
	int ret;

	for (i = 0; i < WFS_ARRAY_SIZE(bad); i++) {
		chain_job(ch, 1, &c, 0, 0, 2);
		c.job.flags = (u16)((c.job.flags & ~bad[i].clear) | bad[i].set);
		c.job.topk = bad[i].topk;
		c.job.out_len -= (u32)bad[i].short_out;
		ret = dh_exec(h, &c, &cpl, 5000);
		wt_ok(!ret && cpl.status == -WFS_EINVAL,
		      "RUN_JOB on a middle range: %s -> -EINVAL (%d)",
		      bad[i].what, ret ? ret : cpl.status);
	}

	/* Records out of range fail the job; the device goes on. */
	rec = (struct wfw_act_rec *)ch->act[0];
	memcpy(saved, rec, ch->act_size);
	for (i = 0; i < 4; i++) {
		static const char *const what[] = { "dim", "exponent",
						    "negative value", "value" };

		memcpy(rec, saved, ch->act_size);
		if (i == 0)
			rec->dim++;
		else if (i == 1)
			rec->exp = WFW_ACT_EXP_MAX + 1;
		else if (i == 2)
			rec->x[0] = -WFW_ACT_VALUE_MAX - 1;
		else
			rec->x[3] = WFW_ACT_VALUE_MAX + 1;
		chain_job(ch, 1, &c, 0, 0, 1);
		ret = dh_exec(h, &c, &cpl, 5000);
		wt_ok(!ret && cpl.status == -WFS_EINVAL && cpl.result1 == 0,
		      "an activation record with its %s out of range fails the job (%d)",
		      what[i], ret ? ret : cpl.status);
	}
	memcpy(rec, saved, ch->act_size);
	free(saved);
	chain_job(ch, 1, &c, 0, 0, 1);
	ret = dh_exec(h, &c, &cpl, 5000);
	wt_ok(!ret && cpl.status == 0 && cpl.result1 == 1,
	      "the same job with the record restored runs (%d)",
	      ret ? ret : cpl.status);
}

static void check_info(struct chain *ch, u32 n_layers)
{
	struct wfw_info a, b, z;
	int ret = dh_info(ch->h[0], &a);

	ret = ret ? ret : dh_info(ch->h[1], &b);
	ret = ret ? ret : dh_info(ch->h[ch->n - 1], &z);
	wt_ok(!ret && a.layer_first == 0 && a.model_flags == WFW_MODEL_EMBED &&
	      b.layer_first == a.n_layers && !b.model_flags &&
	      z.layer_first + z.n_layers == n_layers &&
	      z.model_flags == WFW_MODEL_HEAD && b.total_layers == n_layers &&
	      b.act_rec_size == WFW_ACT_REC_SIZE(b.dim),
	      "GET_INFO: first %u+%u (embed), middle %u+%u, last %u+%u (head) of %u layers, %u-byte records",
	      a.layer_first, a.n_layers, b.layer_first, b.n_layers,
	      z.layer_first, z.n_layers, b.total_layers, b.act_rec_size);
}

/* Loads a layer-range blob cannot serve. */
static void check_load_fields(const struct wfs_ckpt *ck,
			      const struct wfs_pack_opts *base)
{
	struct wfs_pack_opts o = *base;
	struct wfw_cpl cpl;
	struct dh *h = device_up("asic", 4);
	void *blob;
	size_t len;

	o.first_layer = 2;
	o.n_layers = 2;
	if (!h || !wt_ok(!wfs_pack(ck, &o, &blob, &len), "pack layers 2-3"))
		return;
	dh_region_add(h, blob, len);
	wt_ok(load_range(h, blob, len, 1, 2, &cpl) == -WFS_EINVAL,
	      "LOAD_MODEL of layers 1-2 from a blob of layers 2-3 -> -EINVAL");
	wt_ok(load_range(h, blob, len, 3, 2, &cpl) == -WFS_EINVAL,
	      "LOAD_MODEL of layers 3-4 from a blob of layers 2-3 -> -EINVAL");
	wt_ok(load_range(h, blob, len, 3, 1, &cpl) == 0 && cpl.result1 == 1,
	      "LOAD_MODEL of layer 3 alone from that blob");
	dh_fini(h);
	free(h);
	free(blob);
}

static void run_chains(const char *name, const struct wfs_ckpt *ck,
		       const struct wfs_pack_opts *o)
{
	size_t total = (size_t)NSEQ * NPOS * REC, lens[MAXDEV];
	u32 L = (u32)ck->n_layers;
	u8 *golden = malloc(total);
	void *full, *blobs[MAXDEV];
	struct chain ch;
	size_t len;
	int n, i, ranged;

	if (!wt_ok(!wfs_pack(ck, o, &full, &len), "%s: pack", name) ||
	    !wt_ok(run_single(full, len, L, golden) == 0, "%s: %u layers on one device",
		   name, L))
		return;
	for (n = 2; n <= (int)L && n <= MAXDEV; n++) {
		for (ranged = 1; ranged >= 0; ranged--) {
			int bad;

			for (i = 0; i < n; i++) {
				struct wfs_pack_opts r = *o;

				r.first_layer = (u32)i * L / n;
				r.n_layers = (u32)(i + 1) * L / n - r.first_layer;
				blobs[i] = full;
				lens[i] = len;
				if (!ranged && wfs_pack(ck, &r, &blobs[i], &lens[i]))
					blobs[i] = NULL;
			}
			ch.profile = NULL;
			bad = chain_up(&ch, n, L, blobs, lens, ranged);
			if (!bad)
				bad = chain_run(&ch);
			wt_ok(!bad && !memcmp(ch.out, golden, total),
			      "%s: %d devices (%s): every result record identical to one device",
			      name, n, ranged ? "layer ranges of the full blob" :
			      "layer-range blobs");
			if (!bad && n == 3 && ranged) {
				check_info(&ch, L);
				check_job_fields(&ch);
			}
			chain_down(&ch);
			for (i = 0; !ranged && i < n; i++)
				free(blobs[i]);
		}
	}
	free(full);
	free(golden);
}

/*
 * Modelled figures of the wafer profile (16 stages: one layer per stage
 * on one device already): NSEQ sequences in flight give the aggregate
 * rate over the chain's timeline; one sequence alone the latency of a
 * decode step through every device.  Printed, not asserted.
 */
static void figures(const struct wfs_ckpt *ck, const struct wfs_pack_opts *o)
{
	u64 rate1 = 0, step1 = 0, rate, step;
	void *blob, *blobs[MAXDEV];
	size_t len, lens[MAXDEV];
	struct chain ch;
	int n, i, bad;

	if (wfs_pack(ck, o, &blob, &len))
		return;
	for (n = 1; n <= (int)ck->n_layers && n <= MAXDEV; n += n == 1 ? 1 : 3) {
		for (i = 0; i < n; i++) {
			blobs[i] = blob;
			lens[i] = len;
		}
		ch.profile = "wafer";
		bad = chain_up(&ch, n, (u32)ck->n_layers, blobs, lens, 1);
		bad = bad ? bad : chain_run(&ch);
		rate = chain_rate(&ch);
		chain_down(&ch);
		ch.profile = "wafer";
		bad = bad ? bad : chain_up(&ch, n, (u32)ck->n_layers, blobs, lens, 1);
		ch.nseq = 1;
		bad = bad ? bad : chain_run(&ch);
		step = ch.step_ns / DECODE;
		chain_down(&ch);
		if (bad)
			break;
		if (n == 1) {
			rate1 = rate;
			step1 = step;
		}
		wt_diag("wafer profile, %d device(s): modelled %llu tok/s with %d sequences in flight (%llu%% of one device); one sequence's decode step %llu ns (+%lld ns)",
			n, (unsigned long long)rate, NSEQ,
			(unsigned long long)(rate * 100 / (rate1 ? rate1 : 1)),
			(unsigned long long)step, (long long)(step - step1));
	}
	free(blob);
}

/*
 * A model too big for one device runs across enough of them: asic devices
 * of 4 stages whose SRAM is shrunk until the whole model no longer loads
 * (-ENOSPC), then the fewest devices that hold it, bit-identical.
 */
static void too_big_for_one(const struct wfs_ckpt *ck,
			    const struct wfs_pack_opts *o, const u8 *golden)
{
	size_t total = (size_t)NSEQ * NPOS * REC, lens[MAXDEV], len;
	u32 L = (u32)ck->n_layers;
	void *blob, *blobs[MAXDEV];
	struct wfw_cpl cpl;
	struct chain ch;
	struct dh *h;
	int n, i, ret = 0, bad = 1;

	if (wfs_pack(ck, o, &blob, &len))
		return;
	/* Halve the SRAM until the whole model does not fit. */
	for (small_sram = 1ull << 20; small_sram >= (64ull << 10); small_sram /= 2) {
		h = device_up("asic", 4);
		if (!h)
			break;
		dh_region_add(h, blob, len);
		ret = dh_load(h, blob, len, &cpl);
		dh_fini(h);
		free(h);
		if (ret == -WFS_ENOSPC)
			break;
	}
	if (!wt_ok(ret == -WFS_ENOSPC, "the whole model does not fit an asic device of 4 x %llu KiB (-ENOSPC, %d)",
		   (unsigned long long)(small_sram >> 10), ret)) {
		small_sram = 0;
		free(blob);
		return;
	}
	for (n = 2; n <= (int)L && n <= MAXDEV && bad; n++) {
		for (i = 0; i < n; i++) {
			blobs[i] = blob;
			lens[i] = len;
		}
		ch.profile = NULL;
		bad = chain_up(&ch, n, L, blobs, lens, 1);
		if (!bad) {
			bad = chain_run(&ch);
			wt_ok(!bad && !memcmp(ch.out, golden, total),
			      "it runs across %d such devices (the fewest that hold it), bit-identical to one large device",
			      n);
		}
		chain_down(&ch);
	}
	wt_ok(!bad, "some chain of up to %u devices holds it", L);
	small_sram = 0;
	free(blob);
}

int main(void)
{
	const char *path = wt_model_path("stories260K.bin");
	struct wfs_pack_opts o8 = { .wbits = 8, .group_size = 64 };
	struct wfs_pack_opts o4 = { .wbits = 4, .group_size = 32 };
	struct wfs_ckpt ck;

	if (!wt_ok(path && wfs_ckpt_load(path, &ck) == 0, "load %s",
		   path ? path : "stories260K.bin"))
		return wt_done();
	make_tokens((u32)ck.vocab_size);
	run_chains("int8", &ck, &o8);
	run_chains("int4", &ck, &o4);
	check_load_fields(&ck, &o8);
	{
		void *blob;
		size_t len;
		u8 *golden = malloc((size_t)NSEQ * NPOS * REC);

		if (!wfs_pack(&ck, &o8, &blob, &len) &&
		    !run_single(blob, len, (u32)ck.n_layers, golden))
			too_big_for_one(&ck, &o8, golden);
		free(golden);
		free(blob);
	}
	figures(&ck, &o8);
	wfs_ckpt_free(&ck);
	return wt_done();
}
