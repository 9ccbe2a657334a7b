/* Helpers shared by the files of the rules engine (act.c and the action
 * modules act_*.c). Not a public interface: see include/sluice/http/act.h.
 */
#ifndef SLUICE_HTTP_ACT_INT_H
#define SLUICE_HTTP_ACT_INT_H

#include <stddef.h>
#include <sys/types.h>
#include <sluice/http/act.h>

struct sample;
struct sample_expr;
struct lf_expr;

/* Room for one rendered log-format argument or one rewritten value: the
 * exec paths render into stack buffers of this size, never the heap. */
#define ACT_FMT_MAX 8192

/* A log-format argument. A format without '%' is kept as constant text
 * and never goes through the renderer. */
struct act_fmt {
	char *text;                  /* as written (NUL-terminated) */
	size_t len;
	struct lf_expr *lf;          /* NULL: constant text */
};

/* act_rule.flags bits private to the rules engine (act.h's use the low
 * ones): set by the parser before the action's parse() runs. */
#define ACT_RULE_F_BE_SIDE  0x100    /* the proxy has a backend side (backend,
                                      * listen): its request rules know the
                                      * backend */
#define ACT_RULE_F_HTTP_PX  0x200    /* the proxy is in HTTP mode: the layer-6
                                      * fetches see no raw request there */

/* SMP_USE_* bits the data of rule <r>'s rule set offer (HAProxy 2.6's
 * choice: see SMP_AVAIL_*). */
unsigned int act_avail(const struct act_rule *r);

/* Compiles <text> for rule <r>: refuses a %[sample] whose data the rule set
 * never has, naming it. What a %[sample] gives is written with its control
 * characters as %XX (bytes below 0x20 but TAB, and DEL; a NUL does not cut
 * it), as HAProxy's HTTP formats do. Returns 0 or -1 with a message. */
int act_fmt_parse(struct act_fmt *f, const char *text, const struct act_rule *r,
                  char *err, size_t errlen);
/* The same, with <escape> 0 for the formats HAProxy renders raw (set-var-fmt:
 * control characters kept, the sample cut at its first NUL). */
int act_fmt_parse_opt(struct act_fmt *f, const char *text, const struct act_rule *r,
                      int escape, char *err, size_t errlen);
/* Renders into <out> (NUL-terminated, cut to <room>). Returns the length. */
size_t act_fmt_render(const struct act_fmt *f, struct act_env *env, char *out, size_t room);
void act_fmt_free(struct act_fmt *f);

/* A sample expression argument, with the same availability check. */
struct sample_expr *act_expr_parse(const char *text, const struct act_rule *r,
                                   char *err, size_t errlen);
/* Evaluates <expr> with SMP_OPT_FINAL as actions do (HAProxy's actions never
 * wait for a sample), cast to <type> unless SMP_T_ANY. Returns 1 or 0. */
int act_expr_eval(const struct sample_expr *expr, struct act_env *env,
                  int type, struct sample *smp);

/* What a failed rewrite gives: ACT_V_ERROR in strict mode (the default),
 * ACT_V_CONTINUE after "strict-mode off". */
enum act_verdict act_rewrite_failed(const struct act_env *env);

/* The rule set's message and its edit context, or NULL when the rule set
 * has none (tcp-request connection, a TCP stream). */
static inline struct http_edit *act_edit(const struct act_env *env)
{
	return env->msg && env->edit ? env->edit : NULL;
}

/* Writes <len> bytes at the end of env->reply. 0, or -1 if no room. */
int act_reply_put(struct act_env *env, const char *p, size_t len);

/* Checks that a time argument is valid; HAProxy's units. */
int act_parse_time(const char *word, const char *what, int *ms, char *err, size_t errlen);

/* Small message helpers: "expects exactly N argument(s) <usage>". */
int act_err_nargs(char *err, size_t errlen, int want, const char *usage);

#endif
