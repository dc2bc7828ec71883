// SPDX-License-Identifier: MIT
/*
 * The AFD backend's expert parallelism (wafer_afd_opts.n_expert; firmware
 * ABI 1.7, the phases in wfw_abi.h): the routed experts of every MoE layer
 * sit on the expert members, the FFN members are their layers' homes.
 *
 * A layer is 4 + 2 ne steps of a micro-batch, each a RUN_JOB: attention
 * (buffer A -> B), the host turns B's activation records into expert
 * records in A; ROUTE on the home (A -> B); UP on each expert member
 * (B -> C), the host copying the units it computed into B; GLU on the
 * home (B -> A); DOWN on each expert member (A -> C), the host adding its
 * s64 sum into A's; FIN on the home (A -> B, or the results), the host
 * turning B's records back into activation records in A.  The host posts
 * the expert members one after the other, but each takes its records at
 * their t_ns, so in modelled time they work at once and the home goes on
 * at the latest reply (the host keeps the latest t_ns).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "wafer_afd.h"
#include "wfw_abi.h"

enum { BUF_A, BUF_B, BUF_C };

/* Step @r->step: its member, phase, buffers and records. */
void wafer_afd_ep_step(struct afd *a, const struct afd_rec *r, struct afd_step *st)
{
	const struct afd_model *am = afd_rec_model(a, r);
	unsigned int ne = a->ne, l = r->step / am->spl, t = r->step % am->spl;
	unsigned int home = afd_member(a->na, a->nf, am->L, l);
	uint32_t ph;

	*st = (struct afd_step){ .k = home, .in_rec = am->xrec, .out_rec = am->xrec };
	if (!t) {
		*st = (struct afd_step){ .k = afd_member(0, a->na, am->L, l), .lw = l,
					 .in = BUF_A, .in_rec = l ? am->act_size : 0,
					 .out = BUF_B, .out_rec = am->act_size };
		return;
	}
	if (t == 1) {
		ph = WFW_XPHASE_ROUTE;
		st->in = BUF_A;
		st->out = BUF_B;
	} else if (t < 2 + ne) {
		ph = WFW_XPHASE_UP;
		st->k = a->na + a->nf + t - 2;
		st->in = BUF_B;
		st->out = BUF_C;
	} else if (t == 2 + ne) {
		ph = WFW_XPHASE_GLU;
		st->in = BUF_B;
		st->out = BUF_A;
	} else if (t < 3 + 2 * ne) {
		ph = WFW_XPHASE_DOWN;
		st->k = a->na + a->nf + t - 3 - ne;
		st->in = BUF_A;
		st->out = BUF_C;
	} else {
		ph = WFW_XPHASE_FIN;
		st->in = BUF_A;
		st->out = BUF_B;
		if (l + 1 == am->L)
			st->out_rec = 0;	/* the head's results */
	}
	st->lw = l | ph << WFW_XPHASE_SHIFT;
}

/* The home's @n records at @h arrive no earlier than @t (the latest reply). */
static void exchange_done(const struct afd_model *am, uint8_t *h, unsigned int n, uint64_t t)
{
	unsigned int i;

	for (i = 0; i < n; i++, h += am->xrec)
		if (t > wafer_chain_rec_t_ns(h))
			memcpy(h + offsetof(struct wfw_act_rec, t_ns), &t, sizeof(t));
}

/* An expert member's reply (@s) into the home's record (@h). */
static void merge(const struct afd_model *am, uint32_t dim, uint8_t *h, const uint8_t *s,
		  int down)
{
	struct wfw_xrec_hdr xh;
	size_t off, b;
	uint32_t j;

	memcpy(&xh, s + WFW_XREC_HDR_OFF(dim), sizeof(xh));
	if (down) {
		uint64_t *hy, *sy;

		for (j = 0; j < dim; j++) {
			hy = (uint64_t *)(h + am->y_off) + j;
			sy = (uint64_t *)(s + am->y_off) + j;
			*hy += *sy;	/* s64 sums: exact, in any order */
		}
		return;
	}
	off = 8ull * xh.u0;
	b = 8ull * (xh.u1 - xh.u0);
	memcpy(h + WFW_XREC_A1_OFF(dim) + off, s + WFW_XREC_A1_OFF(dim) + off, b);
	memcpy(h + am->a3_off + off, s + am->a3_off + off, b);
}

/* The host's part after step @r->step: records between the members. */
void wafer_afd_ep_after(struct afd *a, struct afd_rec *r)
{
	const struct afd_model *am = afd_rec_model(a, r);
	unsigned int ne = a->ne, t = r->step % am->spl, n = r->job.n_tokens, i;
	uint8_t *A = afd_half(a, r, BUF_A), *B = afd_half(a, r, BUF_B);
	uint8_t *C = afd_half(a, r, BUF_C);
	uint32_t dim = am->dim;

	if (!t) {
		/* Attention's records become the home's expert records. */
		memset(A, 0, (size_t)n * am->xrec);
		for (i = 0; i < n; i++)
			memcpy(A + (size_t)i * am->xrec, B + (size_t)i * am->act_size,
			       am->act_size);
	} else if (t >= 2 && t < 3 + 2 * ne && t != 2 + ne) {
		/* UP (into B) or DOWN (into A) of one expert member */
		for (i = 0; i < n; i++) {
			merge(am, dim, (t < 2 + ne ? B : A) + (size_t)i * am->xrec,
			      C + (size_t)i * am->xrec, t > 2 + ne);
			if (wafer_chain_rec_t_ns(C + (size_t)i * am->xrec) > r->x_t_ns)
				r->x_t_ns = wafer_chain_rec_t_ns(C + (size_t)i * am->xrec);
		}
	} else if (t == am->spl - 1) {
		/* FIN's records: the activations for the next attention. */
		for (i = 0; i < n; i++)
			memmove(A + (size_t)i * am->act_size, B + (size_t)i * am->xrec,
				am->act_size);
	}
}

/*
 * Before step @r->step is posted: after an exchange, the home's records
 * arrive with the latest reply (the members ran at once from the
 * dispatch).  Every expert member takes every micro-batch, those that
 * selected none of its experts too: a micro-batch passing one over could
 * overtake an earlier one of its sequence and run the next layer's
 * attention before that one wrote its KV there (each member takes the
 * micro-batches in the order they come, which keeps them in order only
 * while they all take the same steps).
 */
void wafer_afd_ep_next(struct afd *a, struct afd_rec *r)
{
	const struct afd_model *am = afd_rec_model(a, r);
	unsigned int t = r->step % am->spl;

	if (t != 2 + a->ne && t != am->spl - 1)
		return;
	exchange_done(am, afd_half(a, r, t == 2 + a->ne ? BUF_B : BUF_A), r->job.n_tokens,
		      r->x_t_ns);
	r->x_t_ns = 0;
}

/* Expert member @i of a->ne: E / ne routed experts, the first E % ne one more. */
void wafer_afd_ep_range(const struct afd *a, unsigned int e, unsigned int i,
			uint32_t *first, uint32_t *count)
{
	unsigned int q = e / a->ne, rem = e % a->ne;

	*first = i * q + (i < rem ? i : rem);
	*count = q + (i < rem);
}

/*
 * Expert parallelism's parts of a model of @mi (the members' loads follow):
 * the model must have experts, at least one per expert member, and no
 * expert groups; 0 or -EINVAL with the reason.
 */
int wafer_afd_ep_load(struct afd *a, struct afd_model *am, const struct wfs_model_info *mi,
		      uint32_t expert_group)
{
	am->spl = 2;
	am->nhalf = 2;
	if (!a->ne)
		return 0;
	if (mi->ffn_kind != WFS_FFN_MOE || !mi->n_experts)
		return wafer_set_error(-EINVAL, "expert parallelism over %u devices: the model has "
				       "no experts (a dense model: --moe E,TOPK upcycles it)", a->ne);
	if (a->ne > mi->n_experts)
		return wafer_set_error(-EINVAL, "%u expert devices for %u routed experts a layer: "
				       "each device needs one at least", a->ne, mi->n_experts);
	if (expert_group)
		return wafer_set_error(-EINVAL, "--expert-group places a device's experts across its "
				       "stages: not with expert devices");
	am->spl = 4 + 2 * a->ne;
	am->nhalf = 3;
	am->dim = mi->dim;
	am->xrec = WFW_XREC_SIZE(mi->dim, mi->hidden_dim);
	am->a3_off = WFW_XREC_A3_OFF(mi->dim, mi->hidden_dim);
	am->y_off = WFW_XREC_Y_OFF(mi->dim, mi->hidden_dim);
	am->n_experts = mi->n_experts;
	return 0;
}
