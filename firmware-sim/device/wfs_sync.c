// SPDX-License-Identifier: MIT
/*
 * wfs_sync.c - the park/abort handshake (see wfs_sync.h).
 */
#include "wfs_sync.h"

int wfs_aborting(struct wfs_sync *sy)
{
	return wfs_os_load32(&sy->abort) || wfs_os_load32(&sy->stopping);
}

int wfs_stopping(struct wfs_sync *sy)
{
	return wfs_os_load32(&sy->stopping);
}

void wfs_park(struct wfs_sync *sy, int is_cp, const u32 *quit)
{
	wfs_os_mutex_lock(sy->lock);
	if (is_cp)
		sy->cp_parked = 1;
	else
		sy->n_parked++;
	wfs_os_cond_broadcast(sy->cond);
	while (wfs_os_load32(&sy->abort) && !wfs_os_load32(&sy->stopping) &&
	       !(quit && wfs_os_load32(quit)))
		wfs_os_cond_wait(sy->cond, sy->lock);
	if (is_cp)
		sy->cp_parked = 0;
	else
		sy->n_parked--;
	wfs_os_mutex_unlock(sy->lock);
}

void wfs_sync_wait_abort(struct wfs_sync *sy)
{
	wfs_os_mutex_lock(sy->lock);
	while (!wfs_aborting(sy))
		wfs_os_cond_wait(sy->cond, sy->lock);
	wfs_os_mutex_unlock(sy->lock);
}

void wfs_sync_request(struct wfs_sync *sy, int stop)
{
	wfs_os_mutex_lock(sy->lock);
	if (stop)
		wfs_os_store32(&sy->stopping, 1);
	wfs_os_store32(&sy->abort, 1);
	wfs_os_cond_broadcast(sy->cond);
	wfs_os_mutex_unlock(sy->lock);
}

void wfs_sync_wait_parked(struct wfs_sync *sy)
{
	wfs_os_mutex_lock(sy->lock);
	while ((sy->n_parked < sy->n_workers || !sy->cp_parked) &&
	       !wfs_os_load32(&sy->stopping))
		wfs_os_cond_wait(sy->cond, sy->lock);
	wfs_os_mutex_unlock(sy->lock);
}

void wfs_sync_resume(struct wfs_sync *sy)
{
	wfs_os_mutex_lock(sy->lock);
	wfs_os_store32(&sy->abort, 0);
	wfs_os_cond_broadcast(sy->cond);
	wfs_os_mutex_unlock(sy->lock);
}
