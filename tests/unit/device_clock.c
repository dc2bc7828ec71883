// SPDX-License-Identifier: MIT
/*
 * device_clock.c - tenants on one device keep their own modelled clocks.
 *
 * Two tenants (CREATE_CONTEXT's tenant) share a device holding a whole
 * model and a layer range of it (activation records in).  Tenant B runs a
 * decode step, tenant A then gives the latest times the host may give
 * (NOT_BEFORE = 2^62, an activation record's t_ns = 2^62) and one past
 * them (t_ns = 2^63: the job fails with -EINVAL), and B runs its next
 * step.  B's completions must be those of the same run without A, bit for
 * bit: one tenant's times move no other tenant's clock.  With A's floored
 * job in flight at once with B's, B is delayed by at most the work A's job
 * did on the stages, never to A's floor.
 */
#include "device_harness.h"
#include "wfs_pack.h"
#include "wt_util.h"

#define REC	WFW_OUT_REC_SIZE(1)
#define CTX	16
#define TENANT_A	0x1111
#define TENANT_B	0x2222

struct dev {
	struct dh *h;
	u32 full, range;	/* model ids: the whole model, layers 1.. */
	u32 act;		/* activation record bytes of the range */
	u32 *in;		/* token ids */
	u32 *fl;		/* a token id, then a NOT_BEFORE floor */
	u8 *recs;		/* one activation record */
	u8 *out;
};

static void *blob;
static size_t blob_len;

static int64_t ctx_create(struct dh *h, u32 model, u64 tenant)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;

	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_CREATE_CONTEXT;
	c.model = model;
	c.ctx.slots = 1;
	c.ctx.ctx_len = CTX;
	c.ctx.tenant = tenant;
	if (dh_exec(h, &c, &cpl, 10000))
		return -ETIMEDOUT;
	return cpl.status ? cpl.status : (int64_t)cpl.result0;
}

static int dev_up(struct dev *d)
{
	struct wfs_device_config cfg = { .numa_node = -1, .profile = "asic", .stages = 4 };
	struct wfw_info info;
	struct wfw_cpl cpl;
	u32 i;

	memset(d, 0, sizeof(*d));
	d->h = calloc(1, sizeof(*d->h));
	d->in = dh_alloc(64);
	d->out = dh_alloc(REC);
	d->fl = dh_alloc(16);
	if (!d->h || !d->in || !d->out || !d->fl || dh_init(d->h, &cfg, 16, 16))
		return -1;
	for (i = 0; i < 8; i++)
		d->in[i] = 1 + i * 7;
	dh_region_add(d->h, blob, blob_len);
	dh_region_add(d->h, d->in, 64);
	dh_region_add(d->h, d->fl, 16);
	dh_region_add(d->h, d->out, REC);
	if (dh_load(d->h, blob, blob_len, &cpl))
		return -1;
	d->full = cpl.model;
	if (dh_info_model(d->h, d->full, &info) ||
	    dh_load_range(d->h, blob, blob_len, 0, 1, info.total_layers - 1, 0, &cpl))
		return -1;
	d->range = cpl.model;
	if (dh_info_model(d->h, d->range, &info))
		return -1;
	d->act = info.act_rec_size;
	d->recs = dh_alloc(d->act);
	memset(d->recs, 0, d->act);
	memcpy(d->recs, &info.dim, sizeof(u32));	/* dim; exp 0; x 0 */
	dh_region_add(d->h, d->recs, d->act);
	return 0;
}

static void dev_down(struct dev *d)
{
	if (d->h) {
		dh_fini(d->h);
		free(d->h);
	}
	free(d->in);
	free(d->fl);
	free(d->out);
	free(d->recs);
}

/* A one-token job at @pos; @floor: NOT_BEFORE's (0: none). */
static void token_job(struct dev *d, struct wfw_cmd *c, u32 ctx, u32 pos,
		      u64 floor, u64 cookie)
{
	const u32 *in = &d->in[pos];

	if (floor) {
		d->fl[0] = d->in[pos];
		memcpy(&d->fl[1], &floor, sizeof(floor));
		in = d->fl;
	}
	dh_job_cmd(c, ctx, 0, pos, 1, in, d->out, REC, 1,
		   floor ? WFW_JOB_NOT_BEFORE : 0, cookie);
}

static int run_token(struct dev *d, u32 ctx, u32 pos, u64 floor,
		     struct wfw_cpl *cpl)
{
	struct wfw_cmd c;

	token_job(d, &c, ctx, pos, floor, 0);
	return dh_exec(d->h, &c, cpl, 10000);
}

/* A one-record job on the range, the record arriving at @t_ns. */
static int run_record(struct dev *d, u32 ctx, u32 pos, u64 t_ns,
		      struct wfw_cpl *cpl)
{
	struct wfw_cmd c;

	memcpy(d->recs + 8, &t_ns, sizeof(t_ns));
	dh_job_cmd(&c, ctx, 0, pos, 1, (const u32 *)d->recs, d->out, REC, 1,
		   WFW_JOB_IN_ACT, 0);
	return dh_exec(d->h, &c, cpl, 10000);
}

/*
 * B's two steps, with A's jobs between them if @with_a; @b2: B's second
 * completion.  0, or -1 if a job did not run as it should.
 */
static int two_tenants(int with_a, struct wfw_cpl *b2)
{
	struct wfw_cpl b1, a;
	struct dev d;
	int64_t cb, ca, cr;
	int bad = 0;

	if (dev_up(&d)) {
		dev_down(&d);
		return -1;
	}
	cb = ctx_create(d.h, d.full, TENANT_B);
	ca = ctx_create(d.h, d.full, TENANT_A);
	cr = ctx_create(d.h, d.range, TENANT_A);
	if (cb <= 0 || ca <= 0 || cr <= 0 ||
	    run_token(&d, (u32)cb, 0, 0, &b1) || b1.status) {
		dev_down(&d);
		return -1;
	}
	if (with_a) {
		/* A's contexts share its clock: the floor is no later. */
		if (run_record(&d, (u32)cr, 0, 1ull << 63, &a) ||
		    a.status != -WFS_EINVAL) {
			wt_diag("t_ns 2^63: status %d", a.status);
			bad = 1;
		}
		if (run_token(&d, (u32)ca, 0, WFW_NOT_BEFORE_MAX, &a) || a.status ||
		    a.value - a.device_ns != WFW_NOT_BEFORE_MAX) {
			wt_diag("NOT_BEFORE 2^62: status %d, start %llu", a.status,
				(unsigned long long)(a.value - a.device_ns));
			bad = 1;
		}
		if (run_record(&d, (u32)cr, 1, WFW_NOT_BEFORE_MAX, &a) || a.status ||
		    a.value - a.device_ns < WFW_NOT_BEFORE_MAX) {
			wt_diag("t_ns 2^62: status %d, start %llu", a.status,
				(unsigned long long)(a.value - a.device_ns));
			bad = 1;
		}
	}
	bad |= run_token(&d, (u32)cb, 1, 0, b2) || b2->status;
	dev_down(&d);
	return bad ? -1 : 0;
}

static void test_times_stay(void)
{
	struct wfw_cpl alone, shared;
	int ret;

	ret = two_tenants(0, &alone) || two_tenants(1, &shared);
	wt_ok(!ret, "tenant A: a record's t_ns of 2^63 fails its job with -EINVAL, "
	      "NOT_BEFORE and t_ns of 2^62 run");
	wt_ok(!ret && shared.value == alone.value && shared.device_ns == alone.device_ns,
	      "tenant B's next job after A's: completes at %llu ns, took %llu ns; "
	      "without A %llu, %llu",
	      (unsigned long long)shared.value, (unsigned long long)shared.device_ns,
	      (unsigned long long)alone.value, (unsigned long long)alone.device_ns);
}

/*
 * A's floored job and B's step in flight together: B waits at most for
 * the stages' work on A's job (A's device_ns bounds it), not for A's floor.
 * @with_a: submit A's job first; @b: B's completion; @a: A's.
 */
static int together(int with_a, struct wfw_cpl *b, struct wfw_cpl *a)
{
	struct wfw_cpl b1, x = { 0 }, y = { 0 };
	struct wfw_cmd c;
	struct dev d;
	int64_t cb, ca;
	int ret = -1;

	memset(a, 0, sizeof(*a));
	if (dev_up(&d))
		goto out;
	cb = ctx_create(d.h, d.full, TENANT_B);
	ca = ctx_create(d.h, d.full, TENANT_A);
	if (cb <= 0 || ca <= 0 || run_token(&d, (u32)cb, 0, 0, &b1) || b1.status)
		goto out;
	if (with_a) {
		token_job(&d, &c, (u32)ca, 4, WFW_NOT_BEFORE_MAX, 1);
		if (dh_submit(d.h, &c))
			goto out;
	}
	token_job(&d, &c, (u32)cb, 1, 0, 2);
	if (dh_submit(d.h, &c) || !dh_poll(d.h, &x, 10000) ||
	    (with_a && !dh_poll(d.h, &y, 10000)))
		goto out;
	*b = x.cookie == 2 ? x : y;
	if (with_a)
		*a = x.cookie == 1 ? x : y;
	ret = b->status || a->status;
out:
	dev_down(&d);
	return ret;
}

static void test_contention(void)
{
	struct wfw_cpl alone = { 0 }, shared = { 0 }, a = { 0 }, none;
	int ret;

	ret = together(0, &alone, &none) || together(1, &shared, &a);
	wt_ok(!ret && a.value - a.device_ns == WFW_NOT_BEFORE_MAX &&
	      shared.value >= alone.value && shared.value - alone.value <= a.device_ns,
	      "in flight together, B's job completes at %llu ns (alone %llu): A's floored "
	      "job (%llu ns of work) delays it by its work at most, not to A's floor",
	      (unsigned long long)shared.value, (unsigned long long)alone.value,
	      (unsigned long long)a.device_ns);
}

int main(void)
{
	const char *path = wt_model_path("stories260K.bin");
	struct wfs_pack_opts o8 = { .wbits = 8, .group_size = 64 };
	struct wfs_ckpt ck;

	if (!wt_ok(path && wfs_ckpt_load(path, &ck) == 0, "load model") ||
	    !wt_ok(wfs_pack(&ck, &o8, &blob, &blob_len) == 0, "pack"))
		return wt_done();
	test_times_stay();
	test_contention();
	free(blob);
	wfs_ckpt_free(&ck);
	return wt_done();
}
