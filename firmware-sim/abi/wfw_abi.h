/* SPDX-License-Identifier: MIT */
/*
 * wfw_abi.h - the firmware ABI of the simulated wafer device.
 *
 * This is the whole contract between the driver (kmod/, or the userspace
 * in-process backend) and the device (firmware-sim/).  It is shaped like a
 * PCI device's:
 *
 *  - a block of 32-bit registers (struct-less: byte offsets WFW_REG_*),
 *    read and written with wfs_device_mmio_read32()/_write32();
 *  - a command ring and a completion ring in host memory that the driver
 *    allocates and hands to the device by "DMA address" (any u64 the
 *    driver's DMA callbacks understand, see wfs_device.h);
 *  - a doorbell register the driver writes after publishing commands;
 *  - an interrupt: the device calls the driver's IRQ callback after
 *    setting bits in WFW_REG_IRQ_STATUS.
 *
 * Versioning: WFW_REG_ABI_VERSION reads (major << 16 | minor).  A driver
 * refuses a device whose major differs from WFW_ABI_MAJOR; a larger minor
 * only adds commands, flags, or fields carved out of reserved space (which
 * is always zero in older versions).  Every reserved or padding field a
 * driver writes must be zero, and the device rejects commands where it is
 * not, so reserved space can be given a meaning later.
 *
 * All fields are little-endian, naturally aligned, with explicit padding;
 * sizes are checked by static assertions at the end of this file.  No
 * pointers: device addresses are u64.
 *
 * Ring protocol (both rings): free-running u32 indices, see wfs_ring.h.
 *
 *   command ring     driver produces: writes descriptors at
 *                    CMD_BASE + (tail % CMD_SIZE) * 64, then writes CMD_TAIL,
 *                    then DOORBELL.  The device consumes and advances
 *                    CMD_HEAD (read-only for the driver) once it has copied a
 *                    descriptor: from then on the slot may be reused.
 *   completion ring  device produces: writes a record at
 *                    CPL_BASE + (tail % CPL_SIZE) * 64, advances CPL_TAIL,
 *                    sets WFW_IRQ_CPL and calls the IRQ callback.  The driver
 *                    consumes records from CPL_HEAD to CPL_TAIL and writes
 *                    CPL_HEAD (writing CPL_HEAD also kicks the device, like
 *                    a doorbell, so it can continue if it was waiting for
 *                    completion space).
 *
 *   control ring     (ABI 1.8) a second, small command ring, the same
 *                    protocol with the CTL_* registers.  It carries
 *                    control commands only (RUN_JOB there completes with
 *                    -EINVAL) and the device serves it first: before each
 *                    fetch from the command ring, and while a fetched
 *                    RUN_JOB waits for a job table entry.  A control
 *                    command waits at most for the job the device is
 *                    feeding to stage 0, never for the jobs queued behind
 *                    it.  Its completions go to the completion ring.  A
 *                    CTL_SIZE of 0 at ENABLE (a driver older than 1.8)
 *                    leaves it off: then control commands share the
 *                    command ring with jobs, in order.
 *
 *   loads            (ABI 1.9) LOAD_MODEL does not hold up the rings: the
 *                    device reserves a model slot (loading: no command can
 *                    name it, no other load takes it), checks the blob
 *                    (validator, checksum) on its load worker while it
 *                    goes on serving both rings, then places and copies
 *                    the model and posts the load's completion.  Other
 *                    control commands complete meanwhile, so completions
 *                    come out of order: a host matches them by cookie.
 *                    1.10: the placement and the SRAM copy run on the
 *                    load worker too (into blocks no job reads until the
 *                    load completes); the device only commits the model
 *                    between two commands.  One load runs at a time; a
 *                    LOAD_MODEL fetched meanwhile is queued behind it
 *                    (1.9 completed it -EAGAIN), holding a model slot, so
 *                    -EBUSY once every slot is loaded or queued for.
 *                    LOAD_CANCEL drops a queued load.  A reset ends the
 *                    copy early and drops every load without a
 *                    completion, as every command it discards, once the
 *                    running load's check is over.  1.11: the device
 *                    reports which load runs (WFW_REG_LOAD_RUNNING).
 *
 * The device never posts more completions than the completion ring can
 * hold: it consumes a command only when it can reserve a completion slot for
 * it, so a slow driver back-pressures the command ring instead of losing
 * completions.  Every consumed command produces exactly one completion,
 * except when a reset discards it (see WFW_CTRL_RESET) or a test-only fault
 * drops it (WFW_FAULT_DROP_NEXT_CPL).
 */
#ifndef WFW_ABI_H
#define WFW_ABI_H

#include "wfs_compat.h"

/*
 * Bit n of a 32-bit register or flags field.  Not the kernel's BIT(): that
 * one is unsigned long, and this header is also compiled in userspace.
 */
#define WFW_BIT(n)		(1u << (n))

#define WFW_ABI_MAJOR		1
#define WFW_ABI_MINOR		11	/* 1: GET_EXPERT_LOAD, 2: LOAD_STREAM,
					 * 3: JOB_NOT_BEFORE, 4: several models
					 * (WFW_MAX_MODELS), 5: layer parts
					 * (WFW_PART_*, WFW_JOB_LAYER), 6: expert
					 * groups across stages (expert_group),
					 * 7: expert parallelism across devices
					 * (WFW_PART_XHOME, WFW_PART_XSHARD),
					 * 8: the control ring (WFW_REG_CTL_*),
					 * 9: loads checked off the rings,
					 * completed out of order (-EAGAIN),
					 * 10: placed and copied off the rings
					 * too, queued (LOAD_CANCEL),
					 * 11: WFW_REG_LOAD_RUNNING
					 */
#define WFW_ABI_VERSION		((WFW_ABI_MAJOR << 16) | WFW_ABI_MINOR)
#define WFW_ABI_VERSION_MAJOR(v)	((u32)(v) >> 16)
#define WFW_ABI_VERSION_MINOR(v)	((u32)(v) & 0xffff)

/* Firmware build version, reported for information only (major.minor.patch). */
#define WFW_FW_VERSION		0x00010000u	/* 1.0.0 */

/* ---------------------------------------------------------- registers -- */

/*
 * Register offsets in bytes.  All registers are 32 bits wide and must be
 * accessed at 4-byte aligned offsets below WFW_REG_BLOCK_SIZE; other
 * accesses read as 0 and are ignored when written.
 *
 * RO: writes are ignored.  WO: reads return 0.  RW: read back what was
 * written (subject to the rules given).  W1C: write 1 to clear a bit.
 */
#define WFW_REG_ABI_VERSION	0x000	/* RO  WFW_ABI_VERSION */
#define WFW_REG_FW_VERSION	0x004	/* RO  WFW_FW_VERSION */
#define WFW_REG_STATUS		0x008	/* RO  WFW_STATUS_* */
#define WFW_REG_CTRL		0x00c	/* RW  WFW_CTRL_* */
#define WFW_REG_DOORBELL	0x010	/* WO  any value: new commands */
#define WFW_REG_IRQ_STATUS	0x014	/* RO  WFW_IRQ_* latched */
#define WFW_REG_IRQ_ACK		0x018	/* W1C clears IRQ_STATUS bits */
#define WFW_REG_IRQ_MASK	0x01c	/* RW  1 = bit raises the IRQ */
#define WFW_REG_FAULT		0x020	/* RO  WFW_FAULT_* sticky until reset */
#define WFW_REG_HEARTBEAT	0x024	/* RO  increments as the CP runs */
#define WFW_REG_RESET_COUNT	0x028	/* RO  resets performed so far */
#define WFW_REG_LOAD_RUNNING	0x02c	/* RO  the running load (1.11, below) */
#define WFW_REG_NUM_STAGES	0x030	/* RO  pipeline stages */
#define WFW_REG_SRAM_KIB	0x034	/* RO  SRAM per stage in KiB */
#define WFW_REG_PROFILE		0x038	/* RO  enum wfs_profile_id */
#define WFW_REG_CMD_BASE_LO	0x040	/* RW  command ring address [31:0] */
#define WFW_REG_CMD_BASE_HI	0x044	/* RW  command ring address [63:32] */
#define WFW_REG_CMD_SIZE	0x048	/* RW  entries, power of two */
#define WFW_REG_CMD_HEAD	0x04c	/* RO  device's consumer index */
#define WFW_REG_CMD_TAIL	0x050	/* RW  driver's producer index */
#define WFW_REG_CPL_BASE_LO	0x060	/* RW  completion ring address [31:0] */
#define WFW_REG_CPL_BASE_HI	0x064	/* RW  completion ring address [63:32] */
#define WFW_REG_CPL_SIZE	0x068	/* RW  entries, power of two */
#define WFW_REG_CPL_HEAD	0x06c	/* RW  driver's consumer index */
#define WFW_REG_CPL_TAIL	0x070	/* RO  device's producer index */
#define WFW_REG_CTL_BASE_LO	0x080	/* RW  control ring address [31:0] */
#define WFW_REG_CTL_BASE_HI	0x084	/* RW  control ring address [63:32] */
#define WFW_REG_CTL_SIZE	0x088	/* RW  entries: 0 (off) or a power of two */
#define WFW_REG_CTL_HEAD	0x08c	/* RO  device's consumer index */
#define WFW_REG_CTL_TAIL	0x090	/* RW  driver's producer index */
#define WFW_REG_BLOCK_SIZE	0x100

/*
 * WFW_REG_LOAD_RUNNING: the low 32 bits of the cookie of the LOAD_MODEL the
 * load worker has begun (its check, placement and copy, until its
 * completion is posted), 0 while no load runs; loads queued behind it have
 * not begun.  A host that gives its loads cookies with distinct nonzero low
 * bits learns from it whether a load of its own still waits in the queue,
 * and times the load from when it began, not from when it was posted.
 */

/* Ring limits: sizes are powers of two in [2, WFW_RING_MAX_ENTRIES]. */
#define WFW_RING_MAX_ENTRIES	4096
/* The control ring's size, if on: a power of two in [2, this]. */
#define WFW_CTL_RING_MAX_ENTRIES	64
/* Ring base addresses must be aligned to this. */
#define WFW_RING_ALIGN		64

/* WFW_REG_STATUS */
#define WFW_STATUS_READY	WFW_BIT(0)	/* firmware up, registers live */
#define WFW_STATUS_ENABLED	WFW_BIT(1)	/* rings latched and processed */
#define WFW_STATUS_MODEL	WFW_BIT(2)	/* a model is loaded */
#define WFW_STATUS_FAULT	WFW_BIT(3)	/* WFW_REG_FAULT != 0: halted */
#define WFW_STATUS_RESETTING	WFW_BIT(4)	/* a reset is in progress */

/*
 * WFW_REG_CTRL.  ENABLE is a level: writing it 0 -> 1 validates and
 * latches the ring registers (CMD/CPL/CTL BASE and SIZE; they are read-only
 * while enabled) and starts command processing; 1 -> 0 stops fetching new
 * commands (work already fetched still completes).  A ring configuration
 * that is not valid sets WFW_FAULT_RING_CONFIG instead of enabling.
 *
 * RESET is self-clearing and synchronous: the write returns when the reset
 * is complete (it sleeps: process context only; never from the IRQ
 * callback).  A reset stops every firmware worker, discards every fetched
 * command and in-flight job WITHOUT posting completions for them (the driver
 * fails those jobs itself), clears armed faults and WFW_REG_FAULT, sets
 * CMD_HEAD = CMD_TAIL = CTL_HEAD = CTL_TAIL = CPL_HEAD = CPL_TAIL = 0 and
 * IRQ_STATUS = 0, and
 * keeps ring bases, sizes, ENABLE and IRQ_MASK.  With RESET_FULL also set,
 * the model is unloaded and all contexts are destroyed (all SRAM freed);
 * without it, the model and contexts survive (KV contents of positions
 * written by discarded jobs are undefined).  The IRQ callback is never
 * running while, or called because of what happened before, a reset.
 */
#define WFW_CTRL_ENABLE		WFW_BIT(0)
#define WFW_CTRL_RESET		WFW_BIT(1)
#define WFW_CTRL_RESET_FULL	WFW_BIT(2)

/* WFW_REG_IRQ_STATUS / IRQ_ACK / IRQ_MASK */
#define WFW_IRQ_CPL		WFW_BIT(0)	/* completions were posted */
#define WFW_IRQ_FAULT		WFW_BIT(1)	/* a WFW_FAULT_* bit was set */
#define WFW_IRQ_ALL		(WFW_IRQ_CPL | WFW_IRQ_FAULT)

/* WFW_REG_FAULT: the device halts command processing until reset. */
#define WFW_FAULT_RING_CONFIG	WFW_BIT(0)	/* bad base/size at ENABLE */
#define WFW_FAULT_CMD_TAIL	WFW_BIT(1)	/* CMD_TAIL - CMD_HEAD > CMD_SIZE */
#define WFW_FAULT_CMD_DMA	WFW_BIT(2)	/* reading a descriptor failed */
#define WFW_FAULT_CPL_HEAD	WFW_BIT(3)	/* CPL_HEAD moved backwards/past tail */
#define WFW_FAULT_CPL_DMA	WFW_BIT(4)	/* writing a completion failed */
#define WFW_FAULT_CTL_TAIL	WFW_BIT(5)	/* CTL_TAIL - CTL_HEAD > CTL_SIZE */

/* ----------------------------------------------------------- commands -- */

/**
 * enum wfw_opcode - command opcodes
 * @WFW_OP_NOP: does nothing; completes with status 0
 * @WFW_OP_GET_INFO: write a struct wfw_info to host memory
 * @WFW_OP_LOAD_MODEL: copy a model blob into stage SRAM
 * @WFW_OP_UNLOAD_MODEL: release a model (none of its contexts may exist)
 * @WFW_OP_CREATE_CONTEXT: allocate KV cache: slots x context length
 * @WFW_OP_DESTROY_CONTEXT: free a context after its jobs finished
 * @WFW_OP_RUN_JOB: run N tokens of one sequence slot through the pipeline
 * @WFW_OP_RESET_RETIRED: was the RESET command; the number stays reserved
 *	and completes with -EOPNOTSUPP (reset with WFW_CTRL_RESET)
 * @WFW_OP_FAULT_INJECT: test only: arm a fault
 * @WFW_OP_GET_STATS: write per-stage struct wfw_stage_stats to host memory
 * @WFW_OP_GET_SRAM_MAP: write one stage's struct wfw_sram_entry list
 * @WFW_OP_READ_LOG: copy firmware log text to host memory
 * @WFW_OP_GET_EXPERT_LOAD: write struct wfw_expert_load entries (tokens
 *	each expert of each loaded MoE layer ran) to host memory
 * @WFW_OP_LOAD_CANCEL: (1.10) drop a queued LOAD_MODEL that has not started
 *	(struct wfw_cmd_load_cancel)
 * @WFW_OP_COUNT: number of opcodes
 */
enum wfw_opcode {
	WFW_OP_NOP = 0,
	WFW_OP_GET_INFO = 1,
	WFW_OP_LOAD_MODEL = 2,
	WFW_OP_UNLOAD_MODEL = 3,
	WFW_OP_CREATE_CONTEXT = 4,
	WFW_OP_DESTROY_CONTEXT = 5,
	WFW_OP_RUN_JOB = 6,
	WFW_OP_RESET_RETIRED = 7,
	WFW_OP_FAULT_INJECT = 8,
	WFW_OP_GET_STATS = 9,
	WFW_OP_GET_SRAM_MAP = 10,
	WFW_OP_READ_LOG = 11,
	WFW_OP_GET_EXPERT_LOAD = 12,
	WFW_OP_LOAD_CANCEL = 13,
	WFW_OP_COUNT
};

/*
 * Several models (1.4).  A device holds up to WFW_MAX_MODELS models at
 * once, as far as SRAM allows (a draft next to its target), each placed on
 * the stages from stage 0 in the SRAM the others left, each with its own
 * contexts.  LOAD_MODEL's completion gives the new model's id in
 * struct wfw_cpl.model: WFW_MODEL_ID(generation, index), never 0.  A
 * command names a model in struct wfw_cmd.model: UNLOAD_MODEL,
 * CREATE_CONTEXT, GET_INFO, GET_STATS, GET_SRAM_MAP, GET_EXPERT_LOAD, and
 * RUN_JOB (which needs none: a context carries its model; a non-zero
 * model must be the context's).  Model 0 means "the only model": what a
 * host from before 1.3 sends; with several models loaded it is -EINVAL
 * for UNLOAD_MODEL and CREATE_CONTEXT, and the lowest-index model for the
 * read-only commands (GET_SRAM_MAP: every block of every model).  An id
 * that names no loaded model (a stale generation included) is -ENOENT.
 * The other commands need model 0 (-EINVAL otherwise).  Unloading one
 * model leaves the others running, their results and modelled timeline
 * unchanged.
 */
#define WFW_MAX_MODELS		4
#define WFW_MODEL_IDX_BITS	8
#define WFW_MODEL_ID(gen, idx)	(((u32)(gen) << WFW_MODEL_IDX_BITS) | (u32)(idx))
#define WFW_MODEL_IDX(id)	((u32)(id) & ((1u << WFW_MODEL_IDX_BITS) - 1))

/**
 * struct wfw_cmd_buf - payload of GET_INFO, GET_STATS, GET_SRAM_MAP,
 *	READ_LOG and GET_EXPERT_LOAD
 * @addr: device address of the host buffer the firmware writes
 * @len: bytes available at @addr
 * @index: GET_STATS: first stage; GET_SRAM_MAP: the stage;
 *	GET_EXPERT_LOAD: first entry; GET_INFO (1.4) with model 0: describe
 *	the @index-th loaded model in index order (none past the last: its
 *	fields 0), so a host can list the models the device holds; else 0
 * @pos: READ_LOG: absolute log byte position to read from; else 0
 * @reserved: must be zero
 */
struct wfw_cmd_buf {
	u64 addr;
	u32 len;
	u32 index;
	u64 pos;
	u64 reserved[3];
};

/*
 * LOAD_MODEL flags.  WFW_LOAD_STREAM: weight streaming.  The layers'
 * weights stay in host memory, at the blob's device address, which the
 * driver keeps readable (and unchanged) until the model is unloaded or a
 * full reset drops it; each used stage reserves a two-slot SRAM window
 * for its largest layer and, per chunk, reads each layer's section into
 * it (the next layer's read overlaps this layer's compute), binds it
 * again (the section is validated on every read) and runs it.  Embedding,
 * head, KV cache and activations stay in SRAM.
 */
#define WFW_LOAD_STREAM		WFW_BIT(0)
#define WFW_LOAD_FLAGS_ALL	WFW_LOAD_STREAM

/*
 * LOAD_MODEL part (1.5): attention-FFN disaggregation.  A layer is two
 * parts that run on different devices, activations going back and forth
 * every layer (struct wfw_act_rec, the stages' own record, so the split
 * changes no bit):
 *
 *   WFW_PART_ATTN  RMSNorm, Q/K/V, RoPE, attention over the KV cache, the
 *                  output projection and its residual add; the range's
 *                  KV cache lives here.  A range starting at layer 0 also
 *                  holds the embedding.
 *   WFW_PART_FFN   RMSNorm, w1/w3, SiLU, w2 (or the MoE block: router and
 *                  experts) and its residual add; no KV cache (its
 *                  contexts allocate none).  A range ending at the last
 *                  layer also holds the final norm and the classifier.
 *
 * Part 0 (WFW_PART_WHOLE, what hosts before 1.5 send) is the whole layer.
 * An attention part's SRAM holds only the attention tensors of each layer
 * (norm gain, Wq, Wk, Wv, Wo, RoPE table), a dense FFN part only the FFN
 * ones (norm gain, w1, w2, w3); an MoE layer's FFN part holds its whole
 * section (the experts are found through its descriptors).  Every job of
 * a part model runs one layer's part (WFW_JOB_LAYER).
 */
#define WFW_PART_WHOLE		0
#define WFW_PART_ATTN		1
#define WFW_PART_FFN		2
#define WFW_PART_XHOME		3	/* 1.7: expert-parallel FFN home */
#define WFW_PART_XSHARD		4	/* 1.7: a shard of routed experts */
#define WFW_PART_MAX		WFW_PART_XSHARD

/*
 * Expert parallelism across devices (1.7).  An MoE model's FFN parts split
 * further: one device (the home) loads WFW_PART_XHOME of a layer range,
 * each of N others WFW_PART_XSHARD, routed experts [expert_first,
 * expert_first + expert_count) of every MoE layer of its range.
 *
 *   WFW_PART_XHOME   per layer: the section's header and descriptors,
 *                    the FFN norm, the router and the shared experts (no
 *                    attention, no routed expert; block "L<n>.xhome"), no
 *                    KV cache; the head with a range to the last layer, as
 *                    WFW_PART_FFN.
 *   WFW_PART_XSHARD  per layer: the section's header and descriptors and
 *                    its routed experts [first, first + count) (block
 *                    "L<n>.xshard"); no KV, embedding or head.
 *
 * Every layer of the range must have experts.  The experts' SwiGLU units
 * share one exponent over all selected experts (wfs_moe.h), so a remote
 * expert cannot finish alone: a layer's FFN is five jobs, each on a
 * struct wfw_xrec record per position (the state rides in the record, as
 * the residual does in struct wfw_act_rec):
 *
 *   ROUTE (home)   x -> h = norm(x), the selection and gates, the shared
 *                  experts' W1 h and W3 h (raw s64), n_units
 *   UP (shards)    its selected experts' W1 h and W3 h into their units
 *                  [u0, u1) of the run order (shared, then routed
 *                  ascending: a shard's units are contiguous); the host
 *                  copies them into the home's record
 *   GLU (home)     u = SwiGLU over all n_units (one exponent, exactly as
 *                  on one device), y = the shared experts' W2 u
 *   DOWN (shards)  y = sum over its selected experts of gate * W2 u (one
 *                  s64 accumulator from zero); the host adds each shard's
 *                  y into the home's (s64 sums are exact in any order)
 *   FIN (home)     x += y: the activation record (or the head's results)
 *
 * The phase is bits 24..31 of the WFW_JOB_LAYER u32 (WFW_XPHASE_*), the
 * layer its bits 0..23; other parts take a phase of 0.  Jobs of these
 * parts are IN_ACT and OUT_ACT (records of WFW_XREC_SIZE(dim, hidden)
 * bytes, GET_INFO's act_rec_size), except FIN of the last layer on a
 * range with the head, which gives results.  A record's activation part
 * (offset 0) carries the residual and the modelled time between devices
 * (t_ns); a record received from the host is validated (-EINVAL: header,
 * selection, units or exponents out of range).
 */
#define WFW_XPHASE_ROUTE	1
#define WFW_XPHASE_UP		2
#define WFW_XPHASE_GLU		3
#define WFW_XPHASE_DOWN		4
#define WFW_XPHASE_FIN		5
#define WFW_XPHASE_SHIFT	24
#define WFW_JOB_LAYER_MASK	((1u << WFW_XPHASE_SHIFT) - 1)

/* Most routed experts a token selects (struct wfw_xrec_hdr). */
#define WFW_XREC_MAX_SEL	64

/**
 * struct wfw_xrec_hdr - expert-parallel state of one position (1.7)
 * @n_units: SwiGLU units of the selected experts (shared and routed)
 * @u0: first unit the shard that wrote the record computed (UP, DOWN)
 * @u1: one past its last (@u0 == @u1: none of its experts was selected)
 * @n_sel: routed experts selected (the layer's top-k)
 * @eh: exponent of h
 * @ea1: exponent of a1 (W1 h)
 * @ea3: exponent of a3 (W3 h)
 * @eu: exponent of u (GLU)
 * @ey: exponent of y
 * @reserved: zero
 * @expert: the selected routed experts, ascending
 * @gate: their gates in Q30 (<= 2^30)
 *
 * struct wfw_xrec is, each part 64-byte aligned: a struct wfw_act_rec,
 * this header, s16 h[dim], s64 a1[hidden], s64 a3[hidden], s16 u[hidden],
 * s64 y[dim] (offsets: WFW_XREC_*_OFF).
 */
struct wfw_xrec_hdr {
	u32 n_units;
	u32 u0;
	u32 u1;
	u32 n_sel;
	s32 eh;
	s32 ea1;
	s32 ea3;
	s32 eu;
	s32 ey;
	u32 reserved[7];
	u32 expert[WFW_XREC_MAX_SEL];
	u32 gate[WFW_XREC_MAX_SEL];
};

#define WFW_XREC_A64(x)		(((u32)(x) + 63u) & ~63u)
#define WFW_XREC_HDR_OFF(d)	WFW_ACT_REC_SIZE(d)
#define WFW_XREC_H_OFF(d)	(WFW_XREC_HDR_OFF(d) + \
				 WFW_XREC_A64(sizeof(struct wfw_xrec_hdr)))
#define WFW_XREC_A1_OFF(d)	(WFW_XREC_H_OFF(d) + WFW_XREC_A64(2u * (d)))
#define WFW_XREC_A3_OFF(d, h)	(WFW_XREC_A1_OFF(d) + WFW_XREC_A64(8u * (h)))
#define WFW_XREC_U_OFF(d, h)	(WFW_XREC_A3_OFF(d, h) + WFW_XREC_A64(8u * (h)))
#define WFW_XREC_Y_OFF(d, h)	(WFW_XREC_U_OFF(d, h) + WFW_XREC_A64(2u * (h)))
#define WFW_XREC_SIZE(d, h)	(WFW_XREC_Y_OFF(d, h) + WFW_XREC_A64(8u * (d)))

/**
 * struct wfw_cmd_load_model - payload of LOAD_MODEL
 * @addr: device address of the blob (the driver has validated it; it must
 *	not change until the command completes, or with WFW_LOAD_STREAM
 *	until the model is unloaded)
 * @len: blob bytes
 * @flags: WFW_LOAD_* (WFW_LOAD_STREAM; other bits: -EINVAL)
 * @layer_first: with @layer_count, the first layer to load, numbered as in
 *	the full model
 * @layer_count: layers to load; 0 (with @layer_first 0): every layer of
 *	the blob
 * @part: WFW_PART_* (1.5): the part of each layer to load; 0 (hosts before
 *	1.5): whole layers.  Above WFW_PART_MAX, or a part with
 *	WFW_LOAD_STREAM: -EINVAL
 * @expert_group: (1.6) routed experts per expert group: each MoE layer's
 *	routed experts, in groups of this many consecutive ones (the last
 *	group may be smaller), are placed across the stages (see below); 0
 *	(what hosts before 1.6 send): every expert lives with its layer,
 *	unless the layers do not fit so: then (1.6) the firmware places the
 *	experts in groups of one (of ceil(n_experts / 64)) as if asked, and
 *	logs it.  More than
 *	WFW_MAX_EXPERT_GROUPS groups in a layer, with WFW_LOAD_STREAM or an
 *	attention part: -EINVAL
 * @expert_first: (1.7) WFW_PART_XSHARD: the first routed expert of the
 *	shard; else zero
 * @expert_count: (1.7) WFW_PART_XSHARD: its routed experts, >= 1,
 *	@expert_first + @expert_count <= the model's routed experts; else
 *	zero.  XHOME and XSHARD need an MoE model and take no
 *	@expert_group (-EINVAL, a log line naming the field)
 * @reserved: must be zero
 *
 * Expert groups (1.6): a layer's stage keeps its section without the
 * routed experts (attention, norms, router, shared experts, RoPE table);
 * after the layers are placed, each group goes to the stage with the most
 * free SRAM (less the minimum KV the model's layers there need; ties: the
 * lowest stage), in layer then expert order, as a block named
 * "L<layer>.x<first>-<last>" in the SRAM map.  A group that fits no stage
 * fails the load with -ENOSPC (value = the group's bytes, result0 = its
 * layer, result1 = the largest free KiB) and a log line naming the layer
 * and experts.  Results are bit for bit those of local experts; the
 * timing model charges a dispatch and a combine hop per group on another
 * stage that a chunk uses (docs/TIMING.md).
 *
 * A device of a multi-device pipeline loads a contiguous layer range: of a
 * full blob or of a layer-range blob (one whose header has first_layer /
 * total_layers), the same range numbering either way.  The range must lie
 * inside the blob (-EINVAL and a log line otherwise; @layer_first without
 * @layer_count is -EINVAL).  A range starting at layer 0 holds the
 * embedding and its jobs take token ids; else they take activation
 * records (WFW_JOB_IN_ACT).  A range ending at the model's last layer
 * holds the final norm and classifier and its jobs give result records;
 * else activation records (WFW_JOB_OUT_ACT).  Placement, KV sizing and
 * -ENOSPC are per range (and part: an -ENOSPC log line names it).  A part
 * model holds the embedding only as an attention part of a range from
 * layer 0, the head only as an FFN part of a range to the last layer.
 * With WFW_LOAD_STREAM a layer needs SRAM only
 * for its KV and view; every used stage needs the two window slots (each
 * as large as the range's largest layer section) on top.
 *
 * Completion: status 0, -EBUSY (WFW_MAX_MODELS models are loaded or
 * loading: 1.10, each load queued behind the running one holds a slot),
 * -ECANCELED (1.10: dropped by LOAD_CANCEL before it started),
 * -ENOEXEC/-EINVAL/... (the blob failed validation), -ENOSPC (does not
 * fit: value = SRAM bytes the range needs in total, result0 = stages a
 * packed placement needs (0: one layer alone exceeds a stage), result1 =
 * SRAM KiB per stage available to it (the device's, less what the other
 * models hold and the minimum KV of those without a context), result2 =
 * SRAM KiB per stage the default placement needs; a log line says the
 * same and names the other models).  On success: model = the new model's
 * id, result0 = stages used, result1 = layers loaded, result2 = slots of
 * max context length that fit, value = SRAM bytes used by the model.
 */
struct wfw_cmd_load_model {
	u64 addr;
	u64 len;
	u32 flags;
	u32 layer_first;
	u32 layer_count;
	u32 part;
	u32 expert_group;
	u32 expert_first;
	u32 expert_count;
	u32 reserved;
};

/* Most expert groups per MoE layer (LOAD_MODEL expert_group, 1.6). */
#define WFW_MAX_EXPERT_GROUPS	64

/*
 * UNLOAD_MODEL flags (1.4).  WFW_UNLOAD_CONTEXTS: first destroy the
 * model's contexts, each after its in-flight jobs completed (as
 * DESTROY_CONTEXT does); without it the unload is -EBUSY while the model
 * has a context.
 */
#define WFW_UNLOAD_CONTEXTS	WFW_BIT(0)
#define WFW_UNLOAD_FLAGS_ALL	WFW_UNLOAD_CONTEXTS

/**
 * struct wfw_cmd_unload - payload of UNLOAD_MODEL (the model: struct
 *	wfw_cmd.model)
 * @flags: WFW_UNLOAD_* (other bits: -EINVAL); 0 before 1.3
 * @reserved: must be zero
 *
 * Completion: status 0, -ENOENT (no such model), -EINVAL (model 0 with
 * several loaded), -EBUSY (the model has contexts, without
 * WFW_UNLOAD_CONTEXTS); result0 = contexts destroyed, model = its id.
 */
struct wfw_cmd_unload {
	u32 flags;
	u32 reserved[11];
};

/* CREATE_CONTEXT flags: none defined yet (int8 KV is a model property). */
#define WFW_CTX_FLAGS_ALL	0u

/**
 * struct wfw_cmd_context - payload of CREATE_CONTEXT and DESTROY_CONTEXT
 * @ctx_id: DESTROY: the context; CREATE: must be zero
 * @slots: CREATE: sequence slots (>= 1); DESTROY: zero
 * @ctx_len: CREATE: positions per slot, 1..model max; DESTROY: zero
 * @flags: WFW_CTX_* (none defined: must be zero)
 * @tenant: CREATE (1.8): the host's name for whoever owns the context (a
 *	driver: the open file; 0 from a host that does not say); contexts of one tenant share a modelled
 *	timeline, and one tenant's times never move another's (wfs_timing.h,
 *	"Tenants"); DESTROY: zero
 * @reserved: must be zero
 *
 * CREATE makes a context of the model struct wfw_cmd.model names.
 * CREATE completion: result0 = the new context id, value = KV bytes
 * allocated, model = its model's id; -ENOENT (no such model), -E2BIG (ctx_len above the model's
 * maximum), -ENOSPC (KV does not fit: value = bytes of the first
 * allocation that failed, result0 = its stage), -EMFILE (context table
 * full).  DESTROY waits until the
 * context's in-flight jobs have completed, then frees it; -ENOENT for an
 * unknown id.
 */
struct wfw_cmd_context {
	u32 ctx_id;
	u32 slots;
	u32 ctx_len;
	u32 flags;
	u64 tenant;
	u32 reserved[6];
};

/* RUN_JOB flags */
#define WFW_JOB_ALL_POSITIONS	WFW_BIT(0)	/* a record per position */
#define WFW_JOB_IN_ACT		WFW_BIT(1)	/* activation records in */
#define WFW_JOB_OUT_ACT		WFW_BIT(2)	/* activation records out */
#define WFW_JOB_NOP		WFW_BIT(3)	/* no work: completed at intake */
#define WFW_JOB_TIMES		WFW_BIT(4)	/* struct wfw_chunk_time out */
/* Bit 5 stays unused: the uapi's driver-only WAIT_SUBMIT (wfw_uapi_ties.h). */
#define WFW_JOB_NOT_BEFORE	WFW_BIT(6)	/* a u64 floor after the tokens */
/* Bit 7 stays unused: the uapi's driver-only DONE_NS (wfw_uapi_ties.h). */
#define WFW_JOB_LAYER		WFW_BIT(8)	/* a u32 layer after the input */
/* Latest NOT_BEFORE floor (146 years): the clock cannot wrap past it. */
#define WFW_NOT_BEFORE_MAX	(1ull << 62)
#define WFW_JOB_FLAGS_KNOWN	(WFW_JOB_ALL_POSITIONS | WFW_JOB_IN_ACT | \
				 WFW_JOB_OUT_ACT | WFW_JOB_NOP | WFW_JOB_TIMES | \
				 WFW_JOB_NOT_BEFORE | WFW_JOB_LAYER)
#define WFW_JOB_FLAGS_SUPPORTED	WFW_JOB_FLAGS_KNOWN

/* Largest top-k a job may ask for. */
#define WFW_MAX_TOPK		32

/**
 * struct wfw_cmd_run_job - payload of RUN_JOB
 * @ctx_id: context (from CREATE_CONTEXT)
 * @slot: sequence slot in the context, < its slots
 * @start_pos: position of the first token; start_pos + n_tokens must not
 *	exceed the context length.  Positions before start_pos must have been
 *	filled by earlier jobs on the same slot (the KV cache is not checked).
 *	It may be earlier than the end of the slot's last job: the positions
 *	run are rewritten (attention at a position reads only positions up
 *	to it), which is how speculative decoding drops rejected tokens.
 * @n_tokens: tokens to run, >= 1
 * @in_addr: device address of n_tokens u32 token ids, each < vocab; with
 *	WFW_JOB_IN_ACT of n_tokens activation records (struct wfw_act_rec)
 * @out_addr: device address of the output (struct wfw_out_rec records;
 *	with WFW_JOB_OUT_ACT, n_tokens struct wfw_act_rec)
 * @out_len: bytes at @out_addr; at least records * WFW_OUT_REC_SIZE(@topk)
 *	where records = n_tokens with WFW_JOB_ALL_POSITIONS, else 1 (the last
 *	position); with WFW_JOB_OUT_ACT n_tokens * WFW_ACT_REC_SIZE(dim)
 * @topk: (token, logit) pairs per record, 0..WFW_MAX_TOPK; 0 with
 *	WFW_JOB_OUT_ACT
 * @flags: WFW_JOB_*; unknown bits -EINVAL.  IN_ACT is required iff the
 *	loaded range has no embedding, OUT_ACT iff it has no head, and
 *	ALL_POSITIONS goes only with result records (-EINVAL otherwise).
 *	NOP: no work; the job completes at intake (status 0, results 0,
 *	device_ns 0, no stage or buffer touched); @n_tokens, @start_pos,
 *	@topk, @in_addr, @out_addr, @out_len and other flags must be zero.
 *	TIMES: the stages write a struct wfw_chunk_time per chunk and stage
 *	at @out_addr + @times_offset (see there).
 *	NOT_BEFORE (token input only: -EINVAL with IN_ACT): the input holds,
 *	right after the n_tokens token ids (at @in_addr + 4 * n_tokens, any
 *	alignment), a u64 modelled time on the device's timeline before which
 *	the job is not ready: its ready time is the later of this floor and
 *	the slot's rule ("Timeline" in wfs_timing.h), the floor standing in
 *	for the idle device's clock; a floor above
 *	WFW_NOT_BEFORE_MAX fails the job with -EINVAL.  A host that runs a
 *	model over several devices gives the first device's job the time the
 *	previous token of the slot left the last device, which the first
 *	device cannot know.
 *	LAYER (1.5; required by a part model, -EINVAL for a whole-layer one):
 *	the job runs one layer's part (WFW_PART_*): a u32 layer number, in
 *	the full model's numbering and inside the loaded range (-EINVAL
 *	otherwise), follows the input (at @in_addr + the n_tokens ids or
 *	records, + 8 with NOT_BEFORE).  The chunks pass the stages in order
 *	as ever; the stage holding the layer runs its part, the others only
 *	forward them.  Token ids go in (no IN_ACT) only for the attention of
 *	layer 0 on a range holding the embedding, results come out (no
 *	OUT_ACT) only from the FFN of the last layer on one holding the
 *	head; every other part job is IN_ACT and OUT_ACT
 * @times_offset: with WFW_JOB_TIMES: 8-byte aligned, at or past the end
 *	of the records; @times_offset + @times_len <= @out_len; else zero
 * @times_len: with WFW_JOB_TIMES: at least chunks * stages used records
 *	(-EINVAL otherwise); else zero
 *
 * Jobs run in submission order per stage, so jobs of one slot may be
 * queued back to back (the second sees the KV the first wrote).  Jobs of
 * different slots and contexts overlap in the pipeline.
 *
 * Completion: status 0 or -errno; result0 = tokens run, result1 = records
 * written, result2 = pipeline chunks; device_ns = modelled latency from the
 * job entering stage 0 to its last result leaving the last stage; value =
 * modelled device timestamp (ns) of that moment.  A token id >= vocab
 * fails the job with -EINVAL: if detected before the job enters the
 * pipeline (the firmware scans the input first), nothing ran; if the input
 * changed while the job ran, KV of the positions already run is updated.
 * An activation record whose header or values are out of range (see
 * struct wfw_act_rec) fails the job with -EINVAL the same way (records
 * are checked as the first stage takes them).
 */
struct wfw_cmd_run_job {
	u32 ctx_id;
	u32 slot;
	u32 start_pos;
	u32 n_tokens;
	u64 in_addr;
	u64 out_addr;
	u32 out_len;
	u16 topk;
	u16 flags;
	u32 times_offset;
	u32 times_len;
};

/* RESET flags (retired command form): none were defined. */
#define WFW_RESET_FLAGS_ALL	0u

/**
 * struct wfw_cmd_reset - payload of the retired RESET command
 * @flags: was: must be zero
 * @reserved: was: must be zero
 *
 * Kept so the payload union keeps its layout.  Opcode 7 now completes with
 * -EOPNOTSUPP and changes nothing; the register reset (WFW_CTRL_RESET /
 * wfs_device_reset()) is the one way to reset a device.
 */
struct wfw_cmd_reset {
	u32 flags;
	u32 reserved[11];
};

/**
 * enum wfw_fault - faults FAULT_INJECT can arm (one-shot each)
 * @WFW_FAULT_NONE: disarm all faults
 * @WFW_FAULT_HANG_NEXT_JOB: the next RUN_JOB stalls stage 0 for good: it and
 *	every job behind it never complete until a reset
 * @WFW_FAULT_DROP_NEXT_CPL: the next RUN_JOB completion is not posted
 * @WFW_FAULT_CORRUPT_NEXT_CPL: the next RUN_JOB completion is posted with
 *	its cookie and status scrambled and a wrong check value
 * @WFW_FAULT_STALL_CP: the command processor stops (no heartbeat, no
 *	commands) until a reset, as a firmware that died while idle
 * @WFW_FAULT_PAUSE_NEXT_LOAD: the next LOAD_MODEL maps its blob, then waits
 *	until a reset begins (or, 1.9, a FAULT_INJECT of WFW_FAULT_NONE)
 *	before it reads the blob: a firmware still reading a command's
 *	buffer after the host gave up on the command, or a load in progress
 *	while other control commands run
 * @WFW_FAULT_PAUSE_NEXT_COPY: (1.10) the next LOAD_MODEL is checked,
 *	placed and copies its first stage's share, then waits as
 *	@WFW_FAULT_PAUSE_NEXT_LOAD does before it copies the rest
 * @WFW_FAULT_COUNT: number of fault kinds
 */
enum wfw_fault {
	WFW_FAULT_NONE = 0,
	WFW_FAULT_HANG_NEXT_JOB = 1,
	WFW_FAULT_DROP_NEXT_CPL = 2,
	WFW_FAULT_CORRUPT_NEXT_CPL = 3,
	WFW_FAULT_STALL_CP = 4,
	WFW_FAULT_PAUSE_NEXT_LOAD = 5,
	WFW_FAULT_PAUSE_NEXT_COPY = 6,
	WFW_FAULT_COUNT
};

/**
 * struct wfw_cmd_fault - payload of FAULT_INJECT (test only)
 * @fault: enum wfw_fault
 * @reserved: must be zero
 *
 * -EPERM unless the device was created with fault injection allowed.
 */
struct wfw_cmd_fault {
	u32 fault;
	u32 reserved[11];
};

/**
 * struct wfw_cmd_load_cancel - payload of LOAD_CANCEL (1.10)
 * @cookie: the cookie of the LOAD_MODEL to drop
 * @reserved: must be zero
 *
 * A LOAD_MODEL still waiting behind the running load is dropped: it
 * completes with -ECANCELED (before the LOAD_CANCEL does), its model slot
 * free again and its blob no longer read.  Completion: status 0, -ENOENT
 * (no such load waits: it completed already), -EBUSY (the load runs; its
 * own completion follows when it ends).
 */
struct wfw_cmd_load_cancel {
	u64 cookie;
	u32 reserved[10];
};

/**
 * struct wfw_cmd - a command descriptor (64 bytes) in the command ring
 * @opcode: enum wfw_opcode; unknown opcodes complete with -EOPNOTSUPP
 * @flags: must be zero (per-command flags live in the payload)
 * @model: the model the command is for (see WFW_MAX_MODELS); 0: the only
 *	model; must be 0 for commands about no model
 * @cookie: opaque to the device; copied to the completion
 * @buf: payload of GET_INFO, GET_STATS, GET_SRAM_MAP, READ_LOG,
 *	GET_EXPERT_LOAD
 * @load: payload of LOAD_MODEL
 * @unload: payload of UNLOAD_MODEL
 * @ctx: payload of CREATE_CONTEXT, DESTROY_CONTEXT
 * @job: payload of RUN_JOB
 * @reset: payload of the retired RESET command
 * @fault: payload of FAULT_INJECT
 * @raw: the payload as bytes; NOP needs it all zero
 */
struct wfw_cmd {
	u16 opcode;
	u16 flags;
	u32 model;
	u64 cookie;
	union {
		struct wfw_cmd_buf buf;
		struct wfw_cmd_load_model load;
		struct wfw_cmd_unload unload;
		struct wfw_cmd_context ctx;
		struct wfw_cmd_run_job job;
		struct wfw_cmd_reset reset;
		struct wfw_cmd_fault fault;
		struct wfw_cmd_load_cancel cancel;
		u8 raw[48];
	};
};

/* -------------------------------------------------------- completions -- */

/* struct wfw_cpl.flags */
#define WFW_CPL_F_VALID		WFW_BIT(0)	/* always set by the device */

/**
 * struct wfw_cpl - a completion record (64 bytes) in the completion ring
 * @cookie: the command's cookie
 * @status: 0 on success, else a negative Linux errno
 * @opcode: the command's opcode
 * @flags: WFW_CPL_F_*
 * @seq: completion sequence number: 1 for the first completion after the
 *	device was created or reset, then +1 per completion posted (a gap
 *	means a completion was dropped)
 * @result0: command-specific (see each payload's description)
 * @result1: command-specific
 * @result2: command-specific
 * @value: command-specific 64-bit value
 * @device_ns: modelled device time the command took (RUN_JOB: latency)
 * @host_ns: host time the firmware spent on the command
 * @model: the id of the model the command was for (LOAD_MODEL: the new
 *	model; UNLOAD_MODEL, CREATE_CONTEXT, GET_INFO: the one named); else 0
 * @check: wfw_cpl_check() of the other fields; a driver that finds a
 *	mismatch must not trust any field of the record
 */
struct wfw_cpl {
	u64 cookie;
	s32 status;
	u16 opcode;
	u16 flags;
	u32 seq;
	u32 result0;
	u32 result1;
	u32 result2;
	u64 value;
	u64 device_ns;
	u64 host_ns;
	u32 model;
	u32 check;
};

/**
 * wfw_cpl_check() - integrity value of a completion record
 * @c: the record
 *
 * FNV-1a over the 60 bytes before @check.
 *
 * Return: the value @c->check must hold.
 */
static inline u32 wfw_cpl_check(const struct wfw_cpl *c)
{
	const u8 *p = (const u8 *)c;
	u32 h = 2166136261u;
	unsigned int i;

	for (i = 0; i < 60; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

/* -------------------------------------------------- job output records -- */

/**
 * struct wfw_topk_pair - one top-k entry
 * @token: token id
 * @logit: its logit, signed fixed point with WFW_LOGIT_FRAC_BITS fraction
 *	bits as computed by the firmware's classifier
 */
struct wfw_topk_pair {
	u32 token;
	s32 logit;
};

/**
 * struct wfw_out_rec - RUN_JOB result for one position
 * @pos: the position
 * @argmax: the most likely next token
 * @argmax_logit: its logit (same fixed point as the pairs)
 * @k: pairs that follow (the job's topk)
 * @topk: the k most likely tokens, best first
 *
 * Records are packed back to back, each WFW_OUT_REC_SIZE(k) bytes.
 */
struct wfw_out_rec {
	u32 pos;
	u32 argmax;
	s32 argmax_logit;
	u32 k;
	struct wfw_topk_pair topk[];
};

#define WFW_OUT_REC_SIZE(k)	(16u + 8u * (u32)(k))

/* struct wfw_chunk_time.flags */
#define WFW_CHUNK_VALID		WFW_BIT(0)	/* written by the device */
#define WFW_CHUNK_LINK		WFW_BIT(1)	/* the hop out is the device link */

/**
 * struct wfw_chunk_time - WFW_JOB_TIMES: one chunk on one stage
 * @stage: the stage
 * @pos0: the chunk's first position
 * @n: its tokens
 * @flags: WFW_CHUNK_*
 * @start_ns: modelled time the stage starts it (wfs_timing.h's start(s))
 * @end_ns: ... and is done with it (end(s))
 * @hop_end_ns: ... and it reaches the next stage, device or the host
 *
 * Record (chunk index * stages used + stage) from @times_offset; the
 * chunk index counts chunk_tokens from the job's start_pos.
 */
struct wfw_chunk_time {
	u32 stage;
	u32 pos0;
	u32 n;
	u32 flags;
	u64 start_ns;
	u64 end_ns;
	u64 hop_end_ns;
};

/* Activation values are 30-bit: |x[i]| <= this. */
#define WFW_ACT_VALUE_MAX	(1 << 30)
/* |exp| <= this. */
#define WFW_ACT_EXP_MAX		(1 << 20)

/**
 * struct wfw_act_rec - one position's activations between layer ranges
 * @dim: values that follow: the model's width
 * @exp: power-of-two exponent of every value, |exp| <= WFW_ACT_EXP_MAX
 * @t_ns: modelled time the record reaches the next device (the producing
 *	stage's finish plus the inter-device link, wfs_timing.h) on the
 *	timeline the devices of one pipeline share; 0 when the host made it
 * @x: the residual stream after the range's last layer, value
 *	x[i] * 2^exp, |x[i]| <= WFW_ACT_VALUE_MAX
 *
 * Exactly the record the stages of one device pass each other, so running
 * a model as N layer ranges changes no bit of its results.  Records are
 * packed back to back, each WFW_ACT_REC_SIZE(dim) bytes (zero padded),
 * one per position from start_pos.
 */
struct wfw_act_rec {
	u32 dim;
	s32 exp;
	u64 t_ns;
	s32 x[];
};

#define WFW_ACT_REC_SIZE(dim)	((16u + 4u * (u32)(dim) + 63u) & ~63u)

/* ---------------------------------------------------- GET_INFO result -- */

/* struct wfw_info.caps */
#define WFW_CAP_ALL_POSITIONS	WFW_BIT(0)	/* WFW_JOB_ALL_POSITIONS */
#define WFW_CAP_FAULT_INJECT	WFW_BIT(1)	/* FAULT_INJECT allowed */
#define WFW_CAP_CMD_RESET	WFW_BIT(2)	/* retired RESET command: never set */

/**
 * struct wfw_info - device description written by GET_INFO (256 bytes)
 * @abi_version: WFW_ABI_VERSION
 * @info_size: sizeof(struct wfw_info) of this firmware
 * @fw_version: WFW_FW_VERSION
 * @profile: enum wfs_profile_id
 * @profile_name: NUL-terminated profile name
 * @num_stages: pipeline stages
 * @fifo_depth: FIFO entries in front of each stage
 * @sram_bytes: SRAM per stage
 * @clock_hz: stage clock
 * @macs_per_cycle: MACs per cycle per stage
 * @sram_bytes_per_cycle: SRAM bandwidth per stage
 * @fabric_bytes_per_cycle: stage-to-stage link bandwidth
 * @hop_cycles: fabric hop latency
 * @chunk_tokens: tokens per pipeline transfer
 * @max_topk: WFW_MAX_TOPK
 * @max_jobs: jobs the device holds in flight at most
 * @max_contexts: contexts that can exist at once
 * @caps: WFW_CAP_*
 * @model_loaded: 1 if a model is loaded
 * @dim: the described model's width (0 without a model; same for the
 *	fields below up to @stages_used, and @kv_bytes_per_pos, @layer_first
 *	to @moe_imbalance_milli, @model_id): the model GET_INFO named, or
 *	with model 0 the lowest-index one
 * @hidden_dim: feed-forward width
 * @n_layers: layers loaded on this device (its layer range)
 * @n_heads: attention heads
 * @n_kv_heads: key/value heads
 * @vocab: vocabulary size
 * @max_ctx: longest context the model supports
 * @stages_used: stages holding model layers
 * @contexts: contexts that exist
 * @max_slots_at_max_ctx: further slots of @max_ctx positions that fit now
 * @kv_bytes_per_pos: KV bytes one position of one slot takes, summed over
 *	all layers (capacity planning: slots * ctx_len * this, roughly)
 * @sram_used: SRAM bytes in use, all stages
 * @sram_free_min: free SRAM of the fullest stage
 * @jobs_completed: RUN_JOBs completed since create
 * @tokens: tokens run since create
 * @modelled_makespan_ns: modelled device time from the first job to the
 *	last completion (idle gaps between jobs included only when a later
 *	job had to wait for an earlier one on the same slot)
 * @modelled_tokens_per_s: tokens / modelled_makespan_ns * 1e9
 * @bottleneck_busy_ns: modelled busy time of the busiest stage
 * @link_bytes_per_cycle: inter-device link bandwidth (multi-device
 *	pipelines)
 * @link_hop_cycles: inter-device link latency
 * @layer_first: the range's first layer, in the full model's numbering
 * @total_layers: layers of the full model
 * @act_rec_size: bytes of one activation record (WFW_ACT_REC_SIZE(dim))
 * @model_flags: WFW_MODEL_*: what the range's jobs take and give
 * @moe_layers: MoE layers loaded (0: none, or no model)
 * @moe_imbalance_milli: expert load imbalance of the most imbalanced MoE
 *	layer: 1000 * the busiest routed expert's tokens / the mean over the
 *	layer's routed experts (1000: balanced; n_experts * 1000 / top-k at
 *	worst); 0 before any token ran an MoE layer
 * @stream_bytes_per_cycle: bandwidth from the external weight store
 *	(weight streaming; 0: the profile has none, streaming costs no time)
 * @stream_latency_cycles: latency of one layer's read from that store
 * @stream_passes: weight streaming: passes over the stages' layers since
 *	create, summed over the stages (each pass reads every layer of its
 *	stage once, for up to fifo_depth + 1 chunks)
 * @model_id: the described model's id (0: none)
 * @models: models loaded (1.3; up to WFW_MAX_MODELS)
 */
struct wfw_info {
	u32 abi_version;
	u32 info_size;
	u32 fw_version;
	u32 profile;
	char profile_name[16];
	u32 num_stages;
	u32 fifo_depth;
	u64 sram_bytes;
	u64 clock_hz;
	u32 macs_per_cycle;
	u32 sram_bytes_per_cycle;
	u32 fabric_bytes_per_cycle;
	u32 hop_cycles;
	u32 chunk_tokens;
	u32 max_topk;
	u32 max_jobs;
	u32 max_contexts;
	u32 caps;
	u32 model_loaded;
	u32 dim;
	u32 hidden_dim;
	u32 n_layers;
	u32 n_heads;
	u32 n_kv_heads;
	u32 vocab;
	u32 max_ctx;
	u32 stages_used;
	u32 contexts;
	u32 max_slots_at_max_ctx;
	u64 kv_bytes_per_pos;
	u64 sram_used;
	u64 sram_free_min;
	u64 jobs_completed;
	u64 tokens;
	u64 modelled_makespan_ns;
	u64 modelled_tokens_per_s;
	u64 bottleneck_busy_ns;
	u32 link_bytes_per_cycle;
	u32 link_hop_cycles;
	u32 layer_first;
	u32 total_layers;
	u32 act_rec_size;
	u32 model_flags;
	u32 moe_layers;
	u32 moe_imbalance_milli;
	u32 stream_bytes_per_cycle;
	u32 stream_latency_cycles;
	u64 stream_passes;
	u32 model_id;
	u32 models;
};

/* struct wfw_info.model_flags */
#define WFW_MODEL_EMBED		WFW_BIT(0)	/* jobs take token ids */
#define WFW_MODEL_HEAD		WFW_BIT(1)	/* jobs give result records */
#define WFW_MODEL_STREAM	WFW_BIT(2)	/* weights stream from host */
#define WFW_MODEL_ATTN		WFW_BIT(3)	/* attention parts (1.5) */
#define WFW_MODEL_FFN		WFW_BIT(4)	/* FFN parts (1.5) */
#define WFW_MODEL_XHOME		WFW_BIT(5)	/* expert-parallel home (1.7) */
#define WFW_MODEL_XSHARD	WFW_BIT(6)	/* expert shard (1.7) */

/* --------------------------------------------------- GET_STATS result -- */

/* struct wfw_stage_stats.flags */
#define WFW_STAGE_EMBED		WFW_BIT(0)	/* holds the token embedding */
#define WFW_STAGE_HEAD		WFW_BIT(1)	/* holds final norm + classifier */

/**
 * struct wfw_stage_stats - one stage's counters (GET_STATS writes an array;
 *	completion result0 = entries written, result1 = stages)
 * @stage: stage index
 * @flags: WFW_STAGE_*
 * @first_layer: first model layer on the stage
 * @n_layers: layers on the stage (0: unused)
 * @sram_size: SRAM capacity
 * @sram_used: SRAM in use
 * @sram_peak: high-water mark of @sram_used
 * @sram_blocks: named allocations
 * @fifo_hw: high-water mark of the stage's input FIFO
 * @chunks: pipeline chunks processed
 * @tokens: tokens processed
 * @jobs: distinct jobs that finished on this stage
 * @host_busy_ns: host time spent processing
 * @modelled_busy_ns: modelled device time spent processing
 * @reserved: zero
 */
struct wfw_stage_stats {
	u32 stage;
	u32 flags;
	u32 first_layer;
	u32 n_layers;
	u64 sram_size;
	u64 sram_used;
	u64 sram_peak;
	u32 sram_blocks;
	u32 fifo_hw;
	u64 chunks;
	u64 tokens;
	u64 jobs;
	u64 host_busy_ns;
	u64 modelled_busy_ns;
	u64 reserved[3];
};

/* ------------------------------------------------ GET_SRAM_MAP result -- */

/**
 * struct wfw_sram_entry - one named SRAM allocation (GET_SRAM_MAP writes an
 *	array for one stage; result0 = entries written, result1 = entries on
 *	the stage, value = bytes used; with a model named, only that model's
 *	blocks and its contexts' count; names of the blocks of a model of
 *	index i > 0 begin "m<i>.")
 * @offset: offset in the stage's SRAM
 * @size: bytes reserved
 * @requested: bytes asked for
 * @name: NUL-terminated name ("L3.weights", "ctx2.kv", "fifo", ...)
 */
struct wfw_sram_entry {
	u64 offset;
	u64 size;
	u64 requested;
	char name[24];
};

/* ---------------------------------------------- GET_EXPERT_LOAD result -- */

/* struct wfw_expert_load.flags */
#define WFW_EXPERT_SHARED	WFW_BIT(0)	/* a shared expert: every token */
/*
 * 1.6: a routed expert of an expert group placed on its own (LOAD_MODEL
 * expert_group); WFW_EXPERT_STAGE(flags) is the stage that holds it.
 */
#define WFW_EXPERT_GROUP	WFW_BIT(1)
#define WFW_EXPERT_STAGE_SHIFT	16
#define WFW_EXPERT_STAGE(f)	(((u32)(f) >> WFW_EXPERT_STAGE_SHIFT) & 0xff)

/**
 * struct wfw_expert_load - tokens one expert of one loaded MoE layer ran
 *	since the model was loaded (GET_EXPERT_LOAD writes an array from
 *	entry index: each MoE layer in order, its shared experts then its
 *	routed ones; completion result0 = entries written, result1 = entries
 *	in all, result2 = MoE layers loaded)
 * @layer: the layer, in the full model's numbering
 * @expert: a routed expert's router index (0..n_experts - 1), or a shared
 *	expert's index (0..n_shared - 1)
 * @flags: WFW_EXPERT_*; with WFW_EXPERT_GROUP (1.6) bits 16-23 name the
 *	stage holding the expert's group (WFW_EXPERT_STAGE())
 * @top_k: routed experts each token of the layer runs (n_experts_active);
 *	a layer's routed entries sum to its tokens * @top_k
 * @tokens: tokens routed to the expert (shared: every token of the layer)
 *
 * Routing is integer arithmetic on the device, so the same jobs give the
 * same counts on every backend.  An unload or full reset clears them.
 */
struct wfw_expert_load {
	u32 layer;
	u32 expert;
	u32 flags;
	u32 top_k;
	u64 tokens;
};

/*
 * READ_LOG: copies log text starting at absolute byte position pos (or
 * the oldest retained byte, if pos is older) into the buffer.  Completion:
 * result0 = bytes written, result1 = bytes skipped because they were
 * overwritten, value = the position to pass next time.  Lines end in '\n'.
 */

/* Logit fixed point of struct wfw_topk_pair (Q16.16). */
#define WFW_LOGIT_FRAC_BITS	16

WFS_STATIC_ASSERT(sizeof(struct wfw_cmd_buf) == 48, "wfw_cmd_buf size");
WFS_STATIC_ASSERT(sizeof(struct wfw_cmd_load_model) == 48, "load size");
WFS_STATIC_ASSERT(sizeof(struct wfw_cmd_unload) == 48, "unload size");
WFS_STATIC_ASSERT(sizeof(struct wfw_cmd_context) == 48, "context size");
WFS_STATIC_ASSERT(sizeof(struct wfw_cmd_run_job) == 48, "run_job size");
WFS_STATIC_ASSERT(sizeof(struct wfw_cmd_reset) == 48, "reset size");
WFS_STATIC_ASSERT(sizeof(struct wfw_cmd_fault) == 48, "fault size");
WFS_STATIC_ASSERT(sizeof(struct wfw_cmd) == 64, "wfw_cmd size");
WFS_STATIC_ASSERT(sizeof(struct wfw_cpl) == 64, "wfw_cpl size");
WFS_STATIC_ASSERT(sizeof(struct wfw_out_rec) == 16, "wfw_out_rec size");
WFS_STATIC_ASSERT(sizeof(struct wfw_chunk_time) == 40, "chunk time size");
WFS_STATIC_ASSERT(sizeof(struct wfw_info) == 256, "wfw_info size");
WFS_STATIC_ASSERT(sizeof(struct wfw_stage_stats) == 112, "stats size");
WFS_STATIC_ASSERT(sizeof(struct wfw_sram_entry) == 48, "sram entry size");
WFS_STATIC_ASSERT(sizeof(struct wfw_expert_load) == 24, "expert load size");

#endif /* WFW_ABI_H */
