/* h1-case-adjust: the case HTTP/1 field names are written in toward
 * bogus peers (`option h1-case-adjust-bogus-client|server`), from the
 * global `h1-case-adjust <from> <to>` lines or `h1-case-adjust-file`
 * (src/http/h1_case.c). Built at start-up, read-only afterwards. */
#ifndef SLUICE_HTTP_H1_CASE_H
#define SLUICE_HTTP_H1_CASE_H

#include <sluice/http/msg.h>

/* The name to write for field <name>: its adjusted spelling, or <name>. */
struct ist h1_case_adjust(struct ist name);

/* Adds <from> -> <to> (exported for the unit test). 0, or -1 with <err>. */
int h1_case_add(const char *from, const char *to, char *err, size_t errlen);

void h1_case_free(void);

#endif
