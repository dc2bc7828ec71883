// SPDX-License-Identifier: MIT
/*
 * The trace of a model split over a pipeline of 2..5 in-process devices
 * (wafer_trace_attach(), wafer run -d 0-N --trace): a process per device,
 * each with events; on every thread time order without overlap (hops that
 * would overlap on lanes of their own); every chunk through the model's layers in order across the
 * devices, each layer's stage entered no earlier than the hop (or link)
 * into it ended; each layer's stage time and each hop inside a device the
 * same as on one device, the hops out of a device's last stage links;
 * every job's span the modelled time its completion reported (a job's
 * device_ns on a pipeline is its makespan across the devices), and each
 * job of the decode loop starting no earlier than the one before it left
 * the last device (the pipeline's floor for device 0).  Members of different stage counts (asic +
 * wafer + asic) each show their own stages.
 * Attention-FFN disaggregation (wafer_open_afd(), 1:1 and 2:1 asic:asic:
 * wafer): valid JSON, a named process per member, every thread in time
 * order without overlap; each micro-batch's 10 layer parts in time order,
 * attention and FFN alternating on the members holding each layer, a link
 * hop out of each part before the next starts; each job's span its
 * reported modelled time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json.h>
#include <json_util.h>

#include "wafer.h"
#include "wt_util.h"

#define MAX_EV		4096
#define MAX_JOBS	64
#define MAX_LAYERS	16

static char model[400], tokpath[400];

static const char *const prompt =
	"Once upon a time there was a little girl who lived in a small house near a big "
	"forest with her mother";

/* One modelled event: device, thread, stage, whether a hop, job, chunk, ns. */
struct ev {
	int pid, tid, stage, hop, link, job, pos0;
	long long ts, dur;
};

/* A traced run: its events, the first layer of each device's part. */
struct traced {
	struct ev ev[MAX_EV];
	size_t n;
	unsigned int parts, first[WAFER_PIPE_MAX_DEVICES];
	int named[WAFER_PIPE_MAX_DEVICES];
	long long job_ns[MAX_JOBS];
	unsigned int jobs;
};

/* Attention devices of an AFD run (wafer_open_afd()); 0: a pipeline. */
static unsigned int afd_na;

/* @n devices, of the profiles in @prof (NULL: the default one). */
static int open_devs(unsigned int n, const char *const *prof, struct wafer_dev **dev)
{
	struct wafer_open_opts o[WAFER_PIPE_MAX_DEVICES];
	struct wafer_pipe_opts po = { .n_devices = n, .devices = o };
	struct wafer_afd_opts ao = { .n_attn = afd_na, .attn = o, .n_ffn = n - afd_na,
				     .ffn = o + afd_na };
	unsigned int i;

	for (i = 0; i < n; i++)
		o[i] = (struct wafer_open_opts){ .backend = WAFER_BACKEND_INPROC,
						 .profile = prof ? prof[i] : NULL };
	if (afd_na)
		return wafer_open_afd(&ao, dev);
	if (n == 1)
		return wafer_open(&o[0], dev);
	return wafer_open_pipeline(&po, dev);
}

/* Runs the shared model on @n devices (1: no pipeline), traced to @path. */
static int run(unsigned int n, const char *const *prof, const char *path, struct traced *tr)
{
	struct wafer_convert_opts co = { .wbits = 8, .group_size = 32 };
	struct wafer_gen_opts go = { .steps = 56 };
	struct wafer_tokenizer *tok = NULL;
	struct wafer_model_part part;
	struct wafer_gen_stats st;
	struct wafer_model *m = NULL;
	struct wafer_ctx *ctx = NULL;
	struct wafer_trace *t = NULL;
	struct wafer_dev *dev = NULL;
	unsigned int i;
	int ret;

	ret = open_devs(n, prof, &dev) || wafer_model_load_file(dev, model, &co, &m) ||
	      wafer_tokenizer_load(tokpath, 512, &tok) ||
	      wafer_ctx_create(m, 1, 56, &ctx) || wafer_trace_open(path, &t) ||
	      wafer_trace_attach(dev, t) || wafer_generate(ctx, tok, prompt, &go, &st);
	tr->parts = ret ? 0 : wafer_model_parts(m);
	for (i = 0; i < tr->parts && i < WAFER_PIPE_MAX_DEVICES; i++)
		if (!wafer_model_part(m, i, &part))
			tr->first[i] = part.layer_first;
	tr->jobs = ret ? 0 : st.jobs;
	if (!ret)
		ret = wafer_trace_close(t);
	else
		wafer_trace_discard(t);
	wafer_ctx_destroy(ctx);
	wafer_tokenizer_free(tok);
	wafer_model_unload(m);
	wafer_close(dev);
	return ret;
}

static long long ns_of(json_object *o, const char *k)
{
	return (long long)(json_object_get_double(json_object_object_get(o, k)) * 1e3 + 0.5);
}

static int int_of(json_object *o, const char *k)
{
	return json_object_get_int(json_object_object_get(o, k));
}

/* Event @e into @tr: a device's ("X", pid < host), a name, or a host job. */
static int take(json_object *e, struct traced *tr)
{
	const char *ph = json_object_get_string(json_object_object_get(e, "ph"));
	json_object *a = json_object_object_get(e, "args");
	int pid = int_of(e, "pid"), tid = int_of(e, "tid"), job = int_of(a, "job");
	struct ev *v;

	if (!ph || pid < 0)
		return 0;
	if (!strcmp(ph, "M")) {
		if (pid < WAFER_PIPE_MAX_DEVICES && !strcmp(json_object_get_string(
				json_object_object_get(e, "name")), "process_name"))
			tr->named[pid] = 1;
		return 1;
	}
	if (job < 0 || job >= MAX_JOBS)
		return 0;
	if (pid == WAFER_TRACE_HOST_PID) {
		tr->job_ns[job] = json_object_get_int64(json_object_object_get(a, "device_ns"));
		return 1;
	}
	if (pid >= WAFER_PIPE_MAX_DEVICES || tr->n == MAX_EV || tid < 0)
		return 0;
	v = &tr->ev[tr->n++];
	*v = (struct ev){ .pid = pid, .tid = tid, .stage = tid % WAFER_TRACE_LANE_TIDS / 2,
			  .hop = tid % 2, .job = job,
			  .pos0 = int_of(a, "pos0"), .ts = ns_of(e, "ts"), .dur = ns_of(e, "dur") };
	v->link = !strcmp(json_object_get_string(json_object_object_get(e, "cat")), "link");
	return 1;
}

static int load(const char *path, struct traced *tr)
{
	json_object *root = json_object_from_file(path), *evs;
	size_t i, n;
	int ok;

	ok = root && json_object_object_get_ex(root, "traceEvents", &evs) &&
	     json_object_is_type(evs, json_type_array);
	n = ok ? json_object_array_length(evs) : 0;
	for (i = 0; ok && i < n; i++)
		ok = take(json_object_array_get_idx(evs, i), tr);
	if (root)
		json_object_put(root);
	return ok;
}

static unsigned int layer_of(const struct traced *tr, const struct ev *v)
{
	return tr->first[v->pid] + (unsigned int)v->stage;
}

/*
 * Every thread's events in time order, none overlapping the one before
 * (they nest, as the format wants): a stage's chunks one after another,
 * hops that would overlap on lanes of their own.
 */
static int tracks_ordered(const struct traced *tr)
{
	size_t i, j;

	for (i = 0; i < tr->n; i++)
		for (j = i + 1; j < tr->n; j++) {
			const struct ev *a = &tr->ev[i], *b = &tr->ev[j];

			if (a->pid != b->pid || a->tid != b->tid)
				continue;
			/* Written sorted by start. */
			if (b->ts < a->ts + a->dur)
				return 0;
		}
	return 1;
}

/* @v's chunk's event for @layer (@hop: its hop out), or NULL. */
static const struct ev *find(const struct traced *tr, const struct ev *v, unsigned int layer,
			     int hop)
{
	size_t i;

	for (i = 0; i < tr->n; i++) {
		const struct ev *w = &tr->ev[i];

		if (w->job == v->job && w->pos0 == v->pos0 && w->hop == hop &&
		    layer_of(tr, w) == layer)
			return w;
	}
	return NULL;
}

/* Each chunk through the layers in order: a stage starts after the hop into it. */
static int chunks_in_order(const struct traced *tr, unsigned int layers)
{
	const struct ev *s, *h;
	size_t i;
	unsigned int l;

	for (i = 0; i < tr->n; i++) {
		if (tr->ev[i].hop || layer_of(tr, &tr->ev[i]))
			continue;
		for (l = 0; l < layers; l++) {
			s = find(tr, &tr->ev[i], l, 0);
			h = find(tr, &tr->ev[i], l, 1);
			if (!s || !h || h->ts != s->ts + s->dur)
				return 0;
			if (l + 1 < layers && (s = find(tr, &tr->ev[i], l + 1, 0)) &&
			    s->ts < h->ts + h->dur)
				return 0;
		}
	}
	return 1;
}

/*
 * @sp's stage times the same as @one's, hops inside a device too; its
 * links are the hops out of a device's last stage; as many events.
 */
static int same_work(const struct traced *one, const struct traced *sp, unsigned int *links)
{
	size_t i;

	*links = 0;
	if (one->n != sp->n)
		return 0;
	for (i = 0; i < sp->n; i++) {
		const struct ev *v = &sp->ev[i], *w = find(one, v, layer_of(sp, v), v->hop);
		int last = v->pid + 1 < (int)sp->parts &&
			   layer_of(sp, v) + 1 == sp->first[v->pid + 1];

		if (!w || w->link || v->link != (v->hop && last))
			return 0;
		*links += v->link;
		if (!v->link && v->dur != w->dur)
			return 0;
	}
	return 1;
}

/*
 * A job's span: its first start on the first device to its last hop's end,
 * the modelled time its completion reported; and no job (each waited for
 * before the next) starts before the one before it ended.
 */
static int spans(const struct traced *tr, unsigned int *multi)
{
	long long lo, hi, prev = 0;
	unsigned int j, chunks;
	size_t i;

	*multi = 0;
	for (j = 0; j < tr->jobs; j++) {
		lo = -1;
		hi = 0;
		chunks = 0;
		for (i = 0; i < tr->n; i++) {
			const struct ev *v = &tr->ev[i];

			if (v->job != (int)j)
				continue;
			if (lo < 0 || v->ts < lo)
				lo = v->ts;
			if (v->ts + v->dur > hi)
				hi = v->ts + v->dur;
			chunks += !v->hop && !layer_of(tr, v);
		}
		*multi += chunks > 1;
		if (lo < 0 || hi - lo > tr->job_ns[j] + 1 || hi - lo < tr->job_ns[j] - 1 ||
		    lo < prev - 1)
			return 0;
		prev = hi;
	}
	return 1;
}

/* A traced run on @n devices into @sp: its processes and tracks checked. */
static int split_run(unsigned int n, const char *const *prof, const char *what,
		     struct traced *sp)
{
	char path[] = "/tmp/wafer-trace-pipe-XXXXXX";
	unsigned int k, named = 1, with_ev = 1;
	int fd = mkstemp(path), ok;
	size_t i;

	memset(sp, 0, sizeof(*sp));
	ok = fd >= 0 && !run(n, prof, path, sp);
	wt_ok(ok && sp->parts == n, "%s: a traced run, the model in %u parts (%s)", what,
	      sp->parts, ok ? "ok" : wafer_last_error());
	ok = ok && load(path, sp);
	if (fd >= 0)
		close(fd);
	unlink(path);
	for (k = 0; ok && k < n; k++) {
		int seen = 0;

		for (i = 0; i < sp->n; i++)
			seen |= sp->ev[i].pid == (int)k;
		named &= sp->named[k];
		with_ev &= seen;
	}
	wt_ok(ok && named && with_ev && !sp->named[n], "%s: valid JSON, a named process with "
	      "events per device (%zu modelled events)", what, sp->n);
	wt_ok(ok && tracks_ordered(sp), "%s: every thread in time order without overlap (lanes)",
	      what);
	if (!afd_na)	/* AFD: its layer parts (afd_chain()) */
		wt_ok(ok && chunks_in_order(sp, 5), "%s: every chunk through the 5 layers in "
		      "order across the devices", what);
	return ok;
}

static void split_trace(unsigned int n, const struct traced *one)
{
	static struct traced sp;
	unsigned int links = 0, multi = 0;
	char what[32];
	int ok, same;

	snprintf(what, sizeof(what), "%u devices", n);
	ok = split_run(n, NULL, what, &sp);
	same = ok && same_work(one, &sp, &links);
	wt_ok(same && links, "%u devices: each layer's stage time and each hop inside a device "
	      "as on one device; %u links between devices", n, links);
	same = ok && sp.jobs == one->jobs && spans(&sp, &multi);
	wt_ok(same && multi, "%u devices: a job's span is its reported modelled time (%u of %u "
	      "jobs of several chunks), and each starts after the one before it ended", n,
	      multi, sp.jobs);
}

/* The member of group [@first, @first + @n) holding layer @l of @L (wafer_afd.h). */
static int afd_member_of(unsigned int first, unsigned int n, unsigned int L, unsigned int l)
{
	unsigned int i = 0;

	while ((i + 1) * L / n <= l)
		i++;
	return (int)(first + i);
}

/*
 * Micro-batch @v's (its job and first position) events of the AFD trace:
 * its 2 L layer parts in time order alternate attention and FFN on the
 * members holding each layer, each part's link hop out starts where the
 * part ends and the next part starts no earlier than the hop ended.
 */
static int afd_chain(const struct traced *tr, const struct ev *v, unsigned int na,
		     unsigned int nf, unsigned int L)
{
	const struct ev *part[2 * MAX_LAYERS], *hop;
	unsigned int k = 0, s;
	size_t i, j;

	for (i = 0; i < tr->n && k < 2 * MAX_LAYERS; i++)
		if (tr->ev[i].job == v->job && tr->ev[i].pos0 == v->pos0 && !tr->ev[i].hop)
			part[k++] = &tr->ev[i];
	if (k != 2 * L)
		return 0;
	for (s = 0; s < k; s++) {
		if (part[s]->pid != (s % 2 ? afd_member_of(na, nf, L, s / 2) :
					     afd_member_of(0, na, L, s / 2)) ||
		    (s && part[s]->ts < part[s - 1]->ts))
			return 0;
		if (s + 1 == k)
			break;
		for (hop = NULL, j = 0; j < tr->n && !hop; j++)
			if (tr->ev[j].job == v->job && tr->ev[j].pos0 == v->pos0 &&
			    tr->ev[j].hop && tr->ev[j].link && tr->ev[j].pid == part[s]->pid &&
			    tr->ev[j].ts == part[s]->ts + part[s]->dur)
				hop = &tr->ev[j];
		if (!hop || hop->dur <= 0 || part[s + 1]->ts < hop->ts + hop->dur)
			return 0;
	}
	return 1;
}

/* A traced run on @na attention and @nf FFN devices (wafer_open_afd()). */
static void afd_trace(unsigned int na, unsigned int nf, const char *const *prof,
		      const char *what)
{
	static struct traced tr;
	unsigned int chains = 0, bad = 0, multi = 0;
	size_t i;

	afd_na = na;
	if (split_run(na + nf, prof, what, &tr) == 0) {
		afd_na = 0;
		return;
	}
	afd_na = 0;
	for (i = 0; i < tr.n; i++) {
		const struct ev *v = &tr.ev[i];
		size_t j;

		/* Each micro-batch once: at its first event. */
		for (j = 0; j < i; j++)
			if (tr.ev[j].job == v->job && tr.ev[j].pos0 == v->pos0)
				break;
		if (j < i)
			continue;
		chains++;
		bad += !afd_chain(&tr, v, na, nf, 5);
	}
	wt_ok(chains > tr.jobs && !bad, "%s: each of %u micro-batches (%u jobs) through the 10 "
	      "layer parts in time order, attention and FFN on the members holding each layer, "
	      "a link hop between each (%u wrong)", what, chains, tr.jobs, bad);
	wt_ok(spans(&tr, &multi), "%s: a job's span is its reported modelled time, and each "
	      "starts after the one before it ended", what);
}

int main(void)
{
	static const char *const mixed[] = { "asic", "wafer", "asic" };
	static const char *const asic_wafer[] = { "asic", "asic", "wafer" };
	static struct traced one, mix;
	char path[] = "/tmp/wafer-trace-one-XXXXXX";
	const char *m = wt_model_path("stories260K.bin");
	unsigned int n, multi = 0;
	int fd, ok;

	if (m)
		snprintf(model, sizeof(model), "%s", m);
	m = wt_model_path("tok512.bin");
	if (m)
		snprintf(tokpath, sizeof(tokpath), "%s", m);
	if (!wt_ok(model[0] && tokpath[0], "the shared model and tokenizer"))
		return wt_done();
	fd = mkstemp(path);
	ok = fd >= 0 && !run(1, NULL, path, &one) && load(path, &one);
	if (fd >= 0)
		close(fd);
	unlink(path);
	ok = wt_ok(ok && one.parts == 1 && chunks_in_order(&one, 5) && spans(&one, &multi),
		   "one device: the reference trace, %zu modelled events, %u jobs", one.n,
		   one.jobs);
	for (n = 2; ok && n <= 5; n++)
		split_trace(n, &one);
	/* Members of 4, 16 and 4 stages: each its own stage numbers. */
	if (ok)
		split_run(3, mixed, "asic + wafer + asic", &mix);
	afd_trace(1, 1, NULL, "--afd 0:1");
	afd_trace(2, 1, asic_wafer, "--afd 0-1:2 asic:wafer");
	return wt_done();
}
