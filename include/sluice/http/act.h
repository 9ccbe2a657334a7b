/* Rules and actions: http-request, http-response, http-after-response,
 * tcp-request connection|session|content, tcp-response content (HAProxy
 * 2.6 manual, sections 4.2 and 4.3).
 *
 * A rule is `<ruleset> <action> [args] [if|unless <cond>]`, parsed once at
 * configuration time into a struct act_rule appended to one of the
 * proxy's lists (proxy.h). At run time the stream calls act_exec() with an
 * environment describing the message being analysed; the rules run in
 * order until one ends the rule set (allow, deny, return, redirect...),
 * and the verdict tells the stream what to do next.
 *
 * Actions never see wire syntax: they edit the message model through
 * msgedit.h, evaluate samples through the smp_ctx the stream prepared, and
 * render log-format arguments with stream_lf_render(). An action that
 * answers the client itself writes the complete HTTP/1 response into
 * env->reply (a buffer the stream supplies) and returns ACT_V_REPLY.
 *
 * Concurrency: rule lists are read-only after configuration; act_exec()
 * runs on the stream's owner thread only.
 */
#ifndef SLUICE_HTTP_ACT_H
#define SLUICE_HTTP_ACT_H

#include <stddef.h>
#include <stdint.h>
#include <sluice/core/buf.h>
#include <sluice/core/list.h>
#include <sluice/cfg/cfg.h>
#include <sluice/http/msg.h>
#include <sluice/http/msgedit.h>

struct stream;
struct proxy;
struct acl_cond;
struct smp_ctx;
struct http_reply;

enum act_ruleset {
	ACT_HTTP_REQ = 0,    /* http-request */
	ACT_HTTP_RES,        /* http-response */
	ACT_HTTP_AFTER,      /* http-after-response */
	ACT_TCP_REQ_CONN,    /* tcp-request connection */
	ACT_TCP_REQ_SESS,    /* tcp-request session */
	ACT_TCP_REQ_CONT,    /* tcp-request content */
	ACT_TCP_RES_CONT,    /* tcp-response content */
	ACT_RULESETS
};

enum act_verdict {
	ACT_V_CONTINUE = 0,  /* every rule ran (or none applied): go on */
	ACT_V_STOP,          /* allow (or accept): skip the rest of this rule set */
	ACT_V_YIELD,         /* a condition or wait-for-body needs more data: call
	                      * act_exec() again later, it resumes at the same rule;
	                      * the stream ends the wait at the inspect/request timeout */
	ACT_V_DENY,          /* deny (env->status, default 403; env->reply if the
	                      * rule supplied one) then close, as HAProxy does */
	ACT_V_TARPIT,        /* hold the request for timeout tarpit, then answer
	                      * env->status (default 500) */
	ACT_V_REPLY,         /* env->reply holds a complete response to send instead
	                      * of forwarding (return, redirect); env->status is its
	                      * status; env->close asks to close after it */
	ACT_V_REJECT,        /* reject / silent-drop: close without a response */
	ACT_V_ERROR,         /* an action failed (rewrite with no room): answer 500
	                      * (request) or 502 (response), as HAProxy's strict-mode */
	ACT_V_USE_SERVICE,   /* use-service: env->service names it */
	/* additions of the rules engine */
	ACT_V_CLOSE,         /* tcp-response content close: close the server
	                      * connection once what was received is forwarded */
	ACT_V_SWITCH_HTTP,   /* tcp-request content switch-mode http: go on with
	                      * the stream in HTTP mode (env->switch_proto: NULL,
	                      * "h1" or "h2") */
};

/* What the stream hands to act_exec(). */
struct act_env {
	struct stream *s;
	struct proxy *px;            /* proxy whose rules run (frontend or backend) */
	enum act_ruleset set;
	struct smp_ctx *smp;         /* ready for this phase (dir, msgs, vars) */
	struct http_msg *msg;        /* message analysed (NULL for tcp-request
	                              * connection/session) */
	struct http_edit *edit;      /* its edit context */
	struct buffer *reply;        /* empty buffer for ACT_V_REPLY (NULL in
	                              * rule sets that cannot answer) */
	/* outputs */
	int status;                  /* DENY/TARPIT/REPLY status */
	const struct http_reply *deny_reply;   /* DENY with a custom reply, or NULL */
	int close;                   /* REPLY: close the connection after it */
	const char *service;         /* USE_SERVICE */
	/* resume point for ACT_V_YIELD */
	struct list *resume;         /* rule to start from (NULL: the first) */

	/* additions of the rules engine. Zero them with the rest of the
	 * environment before the first act_exec() of a rule set, and keep the
	 * environment as it is across an ACT_V_YIELD. */
	int buf_full;                /* in: the analysed buffer is full (wait-for-body
	                              * stops waiting) */
	uint64_t wait_exp_ms;        /* YIELD of wait-for-body: the wait ends at this
	                              * date of the loop clock (th_ctx->now_ms): arm
	                              * a timer for it and call again, the rule then
	                              * goes on; 0 when the yield has no deadline of
	                              * its own */
	int silent;                  /* REJECT: silent-drop (no FIN/RST if possible) */
	int expect_proxy;            /* tcp-request connection expect-proxy layer4:
	                              * read a PROXY header before anything else */
	const char *switch_proto;    /* SWITCH_HTTP: "h1", "h2" or NULL (guess) */
	int strict_off;              /* internal: strict-mode off in effect */
	int auth;                    /* DENY of `auth`: a 401 with a Basic challenge */
	const char *auth_realm;      /* its realm, NULL: the default one */
	int rule_busy;               /* in: the rule at env->resume yielded from inside
	                              * its action (a Lua coroutine): resume it without
	                              * evaluating its condition again; out: set by an
	                              * action that yields that way. Keep it across
	                              * the yield with env->resume. */
};

/* Bits of act_kw.sets */
#define ACT_F_HTTP_REQ      (1u << ACT_HTTP_REQ)
#define ACT_F_HTTP_RES      (1u << ACT_HTTP_RES)
#define ACT_F_HTTP_AFTER    (1u << ACT_HTTP_AFTER)
#define ACT_F_TCP_REQ_CONN  (1u << ACT_TCP_REQ_CONN)
#define ACT_F_TCP_REQ_SESS  (1u << ACT_TCP_REQ_SESS)
#define ACT_F_TCP_REQ_CONT  (1u << ACT_TCP_REQ_CONT)
#define ACT_F_TCP_RES_CONT  (1u << ACT_TCP_RES_CONT)
#define ACT_F_HTTP_ALL      (ACT_F_HTTP_REQ | ACT_F_HTTP_RES | ACT_F_HTTP_AFTER)
#define ACT_F_TCP_ALL       (ACT_F_TCP_REQ_CONN | ACT_F_TCP_REQ_SESS | \
                             ACT_F_TCP_REQ_CONT | ACT_F_TCP_RES_CONT)

/* One configured rule. */
struct act_rule {
	struct list list;
	enum act_ruleset set;
	const struct act_kw *kw;
	struct acl_cond *cond;       /* NULL: always */
	char *file;
	int line;
	void *arg;                   /* the action's compiled arguments */
	unsigned int flags;          /* ACT_RULE_F_* (addition) */
};

/* act_rule.flags */
#define ACT_RULE_F_LEGACY  0x01      /* a `redirect` line: runs after the proxy's
                                      * http-request rules, as in HAProxy, and its
                                      * target is literal text, not a log-format */

/* An action keyword: parse at configuration time, exec at run time.
 * parse() gets the words after the action name up to (excluding) if/unless,
 * returns 0 or -1 with a message. exec() returns a verdict.
 * For parse(), args[-1] is the action word itself (a prefix keyword such as
 * "set-var(" reads its argument there); r->set, r->file and r->line are
 * already set. */
struct act_kw {
	const char *kw;              /* "set-header", "deny", "set-var(" (prefix
	                              * match when it ends with '(') */
	unsigned int sets;           /* bit (1 << enum act_ruleset) where allowed */
	int (*parse)(struct act_rule *r, struct proxy *px, char **args, int nargs,
	             char *err, size_t errlen);
	enum act_verdict (*exec)(const struct act_rule *r, struct act_env *env);
	void (*free)(void *arg);
	unsigned int flags;          /* ACT_KW_F_* (addition) */
};

/* act_kw.flags */
#define ACT_KW_F_UNSUPPORTED 0x01    /* known to HAProxy, not to sluice: parse()
                                      * only explains why; not listed among the
                                      * valid actions */

/* Runs the rules of <rules> (a proxy list of env->set) from env->resume.
 * Returns the verdict; on ACT_V_YIELD env->resume says where to resume. */
enum act_verdict act_exec(struct list *rules, struct act_env *env);

/* Frees a proxy's rule lists (at exit). */
void act_free_rules(struct list *rules);

/* The configuration keywords (http-request, http-response, ...) are
 * registered by act.c itself with CFG_REGISTER. */

/* --- additions of the rules engine ------------------------------------- */

/* Action keywords are registered in tables by the modules that implement
 * them (src/http/act_*.c, Lua later), like configuration keywords. */
struct act_kw_table {
	struct act_kw_table *next;
	const struct act_kw *kws;    /* terminated by an entry with kw == NULL */
};
void act_register(struct act_kw_table *t);

#define ACT_REGISTER(table) \
	static struct act_kw_table table##_reg = { NULL, table }; \
	__attribute__((constructor)) static void table##_register(void) \
	{ act_register(&table##_reg); }

/* The action keyword <word> of rule set <set> (prefix keywords match
 * "set-var(txn.x)"), or NULL. */
const struct act_kw *act_kw_find(enum act_ruleset set, const char *word);

/* The rule list of <px> for <set>, and the rule set's name as written in
 * the configuration ("http-request", "tcp-request content"...). */
struct list *act_rules_of(struct proxy *px, enum act_ruleset set);
const char *act_ruleset_name(enum act_ruleset set);

/* Parses one rule, args[0] being the action word, and appends it to the
 * proxy's list for <set>. Returns 0, or -1 with a message naming the action
 * and the argument at fault. (The configuration keywords call it; tests
 * and other front-ends may too.) */
int act_rule_parse(struct proxy *px, enum act_ruleset set, char **args, int nargs,
                   const char *file, int line, char *err, size_t errlen);
/* The same, the rule appended to <into> (a list of its own, such as the
 * `stats http-request` rules) instead of the proxy's list. */
int act_rule_parse_into(struct proxy *px, enum act_ruleset set, struct list *into,
                        char **args, int nargs, const char *file, int line, char *err,
                        size_t errlen);

/* Services for use-service: the name, and what kind of stream it serves
 * (the stream finds the service's code from it: struct http_service or
 * struct tcp_service, stream.h). */
enum act_service_kind {
	ACT_SVC_HTTP = 0,            /* http-request use-service */
	ACT_SVC_TCP,                 /* tcp-request content use-service, TCP mode */
};
struct act_service {
	struct act_service *next;
	const char *name;
	enum act_service_kind kind;
};
void act_service_register(struct act_service *svc);
const struct act_service *act_service_find(const char *name);

/* How actions render their log-format arguments, and the formats of the
 * dynamic replies they build (lf-string, lf-file, hdr of deny/tarpit/
 * return): stream_lf_render() by default. A program without streams (the
 * unit tests) may point it elsewhere. The replies' fmt_fn hands it its
 * <ctx>, so render a dynamic env->deny_reply with
 * http_reply_render(reply, stream, out, room). */
struct lf_expr;
extern size_t (*act_lf_render)(struct stream *s, const struct lf_expr *e, char *out,
                               size_t room);

/* set-log-level silent: the value stored in txn->log_level (levels 0-7 are
 * the syslog ones, -1 the default). */
#define ACT_LOG_LEVEL_SILENT  8

#endif
