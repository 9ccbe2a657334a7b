/* Error messages into caller-provided buffers: the convention of every
 * parser (STYLE: errors are returned; the caller that knows the context,
 * such as the file and line, reports them). */
#ifndef SLUICE_CORE_ERRMSG_H
#define SLUICE_CORE_ERRMSG_H

#include <stddef.h>

/* Formats into <err> (if not NULL) and returns -1, so that a parser can
 * write `return errmsg_set(err, errlen, "...", ...);`. */
int errmsg_set(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* <c> as a message should show it: itself if printable, else \xHH. */
const char *errmsg_char(char c, char buf[8]);

#endif
