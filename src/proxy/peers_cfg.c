/* `peers` sections (HAProxy 2.6 manual, section 3.5): peer, server, bind,
 * default-bind, default-server, disabled, enabled, table, log; and the
 * resolution of `stick-table ... peers <name>` after parsing. HAProxy's
 * messages for what it rejects. Configuration time only, one thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/global.h>
#include <sluice/net/addr.h>
#include <sluice/net/listener.h>
#include <sluice/proxy/peers.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/stktable.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

static struct peers *sections;
static struct peers *cur;   /* the section being parsed */

static int peers_begin(KW_ARGS);
static int kw_peer(KW_ARGS);
static int kw_bind(KW_ARGS);
static int kw_default(KW_ARGS);
static int kw_disabled(KW_ARGS);
static int kw_table(KW_ARGS);
static int kw_log(KW_ARGS);

static const struct cfg_kw peers_kws[] = {
	{ "peer", NULL, CFG_SEC_PEERS, kw_peer },
	{ "server", NULL, CFG_SEC_PEERS, kw_peer },
	{ "bind", NULL, CFG_SEC_PEERS, kw_bind },
	{ "default-bind", NULL, CFG_SEC_PEERS, kw_default },
	{ "default-server", NULL, CFG_SEC_PEERS, kw_default },
	{ "disabled", NULL, CFG_SEC_PEERS, kw_disabled },
	{ "enabled", NULL, CFG_SEC_PEERS, kw_disabled },
	{ "table", NULL, CFG_SEC_PEERS, kw_table },
	{ "log", NULL, CFG_SEC_PEERS, kw_log },
	{ NULL }
};
CFG_REGISTER(peers_kws)

static struct cfg_section_def peers_section = {
	.name = "peers", .sec = CFG_SEC_PEERS, .begin = peers_begin,
};

__attribute__((constructor)) static void peers_section_register(void)
{
	cfg_register_section(&peers_section);
}

struct peers *peers_find(const char *name)
{
	for (struct peers *p = sections; p; p = p->next)
		if (!strcmp(p->name, name))
			return p;
	return NULL;
}

struct peers *peers_first(void)
{
	return sections;
}

static int peers_begin(KW_ARGS)
{
	struct peers *p, **pp;

	if (nargs < 2 || !*args[1])
		return errmsg_set(err, errlen, "missing name for peers section.");
	p = peers_find(args[1]);
	if (p)
		return errmsg_set(err, errlen, "peers section '%s' has the same name as another "
		                  "peers section declared at %s:%d.", args[1], p->file, p->line);
	p = calloc(1, sizeof(*p));
	if (!p || !(p->name = strdup(args[1])) || !(p->file = strdup(ctx->file))) {
		if (p)
			free(p->name);
		free(p);
		return errmsg_set(err, errlen, "out of memory.");
	}
	p->line = ctx->line;
	list_init(&p->binds);
	for (pp = &sections; *pp; pp = &(*pp)->next)
		;
	*pp = p;
	cur = p;
	return 0;
}

static struct peer *peer_lookup(struct peers *s, const char *name)
{
	for (struct peer *pr = s->peers; pr; pr = pr->next)
		if (!strcmp(pr->name, name))
			return pr;
	return NULL;
}

static const char *local_name(void)
{
	static char host[256];

	if (global.localpeer && *global.localpeer)
		return global.localpeer;
	if (!host[0])
		gethostname(host, sizeof(host) - 1);
	return host;
}

/* peer <name> <ip>:<port> / server <name> [<ip>:<port>] [param*] */
static int kw_peer(KW_ARGS)
{
	int is_peer = !strcmp(args[0], "peer");
	struct peer *pr, **pp;

	if (is_peer && cur->has_bind_line)
		return errmsg_set(err, errlen, "mixing \"peer\" and \"bind\" line is forbidden");
	if (nargs < 2)
		return errmsg_set(err, errlen, "'%s' : missing name.", args[0]);
	pr = peer_lookup(cur, args[1]);
	if (pr && !strcmp(pr->name, local_name()))
		return errmsg_set(err, errlen, "'%s %s' : local peer name already referenced at "
		                  "%s:%d. %s", args[0], args[1], pr->file, pr->line, args[1]);
	if (pr) {
		/* HAProxy 2.6 accepts it silently; the first one is used */
		cfg_warning(ctx->file, ctx->line, "'%s %s' : peer name already referenced at %s:%d, "
		            "ignored.", args[0], args[1], pr->file, pr->line);
		return 0;
	}
	pr = calloc(1, sizeof(*pr));
	if (!pr || !(pr->name = strdup(args[1])) || !(pr->file = strdup(ctx->file))) {
		if (pr)
			free(pr->name);
		free(pr);
		return errmsg_set(err, errlen, "out of memory.");
	}
	pr->line = ctx->line;
	pr->section = cur;
	lock_init(&pr->lock, LK_OTHER, "peer");
	if (nargs > 2) {
		char aerr[256];

		if (!strncmp(args[2], "fd@", 3)) {
			snprintf(aerr, sizeof(aerr), "'server %s/%s' : a file descriptor is not "
			         "acceptable here in '%s'", args[1], args[1], args[2]);
			free(pr->name);
			free(pr->file);
			free(pr);
			return errmsg_set(err, errlen, "%s", aerr);
		}
		if (addr_parse(args[2], &pr->addr, ADDR_O_PORT_REQUIRED, aerr, sizeof(aerr)) < 0) {
			int noport = strstr(aerr, "missing port") != NULL;

			free(pr->name);
			free(pr->file);
			free(pr);
			const char *colon = strrchr(args[2], ':');

			if (noport)
				return errmsg_set(err, errlen, "'%s %s' : missing port specification in "
				                  "'%s'", args[0], args[1], args[2]);
			if (strstr(aerr, "is invalid in") && colon)
				return errmsg_set(err, errlen, "'%s %s' : invalid port '%s'", args[0],
				                  args[1], colon + 1);
			return errmsg_set(err, errlen, "'%s %s' : %s", args[0], args[1], aerr);
		}
		pr->has_addr = 1;
	}
	if (nargs > 3) {
		free(pr->name);
		free(pr->file);
		free(pr);
		return errmsg_set(err, errlen, "'%s %s' : server parameters ('%s') are not supported "
		                  "on peers by sluice.", args[0], args[1], args[3]);
	}
	if (is_peer)
		cur->has_peer_line = 1;
	for (pp = &cur->peers; *pp; pp = &(*pp)->next)
		;
	*pp = pr;
	return 0;
}

static int kw_bind(KW_ARGS)
{
	if (cur->has_peer_line)
		return errmsg_set(err, errlen, "mixing \"peer\" and \"bind\" line is forbidden");
	cur->has_bind_line = 1;
	if (nargs < 2)
		return 0;   /* HAProxy accepts a bind line without address */
	if (bind_conf_create(NULL, args[1], ctx->file, ctx->line, 0, &cur->binds, err,
	                     errlen) < 0)
		return -1;
	if (nargs > 2)
		return errmsg_set(err, errlen, "'bind %s' in section 'peers': options ('%s') are not "
		                  "supported by sluice.", args[1], args[2]);
	return 0;
}

static int kw_default(KW_ARGS)
{
	if (nargs > 1)
		return errmsg_set(err, errlen, "'%s' options ('%s') are not supported in peers "
		                  "sections by sluice.", args[0], args[1]);
	return 0;
}

static int kw_disabled(KW_ARGS)
{
	cur->disabled = !strcmp(args[0], "disabled");
	return 0;
}

static int kw_log(KW_ARGS)
{
	cfg_warning(ctx->file, ctx->line, "'log' in peers section '%s' is ignored by sluice "
	            "(peers events go to the global log).", cur->name);
	return 0;
}

/* table <name> type ... : a stick table called "<section>/<name>", named
 * "/<name>" on the wire as HAProxy does. */
static int kw_table(KW_ARGS)
{
	struct stkt_conf c;
	struct stktable *t;
	char msg[400], full[512];

	for (int i = 2; i < nargs; i++)
		if (!strcmp(args[i], "peers"))
			return errmsg_set(err, errlen, "table: unknown argument 'peers'.");
	if (stktable_parse_args(args + 2, nargs > 2 ? nargs - 2 : 0, &c, msg, sizeof(msg)) < 0)
		return errmsg_set(err, errlen, "table: %s", msg);
	if (c.warn[0])
		cfg_warning(ctx->file, ctx->line, "table: %s", c.warn);
	snprintf(full, sizeof(full), "%s/%s", cur->name, args[1]);
	if (stktable_find(full))
		return errmsg_set(err, errlen, "table: stick-table name '%s' conflicts with table "
		                  "declared before.", full);
	snprintf(c.peers, sizeof(c.peers), "%s", cur->name);
	t = stktable_new(full, ctx->file, ctx->line, NULL, &c);
	if (!t)
		return errmsg_set(err, errlen, "out of memory.");
	snprintf(full, sizeof(full), "/%s", args[1]);
	t->nid = strdup(full);
	return t->nid ? 0 : errmsg_set(err, errlen, "out of memory.");
}

/* After parsing: the local peer of each section, its listening address,
 * the tables' sections. */
static int peers_section_check(struct peers *s)
{
	const char *me = local_name();
	int bit = 0;

	s->local = peer_lookup(s, me);
	if (!s->local) {
		if (s->peers || s->has_bind_line)
			cfg_warning(s->file, s->line, "Removing incomplete section 'peers %s' (no peer "
			            "named '%s').", s->name, me);
		s->disabled = 1;
		return 0;
	}
	s->local->local = 1;
	if (s->has_bind_line && s->local->has_addr) {
		char a[300];

		addr_full_str(&s->local->addr, a, sizeof(a));
		cfg_alert(s->local->file, s->local->line, "'server %s/%s' : unknown keyword '%s'. "
		          "Hint: no address was expected for this server.", s->local->name,
		          s->local->name, a);
		return 1;
	}
	if (s->local->has_addr && !s->disabled) {
		char a[300], err[256];

		addr_full_str(&s->local->addr, a, sizeof(a));
		if (bind_conf_create(NULL, a, s->local->file, s->local->line, 0, &s->binds, err,
		                     sizeof(err)) < 0) {
			cfg_alert(s->local->file, s->local->line, "%s", err);
			return 1;
		}
	}
	for (struct peer *pr = s->peers; pr; pr = pr->next) {
		if (pr->local)
			continue;
		if (bit >= PEERS_MAX_REMOTE) {
			cfg_alert(pr->file, pr->line, "peers section '%s': more than %d remote peers are "
			          "not supported by sluice.", s->name, PEERS_MAX_REMOTE);
			return 1;
		}
		pr->bit = bit++;
	}
	s->nb_remote = bit;
	if (!s->disabled) {
		struct list *pos, *tmp;

		list_for_each_safe(pos, tmp, &s->binds) {
			struct bind_conf *bc = list_elem(pos, struct bind_conf, list);

			bc->on_accept = peers_accept;
			bc->owner = "peers section";
		}
		listener_register_binds(&s->binds);
	}
	return 0;
}

static int peers_postparse(void)
{
	int errors = 0;

	for (struct peers *s = sections; s; s = s->next)
		errors += peers_section_check(s);
	for (struct stktable *t = stktable_first(); t; t = stktable_next(t)) {
		struct peers *s;

		if (!t->peers_name)
			continue;
		s = peers_find(t->peers_name);
		if (!s) {
			cfg_alert(t->file, t->line, "Proxy '%s': unable to find sync peers '%s'.", t->name,
			          t->peers_name);
			errors++;
			continue;
		}
		if (!t->nid && !(t->nid = strdup(t->name)))
			errors++;
		if (!s->disabled)
			t->peers = s;
	}
	return errors;
}

static struct cfg_post_hook peers_post = { .fn = peers_postparse, .order = 5 };

__attribute__((constructor)) static void peers_post_register(void)
{
	cfg_register_post(&peers_post);
}

void peers_free_all(void)
{
	while (sections) {
		struct peers *s = sections;

		sections = s->next;
		listener_unregister_binds(&s->binds);
		bind_conf_list_free(&s->binds);
		while (s->peers) {
			struct peer *pr = s->peers;

			s->peers = pr->next;
			lock_destroy(&pr->lock);
			free(pr->name);
			free(pr->file);
			free(pr);
		}
		free(s->name);
		free(s->file);
		free(s);
	}
	cur = NULL;
}
