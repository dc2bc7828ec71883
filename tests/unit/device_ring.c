// SPDX-License-Identifier: MIT
/*
 * device_ring.c - ring index arithmetic (wfs_ring.h) including wrap-around
 * of the free-running 32-bit indices, and the device's command and
 * completion rings wrapping many times with tiny ring sizes.
 */
#include "device_harness.h"
#include "wfs_ring.h"
#include "wt_util.h"

static void test_arith(void)
{
	u32 sizes[] = { 2, 4, 8, 64, 4096 };
	u32 starts[] = { 0, 1, 0x7fffffffu, 0xfffffff0u, 0xffffffffu };
	int ok = 1;
	unsigned int si, bi;

	wt_ok(wfs_ring_size_valid(2, 4096) && wfs_ring_size_valid(4096, 4096) &&
	      !wfs_ring_size_valid(0, 4096) && !wfs_ring_size_valid(1, 4096) &&
	      !wfs_ring_size_valid(3, 4096) && !wfs_ring_size_valid(8192, 4096) &&
	      !wfs_ring_size_valid(0x80000000u, 4096),
	      "ring size validation (powers of two in [2, max])");

	for (si = 0; si < WFS_ARRAY_SIZE(sizes); si++) {
		for (bi = 0; bi < WFS_ARRAY_SIZE(starts); bi++) {
			u32 size = sizes[si], head = starts[bi], tail = head;
			u32 k, steps = size * 3 + 7;

			/* Fill, check full, drain one, refill: across 2^32. */
			for (k = 0; k < steps; k++) {
				while (!wfs_ring_full(head, tail, size)) {
					if (wfs_ring_slot(tail, size) >= size)
						ok = 0;
					tail++;
				}
				if (wfs_ring_count(head, tail) != size ||
				    wfs_ring_space(head, tail, size) != 0 ||
				    wfs_ring_empty(head, tail))
					ok = 0;
				head++;
				if (wfs_ring_space(head, tail, size) != 1 ||
				    !wfs_ring_indices_valid(head, tail, size))
					ok = 0;
			}
			while (!wfs_ring_empty(head, tail))
				head++;
			if (wfs_ring_count(head, tail) != 0 ||
			    wfs_ring_space(head, tail, size) != size)
				ok = 0;
		}
	}
	wt_ok(ok, "fill/drain across the 2^32 index wrap for sizes 2..4096");

	wt_ok(wfs_ring_slot(0xffffffffu, 8) == 7 && wfs_ring_slot(0, 8) == 0 &&
	      wfs_ring_entry_addr(0x1000, 0xffffffffu, 8, 64) == 0x1000 + 7 * 64,
	      "slot and entry address of a wrapped index");
	wt_ok(!wfs_ring_indices_valid(10, 20, 8) &&
	      wfs_ring_indices_valid(0xfffffffcu, 4, 8) &&
	      !wfs_ring_indices_valid(5, 4, 8) &&
	      wfs_ring_full(5, 4, 8),
	      "inconsistent (head, tail) pairs are detected");
	wt_ok(wfs_ring_advance_valid(0xfffffffeu, 1, 2) &&
	      !wfs_ring_advance_valid(0xfffffffeu, 3, 2) &&
	      !wfs_ring_advance_valid(5, 4, 9) &&
	      wfs_ring_advance_valid(5, 5, 5),
	      "consumer advance: forward, not past the producer, across the wrap");
	wt_ok(wfs_ring_snapshot_valid(0, 2, 2, 4096) &&
	      !wfs_ring_snapshot_valid(0, 3, 2, 4096) &&
	      !wfs_ring_snapshot_valid(0, 0, 6, 4096),
	      "snapshot validation");
}

static void test_device_wrap(u32 cmd_size, u32 cpl_size, u32 n_cmds)
{
	struct wfs_device_config cfg;
	struct dh *h = calloc(1, sizeof(*h));
	struct wfw_cpl cpl;
	u32 i, got = 0, in_order = 1, outstanding = 0;
	u64 next = 1;
	int ret;

	memset(&cfg, 0, sizeof(cfg));
	cfg.numa_node = -1;
	cfg.stages = 2;
	cfg.sram_bytes = 256 << 10;
	ret = dh_init(h, &cfg, cmd_size, cpl_size);
	if (!wt_ok(ret == 0, "device up with %u/%u-entry rings", cmd_size,
		   cpl_size))
		return;
	for (i = 0; i < n_cmds; i++) {
		struct wfw_cmd c;

		memset(&c, 0, sizeof(c));
		c.opcode = WFW_OP_NOP;
		c.cookie = 1000 + (u64)i;
		if (dh_submit(h, &c))
			break;
		outstanding++;
		/* Keep a few in flight so both rings wrap with back-pressure. */
		while (outstanding > cmd_size + cpl_size / 2) {
			if (!dh_poll(h, &cpl, 5000))
				break;
			outstanding--;
			got++;
			if (cpl.cookie != 1000 + next - 1 || cpl.status ||
			    cpl.seq != next)
				in_order = 0;
			next++;
		}
	}
	while (outstanding && dh_poll(h, &cpl, 5000)) {
		outstanding--;
		got++;
		if (cpl.cookie != 1000 + next - 1 || cpl.status || cpl.seq != next)
			in_order = 0;
		next++;
	}
	wt_ok(got == n_cmds && in_order && !h->bad_checks,
	      "%u NOPs through %u/%u-entry rings: all completed, in order, seq 1..%u, checks valid",
	      n_cmds, cmd_size, cpl_size, n_cmds);
	wt_ok(dh_rd(h, WFW_REG_CMD_HEAD) == n_cmds &&
	      dh_rd(h, WFW_REG_CPL_TAIL) == n_cmds &&
	      !(dh_rd(h, WFW_REG_STATUS) & WFW_STATUS_FAULT),
	      "indices advanced by %u (rings wrapped %u and %u times)", n_cmds,
	      n_cmds / cmd_size, n_cmds / cpl_size);
	dh_fini(h);
	free(h);
}

int main(void)
{
	test_arith();
	test_device_wrap(2, 2, 1000);
	test_device_wrap(4, 2, 777);
	test_device_wrap(2, 8, 999);
	test_device_wrap(64, 64, 5000);
	return wt_done();
}
