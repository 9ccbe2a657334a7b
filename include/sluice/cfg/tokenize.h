/* Configuration tokenizer: splits one line of HAProxy's configuration
 * language into words.
 *
 * Rules (HAProxy configuration manual, section 2.2 and 2.3):
 * - words are separated by spaces/tabs; `#` outside quotes starts a comment;
 * - "double quotes": spaces kept, backslash escapes and `$VAR`/`${VAR}`
 *   expansion apply; 'single quotes': everything literal;
 * - backslash escapes outside single quotes: `\ ` `\#` `\\` `\'` `\"` `\$`,
 *   `\r` `\n` `\t`, `\xHH`;
 * - environment variables `$NAME` and `${NAME}`, `${NAME-default}`, and
 *   `${NAME[*]}` (split into several words on spaces when unquoted);
 *   an undefined variable expands to the empty string;
 * - quoted and unquoted parts concatenate into one word: a"b c"d -> ab cd.
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

/* Tokenizes the NUL-terminated <line> (without its newline) into <out>.
 * Returns 0 on success (nargs may be 0 for blank/comment lines), -1 on error
 * with a message in <err> (unterminated quote, bad escape, too many words,
 * line too long, unterminated ${). */
int cfg_tokenize(const char *line, struct cfg_tokens *out, char *err, size_t errlen);

#endif
