// SPDX-License-Identifier: MIT
/*
 * A `wafer node` session's voice: its log lines and the error it tells
 * its client.  Below both the control loop (wafer_node.c) and the job
 * runner (wafer_node_run.c), which both speak through it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "wafer_node.h"
#include "wafer_node_io.h"

void wnd_log(struct wnd_session *s, const char *fmt, ...)
{
	va_list ap;

	flockfile(s->log);
	fprintf(s->log, "wafer node: device %u, client %s: ", s->device, s->peer);
	va_start(ap, fmt);
	vfprintf(s->log, fmt, ap);
	va_end(ap);
	fputc('\n', s->log);
	fflush(s->log);
	funlockfile(s->log);
}

void wnd_tell_error(struct wnd_session *s, int err, const char *fmt, ...)
{
	char text[WND_TEXT_MAX + 1], msg[4 + WND_TEXT_MAX];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	for (char *c = text; *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			*c = ' ';
	wnd_log(s, "%s", text);
	if (err >= 0 || err < -4095)
		err = -EIO;
	n = wnd_put_error(msg, err, text);
	pthread_mutex_lock(&s->lock);
	wnd_send(s->fd, WND_ERROR, msg, n, NULL, 0);
	s->told = 1;
	pthread_mutex_unlock(&s->lock);
}
