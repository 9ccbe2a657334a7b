/* Error messages into caller-provided buffers (see errmsg.h). */
#include <stdarg.h>
#include <stdio.h>
#include <sluice/core/errmsg.h>

int errmsg_set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

const char *errmsg_char(char c, char buf[8])
{
	if (c >= ' ' && c < 0x7f)
		snprintf(buf, 8, "%c", c);
	else
		snprintf(buf, 8, "\\x%02x", (unsigned char)c);
	return buf;
}
