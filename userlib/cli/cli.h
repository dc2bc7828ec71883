/* SPDX-License-Identifier: MIT */
/* wafer CLI: the subcommands, one file each. */
#ifndef CLI_H
#define CLI_H

#include <stdio.h>

#include "wafer.h"

int cli_cmd_list(int argc, char **argv);
int cli_cmd_info(int argc, char **argv);
int cli_cmd_run(int argc, char **argv);

struct cli_srv_template;
/**
 * struct cli_chat - wafer run -m chat (cli_run_chat.c)
 * @on: -m chat
 * @system: -y SYSTEM (NULL: none)
 * @tmpl: --chat-template, parsed (NULL: story, wafer serve's default)
 * @single_turn: --single-turn: answer -i, read nothing from stdin
 */
struct cli_chat {
	int on;
	const char *system;
	struct cli_srv_template *tmpl;
	int single_turn;
};

/* --chat-template @src into @c; 0, or 2 with the reason on stderr. */
int cli_chat_template(struct cli_chat *c, const char *src);
void cli_chat_free(struct cli_chat *c);
/*
 * The conversation on slot @go->slot of @ctx, @prompt (NULL: none) its
 * first user turn, sampled as @go says (@go->steps resolved); 0, or 1 said.
 */
int cli_run_chat(struct wafer_ctx *ctx, const struct wafer_tokenizer *tok, const char *prompt,
		 const struct cli_chat *c, const struct wafer_gen_opts *go);
int cli_cmd_bench(int argc, char **argv);
/* wafer bench --link, --link-serve, --link-loopback (cli_bench_link.c). */
int cli_bench_link(int argc, char **argv);
int cli_cmd_top(int argc, char **argv);
int cli_cmd_plan(int argc, char **argv);
/* wafer_plan()'s error with each option field said as its flag (the shape's too if @custom). */
const char *cli_plan_error(const char *msg, int custom);
/*
 * wafer plan --link-profile: a built-in host link by name, or one read
 * from a JSON file ({"latency_ns": N, "bytes_per_s": N[, "name": S]}) into
 * @out; 0, or -1 with a message naming the file and field.
 */
int cli_plan_link(const char *arg, struct wafer_plan_link *out);
/* wafer plan --trace FILE: wafer_plan() traced to @path; 0, or 1 said on stderr. */
int cli_plan_traced(const struct wafer_plan_shape *s, struct wafer_plan_opts *o,
		    struct wafer_plan *p, const char *path);
int cli_cmd_serve(int argc, char **argv);
int cli_cmd_convert(int argc, char **argv);
int cli_cmd_node(int argc, char **argv);

/*
 * cli_opts.c: "wafer CMD: bad value 'ARG' for FLAG; allowed: ALLOWED" on
 * stderr, FLAG spelt as typed (found in @argv from getopt's @optind after
 * the option); returns 2 (the usage-error exit status).
 */
int cli_bad_value(const char *cmd, char **argv, int optind, const char *arg,
		  const char *allowed);

/* cli_devices_json.c: wafer list/info --json (json-c objects; print frees). */
struct json_object;
struct json_object *cli_json_desc(const struct wafer_device_desc *d);
struct json_object *cli_json_info(const struct wafer_info *i, const char *backend);
void cli_json_print(struct json_object *obj);

/* Parses a device index 0..4095; returns 0 or -1. */
int cli_parse_index(const char *s, int *out);
/* A decimal number in [@lo, @hi] (no sign, nothing after it): 0, else -1. */
/* "E,TOPK[,SHARED]" (top-k <= E) into @o; 0 or -1. */
int cli_parse_moe(const char *s, struct wafer_moe_opts *o);
/* "softmax", "sigmoid" or "unit" into @o->gate; 0 or -1. */
int cli_parse_gate(const char *s, struct wafer_moe_opts *o);
/* The model's FFN kind: which layers have experts, how many, the gate. */
void cli_print_moe(const struct wafer_model_info *mi, FILE *f);
/* What an on-the-fly upcycling @o does to the model, when it is not the dense one. */
void cli_moe_note(const struct wafer_moe_opts *o, FILE *f);
/* --expert-group G: routed experts per group, 1..512; 0 or -1. */
int cli_parse_expert_group(const char *s, unsigned int *out);
/* "auto", "on" or "off" into enum wafer_stream; 0 or -1. */
int cli_parse_stream(const char *s, int *out);
/* Where the model's weights are: in SRAM, or streamed (and why). */
void cli_print_stream(const struct wafer_model_info *mi, FILE *f);
int cli_parse_uint(const char *s, unsigned int lo, unsigned int hi, unsigned int *out);

/**
 * struct cli_experts - a snapshot of wafer_dev_expert_load_model()
 * @e: the entries (malloc'd)
 * @n: their count (0: no MoE layer)
 */
struct cli_experts {
	struct wafer_expert_load *e;
	unsigned int n;
};

/*
 * Take a snapshot of model @m (wafer_model_expert_load()), or where @m is
 * NULL of the device's @nth model (wafer_dev_expert_load_model(): every
 * model of a device in turn); returns its entries or a negative errno
 * (-ENOENT: no @nth model).
 */
int cli_experts_take(struct wafer_dev *dev, const struct wafer_model *m, unsigned int nth,
		     struct cli_experts *s);
void cli_experts_free(struct cli_experts *s);
/* @d = @cur's tokens since @prev (NULL, or another table: all); 0 or -ENOMEM. */
int cli_experts_since(const struct cli_experts *prev, const struct cli_experts *cur,
		      struct cli_experts *d);
/* Per layer "max/mean" of @cur's tokens since @prev (NULL: all), space separated. */
void cli_experts_imbalance(const struct cli_experts *prev, const struct cli_experts *cur,
			   char *out, size_t len);
/* The table, in the driver's debugfs format (accel/wafer.M/experts). */
void cli_experts_print(const struct cli_experts *s, FILE *f);
void cli_experts_print_stages(const struct cli_experts *s, FILE *f);
/* Parses "kernel" / "inproc"; returns 0 or -1. */
int cli_parse_backend(const char *s, enum wafer_backend *out);
/*
 * Parses a list of numbers in [lo, hi]: "3", "0-4", "0,2,3", "0-1,4"; at
 * most @max into @out.  Returns the count, or -1.
 */
int cli_parse_list(const char *s, unsigned int lo, unsigned int hi, unsigned int *out,
		   unsigned int max);

/**
 * struct cli_devices - the devices a command runs on (-d, --split)
 * @base: options of every device (backend, submit path, profile...)
 * @n: devices listed with -d (0: none, the default device)
 * @index: their indices (the kernel's accelN; inproc: only the count counts)
 * @n_split: layer counts given with --split (0: automatic)
 * @split: those counts
 * @afd: --afd A:F: attention devices ([0]) and FFN devices ([1]); 0: none
 * @afd_index: their indices (in process: only the counts count)
 * @afd_profile: --afd-profiles PA:PF: each group's profile (NULL: @base's)
 * @afd_buf: the storage of @afd_profile
 * @afd_mb: --afd-micro-batch N: tokens of its micro-batches (0: the default)
 * @afd_experts: --expert-devices N: expert parallelism over N more
 *	devices (the FFN group's profile; 0: none)
 * @chain: --chain: members on `wafer node`s (NULL: local devices)
 */
struct cli_devices {
	struct wafer_open_opts base;
	unsigned int n;
	unsigned int index[WAFER_PIPE_MAX_DEVICES];
	unsigned int n_split;
	unsigned int split[WAFER_PIPE_MAX_DEVICES];
	unsigned int afd[2];
	unsigned int afd_index[2][WAFER_AFD_MAX_GROUP];
	const char *afd_profile[2];
	char afd_buf[64];
	unsigned int afd_mb;
	unsigned int afd_experts;
	const char *chain;
};

/* cli_afd.c: --afd A:F (device lists) and --afd-profiles PA:PF; 0 or -1. */
int cli_parse_afd(const char *s, struct cli_devices *d);
int cli_parse_afd_profiles(const char *s, struct cli_devices *d);
/* --expert-devices N, 1..WAFER_AFD_MAX_GROUP; 0 or -1. */
int cli_parse_expert_devices(const char *s, struct cli_devices *d);
/* 0, or 2 with a message when --afd goes with -d/--split or the kernel. */
int cli_afd_check(const struct cli_devices *d, const char *cmd);
/* Opens the --afd groups as one device (wafer_open_afd()). */
int cli_open_afd(const struct cli_devices *d, struct wafer_dev **dev);
/* One line per group: devices, profile, stages and SRAM of each. */
void cli_print_afd(struct wafer_dev *dev, const struct cli_devices *d, FILE *f);
/* wafer info --afd: the groups (0 or 1). */
int cli_afd_info(const struct cli_devices *d);

/*
 * --chain HOST[:PORT]:DEVICES[,...] or FILE.json (wafer run, bench, serve):
 * the members parsed by libwafer (wafer_chain_parse(), _load()) now, so a
 * bad one is refused with the options; 0, or -1 with wafer_last_error().
 */
int cli_parse_chain(const char *s, struct cli_devices *d);
/* 0, or 2 with a message when --split does not match -d. */
int cli_devices_check(const struct cli_devices *d, const char *cmd);
/* One device, or a pipeline when several are listed or a split is given. */
int cli_open(const struct cli_devices *d, struct wafer_dev **dev);
/* One line per layer range of @m: device, layers, SRAM of weights and KV. */
void cli_print_parts(const struct wafer_model *m, FILE *f);

/*
 * wafer bench's speculative section (cli_bench_spec.c): greedy decoding of
 * @positions with each draft kind against plain, K = @k, per in-process
 * profile (@inproc: wafer, asic, wse3 and wse3p, whose draft device has
 * @draft_stages stages, 0: as few as hold it) and on kernel device
 * @kernel_index (-1: the first; below -1: none) with the draft beside the
 * target; 0, or 1 when a row failed or its text was not plain's.
 */
int cli_bench_spec(const char *ckpt, const char *tok_path, const struct wafer_convert_opts *conv,
		   unsigned int positions, unsigned int k, unsigned int draft_stages, int inproc,
		   int kernel_index);

/* CLOCK_MONOTONIC in ns. */
uint64_t cli_now_ns(void);


struct cli_stage_row;
/* Reads sysfs /sys/class/accel/accel@index/device/@attr; 0 or -errno. */
int cli_sysfs_u64(int index, const char *attr, uint64_t *out);
/*
 * Reads and parses debugfs accel/wafer.M/stages of accel@index; returns the
 * number of rows or -errno with the reason in @err.
 */
int cli_read_stages(int index, struct cli_stage_row *rows, unsigned int max,
			  char *err, size_t errlen);

#endif /* CLI_H */
