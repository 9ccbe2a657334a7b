/* The start-up log: stderr is replaced by a stream that writes to
 * descriptor 2 as before, unbuffered, and that also keeps a copy of what
 * is written until startlog_end(), at most STARTLOG_MAX bytes (the rest
 * is dropped from the copy, never from stderr).
 *
 * The copy is appended to while the process is single-threaded (parsing,
 * binding, start-up) and only read once startlog_end() froze it, before
 * the threads start: no lock is needed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sluice/core/startlog.h>

static char *startlog_buf;
static size_t startlog_len;
static int startlog_on;

static ssize_t startlog_write(void *cookie, const char *buf, size_t size)
{
	size_t off = 0;

	if (startlog_on && startlog_len < STARTLOG_MAX) {
		size_t n = size < STARTLOG_MAX - startlog_len ? size : STARTLOG_MAX - startlog_len;

		if (!startlog_buf)
			startlog_buf = malloc(STARTLOG_MAX);
		if (startlog_buf) {
			memcpy(startlog_buf + startlog_len, buf, n);
			startlog_len += n;
		}
	}
	while (off < size) {
		ssize_t w = write(STDERR_FILENO, buf + off, size - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;   /* as a failed write to stderr: the text is lost */
		off += (size_t)w;
	}
	return (ssize_t)size;
}

void startlog_begin(void)
{
	cookie_io_functions_t io = { .write = startlog_write };
	FILE *f = fopencookie(NULL, "w", io);

	if (!f)
		return;   /* stderr stays as it is: no start-up log */
	setvbuf(f, NULL, _IONBF, 0);
	fflush(stderr);
	stderr = f;
	startlog_on = 1;
}

void startlog_end(void)
{
	startlog_on = 0;
}

const char *startlog_text(size_t *len)
{
	*len = startlog_on ? 0 : startlog_len;
	return startlog_on ? NULL : startlog_buf;
}
