/* Configuration tokenizer: splits one line of HAProxy's configuration
 * language into words.
 *
 * Rules (HAProxy 2.6 configuration manual, sections 2.2 and 2.3):
 * - words are separated by spaces/tabs; `#` outside quotes starts a comment,
 *   even in the middle of a word (`a#b` is the word `a`);
 * - "double quotes": spaces, tabs, `#` and `'` kept, backslash escapes and
 *   `$VAR`/`${VAR}` expansion apply; 'single quotes': everything literal up
 *   to the next single quote;
 * - backslash escapes outside single quotes: `\ ` `\<TAB>` `\#` `\\` `\'`
 *   `\"` `\$` give the character itself, `\r` `\n` `\t` the control
 *   character, `\xHH` the byte HH (`\x00` is refused: a word is a C string).
 *   A backslash before any other character is kept with that character
 *   (`\1`, `\.`, `\,` reach regexes and second-level argument parsers
 *   intact), and a backslash ending the line stands for itself;
 * - environment variables are expanded inside double quotes only (an
 *   unquoted `$` is a plain character): `$NAME`, `${NAME}`,
 *   `${NAME-default}` (default used only when NAME is unset, not when it is
 *   empty; the default is literal text up to the first `}`), and
 *   `${NAME[*]}`, which splits the value into several words: each run of
 *   spaces/tabs in the value acts as if the quotes were closed, a space
 *   typed, and the quotes reopened ("<${V[*]}>" with V="a b" gives `<a`
 *   and `b>`; a leading or trailing blank in V gives an empty word there,
 *   as HAProxy does). NAME is letters, digits and `_`, not starting with a
 *   digit; an undefined variable expands to the empty string. A `$` inside
 *   double quotes that does not start a valid name is an error (write `\$`);
 * - pseudo-variables `${.FILE}`, `${.LINE}`, `${.SECTION}` (also without
 *   braces) need the location given to cfg_tokenize_ex(); cfg_tokenize()
 *   refuses them;
 * - quoted and unquoted parts concatenate into one word: a"b c"d -> ab cd;
 *   a word exists as soon as a quote opens in it, so "" is an empty word;
 * - the line may end with "\n" or "\r\n" (CRLF files): both are ignored.
 *
 * No allocation, no global state: callable from any thread.
 */
#ifndef SLUICE_CFG_TOKENIZE_H
#define SLUICE_CFG_TOKENIZE_H

#include <stddef.h>

#define CFG_MAX_ARGS     64
#define CFG_TOKBUF_SIZE  16384

struct cfg_tokens {
	int nargs;
	char *args[CFG_MAX_ARGS + 1];   /* args[nargs] is NULL */
	char buf[CFG_TOKBUF_SIZE];      /* storage for the words */
};

/* Where a line comes from: the values of the pseudo-variables. */
struct cfg_tok_where {
	const char *file;       /* ${.FILE} */
	int line;               /* ${.LINE}, starting at 1 */
	const char *section;    /* ${.SECTION}; NULL or "" before the first one */
};

/* Tokenizes the NUL-terminated <line> into <out>.
 * Returns 0 on success (nargs may be 0 for blank/comment lines), -1 on error
 * with a message naming the column in <err> (unterminated quote, invalid
 * \x sequence, bad variable name, unterminated ${, too many words, line too
 * long once expanded); on error <out> holds no word. */
int cfg_tokenize(const char *line, struct cfg_tokens *out, char *err, size_t errlen);

/* Options of cfg_tokenize_ex(). */
#define CFG_TOK_NO_COMMENT  0x01   /* '#' is a plain character: for -cc, whose
                                    * expression is no configuration line */

/* Same, resolving the pseudo-variables from <where> (may be NULL: they are
 * refused then), with CFG_TOK_* <flags>. */
int cfg_tokenize_ex(const char *line, const struct cfg_tok_where *where,
                    unsigned int flags, struct cfg_tokens *out, char *err,
                    size_t errlen);

#endif
