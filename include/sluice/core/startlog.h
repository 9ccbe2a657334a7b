/* What the process writes on stderr while it starts (src/core/startlog.c),
 * kept for the CLI's `show startup-logs`. */
#ifndef SLUICE_CORE_STARTLOG_H
#define SLUICE_CORE_STARTLOG_H

#include <stddef.h>

/* From now on, what is written through stderr is also kept (up to
 * STARTLOG_MAX bytes). Call once, single-threaded, before parsing. */
void startlog_begin(void);
/* Stops keeping it (before the threads start): the text is frozen. */
void startlog_end(void);
/* The text kept, <*len> bytes (NULL if none). Read-only once ended. */
const char *startlog_text(size_t *len);

#define STARTLOG_MAX 65536

#endif
