/* Configuration parsing: files, sections, and the keyword registry.
 *
 * Each module declares its keywords in one table and registers it with
 * CFG_REGISTER(); the parser looks a line up by its first word, or by its
 * first two words ("timeout client", "option redispatch", "stats socket").
 * Handlers return 0, or -1 with a message in <err>; the parser prefixes it
 * with "[ALERT] file:line:" and counts the error.
 */
#ifndef SLUICE_CFG_CFG_H
#define SLUICE_CFG_CFG_H

#include <stddef.h>
#include <stdint.h>

enum cfg_section {
	CFG_SEC_NONE     = 0,
	CFG_SEC_GLOBAL   = 0x01,
	CFG_SEC_DEFAULTS = 0x02,
	CFG_SEC_FRONTEND = 0x04,
	CFG_SEC_BACKEND  = 0x08,
	CFG_SEC_LISTEN   = 0x10,
	CFG_SEC_HTTP_ERRORS = 0x20,   /* http-errors <name> (src/http/http_cfg.c) */
	CFG_SEC_USERLIST = 0x40,      /* userlist <name> (src/http/userlist.c) */
	CFG_SEC_CACHE    = 0x80,      /* cache <name> (src/http/cache.c) */
	CFG_SEC_PROGRAM  = 0x100,     /* program <name> (src/mgmt/program.c) */
	CFG_SEC_RESOLVERS = 0x200,    /* resolvers <name> (src/net/resolvers.c) */
	CFG_SEC_PEERS    = 0x400,     /* peers <name> (src/proxy/peers_cfg.c) */
};
#define CFG_SEC_PROXY  (CFG_SEC_DEFAULTS | CFG_SEC_FRONTEND | CFG_SEC_BACKEND | CFG_SEC_LISTEN)
#define CFG_SEC_FE     (CFG_SEC_DEFAULTS | CFG_SEC_FRONTEND | CFG_SEC_LISTEN)
#define CFG_SEC_BE     (CFG_SEC_DEFAULTS | CFG_SEC_BACKEND | CFG_SEC_LISTEN)
#define CFG_SEC_FE_ONLY (CFG_SEC_FRONTEND | CFG_SEC_LISTEN)
#define CFG_SEC_BE_ONLY (CFG_SEC_BACKEND | CFG_SEC_LISTEN)

struct proxy;

struct cfg_ctx {
	const char *file;
	int line;
	enum cfg_section section;
	struct proxy *px;        /* proxy being defined (defaults included) */
	int negate;              /* the line started with "no" */
	int skip_section;        /* in a section whose header failed: skip */
	int warnings;
};

struct cfg_kw {
	const char *kw;          /* first word */
	const char *sub;         /* second word, or NULL */
	unsigned int sections;   /* CFG_SEC_* where it is valid */
	int (*parse)(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen);
	int negatable;           /* accepts a "no" prefix */
	unsigned int flags;      /* CFG_KW_F_* */
};

/* In a frontend, a backend-only keyword is ignored with a warning (and the
 * reverse), as HAProxy does; with this flag it is an error instead. */
#define CFG_KW_F_SIDE_FATAL  0x01

struct cfg_kw_table {
	struct cfg_kw_table *next;
	const struct cfg_kw *kws;   /* terminated by an entry with kw == NULL */
};

void cfg_register(struct cfg_kw_table *t);

/* Sections other than global and the proxies: a module registers the word
 * that opens one and the handler of that line (0, or -1 with a message);
 * the lines inside are ordinary keywords registered for <sec>, run with
 * ctx->px NULL. */
struct cfg_section_def {
	const char *name;
	enum cfg_section sec;
	int (*begin)(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen);
	struct cfg_section_def *next;
};
void cfg_register_section(struct cfg_section_def *s);

#define CFG_REGISTER(table) \
	static struct cfg_kw_table table##_reg = { NULL, table }; \
	__attribute__((constructor)) static void table##_register(void) \
	{ cfg_register(&table##_reg); }

/* Parses a file, or every *.cfg file of a directory in name order.
 * Returns the number of errors. */
int cfg_parse_path(const char *path);

/* Cross-checks after all files were read (references, modes, limits).
 * Returns the number of errors. */
int cfg_postparse(void);

/* Post-parse hooks, registered by modules; each returns an error count. */
struct cfg_post_hook {
	int (*fn)(void);
	struct cfg_post_hook *next;
	int order;               /* lower runs first */
};
void cfg_register_post(struct cfg_post_hook *h);

/* Reports an error for a location other than the current line. */
void cfg_alert(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void cfg_warning(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Warnings printed by cfg_warning() so far (zero-warning). */
int cfg_warning_count(void);

/* Value parsers. Return 0, or -1 with a message in <err>. */
int cfg_parse_time_ms(const char *s, int *ms, char *err, size_t errlen);
int cfg_parse_uint(const char *s, long max, long *out, char *err, size_t errlen);
int cfg_parse_size(const char *s, long *out, char *err, size_t errlen);

/* Checks that args[first..] is empty ("extra argument" error otherwise). */
int cfg_no_more_args(char **args, int nargs, int first, char *err, size_t errlen);

#endif
