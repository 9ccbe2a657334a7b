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
};

/* One configured rule. */
struct act_rule {
	struct list list;
	enum act_ruleset set;
	const struct act_kw *kw;
	struct acl_cond *cond;       /* NULL: always */
	char *file;
	int line;
	void *arg;                   /* the action's compiled arguments */
};

/* An action keyword: parse at configuration time, exec at run time.
 * parse() gets the words after the action name up to (excluding) if/unless,
 * returns 0 or -1 with a message. exec() returns a verdict. */
struct act_kw {
	const char *kw;              /* "set-header", "deny", "set-var(" (prefix
	                              * match when it ends with '(') */
	unsigned int sets;           /* bit (1 << enum act_ruleset) where allowed */
	int (*parse)(struct act_rule *r, struct proxy *px, char **args, int nargs,
	             char *err, size_t errlen);
	enum act_verdict (*exec)(const struct act_rule *r, struct act_env *env);
	void (*free)(void *arg);
};

/* Runs the rules of <rules> (a proxy list of env->set) from env->resume.
 * Returns the verdict; on ACT_V_YIELD env->resume says where to resume. */
enum act_verdict act_exec(struct list *rules, struct act_env *env);

/* Frees a proxy's rule lists (at exit). */
void act_free_rules(struct list *rules);

/* The configuration keywords (http-request, http-response, ...) are
 * registered by act.c itself with CFG_REGISTER. */

#endif
