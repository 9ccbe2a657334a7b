/* Text helpers shared by the log modules (log.c: syslog framing; logformat.c:
 * log-format rendering): bounded writers that never overflow their buffer,
 * and date formatting with per-thread caches of the broken-down time. */
#ifndef SLUICE_CORE_LOGTEXT_H
#define SLUICE_CORE_LOGTEXT_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <sluice/core/errmsg.h>

static const char month_names[12][4] = {
	"Jan", "Feb", "Mar", "Apr", "May", "Jun",
	"Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
};


/* ---- bounded output: every writer stops at <end>, kept for the NUL ---- */

struct lf_out {
	char *p;
	char *end;
};

static inline void out_char(struct lf_out *o, char c)
{
	if (o->p < o->end)
		*o->p++ = c;
}

static inline void out_mem(struct lf_out *o, const char *s, size_t n)
{
	size_t room = (size_t)(o->end - o->p);

	if (n > room)
		n = room;
	memcpy(o->p, s, n);
	o->p += n;
}

static inline void out_str(struct lf_out *o, const char *s)
{
	out_mem(o, s, strlen(s));
}

/* <v> in decimal, left-padded with zeroes to <width> digits. */
static inline void out_uint(struct lf_out *o, uint64_t v, int width)
{
	char tmp[24];
	int pos = (int)sizeof(tmp);

	do {
		tmp[--pos] = (char)('0' + v % 10);
		v /= 10;
	} while (v && pos > 0);
	while ((int)sizeof(tmp) - pos < width && pos > 0)
		tmp[--pos] = '0';
	out_mem(o, tmp + pos, sizeof(tmp) - (size_t)pos);
}

static inline void out_int(struct lf_out *o, int64_t v)
{
	if (v < 0) {
		out_char(o, '-');
		out_uint(o, (uint64_t)(-(v + 1)) + 1, 0);
	} else {
		out_uint(o, (uint64_t)v, 0);
	}
}

/* <v> in upper-case hexadecimal, left-padded with zeroes to <width>. */
static inline void out_hex(struct lf_out *o, uint64_t v, int width)
{
	static const char digits[] = "0123456789ABCDEF";
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = digits[v & 15];
		v >>= 4;
	} while (v);
	while (n < width && n < (int)sizeof(tmp))
		tmp[n++] = '0';
	while (n)
		out_char(o, tmp[--n]);
}

/* ---- time ---- */

static inline int64_t wall_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline void split_us(int64_t us, time_t *sec, int *frac_us)
{
	int64_t s = us / 1000000, r = us % 1000000;

	if (r < 0) {
		r += 1000000;
		s--;
	}
	*sec = (time_t)s;
	*frac_us = (int)r;
}

/* localtime_r() and gmtime_r() take a process-wide lock in glibc: one
 * conversion per second per thread is enough. */
static inline void cached_localtime(time_t sec, struct tm *tm)
{
	static __thread struct tm cached;
	static __thread time_t cached_sec;
	static __thread int valid;

	if (!valid || cached_sec != sec) {
		localtime_r(&sec, &cached);
		cached_sec = sec;
		valid = 1;
	}
	*tm = cached;
}

static inline void cached_gmtime(time_t sec, struct tm *tm)
{
	static __thread struct tm cached;
	static __thread time_t cached_sec;
	static __thread int valid;

	if (!valid || cached_sec != sec) {
		gmtime_r(&sec, &cached);
		cached_sec = sec;
		valid = 1;
	}
	*tm = cached;
}

/* "dd/Mmm/yyyy:hh:mm:ss", the common-log date HAProxy prints. */
static inline void out_clf_date(struct lf_out *o, const struct tm *tm)
{
	out_uint(o, (uint64_t)tm->tm_mday, 2);
	out_char(o, '/');
	out_str(o, month_names[tm->tm_mon % 12]);
	out_char(o, '/');
	out_uint(o, (uint64_t)(tm->tm_year + 1900), 4);
	out_char(o, ':');
	out_uint(o, (uint64_t)tm->tm_hour, 2);
	out_char(o, ':');
	out_uint(o, (uint64_t)tm->tm_min, 2);
	out_char(o, ':');
	out_uint(o, (uint64_t)tm->tm_sec, 2);
}

/* The local UTC offset as "+hhmm", or "+hh:mm" with <colon>. */
static inline void out_gmtoff(struct lf_out *o, const struct tm *tm, int colon)
{
	long off = tm->tm_gmtoff;

	out_char(o, off < 0 ? '-' : '+');
	if (off < 0)
		off = -off;
	out_uint(o, (uint64_t)(off / 3600), 2);
	if (colon)
		out_char(o, ':');
	out_uint(o, (uint64_t)(off / 60 % 60), 2);
}

/* RFC 5424 section 6.2.3 TIMESTAMP as HAProxy writes it: local time with
 * microseconds and the offset, "2026-11-22T04:25:00.123456+00:00". */
static inline void out_iso_time(struct lf_out *o, int64_t us)
{
	struct tm tm;
	time_t sec;
	int frac;

	split_us(us, &sec, &frac);
	cached_localtime(sec, &tm);
	out_uint(o, (uint64_t)(tm.tm_year + 1900), 4);
	out_char(o, '-');
	out_uint(o, (uint64_t)(tm.tm_mon + 1), 2);
	out_char(o, '-');
	out_uint(o, (uint64_t)tm.tm_mday, 2);
	out_char(o, 'T');
	out_uint(o, (uint64_t)tm.tm_hour, 2);
	out_char(o, ':');
	out_uint(o, (uint64_t)tm.tm_min, 2);
	out_char(o, ':');
	out_uint(o, (uint64_t)tm.tm_sec, 2);
	out_char(o, '.');
	out_uint(o, (uint64_t)frac, 6);
	out_gmtoff(o, &tm, 1);
}

/* RFC 3164 section 4.1.2 TIMESTAMP: "Mmm dd hh:mm:ss", day padded with a
 * space, local time. */
static inline void out_3164_time(struct lf_out *o, int64_t us)
{
	struct tm tm;
	time_t sec;
	int frac;

	split_us(us, &sec, &frac);
	cached_localtime(sec, &tm);
	out_str(o, month_names[tm.tm_mon % 12]);
	out_char(o, ' ');
	if (tm.tm_mday < 10)
		out_char(o, ' ');
	out_uint(o, (uint64_t)tm.tm_mday, 0);
	out_char(o, ' ');
	out_uint(o, (uint64_t)tm.tm_hour, 2);
	out_char(o, ':');
	out_uint(o, (uint64_t)tm.tm_min, 2);
	out_char(o, ':');
	out_uint(o, (uint64_t)tm.tm_sec, 2);
}

#endif
