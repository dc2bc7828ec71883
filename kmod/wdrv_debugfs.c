// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer debugfs, under /sys/kernel/debug/accel/wafer.N/:
 *
 *   fw_log       the firmware's log (READ_LOG)
 *   stages       per-stage layers, SRAM use and occupancy (GET_STATS)
 *   sram_map     every named SRAM allocation of every stage (GET_SRAM_MAP)
 *   experts      tokens each expert of each MoE layer ran (GET_EXPERT_LOAD):
 *                a section per model the device holds, "model ID ...",
 *                in the firmware's index order (a dense one: no rows)
 *   models       the models the device holds: ids, owner, layers, SRAM
 *   jobs         jobs the firmware holds, resets and timeouts
 *   heartbeat    the firmware's HEARTBEAT now, stopped heartbeats detected
 *   inject_fault test only (module parameter fault_inject=1): "hang",
 *                "drop", "corrupt", "stall", "pause_load" or "pause_copy"
 *                arms a one-shot firmware fault
 *   inject_warn  test only (fault_inject=1 as well): writing 1 makes the
 *                driver WARN, so the VM harness can prove its kernel-log
 *                splat detector works
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kstrtox.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "wdrv_drv.h"
#include "wdrv_heartbeat.h"
#include "wdrv_job.h"

/*
 * The buffer a show function reads a control command's reply into, with
 * the device entered (it may be unplugged under an open debugfs file).
 */
static void *show_begin(struct wdrv_device *wdev, size_t size, int *idx)
{
	void *buf = kvmalloc(size, GFP_KERNEL);

	if (!buf)
		return ERR_PTR(-ENOMEM);
	if (!drm_dev_enter(&wdev->drm, idx)) {
		kvfree(buf);
		return ERR_PTR(-ENODEV);
	}
	return buf;
}

static void show_end(void *buf, int idx)
{
	drm_dev_exit(idx);
	kvfree(buf);
}

static int fw_log_show(struct seq_file *m, void *unused)
{
	struct wdrv_device *wdev = m->private;
	struct wfw_cpl cpl;
	u64 pos = 0;
	int ret = 0, idx;
	char *buf = show_begin(wdev, WDRV_FW_CTRL_BUF_SIZE, &idx);

	if (IS_ERR(buf))
		return PTR_ERR(buf);
	do {
		ret = wdrv_fw_ctrl_read(&wdev->fw, WFW_OP_READ_LOG, 0, pos, buf,
					WDRV_FW_CTRL_BUF_SIZE, &cpl);
		if (ret)
			break;
		if (cpl.result1)
			seq_printf(m, "[... %u bytes overwritten ...]\n", cpl.result1);
		seq_write(m, buf, min_t(u32, cpl.result0, WDRV_FW_CTRL_BUF_SIZE));
		pos = cpl.value;
	} while (cpl.result0);
	show_end(buf, idx);
	return ret;
}
DEFINE_SHOW_ATTRIBUTE(fw_log);

static int stages_show(struct seq_file *m, void *unused)
{
	struct wdrv_device *wdev = m->private;
	u32 n = wdev->fw.info.num_stages, i;
	struct wfw_stage_stats *st;
	struct wfw_cpl cpl;
	int ret, idx;

	st = show_begin(wdev, array_size(n, sizeof(*st)), &idx);
	if (IS_ERR(st))
		return PTR_ERR(st);
	ret = wdrv_fw_ctrl_read(&wdev->fw, WFW_OP_GET_STATS, 0, 0, st,
				min_t(size_t, n * sizeof(*st), WDRV_FW_CTRL_BUF_SIZE), &cpl);
	if (!ret) {
		seq_puts(m, "stage layers      sram_used  sram_size  sram_peak fifo_hw     tokens       jobs  modelled_busy_ns  host_busy_ns\n");
		for (i = 0; i < cpl.result0 && i < n; i++)
			seq_printf(m, "%5u %2u+%-2u%s%s %10llu %10llu %10llu %7u %10llu %10llu %17llu %13llu\n",
				   st[i].stage, st[i].first_layer, st[i].n_layers,
				   st[i].flags & WFW_STAGE_EMBED ? "E" : " ",
				   st[i].flags & WFW_STAGE_HEAD ? "H" : " ",
				   st[i].sram_used, st[i].sram_size, st[i].sram_peak,
				   st[i].fifo_hw, st[i].tokens, st[i].jobs,
				   st[i].modelled_busy_ns, st[i].host_busy_ns);
	}
	show_end(st, idx);
	return ret;
}
DEFINE_SHOW_ATTRIBUTE(stages);

static int sram_map_show(struct seq_file *m, void *unused)
{
	struct wdrv_device *wdev = m->private;
	u32 max = WDRV_FW_CTRL_BUF_SIZE / sizeof(struct wfw_sram_entry), s, i;
	struct wfw_sram_entry *e;
	struct wfw_cpl cpl;
	int ret = 0, idx;

	e = show_begin(wdev, WDRV_FW_CTRL_BUF_SIZE, &idx);
	if (IS_ERR(e))
		return PTR_ERR(e);
	for (s = 0; s < wdev->fw.info.num_stages && !ret; s++) {
		ret = wdrv_fw_ctrl_read(&wdev->fw, WFW_OP_GET_SRAM_MAP, s, 0, e,
					max * sizeof(*e), &cpl);
		if (ret)
			break;
		seq_printf(m, "stage %u: %llu bytes used, %u allocations\n", s,
			   cpl.value, cpl.result1);
		for (i = 0; i < cpl.result0 && i < max; i++)
			seq_printf(m, "  %#10llx %10llu %.*s\n", e[i].offset, e[i].size,
				   (int)sizeof(e[i].name), e[i].name);
	}
	show_end(e, idx);
	return ret;
}
DEFINE_SHOW_ATTRIBUTE(sram_map);

/*
 * One model's section: "model ID fw_id FW moe_layers N", then one line per
 * expert of its MoE layers: layer, expert ("s" prefix: shared), top-k,
 * tokens (a dense model: none).  One unloaded since the table was read is
 * left out.
 */
static int experts_model_show(struct seq_file *m, struct wdrv_device *wdev,
			      struct wfw_expert_load *e, u32 id, u32 fw_id)
{
	u32 max = WDRV_FW_CTRL_BUF_SIZE / sizeof(*e), first = 0, i;
	struct wfw_cpl cpl;
	int ret;

	do {
		ret = wdrv_fw_ctrl_read_model(&wdev->fw, WFW_OP_GET_EXPERT_LOAD, fw_id, first,
					      0, e, max * sizeof(*e), &cpl);
		if (ret)
			return ret == -ENOENT ? 0 : ret;
		if (!first)
			seq_printf(m, "model %u fw_id %#x moe_layers %u\n", id, fw_id,
				   cpl.result2);
		for (i = 0; i < cpl.result0 && i < max; i++)
			seq_printf(m, "%5u %s%-*u %5u %10llu\n", e[i].layer,
				   e[i].flags & WFW_EXPERT_SHARED ? "s" : "",
				   e[i].flags & WFW_EXPERT_SHARED ? 5 : 6, e[i].expert,
				   e[i].top_k, e[i].tokens);
		first += min(cpl.result0, max);
	} while (cpl.result0 && first < cpl.result1);
	return 0;
}

/* The column header, then a section per model in the firmware's index order. */
static int experts_show(struct seq_file *m, void *unused)
{
	struct wdrv_device *wdev = m->private;
	struct wdrv_model *models[WDRV_MAX_MODELS];
	u32 id[WDRV_MAX_MODELS], fw_id[WDRV_MAX_MODELS], n, i;
	struct wfw_expert_load *e;
	int ret, idx;

	ret = mutex_lock_interruptible(&wdev->model_lock);
	if (ret)
		return ret;
	n = wdrv_model_table_fw_order(&wdev->models, models);
	for (i = 0; i < n; i++) {
		id[i] = models[i]->id;
		fw_id[i] = models[i]->fw_id;
	}
	mutex_unlock(&wdev->model_lock);
	e = show_begin(wdev, WDRV_FW_CTRL_BUF_SIZE, &idx);
	if (IS_ERR(e))
		return PTR_ERR(e);
	seq_puts(m, "layer expert top_k     tokens\n");
	for (i = 0; i < n && !ret; i++)
		ret = experts_model_show(m, wdev, e, id[i], fw_id[i]);
	show_end(e, idx);
	return ret;
}
DEFINE_SHOW_ATTRIBUTE(experts);

/* One line per model of the device's table. */
static int models_show(struct seq_file *m, void *unused)
{
	struct wdrv_device *wdev = m->private;
	struct wdrv_model *model;
	int ret, i;

	ret = mutex_lock_interruptible(&wdev->model_lock);
	if (ret)
		return ret;
	seq_printf(m, "models %u of %u\n", wdrv_model_table_count(&wdev->models),
		   wdev->models.max);
	seq_puts(m, "slot   id     fw_id layers flags  sram_bytes refs owner state\n");
	for (i = 0; i < WDRV_MAX_MODELS; i++) {
		model = wdev->models.slot[i];
		if (!model)
			continue;
		seq_printf(m, "%4d %4u %#9x %6u %#5x %11llu %4u %5s %s\n", i, model->id,
			   model->fw_id, model->n_layers, model->flags, model->sram_bytes,
			   kref_read(&model->ref), model->owner ? "yes" : "no",
			   model->lost ? "lost" : model->stream_blob ? "streamed" : "resident");
	}
	mutex_unlock(&wdev->model_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(models);

static int jobs_show(struct seq_file *m, void *unused)
{
	wdrv_job_queue_show(m->private, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(jobs);

static int heartbeat_show(struct seq_file *m, void *unused)
{
	wdrv_heartbeat_show(m->private, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(heartbeat);

static ssize_t inject_fault_write(struct file *file, const char __user *ubuf,
				  size_t len, loff_t *ppos)
{
	static const char * const names[] = {
		[WFW_FAULT_NONE] = "none",
		[WFW_FAULT_HANG_NEXT_JOB] = "hang",
		[WFW_FAULT_DROP_NEXT_CPL] = "drop",
		[WFW_FAULT_CORRUPT_NEXT_CPL] = "corrupt",
		[WFW_FAULT_STALL_CP] = "stall",
		[WFW_FAULT_PAUSE_NEXT_LOAD] = "pause_load",
		[WFW_FAULT_PAUSE_NEXT_COPY] = "pause_copy",
	};
	struct wdrv_device *wdev = file->private_data;
	struct wfw_cmd cmd = { .opcode = WFW_OP_FAULT_INJECT };
	struct wfw_cpl cpl;
	char buf[16];
	int fault, ret, idx;

	if (!len || len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	fault = sysfs_match_string(names, strim(buf));
	if (fault < 0)
		return fault;
	if (!drm_dev_enter(&wdev->drm, &idx))
		return -ENODEV;
	cmd.fault.fault = fault;
	ret = wdrv_fw_ctrl(&wdev->fw, &cmd, &cpl);
	drm_dev_exit(idx);
	return ret ? ret : len;
}

static const struct file_operations inject_fault_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = inject_fault_write,
	.llseek = noop_llseek,
};

static ssize_t inject_warn_write(struct file *file, const char __user *ubuf,
				 size_t len, loff_t *ppos)
{
	struct wdrv_device *wdev = file->private_data;
	bool on;
	int ret;

	ret = kstrtobool_from_user(ubuf, len, &on);
	if (ret)
		return ret;
	if (on)
		WARN(1, "wafer: accel%u: warning requested through debugfs inject_warn\n",
		     wdev->drm.accel->index);
	return len;
}

static const struct file_operations inject_warn_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = inject_warn_write,
	.llseek = noop_llseek,
};

/*
 * DRM creates the accel device's debugfs directory (accel/<unique>, e.g.
 * accel/wafer.0) but does not call drm_driver.debugfs_init for accel
 * minors, so the driver populates it after registering, as ivpu does.
 */
void wdrv_debugfs_init(struct wdrv_device *wdev)
{
	struct dentry *root = wdev->drm.debugfs_root;

	debugfs_create_file("fw_log", 0400, root, wdev, &fw_log_fops);
	debugfs_create_file("stages", 0400, root, wdev, &stages_fops);
	debugfs_create_file("sram_map", 0400, root, wdev, &sram_map_fops);
	debugfs_create_file("experts", 0400, root, wdev, &experts_fops);
	debugfs_create_file("models", 0400, root, wdev, &models_fops);
	debugfs_create_file("jobs", 0400, root, wdev, &jobs_fops);
	debugfs_create_file("heartbeat", 0400, root, wdev, &heartbeat_fops);
	if (!wdrv_fault_inject)
		return;
	debugfs_create_file("inject_fault", 0200, root, wdev, &inject_fault_fops);
	debugfs_create_file("inject_warn", 0200, root, wdev, &inject_warn_fops);
}
