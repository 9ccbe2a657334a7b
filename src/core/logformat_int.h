/* What the two halves of the log-format engine share: logformat.c (the
 * compiler, the render loop and the connection-level variables) and
 * logformat_http.c (HTTP variables and %[sample]). Private to src/core.
 *
 * Compiled expressions are read-only once built; rendering writes only to
 * the caller's buffer (and, for %[sample], to the thread's sample scratch
 * buffers), so any number of threads may render one expression at once.
 */
#ifndef SLUICE_CORE_LOGFORMAT_INT_H
#define SLUICE_CORE_LOGFORMAT_INT_H

#include <stddef.h>
#include <sluice/core/log.h>
#include <sluice/core/logtext.h>

/* Node options, set by %{+F,-F}var flags or for all later variables by %o. */
#define LF_OPT_QUOTE      0x01   /* Q: "string" */
#define LF_OPT_HEX        0x02   /* X: hexadecimal IPs, ports, %Ts %ms %pid %rt %lc */
#define LF_OPT_ESCAPE     0x04   /* E: backslash before '"', '\' and ']' */
#define LF_OPT_MANDATORY  0x08   /* M: an empty string prints "-" (on by default) */

enum lf_node_type {
	LF_NODE_TEXT,           /* literal text (no space in it) */
	LF_NODE_SEP,            /* a run of spaces: at most one space printed */
	LF_NODE_VAR,            /* %var */
	LF_NODE_SAMPLE,         /* %[fetch,conv...] */
};

struct lf_var_def;
struct sample_expr;

struct lf_node {
	enum lf_node_type type;
	unsigned int options;          /* LF_OPT_* */
	const struct lf_var_def *var;  /* LF_NODE_VAR */
	char *text;                    /* LF_NODE_TEXT, NUL-terminated */
	size_t text_len;
	struct sample_expr *expr;      /* LF_NODE_SAMPLE, owned */
};

enum lf_kind {
	LF_K_OPTIONS,           /* %o: flags for the variables after it */
	LF_K_INT,               /* int field */
	LF_K_UINT,              /* unsigned int field, +X prints %04X */
	LF_K_U64,               /* uint64_t field */
	LF_K_TEXT,              /* const char * field */
	LF_K_IP,                /* struct sockaddr_storage field, the address */
	LF_K_PORT,              /* struct sockaddr_storage field, the port */
	LF_K_DATE,              /* the accept date, ->off is its enum lf_date_form */
	LF_K_CUSTOM,            /* rendered by ->render */
};

/* lf_var_def.flags */
#define LF_F_ASAP       0x01    /* '+' prefix under option logasap */
#define LF_F_HTTP_ONLY  0x02    /* HAProxy refuses it outside HTTP mode */
#define LF_F_MAY_SKIP   0x04    /* when it prints nothing, a space before it
                                 * still counts as the last thing printed, so
                                 * the next run of spaces is not printed
                                 * (HAProxy's %hr %hs %hrl %hsl without
                                 * captures) */

typedef void (*lf_render_fn)(struct lf_out *o, const struct lf_node *n,
                             const struct log_fields *f);

struct lf_var_def {
	const char *name;
	enum lf_kind kind;
	size_t off;             /* the field in struct log_fields, or LF_D_* */
	unsigned int flags;     /* LF_F_* */
	lf_render_fn render;    /* LF_K_CUSTOM */
};

/* The accept date, in one of the forms of %t %T %Tl %Ts %ms (<form>). */
enum lf_date_form { LF_D_CLF_MS, LF_D_GMT, LF_D_LOCAL, LF_D_EPOCH, LF_D_MS };

/* logformat.c */
void lf_out_text(struct lf_out *o, const struct lf_node *n, const char *s);
void lf_out_text_len(struct lf_out *o, const struct lf_node *n, const char *s, size_t len);
void lf_out_date(struct lf_out *o, const struct lf_node *n, int64_t us,
                 enum lf_date_form form);

/* logformat_http.c: the HTTP variables, and %[sample] */
extern const struct lf_var_def lf_http_vars[];
extern const size_t lf_http_nvars;
void lf_render_sample(struct lf_out *o, const struct lf_node *n,
                      const struct log_fields *f);

#endif
