// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer model table: the models a device holds, with their owners.  Pure
 * bookkeeping (no firmware command, no lock of its own: the caller holds
 * the device's model_lock), so KUnit tests it alone.  See wdrv_model.h.
 */
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/minmax.h>

#include "wdrv_model.h"

/**
 * wdrv_model_table_init() - an empty table for a firmware
 * @t: the table
 * @fw_abi_version: the firmware's WFW_ABI_VERSION (GET_INFO)
 */
void wdrv_model_table_init(struct wdrv_model_table *t, u32 fw_abi_version)
{
	*t = (struct wdrv_model_table){ .max = 1 };
	/* Several models came with firmware ABI 1.4. */
	if (WFW_ABI_VERSION_MAJOR(fw_abi_version) > 1 ||
	    WFW_ABI_VERSION_MINOR(fw_abi_version) >= 4)
		t->max = WDRV_MAX_MODELS;
}

/**
 * wdrv_model_table_count() - models in the table
 * @t: the table
 *
 * The only function a caller may use without the lock (sysfs): then the
 * count is a snapshot that a load or unload may change at once.
 *
 * Return: loaded models, including those a reset lost whose references
 * are still held.
 */
u32 wdrv_model_table_count(const struct wdrv_model_table *t)
{
	u32 i, n = 0;

	for (i = 0; i < WDRV_MAX_MODELS; i++)
		n += !!READ_ONCE(t->slot[i]);
	return n;
}

/**
 * wdrv_model_table_add() - enter a model the file is about to load
 * @t: the table
 * @model: the model; its @owner is set, @id is assigned here
 * @file_models: models @model->owner holds already
 * @file_max: models one file may hold (max_file_models)
 *
 * Return: 0, -EMFILE (the file holds @file_max models), or -EBUSY (the
 * device holds as many models as its firmware does).
 */
int wdrv_model_table_add(struct wdrv_model_table *t, struct wdrv_model *model,
			 u32 file_models, u32 file_max)
{
	u32 i;

	if (file_models >= file_max)
		return -EMFILE;
	for (i = 0; i < min_t(u32, t->max, WDRV_MAX_MODELS); i++) {
		if (!t->slot[i]) {
			WRITE_ONCE(t->slot[i], model);
			/* Never 0 (MODEL_UNLOAD and CTX_CREATE refuse it). */
			if (!++t->next_id)
				++t->next_id;
			model->id = t->next_id;
			return 0;
		}
	}
	return -EBUSY;
}

/**
 * wdrv_model_table_del() - take a model out of the table
 * @t: the table
 * @model: the model
 *
 * Return: whether it was in the table.
 */
bool wdrv_model_table_del(struct wdrv_model_table *t, struct wdrv_model *model)
{
	u32 i;

	for (i = 0; i < WDRV_MAX_MODELS; i++) {
		if (t->slot[i] == model) {
			WRITE_ONCE(t->slot[i], NULL);
			return true;
		}
	}
	return false;
}

/**
 * wdrv_model_table_has() - whether the firmware still holds a model
 * @t: the table
 * @model: the model
 *
 * Return: @model is in the table and no reset lost it; commands may name
 * its firmware id (and its contexts').
 */
bool wdrv_model_table_has(const struct wdrv_model_table *t, const struct wdrv_model *model)
{
	u32 i;

	for (i = 0; i < WDRV_MAX_MODELS; i++)
		if (t->slot[i] == model)
			return !model->lost;
	return false;
}

/**
 * wdrv_model_table_find() - a file's model by its uapi id
 * @t: the table
 * @owner: the file
 * @id: the id MODEL_LOAD gave
 *
 * Return: the model (lost or not), or NULL if @owner holds none by @id
 * (one still loading is not found).
 */
struct wdrv_model *wdrv_model_table_find(const struct wdrv_model_table *t,
					 const struct wdrv_file *owner, u32 id)
{
	u32 i;

	for (i = 0; i < WDRV_MAX_MODELS; i++) {
		struct wdrv_model *m = t->slot[i];

		if (m && !m->loading && m->owner == owner && m->id == id)
			return m;
	}
	return NULL;
}

/**
 * wdrv_model_table_owned() - a file's first model in table order
 * @t: the table
 * @owner: the file
 *
 * Return: the model, or NULL if @owner holds none (loaded: one still
 * loading is not counted).
 */
struct wdrv_model *wdrv_model_table_owned(const struct wdrv_model_table *t,
					  const struct wdrv_file *owner)
{
	u32 i;

	for (i = 0; i < WDRV_MAX_MODELS; i++)
		if (t->slot[i] && !t->slot[i]->loading && t->slot[i]->owner == owner)
			return t->slot[i];
	return NULL;
}

/**
 * wdrv_model_table_loading() - loads under way
 * @t: the table
 *
 * Return: models of the table still loading (the firmware may hold one
 * whose id is not recorded yet).
 */
u32 wdrv_model_table_loading(const struct wdrv_model_table *t)
{
	u32 i, n = 0;

	for (i = 0; i < WDRV_MAX_MODELS; i++)
		n += t->slot[i] && t->slot[i]->loading;
	return n;
}

/**
 * wdrv_model_table_fw_known() - whether a firmware model is the driver's
 * @t: the table
 * @fw_id: a model id the firmware reported
 *
 * Return: a model of the table, not lost, has @fw_id; a firmware model
 * that is not is an orphan (a load whose outcome a timeout hid).
 */
bool wdrv_model_table_fw_known(const struct wdrv_model_table *t, u32 fw_id)
{
	u32 i;

	for (i = 0; i < WDRV_MAX_MODELS; i++)
		if (t->slot[i] && !t->slot[i]->lost && t->slot[i]->fw_id == fw_id)
			return true;
	return false;
}

/**
 * wdrv_model_table_others() - models the firmware runs besides one
 * @t: the table
 * @fw_id: the firmware id of the one (loaded, or an orphan)
 *
 * Return: models of the table, not lost and loaded (a firmware id known),
 * other than @fw_id: whose jobs a full reset would fail.
 */
u32 wdrv_model_table_others(const struct wdrv_model_table *t, u32 fw_id)
{
	u32 i, n = 0;

	for (i = 0; i < WDRV_MAX_MODELS; i++) {
		const struct wdrv_model *m = t->slot[i];

		n += m && !m->lost && m->fw_id && m->fw_id != fw_id;
	}
	return n;
}

/**
 * wdrv_model_table_lose_all() - a full reset dropped every model
 * @t: the table
 *
 * The models stay until their references go (their owners unload or
 * close), but nothing is sent about them or their contexts any more.
 */
void wdrv_model_table_lose_all(struct wdrv_model_table *t)
{
	u32 i;

	for (i = 0; i < WDRV_MAX_MODELS; i++)
		if (t->slot[i])
			t->slot[i]->lost = true;
}

/**
 * wdrv_model_table_fw_order() - the models the firmware holds, in its order
 * @t: the table
 * @out: filled with up to WDRV_MAX_MODELS models
 *
 * The models the firmware holds (not lost, their load complete) by firmware
 * index, WFW_MODEL_IDX() of their @fw_id: the first is what a command about
 * model 0 describes (debugfs experts lists them in this order).
 *
 * Return: models in @out.
 */
u32 wdrv_model_table_fw_order(const struct wdrv_model_table *t,
			      struct wdrv_model *out[WDRV_MAX_MODELS])
{
	u32 i, j, n = 0;

	for (i = 0; i < WDRV_MAX_MODELS; i++) {
		struct wdrv_model *m = t->slot[i];

		if (!m || m->lost || m->loading || !m->fw_id)
			continue;
		for (j = n; j && WFW_MODEL_IDX(out[j - 1]->fw_id) > WFW_MODEL_IDX(m->fw_id); j--)
			out[j] = out[j - 1];
		out[j] = m;
		n++;
	}
	return n;
}
