/* Regular expressions: PCRE2 (8-bit), JIT-compiled when the platform allows.
 *
 * A compiled regex is read-only and shared by all threads; matching uses a
 * per-thread match-data block, so no allocation happens per match.
 */
#ifndef SLUICE_EXPR_REGEX_H
#define SLUICE_EXPR_REGEX_H

#include <stddef.h>

#define REGEX_MAX_GROUPS 10          /* \0 .. \9 */

struct regex;

/* Compiles <str> (case-insensitive with <icase>). Returns NULL with
 * "invalid regex '<str>': <PCRE2 message> at offset <n>" in <err>. */
struct regex *regex_compile(const char *str, int icase, char *err, size_t errlen);
void regex_free(struct regex *re);
/* The source text of the regex. */
const char *regex_source(const struct regex *re);

/* 1 if <re> matches somewhere in the <len> bytes at <s>, else 0. */
int regex_match(const struct regex *re, const char *s, size_t len);

/* Matches from offset <start>; fills up to <ngroups> (start, end) offset
 * pairs of the groups in <ovec> (unset groups give (-1, -1)). Returns the
 * number of pairs filled, 0 if no match. */
int regex_match_groups(const struct regex *re, const char *s, size_t len,
                       size_t start, long *ovec, int ngroups);

/* Writes <subst> into <out> (capacity <cap>) with \0..\9 replaced by the
 * groups of the last regex_match_groups() result <ovec>/<ngroups> on <s>.
 * Returns the length written, or -1 if it does not fit. */
long regex_expand(const char *subst, size_t subst_len, const char *s,
                  const long *ovec, int ngroups, char *out, size_t cap);

#endif
