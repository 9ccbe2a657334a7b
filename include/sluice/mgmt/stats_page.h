/* The HTTP statistics page (HAProxy 2.6 manual, 4.2 "stats *"): a proxy
 * with `stats enable` (or any other `stats` keyword) answers requests
 * whose URI starts with its `stats uri` with an HTML report of every
 * proxy and server, or CSV (`;csv`), and with `stats admin`, a form that
 * changes servers' states.
 *
 * The settings are built at configuration time and read-only after; a
 * proxy shares its defaults section's until one of its own `stats` lines
 * makes it a copy (reference counted, freed with the last proxy). The
 * page is rendered on the requesting stream's thread from the same racy
 * counter snapshots as `show stat` (src/mgmt/stats.c).
 */
#ifndef SLUICE_MGMT_STATS_PAGE_H
#define SLUICE_MGMT_STATS_PAGE_H

#include <stddef.h>
#include <sluice/core/list.h>
#include <sluice/http/msg.h>

struct proxy;
struct stream;
struct userlist;
struct acl_cond;

#define STATS_DEFAULT_URI    "/haproxy?stats"
#define STATS_DEFAULT_REALM  "HAProxy Statistics"

/* stats_page.flags */
#define SP_HIDE_VERSION   0x01
#define SP_SHOW_LEGENDS   0x02
#define SP_SHOW_NODE      0x04
#define SP_SHOW_DESC      0x08
#define SP_SHOW_MODULES   0x10

struct stats_scope {
	struct stats_scope *next;
	char *name;                   /* "." stands for the proxy itself */
};

struct stats_admin_rule {
	struct stats_admin_rule *next;
	struct acl_cond *cond;
};

struct stats_page {
	int refcnt;                   /* proxies (and defaults) sharing it */
	char *uri;                    /* prefix, STATS_DEFAULT_URI if unset */
	char *realm;                  /* NULL: STATS_DEFAULT_REALM */
	int refresh_s;                /* stats refresh, 0: none */
	unsigned int flags;           /* SP_* */
	char *node;                   /* show-node <name>, NULL: global node */
	char *desc;                   /* show-desc <desc>, NULL: global description */
	struct stats_scope *scopes;   /* NULL: every proxy */
	struct userlist *users;       /* stats auth, or NULL */
	struct list rules;            /* stats http-request (struct act_rule), then
	                               * the check of `stats auth` */
	struct stats_admin_rule *admin; /* stats admin: any match grants it */
};

/* Whether the request <m> is for the stats page of <sp>: GET, HEAD or
 * POST, and a URI (its path when the prefix starts with '/') that starts
 * with the prefix. */
int stats_page_match(const struct stats_page *sp, const struct http_msg *m);

/* The stats page's answer to the stream's request (txn->stats_px): the
 * HTML or CSV report, or the 303 that follows an admin POST. Returns 0,
 * or -1 out of memory. */
struct svc_reply;
int stats_page_produce(struct stream *s, struct svc_reply *out);

/* Renders the report for <px>'s page into a heap string (*body, *len):
 * <opts> is what follows the URI prefix (";csv", ";up", ";st=DONE"...).
 * <admin> adds the forms that change servers. Returns 0 or -1. */
int stats_page_render(const struct proxy *px, const char *opts, size_t olen, int admin,
                      char **body, size_t *len, int *csv);

/* The admin form's parser, separate from what it changes (for the fuzzer):
 * <find_backend> resolves "b" (a name or "#<id>"), NULL if none; <apply>
 * does <action> (STATS_ACT_*) to the server named <name> of it: 1 done,
 * 0 no such server, -1 not counted (the action does not apply to it).
 * Returns the status word. */
enum { STATS_ACT_READY, STATS_ACT_DRAIN, STATS_ACT_MAINT, STATS_ACT_DHLTH, STATS_ACT_EHLTH,
       STATS_ACT_HRUNN, STATS_ACT_HNOLB, STATS_ACT_HDOWN, STATS_ACT_DAGENT, STATS_ACT_EAGENT,
       STATS_ACT_ARUNN, STATS_ACT_ADOWN, STATS_ACT_SHUTDOWN, STATS_ACT_COUNT };
/* The form's words for them ("ready", "dhlth", "shutdown"...). */
extern const char *const stats_act_names[STATS_ACT_COUNT];
struct stats_form_ops {
	void *(*find_backend)(void *ctx, const char *name);
	int (*apply)(void *ctx, void *be, int action, const char *name);
};
const char *stats_form_walk(const char *body, size_t len, const struct stats_form_ops *ops,
                            void *ctx);

/* Applies an admin POST body (HAProxy's form: b=<backend>&action=<a>&s=<server>...)
 * and returns the status word of the redirect: DONE, PART, NONE, ERRP. */
const char *stats_page_post(const char *body, size_t len);

void stats_page_release(struct stats_page *sp);

#endif
