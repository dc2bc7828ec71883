// SPDX-License-Identifier: MIT
/*
 * wfs_log.c - firmware log ring and its small formatter (see wfs_log.h).
 */
#include "wfs_log.h"

struct out {
	char *buf;
	u32 size;
	u32 len;
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len++] = c;
}

static void put_num(struct out *o, u64 v, u32 base, int neg, u32 width,
		    char pad)
{
	char tmp[24];
	u32 n = 0;

	do {
		u32 d = (u32)(base == 16 ? (v & 15) : v - wfs_div_u64(v, 10) * 10);

		tmp[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
		v = base == 16 ? v >> 4 : wfs_div_u64(v, 10);
	} while (v && n < sizeof(tmp));
	if (neg)
		tmp[n++] = '-';
	while (width > n) {
		put(o, pad);
		width--;
	}
	while (n)
		put(o, tmp[--n]);
}

u32 wfs_vsnprintf(char *buf, u32 size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0 };

	for (; *fmt; fmt++) {
		u32 width = 0, lng = 0;
		char pad = ' ';
		const char *s;
		s64 sv;
		u64 uv;

		if (*fmt != '%') {
			put(&o, *fmt);
			continue;
		}
		fmt++;
		if (*fmt == '0')
			pad = '0';
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (u32)(*fmt++ - '0');
		while (*fmt == 'l') {
			lng++;
			fmt++;
		}
		switch (*fmt) {
		case 's':
			s = va_arg(ap, const char *);
			if (!s)
				s = "(null)";
			while (*s)
				put(&o, *s++);
			break;
		case 'c':
			put(&o, (char)va_arg(ap, int));
			break;
		case 'd':
			if (lng >= 2)
				sv = va_arg(ap, long long);
			else if (lng == 1)
				sv = va_arg(ap, long);
			else
				sv = va_arg(ap, int);
			put_num(&o, sv < 0 ? 0 - (u64)sv : (u64)sv, 10, sv < 0,
				width, pad);
			break;
		case 'u':
		case 'x':
			if (lng >= 2)
				uv = va_arg(ap, unsigned long long);
			else if (lng == 1)
				uv = va_arg(ap, unsigned long);
			else
				uv = va_arg(ap, unsigned int);
			put_num(&o, uv, *fmt == 'x' ? 16 : 10, 0, width, pad);
			break;
		case '%':
			put(&o, '%');
			break;
		case '\0':
			fmt--;
			break;
		default:
			put(&o, '?');
			break;
		}
	}
	if (o.size)
		o.buf[o.len] = '\0';
	return o.len;
}

u32 wfs_snprintf(char *buf, u32 size, const char *fmt, ...)
{
	va_list ap;
	u32 n;

	va_start(ap, fmt);
	n = wfs_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

void wfs_log_init(struct wfs_log *l, char *buf, u32 size,
		  struct wfs_os_mutex *lock, int dev_idx)
{
	l->lock = lock;
	l->buf = buf;
	l->size = size;
	l->head = 0;
	l->t0 = wfs_os_now_ns();
	l->dev_idx = dev_idx;
}

void wfs_log_printf(struct wfs_log *l, int level, const char *fmt, ...)
{
	char line[WFS_LOG_LINE_MAX];
	u64 t = wfs_os_now_ns() - l->t0;
	u64 sec = wfs_div_u64(t, 1000000000u);
	u64 usec = wfs_div_u64(t - sec * 1000000000u, 1000u);
	u32 n, pre, i;
	va_list ap;

	pre = wfs_snprintf(line, sizeof(line), "[%5llu.%06llu] ",
			   (unsigned long long)sec, (unsigned long long)usec);
	va_start(ap, fmt);
	n = pre + wfs_vsnprintf(line + pre, sizeof(line) - pre - 1, fmt, ap);
	va_end(ap);

	wfs_os_log_console(l->dev_idx, level, line + pre);
	line[n++] = '\n';

	wfs_os_mutex_lock(l->lock);
	for (i = 0; i < n; i++)
		l->buf[(l->head + i) & (l->size - 1)] = line[i];
	l->head += n;
	wfs_os_mutex_unlock(l->lock);
}

u32 wfs_log_read(struct wfs_log *l, u64 pos, char *dst, u32 len, u64 *next,
		 u64 *skipped)
{
	u64 oldest, avail;
	u32 i, n;

	wfs_os_mutex_lock(l->lock);
	oldest = l->head > l->size ? l->head - l->size : 0;
	*skipped = 0;
	if (pos < oldest) {
		*skipped = oldest - pos;
		pos = oldest;
	}
	if (pos > l->head)
		pos = l->head;
	avail = l->head - pos;
	n = avail < len ? (u32)avail : len;
	for (i = 0; i < n; i++)
		dst[i] = l->buf[(pos + i) & (l->size - 1)];
	*next = pos + n;
	wfs_os_mutex_unlock(l->lock);
	return n;
}
