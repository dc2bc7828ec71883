/* SPDX-License-Identifier: MIT */
/*
 * wfs_log.h - the firmware log: a byte ring of text lines per device.
 *
 * The firmware writes one line per notable event (model placement, load
 * failures with the bytes needed, resets, faults).  The driver reads it
 * with the READ_LOG command (for debugfs); old text is overwritten when the
 * ring is full, and a reader that falls behind is told how many bytes it
 * missed.  Positions are absolute byte counts since the device was created.
 */
#ifndef WFS_LOG_H
#define WFS_LOG_H

#include "wfs_compat.h"
#include "wfs_os.h"

/* Longest line, including the timestamp prefix and the newline. */
#define WFS_LOG_LINE_MAX	320

/**
 * struct wfs_log - a device's log ring
 * @lock: Protects @buf and @head
 * @buf: text storage
 * @size: bytes at @buf, a power of two
 * @head: absolute position of the next byte to write
 * @t0: host time of creation (timestamps are relative to it)
 * @dev_idx: device index, for console copies
 */
struct wfs_log {
	struct wfs_os_mutex *lock;
	char *buf;
	u32 size;
	u64 head;
	u64 t0;
	int dev_idx;
};

/**
 * wfs_log_init() - set up a log over storage the caller owns
 * @l: log
 * @buf: storage
 * @size: bytes at @buf, a power of two >= WFS_LOG_LINE_MAX
 * @lock: lock the log uses
 * @dev_idx: device index
 */
void wfs_log_init(struct wfs_log *l, char *buf, u32 size,
		  struct wfs_os_mutex *lock, int dev_idx);

/**
 * wfs_log_printf() - append a formatted line
 * @l: log
 * @level: 0 information, 1 warning (also copied to the console)
 * @fmt: format: %s %c %d %u %x %ld %lu %lx %lld %llu %llx %% only, with an
 *	optional width; longer lines are truncated
 *
 * Sleeps on the log lock: process context only.
 */
void wfs_log_printf(struct wfs_log *l, int level, const char *fmt, ...)
	WFS_PRINTF(3, 4);

/**
 * wfs_log_read() - copy log text from an absolute position
 * @l: log
 * @pos: first byte wanted
 * @dst: destination
 * @len: bytes at @dst
 * @next: set to the position after the last byte copied
 * @skipped: set to the bytes between @pos and the oldest retained byte
 *
 * Return: bytes copied.
 */
u32 wfs_log_read(struct wfs_log *l, u64 pos, char *dst, u32 len, u64 *next,
		 u64 *skipped);

/**
 * wfs_vsnprintf() - the log's small formatter, usable on its own
 * @buf: destination
 * @size: bytes at @buf (> 0); the output is always NUL-terminated
 * @fmt: format (see wfs_log_printf())
 * @ap: arguments
 *
 * Return: characters written, without the NUL.
 */
u32 wfs_vsnprintf(char *buf, u32 size, const char *fmt, va_list ap);

/**
 * wfs_snprintf() - wfs_vsnprintf() with variable arguments
 * @buf: destination
 * @size: bytes at @buf (> 0)
 * @fmt: format
 *
 * Return: characters written, without the NUL.
 */
u32 wfs_snprintf(char *buf, u32 size, const char *fmt, ...)
	WFS_PRINTF(3, 4);

#endif /* WFS_LOG_H */
