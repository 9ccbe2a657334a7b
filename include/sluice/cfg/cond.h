/* Conditions: the language of `.if`/`.elif` blocks and of `-cc EXPR`.
 *
 * Terms: defined(VAR), feature(NAME), streq(A,B), strneq(A,B),
 * version_atleast(V), version_before(V), a number (non-zero = true), a
 * string (non-empty and not "0" = true? see cond.c), combined with `!`, `&&`,
 * `||` and parentheses, as in HAProxy 2.6. Versions compare against the
 * configuration-language level sluice implements (SLUICE_CFG_LEVEL).
 */
#ifndef SLUICE_CFG_COND_H
#define SLUICE_CFG_COND_H

#include <stddef.h>

#define CFG_COND_MAXDEPTH 32

/* Evaluates the words <args>[0..nargs) (already tokenized and expanded) as
 * one expression. Returns 1 (true), 0 (false) or -1 (error, message in err). */
int cfg_cond_eval(char **args, int nargs, char *err, size_t errlen);

/* Tokenizes then evaluates <expr> (for -cc). Same return values. */
int cfg_cond_eval_str(const char *expr, char *err, size_t errlen);

/* Compares two version strings the way HAProxy does ("2.5-dev0" < "2.5").
 * Returns <0, 0, >0; -2 when one is not a version. */
int cfg_version_cmp(const char *a, const char *b);

struct cfg_cond_stack {
	int depth;
	unsigned char state[CFG_COND_MAXDEPTH];   /* cond.c private encoding */
};

enum cfg_directive {
	CFG_DIR_NONE = 0,     /* not a dot-directive: a normal line */
	CFG_DIR_HANDLED,      /* .if/.elif/.else/.endif consumed */
	CFG_DIR_DIAG,         /* .diag: message in err, print only with -dD */
	CFG_DIR_NOTICE,       /* .notice: message in err, print as [NOTICE] */
	CFG_DIR_WARNING,      /* .warning: message in err, print as [WARNING] */
	CFG_DIR_ERROR = -1,   /* syntax error, or .alert: message in err */
};

void cfg_cond_init(struct cfg_cond_stack *s);

/* Interprets a line whose first word starts with '.'. Directives inside an
 * inactive block only affect nesting. */
enum cfg_directive cfg_cond_directive(struct cfg_cond_stack *s, char **args,
                                      int nargs, char *err, size_t errlen);

/* Non-zero when the lines at this point are to be parsed. */
int cfg_cond_active(const struct cfg_cond_stack *s);

#endif
