/* Conditions: the language of `.if`/`.elif` blocks and of `-cc EXPR`
 * (HAProxy 2.6 configuration manual, section 2.4).
 *
 * The words of the condition are joined with single spaces and the result
 * is parsed as one expression:
 *
 *   expr := and ( "||" and )*          "&&" binds tighter than "||"
 *   and  := term ( "&&" term )*
 *   term := "!" term | "(" expr ")" | integer | predicate [ "(" args ")" ]
 *
 * - an empty (or all-blank) expression is false;
 * - an integer ([+-] then decimal digits, or 0x and hex digits) is true when
 *   non-zero: "0" and "00" are false, "1", "42", "-1" true;
 * - there is no other bare term: a word that is not an integer must be a
 *   predicate name, so "yes" or "abc" is an error (unknown predicate), not a
 *   truth value;
 * - predicates (case-sensitive): defined(VAR) (environment variable set,
 *   even empty), feature(NAME) (NAME among the "+NAME" build features),
 *   streq(A,B), strneq(A,B), version_atleast(V), version_before(V) (V
 *   against SLUICE_CFG_LEVEL, see cfg_version_cmp()). A predicate written
 *   without parentheses, or with "()", gets one empty argument:
 *   `defined` is false, `version_atleast` is true (an empty version is 0),
 *   `streq` is an error (two arguments needed);
 * - arguments are separated by commas and end at ')'; blanks in them are
 *   kept (streq(a , a) compares "a " with " a"); "double" and 'single'
 *   quotes protect commas and parentheses; the escapes \  \\ \' \" \n \r \t
 *   are decoded (in double quotes too), any other backslash is kept;
 * - the whole expression is parsed even where the result is already known,
 *   so `0 && nope()` is an error.
 */
#ifndef SLUICE_CFG_COND_H
#define SLUICE_CFG_COND_H

#include <stddef.h>

/* Levels of nested '.if' blocks: 99 are accepted, the 100th is refused, as
 * HAProxy 2.6 does */
#define CFG_COND_MAXDEPTH 99

/* Evaluates the words <args>[0..nargs) (already tokenized and expanded) as
 * one expression. Returns 1 (true), 0 (false) or -1 (error, message in err). */
int cfg_cond_eval(char **args, int nargs, char *err, size_t errlen);

/* Tokenizes then evaluates <expr> (for -cc). Same return values. */
int cfg_cond_eval_str(const char *expr, char *err, size_t errlen);

/* Compares two version strings the way HAProxy orders its releases:
 *   N[.N[.N[.N]]] [-dev|-pre|-rc[N]] [-COMMITS] [+anything | -anything]
 * Missing components are 0 ("2.5" == "2.5.0", "" == "0"); at one version,
 * dev < pre < rc < release, each by its number ("2.5-dev0" < "2.5-dev12" <
 * "2.5-rc1" < "2.5" < "2.5.1"); a count of commits after a tag orders after
 * the tag ("2.6.12" < "2.6.12-3"); other suffixes (+deb12u4, -g1234abc) are
 * ignored. Returns -1, 0 or 1; -2 when one of them is not a version. */
int cfg_version_cmp(const char *a, const char *b);

struct cfg_cond_stack {
	int depth;
	unsigned char state[CFG_COND_MAXDEPTH];   /* cond.c private encoding */
};

enum cfg_directive {
	CFG_DIR_NONE = 0,     /* not a dot-directive: a normal line */
	CFG_DIR_HANDLED,      /* .if/.elif/.else/.endif consumed, or any
	                       * directive inside an inactive block */
	CFG_DIR_DIAG,         /* .diag: message in err, print only with -dD */
	CFG_DIR_NOTICE,       /* .notice: message in err, print as [NOTICE] */
	CFG_DIR_WARNING,      /* .warning: message in err, print as [WARNING] */
	CFG_DIR_ERROR = -1,   /* syntax error, or .alert: message in err */
};

void cfg_cond_init(struct cfg_cond_stack *s);

/* Interprets a line whose first word starts with '.' (CFG_DIR_NONE for any
 * other line). In an active block, a .diag/.notice/.warning/.alert line takes
 * at most one word (quote the message) and returns it in err; an unknown
 * directive is an error. Inside an inactive block, only .if/.elif/.else/
 * .endif matter, and only for nesting: their conditions are not evaluated
 * (nor is an .elif's once a branch was taken), every other dot-line is
 * ignored. Structure errors are always reported: .elif/.else/.endif without
 * .if, .elif after .else, a second .else, an argument after .else/.endif,
 * nesting deeper than CFG_COND_MAXDEPTH (once for a run of levels past the
 * limit, not once per level). After an error the stack stays
 * consistent (a failed .if still opens a level, inactive), so the caller may
 * go on to report more errors.
 *
 * An `.if` left open at end of file is not seen here: the caller checks
 * `s->depth > 0` once the last line is read and reports it. */
enum cfg_directive cfg_cond_directive(struct cfg_cond_stack *s, char **args,
                                      int nargs, char *err, size_t errlen);

/* Non-zero when the lines at this point are to be parsed. */
int cfg_cond_active(const struct cfg_cond_stack *s);

#endif
