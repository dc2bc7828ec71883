// SPDX-License-Identifier: MIT
/*
 * A link's failure (the first error, kept with what it was about) and its
 * control messages on the queue pair: receives posted, sends inline or
 * from the one send buffer.  Below the connections (wafer_link.c) and the
 * records (wafer_link_data.c), which both use them.
 */
#ifdef WAFER_HAVE_RDMA
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "wafer.h"
#include "wafer_internal.h"
#include "wafer_link_internal.h"

int wlk_fail(struct wafer_link *l, int err, const char *fmt, ...)
{
	char msg[192];
	va_list ap;

	if (l->err)
		return l->err;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	l->err = err;
	snprintf(l->why, sizeof(l->why), "link %s peer %s: %s",
		 l->receiver ? "from" : "to", l->peer, msg);
	/* The QP goes to the error state: nothing more lands in our slots. */
	if (l->connected)
		rdma_disconnect(l->id);
	return wafer_set_error(err, "%s", l->why);
}

int wlk_failed(struct wafer_link *l)
{
	return wafer_set_error(l->err, "%s", l->why);
}

int wlk_post_recv(struct wafer_link *l, unsigned int i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(l->msg + (size_t)i * WLK_MSG_MAX),
			       .length = WLK_MSG_MAX, .lkey = l->msg_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;
	int rc = ibv_post_recv(l->id->qp, &wr, &bad);

	return rc ? wlk_fail(l, -rc, "posting a receive: %s", strerror(rc)) : 0;
}

int wlk_send_msg(struct wafer_link *l, const void *buf, size_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = (uint32_t)len };
	struct ibv_send_wr wr = { .wr_id = WLK_WR_CTRL, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	unsigned char *sbuf = l->msg + (size_t)l->nrecv * WLK_MSG_MAX;
	int rc;

	if (len > WLK_MSG_MAX)
		return wlk_fail(l, -EMSGSIZE, "control message of %zu bytes", len);
	if (len <= WLK_INLINE) {
		wr.send_flags |= IBV_SEND_INLINE;
	} else {
		/* The one send buffer: only the hello's messages are this long. */
		memcpy(sbuf, buf, len);
		sge.addr = (uintptr_t)sbuf;
		sge.lkey = l->msg_mr->lkey;
	}
	rc = ibv_post_send(l->id->qp, &wr, &bad);
	if (rc)
		return wlk_fail(l, -rc, "posting a send: %s", strerror(rc));
	l->ctrl_pending++;
	return 0;
}
#endif /* WAFER_HAVE_RDMA */
