// SPDX-License-Identifier: MIT
/*
 * wafer run: llama2.c's `run` on a wafer device.  stdout carries exactly
 * what llama2.c prints (prompt pieces, then the continuation, streamed as
 * produced, then a newline); everything else goes to stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/**
 * struct run_args - parsed command line
 * @model: checkpoint path
 * @tokenizer: tokenizer path
 * @prompt: -i
 * @temperature: -t
 * @top_p: -p
 * @seed: -s (0: time)
 * @steps: -n (0: the model's context)
 * @conv: --quant, --group, --keep-int8, --kv-int8
 * @devs: --backend, --submit, -d, --split
 * @draft: --draft (NULL: plain decoding)
 * @draft_tokens: --draft-tokens
 * @draft_device: --draft-device (-1: the device after the target's)
 * @draft_pack: --draft-stages given: the draft on an in-process device of
 *	its own of @draft_stages stages (0: as few as hold it)
 * @draft_stages: see @draft_pack
 * @no_plain: --no-plain: no plain run to compare with
 * @trace: --trace FILE (NULL: none)
 * @expert_load: --expert-load FILE (NULL: none)
 * @chat: -m chat, -y, --chat-template, --single-turn
 */
struct run_args {
	const char *model;
	const char *tokenizer;
	const char *prompt;
	float temperature;
	float top_p;
	unsigned long long seed;
	int steps;
	struct wafer_convert_opts conv;
	struct cli_devices devs;
	const char *draft;
	unsigned int draft_tokens;
	int draft_device;
	int draft_pack;
	unsigned int draft_stages;
	int no_plain;
	const char *trace;
	const char *expert_load;
	struct cli_chat chat;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wafer run MODEL.bin -z TOKENIZER.bin [options]\n"
		"  -t TEMP        temperature, 0 = greedy (default 0)\n"
		"  -p TOP_P       top-p sampling over the device's top-k (default 0.9)\n"
		"  -s SEED        random seed (default: time)\n"
		"  -n STEPS       positions to run, prompt included (default 256, 0 = max)\n"
		"  -i PROMPT      input prompt\n"
		"  -z PATH        llama2.c tokenizer.bin\n"
		"  -m generate|chat  llama2.c's mode (default generate); chat: a conversation,\n"
		"                 -i the first user turn, then a line of stdin a turn (EOF\n"
		"                 ends it), each reply until EOS; the messages go through\n"
		"                 the chat template as wafer serve's /v1/chat/completions\n"
		"  -y SYSTEM      -m chat: the system prompt\n"
		"  --chat-template T    -m chat: story (default), chatml, llama2, zephyr, or a\n"
		"                 template as wafer serve's --chat-template takes\n"
		"  --single-turn  -m chat: answer -i and exit (llama-cli's -st)\n"
		"  -d LIST        devices: N (/dev/accel/accelN), or several (0-4, 0,2,3) to\n"
		"                 split the model's layers over them (implies --backend\n"
		"                 kernel; with --backend inproc, that many in-process devices)\n"
		"  --split LIST   layers per device, e.g. 2,1,1,1 (default: by SRAM, one\n"
		"                 layer per device when there are enough)\n"
		"  --quant int8|int4    weight format (default int8)\n"
		"  --group N            weights per quantisation scale (default 32)\n"
		"  --moe E,TOPK[,SHARED] upcycle every FFN into E experts (+ SHARED), TOPK per token\n"
		"  --moe-gate softmax|sigmoid|unit  how the selected experts weigh (default unit:\n"
		"                       with TOPK = E the dense model exactly; a smaller TOPK\n"
		"                       drops slices of the FFN and changes the model)\n"
		"  --moe-copies         every expert a copy of the dense FFN, the SHARED + TOPK\n"
		"                       that run weighing 1/(SHARED + TOPK), a power of two:\n"
		"                       the dense text at any TOPK\n"
		"  --expert-group G     place each MoE layer's routed experts in groups of G\n"
		"                       across the stages (default: with their layer unless\n"
		"                       the layers do not fit so); the text is the same\n"
		"  --keep-int8          int4: keep embedding and classifier at int8\n"
		"  --kv-int8            int8 KV cache (default int16)\n"
		"  --stream-weights auto|on|off  weight streaming: the layers' weights stay in\n"
		"                       host memory and stream into each stage, layer by layer\n"
		"                       (auto, the default: only when the model does not fit\n"
		"                       in SRAM; the run says so)\n"
		"  --backend kernel|inproc  (default: kernel if a wafer device exists)\n"
		"  --submit ioctl|uring     kernel job submission (default: uring if available)\n"
		"  --draft int4|early:N|FILE.bin|ngram[:N]\n"
		"                 speculative decoding: a draft proposes tokens the model\n"
		"                 checks in one job (int4: this checkpoint at int4; early:N:\n"
		"                 its first N layers; FILE.bin: a checkpoint with the same\n"
		"                 vocabulary; ngram: lookup in the text so far, no model)\n"
		"  --draft-tokens K     tokens proposed per check, 1..16 (default 4)\n"
		"  --draft-device D     the draft model's device (kernel: accelD; default beside\n"
		"                       the model on its device where it fits, else the next\n"
		"                       device; inproc: beside, else a device of its own)\n"
		"  --draft-stages N|min in process: the draft on a device of its own of N\n"
		"                       stages (min: as few as hold it and its context), the\n"
		"                       model's profile and SRAM per stage: a small draft\n"
		"                       packed into few wafer regions crosses few stage hops\n"
		"  --profile P, --stages N, --sram-kib K   in-process devices of profile P\n"
		"                       (default wafer), N stages of K KiB SRAM (e.g. wse3 with\n"
		"                       --sram-kib 1024: the simulator holds 1 GiB a device)\n"
		"  --no-plain           with --draft: no plain run to compare with\n"
		"  --trace FILE.json    the run's timeline as Chrome trace events (Perfetto,\n"
		"                       chrome://tracing): each job's chunks on every stage\n"
		"                       and their hops in modelled device time (the\n"
		"                       firmware's), and each job in host wall time\n"
		"  --expert-load FILE   MoE models: the tokens each expert of each layer ran,\n"
		"                       as the firmware counted them, written to FILE (the\n"
		"                       driver's debugfs experts table; kernel: root)\n"
		"  --afd A:F      attention-FFN disaggregation, in process: the attention part\n"
		"                 of every layer (and its KV cache) on devices A, the FFN part\n"
		"                 on devices F (lists: --afd 0:1, --afd 0-1:2-3), activations\n"
		"                 going back and forth every layer in micro-batches that keep\n"
		"                 both groups busy; the text is the single device's\n"
		"  --afd-profiles PA:PF  each group's hardware profile (e.g. asic:wafer)\n"
		"  --afd-micro-batch N   tokens of an --afd micro-batch at most, 1..64\n"
		"                 (default 16); the text is the same\n"
		"  --expert-devices N    with --afd and an MoE model: expert parallelism, the\n"
		"                 routed experts of every layer over N more devices (in\n"
		"                 process, or the accel devices after the highest --afd one\n"
		"                 with --backend kernel; the FFN group's profile; the FFN\n"
		"                 devices keep the router and shared experts); the text is\n"
		"                 the same\n"
		"  --chain HOST[:PORT]:DEVICES[,...]  the model's layers over `wafer node`s'\n"
		"                 devices, in order (DEVICES: 3, 0-3, 0+2; PORT: the node's,\n"
		"                 default 7470), jobs carried by RDMA links; --split applies;\n"
		"                 or --chain FILE.json: {\"version\": 1, \"members\": [{\"host\":\n"
		"                 \"10.9.0.1\", \"port\": 7471, \"devices\": \"0-3\"}, ...]}\n"
		"  -h, --help     this text\n");
}

enum { OPT_QUANT = 256, OPT_GROUP, OPT_KEEP8, OPT_KV8, OPT_BACKEND, OPT_SUBMIT, OPT_SPLIT,
       OPT_HELP, OPT_DRAFT, OPT_DRAFT_TOKENS, OPT_DRAFT_DEVICE, OPT_NO_PLAIN, OPT_TRACE, OPT_MOE,
       OPT_MOE_GATE, OPT_EXPERT_LOAD, OPT_STREAM, OPT_AFD, OPT_AFD_PROFILES,
       OPT_AFD_MB, OPT_XGROUP, OPT_DRAFT_STAGES, OPT_PROFILE, OPT_STAGES, OPT_SRAM, OPT_XDEV,
       OPT_MOE_COPIES, OPT_CHAT_TEMPLATE, OPT_SINGLE_TURN, OPT_CHAIN };

static const struct option long_opts[] = {
	{ "quant", required_argument, NULL, OPT_QUANT },
	{ "group", required_argument, NULL, OPT_GROUP },
	{ "keep-int8", no_argument, NULL, OPT_KEEP8 },
	{ "kv-int8", no_argument, NULL, OPT_KV8 },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "submit", required_argument, NULL, OPT_SUBMIT },
	{ "split", required_argument, NULL, OPT_SPLIT },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "draft", required_argument, NULL, OPT_DRAFT },
	{ "draft-tokens", required_argument, NULL, OPT_DRAFT_TOKENS },
	{ "draft-device", required_argument, NULL, OPT_DRAFT_DEVICE },
	{ "no-plain", no_argument, NULL, OPT_NO_PLAIN },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "moe", required_argument, NULL, OPT_MOE },
	{ "moe-gate", required_argument, NULL, OPT_MOE_GATE },
	{ "expert-load", required_argument, NULL, OPT_EXPERT_LOAD },
	{ "stream-weights", required_argument, NULL, OPT_STREAM },
	{ "afd", required_argument, NULL, OPT_AFD },
	{ "afd-profiles", required_argument, NULL, OPT_AFD_PROFILES },
	{ "afd-micro-batch", required_argument, NULL, OPT_AFD_MB },
	/* in the enum's order: a bad value's message names long_opts[opt - OPT_QUANT] */
	{ "expert-group", required_argument, NULL, OPT_XGROUP },
	{ "draft-stages", required_argument, NULL, OPT_DRAFT_STAGES },
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ "stages", required_argument, NULL, OPT_STAGES },
	{ "sram-kib", required_argument, NULL, OPT_SRAM },
	{ "expert-devices", required_argument, NULL, OPT_XDEV },
	{ "moe-copies", no_argument, NULL, OPT_MOE_COPIES },
	{ "chat-template", required_argument, NULL, OPT_CHAT_TEMPLATE },
	{ "single-turn", no_argument, NULL, OPT_SINGLE_TURN },
	{ "chain", required_argument, NULL, OPT_CHAIN },
	{ NULL, 0, NULL, 0 },
};

static int num(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* One option; 0, or 2 for a usage error (message printed). */
/* The model's conversion options: 0, 1 for a bad value, -1 for another option. */
static int parse_model_opt(struct run_args *a, int opt, const char *arg)
{
	double v;

	switch (opt) {
	case OPT_MOE:
		return cli_parse_moe(arg, &a->conv.moe) ? 1 : 0;
	case OPT_STREAM:
		return cli_parse_stream(arg, &a->conv.stream) ? 1 : 0;
	case OPT_MOE_GATE:
		return cli_parse_gate(arg, &a->conv.moe) ? 1 : 0;
	case OPT_MOE_COPIES:
		a->conv.moe.copies = 1;
		return 0;
	case OPT_XGROUP:
		return cli_parse_expert_group(arg, &a->conv.expert_group) ? 1 : 0;
	case OPT_QUANT:
		if (strcmp(arg, "int8") && strcmp(arg, "int4"))
			return 1;
		a->conv.wbits = strcmp(arg, "int4") ? 8 : 4;
		return 0;
	case OPT_GROUP:
		if (num(arg, 1, 256, &v))
			return 1;
		a->conv.group_size = (unsigned int)v;
		return 0;
	case OPT_KEEP8:
		a->conv.keep_embed_cls_int8 = 1;
		return 0;
	case OPT_KV8:
		a->conv.kv_int8 = 1;
		return 0;
	default:
		return -1;
	}
}

/* The devices and how to reach them: 0, 1 for a bad value, -1 for another option. */
static int parse_device_opt(struct run_args *a, int opt, const char *arg)
{
	unsigned int kib;
	int ret;

	switch (opt) {
	case 'd':
		ret = cli_parse_list(arg, 0, 4095, a->devs.index, WAFER_PIPE_MAX_DEVICES);
		if (ret < 0)
			return 1;
		a->devs.n = (unsigned int)ret;
		return 0;
	case OPT_SPLIT:
		ret = cli_parse_list(arg, 1, 4096, a->devs.split, WAFER_PIPE_MAX_DEVICES);
		if (ret < 0)
			return 1;
		a->devs.n_split = (unsigned int)ret;
		return 0;
	case OPT_BACKEND:
		return cli_parse_backend(arg, &a->devs.base.backend) ? 1 : 0;
	case OPT_SUBMIT:
		if (!strcmp(arg, "ioctl"))
			a->devs.base.submit = WAFER_SUBMIT_IOCTL;
		else if (!strcmp(arg, "uring"))
			a->devs.base.submit = WAFER_SUBMIT_URING;
		else
			return 1;
		return 0;
	case OPT_DRAFT_DEVICE:
		return cli_parse_index(arg, &a->draft_device) ? 1 : 0;
	case OPT_DRAFT_STAGES:
		a->draft_pack = 1;
		return strcmp(arg, "min") && cli_parse_uint(arg, 1, 64, &a->draft_stages) ? 1 : 0;
	case OPT_PROFILE:
		a->devs.base.profile = arg;
		return 0;
	case OPT_STAGES:
		return cli_parse_uint(arg, 1, 64, &a->devs.base.stages) ? 1 : 0;
	case OPT_SRAM:
		ret = cli_parse_uint(arg, 64, 1 << 20, &kib);
		a->devs.base.sram_bytes = (uint64_t)kib << 10;
		return ret ? 1 : 0;
	case OPT_AFD:
		return cli_parse_afd(arg, &a->devs) ? 1 : 0;
	case OPT_AFD_PROFILES:
		return cli_parse_afd_profiles(arg, &a->devs) ? 1 : 0;
	case OPT_AFD_MB:
		return cli_parse_uint(arg, 1, WAFER_AFD_MAX_MB, &a->devs.afd_mb) ? 1 : 0;
	case OPT_XDEV:
		return cli_parse_expert_devices(arg, &a->devs) ? 1 : 0;
	case OPT_CHAIN:
		return cli_parse_chain(arg, &a->devs) ? 1 : 0;
	default:
		return -1;
	}
}

/* What a bad value of option @opt could have been (NULL: see --help). */
static const char *run_allowed(int opt)
{
	switch (opt) {
	case 'm':
		return "generate or chat";
	case 't':
		return "0..100";
	case 'p':
		return "0..1";
	case 'n':
		return "0..1048576";
	case 's':
		return "a non-negative integer";
	case 'd':
		return "a device index 0..4095 or a list: 0-4, 0,2,3";
	case OPT_CHAIN:
		return wafer_last_error();	/* the member or the file's field that is wrong */
	case OPT_QUANT:
		return "int8 or int4";
	case OPT_GROUP:
		return "1..256";
	case OPT_BACKEND:
		return "kernel, inproc or auto";
	case OPT_SUBMIT:
		return "ioctl or uring";
	case OPT_STREAM:
		return "auto, on or off";
	case OPT_MOE_GATE:
		return "softmax, sigmoid or unit";
	case OPT_MOE:
		return "E,TOPK[,SHARED] with TOPK <= E";
	case OPT_DRAFT_TOKENS:
		return "1..16";
	case OPT_STAGES:
		return "1..64";
	case OPT_DRAFT_STAGES:
		return "1..64 or min";
	case OPT_SRAM:
		return "64..1048576";
	default:
		return NULL;
	}
}

static int parse_opt(struct run_args *a, int opt, const char *arg)
{
	unsigned int u;
	char *end;
	double v;
	int ret;

	switch (opt) {
	case 't':
		if (num(arg, 0, 100, &v))
			break;
		a->temperature = (float)v;
		return 0;
	case 'p':
		if (num(arg, 0, 1, &v))
			break;
		a->top_p = (float)v;
		return 0;
	case 's':
		/* an integer, whole: 1e3 or 7.5 is refused, not read as 1 or 7 */
		errno = 0;
		a->seed = strtoull(arg, &end, 10);
		if (errno || end == arg || *end || *arg == '-')
			break;
		return 0;
	case 'n':
		if (cli_parse_uint(arg, 0, 1 << 20, &u))
			break;
		a->steps = (int)u;
		return 0;
	case 'i':
		a->prompt = arg;
		return 0;
	case 'z':
		a->tokenizer = arg;
		return 0;
	case 'm':
		if (strcmp(arg, "generate") && strcmp(arg, "chat"))
			break;
		a->chat.on = !strcmp(arg, "chat");
		return 0;
	case 'y':
		a->chat.system = arg;
		return 0;
	case OPT_CHAT_TEMPLATE:
		return cli_chat_template(&a->chat, arg);
	case OPT_SINGLE_TURN:
		a->chat.single_turn = 1;
		return 0;
	case 'h':
		usage(stdout);
		exit(0);
	case OPT_DRAFT:
		a->draft = arg;
		return 0;
	case OPT_DRAFT_TOKENS:
		if (num(arg, 1, WAFER_SPEC_MAX_DRAFT, &v) || v != (int)v)
			break;
		a->draft_tokens = (unsigned int)v;
		return 0;
	case OPT_NO_PLAIN:
		a->no_plain = 1;
		return 0;
	case OPT_TRACE:
		a->trace = arg;
		return 0;
	case OPT_EXPERT_LOAD:
		a->expert_load = arg;
		return 0;
	case OPT_HELP:
		usage(stdout);
		exit(0);
	default:
		ret = parse_model_opt(a, opt, arg);
		if (ret < 0)
			ret = parse_device_opt(a, opt, arg);
		if (!ret)
			return 0;
		if (ret < 0) {
			usage(stderr);
			return 2;
		}
	}
	fprintf(stderr, "wafer run: bad value '%s' for -%c%s%s%s\n", arg ? arg : "",
		opt < 256 ? opt : '-', opt < 256 ? "" : long_opts[opt - OPT_QUANT].name,
		run_allowed(opt) ? "; allowed: " : "", run_allowed(opt) ? run_allowed(opt) : "");
	return 2;
}

static int parse(struct run_args *a, int argc, char **argv)
{
	int opt, ret;

	memset(a, 0, sizeof(*a));
	a->top_p = 0.9f;
	a->steps = 256;
	a->conv.wbits = 8;
	a->conv.group_size = 32;
	a->conv.stream = WAFER_STREAM_AUTO;
	a->conv.moe.gate = WAFER_MOE_GATE_UNIT;	/* upcycled: the dense model at top-k = E */
	a->devs.base.index = -1;
	a->draft_tokens = 4;
	a->draft_device = -1;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "t:p:s:n:i:z:d:m:y:h", long_opts, NULL)) != -1) {
		ret = parse_opt(a, opt, optarg);
		if (ret)
			return ret;
	}
	if (optind != argc - 1 || !a->tokenizer) {
		fprintf(stderr, "wafer run: need exactly one MODEL.bin and -z TOKENIZER.bin\n");
		usage(stderr);
		return 2;
	}
	a->model = argv[optind];
	if (!a->chat.on && (a->chat.system || a->chat.tmpl || a->chat.single_turn)) {
		fprintf(stderr, "wafer run: -y, --chat-template and --single-turn go with -m chat\n");
		return 2;
	}
	if (a->chat.on && (a->draft || a->trace || a->expert_load)) {
		fprintf(stderr, "wafer run: -m chat: not with --draft, --trace or --expert-load\n");
		return 2;
	}
	if (a->draft_pack && a->draft_device >= 0) {
		fprintf(stderr, "wafer run: --draft-stages or --draft-device, not both\n");
		return 2;
	}
	if (a->draft) {
		struct wafer_draft_spec d;

		if (wafer_draft_parse(a->draft, &d)) {
			fprintf(stderr, "wafer run: --draft: %s\n", wafer_last_error());
			return 2;
		}
	}
	if (a->devs.n && a->devs.base.backend == WAFER_BACKEND_AUTO)
		a->devs.base.backend = WAFER_BACKEND_KERNEL;
	if (a->devs.afd[0] && a->devs.base.backend == WAFER_BACKEND_AUTO)
		a->devs.base.backend = WAFER_BACKEND_INPROC;
	ret = cli_devices_check(&a->devs, "run");
	if (!ret)
		ret = cli_afd_check(&a->devs, "run");
	if (ret)
		return ret;
	if (!a->seed)
		a->seed = (unsigned long long)time(NULL);
	return 0;
}

static void progress(void *arg, const char *what, double done)
{
	int i, n = (int)(done * 30);

	(void)arg;
	fprintf(stderr, "\r[");
	for (i = 0; i < 30; i++)
		fputc(i < n ? '#' : ' ', stderr);
	fprintf(stderr, "] %3.0f%% %-12s%s", done * 100, what, done >= 1.0 ? "\n" : "");
}

/**
 * struct text - what a run printed, kept to compare with the plain run's
 * @buf: the pieces, NUL-terminated
 * @len: bytes in @buf
 * @cap: its capacity
 * @print: also print them (the speculative or only run)
 */
struct text {
	char *buf;
	size_t len;
	size_t cap;
	int print;
};

static int print_piece(void *arg, int token, const char *piece, int from_prompt)
{
	struct text *t = arg;
	size_t n;

	(void)token;
	(void)from_prompt;
	if (!wafer_piece_printable(piece))
		return 0;
	if (t->print) {
		fputs(piece, stdout);
		fflush(stdout);
	}
	n = strlen(piece);
	if (t->len + n + 1 > t->cap) {
		size_t cap = (t->len + n + 1) * 2;
		char *b = realloc(t->buf, cap);

		if (!b)
			return 0;	/* only the comparison loses */
		t->buf = b;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, piece, n + 1);
	t->len += n;
	return 0;
}

static void announce(struct wafer_dev *dev, const struct run_args *a)
{
	struct wafer_info i;

	wafer_query(dev, &i);
	if (a->devs.afd[0]) {
		fprintf(stderr, "wafer: attention-FFN disaggregation over %u + %u %s devices",
			a->devs.afd[0], a->devs.afd[1],
			wafer_backend_name(wafer_pipe_member(dev, 0)));
		if (a->devs.afd_experts)
			fprintf(stderr, ", routed experts over %u more", a->devs.afd_experts);
		fprintf(stderr, ":\n");
		cli_print_afd(dev, &a->devs, stderr);
	} else if (wafer_pipe_size(dev) > 1)
		fprintf(stderr, "wafer: pipeline of %u %s devices (submit %s), %u stages in all, "
			"profile %s\n", wafer_pipe_size(dev),
			wafer_backend_name(wafer_pipe_member(dev, 0)), wafer_submit_name(dev),
			i.stages, i.profile_name);
	else if (a->devs.chain)
		fprintf(stderr, "wafer: chain %s (wafer nodes, RDMA links), %u stages in all\n",
			a->devs.chain, i.stages);
	else if (!strcmp(wafer_backend_name(dev), "inproc"))
		fprintf(stderr, "wafer: backend inproc (firmware-sim in this process%s), "
			"%u stages x %llu KiB, profile %s\n",
			a->devs.base.backend == WAFER_BACKEND_AUTO ? "; no wafer device found" : "",
			i.stages, (unsigned long long)i.sram_bytes_per_stage >> 10,
			i.profile_name);
	else
		fprintf(stderr, "wafer: backend kernel (accel%d, submit %s), %u stages x %llu KiB, "
			"profile %s\n", wafer_device_index(dev),
			wafer_submit_name(dev), i.stages,
			(unsigned long long)i.sram_bytes_per_stage >> 10, i.profile_name);
}

/*
 * The jobs in decode_device_ns: a token each, after the prompt's job; with
 * no prompt the first (BOS) is one of them and makes the first token.
 */
static unsigned int decode_jobs(const struct wafer_gen_stats *s)
{
	return s->generated_tokens - (s->prompt_tokens > 1 && s->generated_tokens);
}

static void report(const struct wafer_gen_stats *s, double load_s)
{
	unsigned int decoded = s->generated_tokens > 1 ? s->generated_tokens - 1 : 0;
	unsigned int jobs = decode_jobs(s);

	fprintf(stderr, "wafer: model load %.3f s; %u prompt tokens, %u generated, %u jobs, "
		"%.3f s\n", load_s, s->prompt_tokens, s->generated_tokens, s->jobs,
		s->total_ns / 1e9);
	fprintf(stderr, "wafer: time to first token %.3f ms\n", s->ttft_ns / 1e6);
	if (decoded && s->decode_ns)
		fprintf(stderr, "achieved tok/s: %f\n", decoded / (s->decode_ns / 1e9));
	if (jobs && s->decode_device_ns)
		fprintf(stderr, "wafer: modelled device tok/s: %f (%.2f us/token)\n",
			jobs / (s->decode_device_ns / 1e9), s->decode_device_ns / 1e3 / jobs);
}

/*
 * Speculative figures: a round's tokens come from its verify job, so the
 * modelled rate is generated tokens over the rounds' modelled time (verify
 * jobs and the draft's jobs, which take turns); plain decoding's is a token
 * per decode job (decode_jobs()).  Host rates are tokens after the first over the time
 * from the first to the last, for both.
 */
static void report_spec(const struct run_args *a, const struct wafer_gen_stats *s,
			const struct wafer_spec_stats *ss, const struct wafer_gen_stats *plain,
			int same)
{
	unsigned int decoded = s->generated_tokens > 1 ? s->generated_tokens - 1 : 0;
	double host = decoded && s->decode_ns ? decoded / (s->decode_ns / 1e9) : 0;
	double model = s->decode_device_ns ? s->generated_tokens / (s->decode_device_ns / 1e9) : 0;

	fprintf(stderr, "wafer: speculative decoding, draft %s, K = %u: %u verify jobs, %u draft "
		"jobs; acceptance %.1f %% (%u of %u drafted), %.2f tokens per verify\n", a->draft,
		a->draft_tokens, ss->verifies, ss->draft_jobs,
		ss->drafted ? 100.0 * ss->accepted / ss->drafted : 0.0, ss->accepted, ss->drafted,
		ss->verifies ? (double)s->generated_tokens / ss->verifies : 0.0);
	fprintf(stderr, "wafer: speculative: host %.1f tok/s, modelled %.1f tok/s (verify %.3f us, "
		"draft %.3f us per verify)\n", host, model,
		ss->verifies ? ss->verify_ns / 1e3 / ss->verifies : 0.0,
		ss->verifies ? ss->draft_ns / 1e3 / ss->verifies : 0.0);
	if (plain) {
		unsigned int pd = plain->generated_tokens > 1 ? plain->generated_tokens - 1 : 0;
		unsigned int pj = decode_jobs(plain);
		double ph = pd && plain->decode_ns ? pd / (plain->decode_ns / 1e9) : 0;
		double pm = pj && plain->decode_device_ns ?
			    pj / (plain->decode_device_ns / 1e9) : 0;

		fprintf(stderr, "wafer: plain decoding: host %.1f tok/s, modelled %.1f tok/s; "
			"speculative/plain: host %.2fx, modelled %.2fx%s\n", ph, pm,
			ph > 0 ? host / ph : 0.0, pm > 0 ? model / pm : 0.0,
			a->temperature > 0 ? "" : same ? "; text identical (greedy)" :
			"; TEXT DIFFERS from plain greedy decoding");
	}
}

static int fail(const char *what)
{
	fprintf(stderr, "wafer run: %s: %s\n", what, wafer_last_error());
	return 1;
}

/* The draft model's device: its own in process, else --draft-device or the next one. */
static int open_draft_dev(const struct run_args *a, struct wafer_dev *target,
			  struct wafer_dev **out)
{
	struct wafer_open_opts o = a->devs.base;
	struct wafer_dev *last = wafer_pipe_member(target, wafer_pipe_size(target) - 1);

	if (!strcmp(wafer_backend_name(last), "inproc")) {
		o.backend = WAFER_BACKEND_INPROC;
		o.index = 0;
	} else {
		o.backend = WAFER_BACKEND_KERNEL;
		o.index = a->draft_device >= 0 ? a->draft_device : wafer_device_index(last) + 1;
		if (wafer_device_index(target) >= 0 && o.index == wafer_device_index(target)) {
			fprintf(stderr, "wafer run: --draft-device %d: the draft does not fit beside "
				"the model there\n", o.index);
			return -1;
		}
	}
	if (wafer_open(&o, out)) {
		fprintf(stderr, "wafer run: opening the draft's device%s: %s\n",
			a->draft_device < 0 && o.backend == WAFER_BACKEND_KERNEL ?
			" (give --draft-device)" : "", wafer_last_error());
		return -1;
	}
	if (o.backend == WAFER_BACKEND_KERNEL)
		fprintf(stderr, "wafer: draft on accel%d (submit %s)\n", wafer_device_index(*out),
			wafer_submit_name(*out));
	else
		fprintf(stderr, "wafer: draft on a second in-process device\n");
	return 0;
}

/**
 * struct draft - the speculative side of a run
 * @spec: what --draft names
 * @dev: the draft model's device (NULL: n-gram)
 * @model: the draft model
 * @ctx: its context
 */
struct draft {
	struct wafer_draft_spec spec;
	struct wafer_dev *dev;
	struct wafer_model *model;
	struct wafer_ctx *ctx;
};

/*
 * The draft beside the model on its device (in process, or a kernel device
 * unless --draft-device names another) when the device holds several
 * models and it fits (0); else it gets a device of its own.
 */
static int draft_beside(const struct run_args *a, struct wafer_dev *dev,
			const struct wafer_model *model, struct draft *d)
{
	if ((a->draft_device >= 0 && a->draft_device != wafer_device_index(dev)) ||
	    wafer_draft_load_beside(&d->spec, a->model, &a->conv, model, &d->model))
		return -1;
	fprintf(stderr, "wafer: draft beside the model on its %s device\n",
		strcmp(wafer_backend_name(dev), "inproc") ? "kernel" : "in-process");
	return 0;
}

/* --draft-stages: the draft on an in-process device of its own of few stages. */
static int draft_packed(const struct run_args *a, struct wafer_dev *dev,
			const struct wafer_model *model, unsigned int steps, struct draft *d)
{
	struct wafer_open_opts o = a->devs.base;
	const struct wafer_model_info *mi = wafer_model_get_info(model);
	struct wafer_draft_dev dd;

	o.backend = strcmp(wafer_backend_name(dev), "inproc") ? WAFER_BACKEND_KERNEL :
		    WAFER_BACKEND_INPROC;
	if (wafer_draft_load_packed(&o, a->draft_stages, &d->spec, a->model, &a->conv, model,
				    steps < mi->seq_len ? steps : mi->seq_len, &dd))
		return fail("--draft-stages: placing the draft");
	d->dev = dd.dev;
	d->model = dd.model;
	d->ctx = dd.ctx;
	fprintf(stderr, "wafer: draft on an in-process device of %u stage%s of its own\n",
		dd.stages, dd.stages == 1 ? "" : "s");
	return 0;
}

static int draft_setup(const struct run_args *a, struct wafer_dev *dev,
		       const struct wafer_model *model, unsigned int steps, struct draft *d)
{
	const struct wafer_model_info *mi;

	wafer_draft_parse(a->draft, &d->spec);	/* checked in parse() */
	if (d->spec.kind == WAFER_DRAFT_NGRAM)
		return 0;
	if (a->draft_pack) {
		if (draft_packed(a, dev, model, steps, d))
			return 1;
	} else if (draft_beside(a, dev, model, d) &&
	    (open_draft_dev(a, dev, &d->dev) ||
	     wafer_draft_load(d->dev, &d->spec, a->model, &a->conv, model, &d->model)))
		return d->dev ? fail("loading the draft") : 1;
	mi = wafer_model_get_info(d->model);
	if (!d->ctx &&
	    wafer_ctx_create(d->model, 1, steps < mi->seq_len ? steps : mi->seq_len, &d->ctx))
		return fail("creating the draft's context");
	fprintf(stderr, "wafer: draft model %u layers, dim %u, %llu KiB of SRAM\n", mi->n_layers,
		mi->dim, (unsigned long long)mi->sram_bytes >> 10);
	return 0;
}

static void draft_free(struct draft *d)
{
	wafer_ctx_destroy(d->ctx);
	wafer_model_unload(d->model);
	wafer_close(d->dev);
}

/* --trace: the run's jobs only (not the plain comparison), then written. */
static int trace_write(const struct run_args *a, struct wafer_dev *dev,
		       struct wafer_trace **trace, unsigned int jobs)
{
	int ret;

	wafer_trace_attach(dev, NULL);
	ret = wafer_trace_close(*trace);
	*trace = NULL;
	if (ret)
		return fail("--trace");
	fprintf(stderr, "wafer: trace of %u jobs written to %s\n", jobs, a->trace);
	return 0;
}

/*
 * The firmware's expert counters of model @m (not the device's first
 * model: another process's, on a shared kernel device, or the draft's):
 * imbalance per layer, the table to @path.
 */
static int expert_report(struct wafer_dev *dev, const struct wafer_model *m, const char *path)
{
	struct cli_experts x;
	char imb[256];
	FILE *f;
	int n = cli_experts_take(dev, m, 0, &x), err = 0;

	if (n < 0)
		return fail("--expert-load");
	cli_experts_imbalance(NULL, &x, imb, sizeof(imb));
	fprintf(stderr, "wafer: expert load max/mean by layer: %s\n", n ? imb : "no MoE layer");
	f = fopen(path, "we");
	if (!f)
		err = errno;
	if (f) {
		cli_experts_print(&x, f);
		if (fclose(f))
			err = errno;
	}
	cli_experts_free(&x);
	if (err)
		fprintf(stderr, "wafer: %s: %s\n", path, strerror(err));
	return !!err;
}

/**
 * struct run - what a run holds, step to step
 * @dev: the device (or pipeline)
 * @model: the model on it
 * @mi: its description
 * @ctx: the run's context
 * @tok: the tokenizer
 * @trace: --trace, until written
 * @d: --draft's side
 * @so: the speculative options
 * @steps: positions to run
 * @load_ns: host time the model's load took
 * @text: what the run printed
 * @ptext: what the plain comparison run generated
 */
struct run {
	struct wafer_dev *dev;
	struct wafer_model *model;
	const struct wafer_model_info *mi;
	struct wafer_ctx *ctx;
	struct wafer_tokenizer *tok;
	struct wafer_trace *trace;
	struct draft d;
	struct wafer_spec_opts so;
	unsigned int steps;
	uint64_t load_ns;
	struct text text;
	struct text ptext;
};

/* The trace file (a bad path fails first), the device, the trace on it. */
static int run_open(const struct run_args *a, struct run *r)
{
	if (a->trace && wafer_trace_open(a->trace, &r->trace))
		return fail("--trace");
	if (cli_open(&a->devs, &r->dev))
		return fail("opening the device");
	if (r->trace && wafer_trace_attach(r->dev, r->trace))
		return fail("--trace");
	announce(r->dev, a);
	return 0;
}

/* The model, the tokenizer, a context of @r->steps positions, the draft. */
static int run_load(const struct run_args *a, struct run *r)
{
	uint64_t t0 = cli_now_ns();

	if (wafer_model_load_file(r->dev, a->model, &a->conv, &r->model))
		return fail("loading the model");
	r->load_ns = cli_now_ns() - t0;
	r->mi = wafer_model_get_info(r->model);
	if (r->mi->n_experts)
		cli_print_moe(r->mi, stderr);
	cli_moe_note(&a->conv.moe, stderr);
	cli_print_stream(r->mi, stderr);
	r->steps = a->steps <= 0 || (unsigned int)a->steps > r->mi->seq_len ? r->mi->seq_len :
		   (unsigned int)a->steps;
	if (wafer_tokenizer_load(a->tokenizer, r->mi->vocab_size, &r->tok))
		return fail("loading the tokenizer");
	if (wafer_ctx_create(r->model, 1, r->steps, &r->ctx))
		return fail("creating the context");
	if (wafer_pipe_size(r->dev) > 1) {
		fprintf(stderr, "wafer: the model's %u layers over %u devices:\n",
			r->mi->n_layers, wafer_model_parts(r->model));
		cli_print_parts(r->model, stderr);
	}
	if (!a->draft)
		return 0;
	if (draft_setup(a, r->dev, r->model, r->steps, &r->d))
		return 1;
	r->so.draft_tokens = a->draft_tokens;
	r->so.draft = r->d.ctx;
	r->so.ngram = r->d.spec.kind == WAFER_DRAFT_NGRAM ? r->d.spec.n : 0;
	return 0;
}

/* The run itself, printed as it goes; its figures; the trace written. */
static int run_generate(const struct run_args *a, struct run *r)
{
	struct wafer_gen_stats st, plain;
	struct wafer_spec_stats ss;
	struct wafer_gen_opts go;
	int ret;

	go = (struct wafer_gen_opts){ .steps = r->steps, .temperature = a->temperature,
				      .top_p = a->top_p, .seed = a->seed,
				      .on_piece = print_piece, .arg = &r->text };
	if (a->chat.on)
		return cli_run_chat(r->ctx, r->tok, a->prompt, &a->chat, &go);
	ret = a->draft ? wafer_generate_spec(r->ctx, r->tok, a->prompt, &go, &r->so, &st, &ss) :
		wafer_generate(r->ctx, r->tok, a->prompt, &go, &st);
	printf("\n");
	if (ret)
		return fail("generating");
	fflush(stdout);
	report(&st, r->load_ns / 1e9);
	if (r->trace && trace_write(a, r->dev, &r->trace, st.jobs))
		return 1;
	if (a->expert_load && expert_report(r->dev, r->model, a->expert_load))
		return 1;
	if (!a->draft)
		return 0;
	if (a->no_plain) {
		report_spec(a, &st, &ss, NULL, 0);
		return 0;
	}
	/* The same prompt and seed, plain, for its figures (output kept, not printed). */
	go.arg = &r->ptext;
	if (wafer_generate(r->ctx, r->tok, a->prompt, &go, &plain))
		return fail("generating plainly to compare");
	report_spec(a, &st, &ss, &plain, r->text.len == r->ptext.len &&
		    (!r->text.len || !memcmp(r->text.buf, r->ptext.buf, r->text.len)));
	return 0;
}

static void run_free(struct run *r)
{
	wafer_trace_discard(r->trace);
	draft_free(&r->d);
	wafer_ctx_destroy(r->ctx);
	wafer_tokenizer_free(r->tok);
	wafer_model_unload(r->model);
	wafer_close(r->dev);
	free(r->text.buf);
	free(r->ptext.buf);
}

int cli_cmd_run(int argc, char **argv)
{
	struct run r = { .text = { .print = 1 } };
	struct run_args a;
	int ret = parse(&a, argc, argv);

	if (ret)
		return ret;
	if (isatty(STDERR_FILENO))
		a.conv.progress = progress;
	ret = run_open(&a, &r) || run_load(&a, &r) || run_generate(&a, &r);
	run_free(&r);
	cli_chat_free(&a.chat);
	return ret;
}
