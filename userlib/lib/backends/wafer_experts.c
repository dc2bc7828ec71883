// SPDX-License-Identifier: MIT
/*
 * wafer_experts.c - the per-expert load counters of MoE layers: the
 * public call (pipelines: their members in order), the kernel backend's
 * reader of the driver's debugfs table, and the imbalance of a layer.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../wafer_backend.h"
#include "../wafer_internal.h"

int wafer_dev_expert_load(struct wafer_dev *dev, struct wafer_expert_load *out,
			  unsigned int max)
{
	return wafer_dev_expert_load_model(dev, 0, out, max);
}

int wafer_dev_expert_load_model(struct wafer_dev *dev, unsigned int nth,
				struct wafer_expert_load *out, unsigned int max)
{
	unsigned int i, n_members = 0, total = 0;
	struct wafer_dev *m;
	int ret;

	if (!dev || (!out && max))
		return wafer_set_error(-EINVAL, "wafer_dev_expert_load: NULL argument");
	if (dev->ops->member && dev->ops->member(dev, 0, &n_members)) {
		for (i = 0; i < n_members; i++) {
			m = dev->ops->member(dev, i, &n_members);
			ret = wafer_dev_expert_load_model(m, nth, total < max ? out + total : NULL,
							  total < max ? max - total : 0);
			if (ret < 0)
				return ret;
			total += (unsigned int)ret;
		}
		return (int)total;
	}
	if (!dev->ops->expert_load)
		return wafer_set_error(-EOPNOTSUPP, "the %s backend reports no expert load",
				       dev->ops->name);
	return dev->ops->expert_load(dev, nth, out, max);
}

static int model_entries(struct wafer_dev *dev, uint32_t id, struct wafer_expert_load *out,
			 unsigned int max);

/* Model @id of pipeline @dev: each of its @n members' part, in member order. */
static int parts_entries(struct wafer_dev *dev, unsigned int n, uint32_t id,
			 struct wafer_expert_load *out, unsigned int max)
{
	unsigned int k, total = 0;
	uint32_t part;
	int ret;

	for (k = 0; k < n; k++) {
		part = dev->ops->member_model(dev, id, k);
		if (!part)
			continue;	/* no layer of it there */
		ret = model_entries(dev->ops->member(dev, k, &n), part,
				    total < max ? out + total : NULL, total < max ? max - total : 0);
		if (ret < 0)
			return ret;
		total += (unsigned int)ret;
	}
	return (int)total;
}

/* Model @id of @dev (the backend's id). */
static int model_entries(struct wafer_dev *dev, uint32_t id, struct wafer_expert_load *out,
			 unsigned int max)
{
	unsigned int n = 0;

	if (dev->ops->member && dev->ops->member(dev, 0, &n) && dev->ops->member_model)
		return parts_entries(dev, n, id, out, max);
	if (!dev->ops->model_expert_load)
		return wafer_set_error(-EOPNOTSUPP, "the %s backend reports no expert load "
				       "of a model", dev->ops->name);
	return dev->ops->model_expert_load(dev, id, out, max);
}

int wafer_model_expert_load(const struct wafer_model *m, struct wafer_expert_load *out,
			    unsigned int max)
{
	if (!m || (!out && max))
		return wafer_set_error(-EINVAL, "wafer_model_expert_load: NULL argument");
	return model_entries(m->dev, m->id, out, max);
}

double wafer_expert_imbalance(const struct wafer_expert_load *e, unsigned int n,
			      uint32_t layer)
{
	uint64_t max = 0, sum = 0;
	unsigned int i, experts = 0;

	for (i = 0; i < n; i++) {
		if (e[i].layer != layer || e[i].shared)
			continue;
		experts++;
		sum += e[i].tokens;
		if (e[i].tokens > max)
			max = e[i].tokens;
	}
	return sum ? (double)max * experts / (double)sum : 0;
}

/* debugfs names the device's directory after the platform device. */
static int experts_path(int index, char *path, size_t len)
{
	char link[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(link, sizeof(link), "/sys/class/accel/accel%d/device", index);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return wafer_set_error(-errno, "%s: %s", link, strerror(errno));
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	snprintf(path, len, "/sys/kernel/debug/accel/%.64s/experts", base);
	return 0;
}

/* One line of the table: "LAYER [s]EXPERT TOP_K TOKENS". */
static int parse_line(const char *line, struct wafer_expert_load *e)
{
	unsigned long long tokens;
	unsigned int layer, expert, top_k;
	char ex[16], *end;

	if (sscanf(line, "%u %15s %u %llu", &layer, ex, &top_k, &tokens) != 4)
		return -1;
	e->shared = ex[0] == 's';
	errno = 0;
	expert = (unsigned int)strtoul(ex + e->shared, &end, 10);
	if (errno || *end || end == ex + e->shared)
		return -1;
	e->layer = layer;
	e->expert = expert;
	e->top_k = top_k;
	e->tokens = tokens;
	e->stage = WAFER_EXPERT_LOCAL;	/* debugfs has no stage */
	return 0;
}

/** struct table_pick - which section of the table a read wants: the @want-th, or model @want's */
struct table_pick {
	int by_id;
	unsigned int want;
};

/* Whether the section line @line (the @index-th) starts the one @p wants; -1: bad. */
static int section_wanted(const char *line, unsigned int index, const struct table_pick *p)
{
	unsigned int id;

	if (!p->by_id)
		return index == p->want;
	if (sscanf(line, "model %u", &id) != 1)
		return -1;
	return id == p->want;
}

/* The rows of the section @p wants into @out; their count, or -errno. */
static int table_read(FILE *f, const char *path, const struct table_pick *p,
		      struct wafer_expert_load *out, unsigned int max)
{
	struct wafer_expert_load e;
	unsigned int n = 0, sections = 0;
	int in = p->by_id || !p->want, found = 0;
	char line[256];

	if (!fgets(line, sizeof(line), f) || strncmp(line, "layer", 5))
		return wafer_set_error(-EPROTO, "%s: not an expert table", path);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "model ", 6)) {
			if (p->by_id && !sections)
				n = 0;	/* rows before sections name no model */
			in = section_wanted(line, sections++, p);
			if (in < 0)
				return wafer_set_error(-EPROTO, "%s: bad line '%s'", path, line);
			if (found && !in)
				break;	/* past the wanted section */
			found |= in;
			continue;
		}
		if (parse_line(line, &e))
			return wafer_set_error(-EPROTO, "%s: bad line '%s'", path, line);
		if (!in)
			continue;
		if (n < max)
			out[n] = e;
		if (n++ == INT_MAX)
			break;
	}
	if (!found && (p->by_id ? sections : p->want))
		return wafer_set_error(-ENOENT, p->by_id ? "%s: no model of id %u (%u models)" :
				       "%s: no model %u (%u models)", path, p->want, sections);
	return (int)n;
}

/**
 * wafer_experts_read() - the driver's debugfs experts table, from @f
 * @f: the table, read to its end or past the wanted section
 * @path: its name, for errors
 * @nth: the section wanted
 * @out: up to @max entries
 * @max: entries available
 *
 * The column header, then a section per model the device holds, in the
 * firmware's index order ("model ID fw_id FW moe_layers N", then its rows);
 * section 0 is the model the in-process backend's GET_EXPERT_LOAD of model
 * 0 describes.  Rows before any section line (a driver of one model per
 * device) are section 0's.
 *
 * Return: entries in section @nth, -ENOENT if the table has none for @nth
 * 1 or more, or -EPROTO.
 */
int wafer_experts_read(FILE *f, const char *path, unsigned int nth,
		       struct wafer_expert_load *out, unsigned int max)
{
	struct table_pick p = { .by_id = 0, .want = nth };

	return table_read(f, path, &p, out, max);
}

/*
 * The section whose "model ID" is @id (the driver's model id, the kernel
 * backend's); a table without sections (a driver of one model per device):
 * its rows.  -ENOENT if no section is @id's.
 */
int wafer_experts_read_model(FILE *f, const char *path, uint32_t id,
			     struct wafer_expert_load *out, unsigned int max)
{
	struct table_pick p = { .by_id = 1, .want = id };

	return table_read(f, path, &p, out, max);
}

/* The kernel device's debugfs experts table, the section @p wants. */
static int kernel_table(struct wafer_dev *dev, const struct table_pick *p,
			struct wafer_expert_load *out, unsigned int max)
{
	char path[PATH_MAX];
	FILE *f;
	int ret = experts_path(dev->index, path, sizeof(path));

	if (ret)
		return ret;
	f = fopen(path, "re");
	if (!f)
		return wafer_set_error(-errno, "%s: %s (debugfs mounted? root?)", path,
				       strerror(errno));
	ret = table_read(f, path, p, out, max);
	fclose(f);
	return ret;
}

/**
 * wafer_kernel_expert_load() - the kernel backend's expert_load op
 * @dev: a kernel device
 * @nth: the model, in the driver's table's order
 * @out: up to @max entries
 * @max: entries available
 *
 * Return: entries of the @nth model in the driver's table
 * (wafer_experts_read()), or a negative errno.
 */
int wafer_kernel_expert_load(struct wafer_dev *dev, unsigned int nth,
			     struct wafer_expert_load *out, unsigned int max)
{
	struct table_pick p = { .by_id = 0, .want = nth };

	return kernel_table(dev, &p, out, max);
}

/* The kernel backend's model_expert_load op: model @id's section of the table. */
int wafer_kernel_model_expert_load(struct wafer_dev *dev, uint32_t id,
				   struct wafer_expert_load *out, unsigned int max)
{
	struct table_pick p = { .by_id = 1, .want = id };

	return kernel_table(dev, &p, out, max);
}
