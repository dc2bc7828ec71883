// SPDX-License-Identifier: MIT
/*
 * A chain's one modelled timeline (see wafer_chain.h).  Each member's
 * firmware keeps its own modelled clock, but a member takes a step no
 * earlier than the t_ns its activation records carry (the member before
 * finished them there, plus the link), so the members' clocks form one
 * timeline, member 0's.  Their stages are numbered one after the other:
 * member k's stage s is the chain's stage s plus the stages of members
 * 0..k-1 (a chain's wafer_info.stages counts them all).
 */
#include <stddef.h>
#include <string.h>

#include "wafer_chain.h"
#include "wfw_abi.h"

/* Member @k's first stage in the chain's numbering. */
unsigned int wafer_chain_stage0(const struct wafer_chain *ch, unsigned int k)
{
	unsigned int i, s = 0;

	for (i = 0; i < k; i++)
		s += ch->m[i]->info.stages;
	return s;
}

/* The modelled time an activation record (struct wfw_act_rec) arrives. */
uint64_t wafer_chain_rec_t_ns(const void *rec)
{
	uint64_t t;

	memcpy(&t, (const char *)rec + offsetof(struct wfw_act_rec, t_ns), sizeof(t));
	return t;
}
