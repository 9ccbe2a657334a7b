/* Servers added and deleted at run time, with HAProxy 2.6's restrictions
 * and words (see srv_dyn.h).
 *
 * Readers of a backend's servers (balancers, fetches, the CLI, checks) walk
 * be->srv[0 .. be->nsrv) without a lock. So the array never moves once the
 * threads run: a backend whose algorithm allows dynamic servers gets room
 * for SRV_DYN_SLOTS more at start-up. An added server fills the slot after
 * the last, then nsrv grows (release store): a reader sees either the
 * server or not yet. A deleted server's slot is closed by moving the
 * following ones down one by one, then nsrv shrinks: a reader in the middle
 * may see a server twice, or the deleted one (in maintenance: no balancer
 * takes it), never a freed pointer, because deleted servers are kept until
 * exit (a stream that ended may still name its server in its log line).
 * Add and delete are serialised by one mutex (CLI only).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/cfg/cfg_free.h>
#include <sluice/net/addr.h>
#include <sluice/net/ssl_conf.h>
#include <sluice/proxy/check.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/queue.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_dyn.h>
#include <sluice/proxy/srv_idle.h>
#include <sluice/proxy/srv_state.h>

static pthread_mutex_t dyn_lock = PTHREAD_MUTEX_INITIALIZER;
static struct server *graveyard;

int srv_dyn_allowed(const struct proxy *be)
{
	return be->lb_algo == LB_ROUNDROBIN || be->lb_algo == LB_LEASTCONN ||
	       be->lb_algo == LB_FIRST || be->lb_algo == LB_RANDOM;
}

struct server *srv_dyn_graveyard(void)
{
	return graveyard;
}

/* Keywords of a server line that `add server` refuses: HAProxy's list,
 * and those sluice does not set up at run time yet. */
static const char *refused_kw(char **args, int nargs)
{
	static const char *const kws[] = {
		"cookie", "redir", "init-addr", "resolvers", "resolve-prefer", "resolve-net",
		"resolve-opts", "namespace", "socks4", "non-stick",
		/* sluice: not at run time yet */
		"ssl", "check-ssl", "crt", "ca-file", "track", NULL
	};

	for (int i = 2; i < nargs; i++)
		for (int k = 0; kws[k]; k++)
			if (!strcmp(args[i], kws[k]))
				return kws[k];
	return NULL;
}

/* The lowest id no server of <be> has. */
static int free_id(const struct proxy *be)
{
	for (int id = 1;; id++) {
		int used = 0;

		for (int i = 0; i < be->nsrv && !used; i++)
			used = be->srv[i]->puid == id;
		if (!used)
			return id;
	}
}

int srv_dyn_add(struct proxy *be, char **args, int nargs, char *msg, size_t len)
{
	struct cfg_ctx ctx = { .file = "<cli>", .line = 0, .px = be };
	const char *kw;
	struct server *s;
	char err[512], *argv[64];

	if (!srv_dyn_allowed(be)) {
		snprintf(msg, len, "Backend must use a dynamic load balancing to support dynamic "
		         "servers.");
		return -1;
	}
	if (nargs < 2) {
		snprintf(msg, len, "'server' expects <name> and <addr>[:<port>] as arguments.\n");
		return -1;
	}
	if (nargs + 1 > (int)(sizeof(argv) / sizeof(argv[0]))) {
		snprintf(msg, len, "too many arguments.\n");
		return -1;
	}
	/* as a server line: "server <name> <addr> [params]" */
	argv[0] = "server";
	memcpy(argv + 1, args, sizeof(*args) * (size_t)nargs);
	if ((kw = refused_kw(argv, nargs + 1))) {
		snprintf(msg, len, "'%s' option is not accepted for dynamic server\n", kw);
		return -1;
	}
	for (const char *c = args[0]; *c; c++) {
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.' ||
		      *c == ':')) {
			snprintf(msg, len, "invalid character '%c' in server name '%s'.\n", *c, args[0]);
			return -1;
		}
	}
	pthread_mutex_lock(&dyn_lock);
	if (server_find(be, args[0])) {
		pthread_mutex_unlock(&dyn_lock);
		snprintf(msg, len, "Already exists a server with the same name in backend.\n");
		return -1;
	}
	if (be->nsrv >= be->srv_cap) {
		pthread_mutex_unlock(&dyn_lock);
		snprintf(msg, len, "No room left for a new server in backend '%s' (%d servers).\n",
		         be->name, be->srv_cap);
		return -1;
	}
	s = server_new_default();   /* no default-server settings (HAProxy) */
	if (!s) {
		pthread_mutex_unlock(&dyn_lock);
		snprintf(msg, len, "out of memory.\n");
		return -1;
	}
	s->be = be;
	s->dynamic = 1;
	s->name = strdup(args[0]);
	s->conf_file = strdup("<cli>");
	s->addr_str = strdup(args[1]);
	if (!s->name || !s->conf_file || !s->addr_str ||
	    addr_parse(args[1], &s->addr, ADDR_O_PORT_OPTIONAL | ADDR_O_NO_FD, err,
	               sizeof(err)) < 0 ||
	    srv_parse_params(&ctx, s, argv, nargs + 1, 3, err, sizeof(err)) < 0)
		goto fail;
	if (s->addr.flags & ADDR_F_NO_PORT) {
		snprintf(err, sizeof(err), "an address without a port is not supported yet.");
		goto fail;
	}
	for (int i = 0; s->puid && i < be->nsrv; i++) {
		if (be->srv[i]->puid == s->puid) {
			snprintf(err, sizeof(err), "'id': custom id %d already used by server '%s'.",
			         s->puid, be->srv[i]->name);
			goto fail;
		}
	}
	if (!s->puid)
		s->puid = free_id(be);
	/* in maintenance, as HAProxy adds it: `enable server` lets it work */
	atomic_store(&s->admin, SRV_ADMIN_MAINT);
	queue_set_lock_name(&s->queue, LK_SRV_QUEUE, s->name);
	srv_state_init_one(s);
	if (check_add_dynamic(s, err, sizeof(err)) < 0)
		goto fail_checks;
	/* published: the slot, then the count */
	be->srv[be->nsrv] = s;
	__atomic_store_n(&be->nsrv, be->nsrv + 1, __ATOMIC_RELEASE);
	srv_state_recount(be);
	pthread_mutex_unlock(&dyn_lock);
	snprintf(msg, len, "New server registered.\n");
	return 0;
fail_checks:
	/* a check task may exist: the server goes to the graveyard */
	atomic_store(&s->deleted, 1);
	s->grave_next = graveyard;
	graveyard = s;
	pthread_mutex_unlock(&dyn_lock);
	snprintf(msg, len, "%s\n", err);
	return -1;
fail:
	pthread_mutex_unlock(&dyn_lock);
	snprintf(msg, len, "%s\n", err);
	cfg_free_server(s);
	return -1;
}

int srv_dyn_del(struct server *s, char *msg, size_t len)
{
	struct proxy *be = s->be;
	int i;

	if (s->non_purgeable || s->trackers || s->track) {
		snprintf(msg, len, "This server cannot be removed at runtime due to other "
		         "configuration elements pointing to it.\n");
		return -1;
	}
	if (atomic_load(&s->admin) != SRV_ADMIN_MAINT) {
		snprintf(msg, len, "Only servers in maintenance mode can be deleted.\n");
		return -1;
	}
	if (atomic_load(&s->served) || atomic_load(&s->used_conns) || srv_idle_count(s)) {
		snprintf(msg, len, "Server still has connections attached to it, cannot remove "
		         "it.\n");
		return -1;
	}
	if (atomic_load(&s->queue.len)) {
		snprintf(msg, len, "Server still has queued streams, cannot remove it.\n");
		return -1;
	}
	pthread_mutex_lock(&dyn_lock);
	for (i = 0; i < be->nsrv && be->srv[i] != s; i++)
		;
	if (i == be->nsrv) {
		pthread_mutex_unlock(&dyn_lock);
		snprintf(msg, len, "No such server.\n");
		return -1;
	}
	atomic_store(&s->deleted, 1);
	/* the following ones move down; the last slot keeps a live server */
	for (; i + 1 < be->nsrv; i++)
		__atomic_store_n(&be->srv[i], be->srv[i + 1], __ATOMIC_RELEASE);
	__atomic_store_n(&be->nsrv, be->nsrv - 1, __ATOMIC_RELEASE);
	s->grave_next = graveyard;
	graveyard = s;
	srv_state_recount(be);
	pthread_mutex_unlock(&dyn_lock);
	/* its check task, if any, stops at its next run */
	if (s->check)
		check_wake_now(s);
	if (s->agent)
		check_agent_wake_now(s);
	snprintf(msg, len, "Server deleted.\n");
	return 0;
}

void srv_dyn_free_all(void)
{
	while (graveyard) {
		struct server *s = graveyard;

		graveyard = s->grave_next;
		cfg_free_server(s);
	}
}

/* After parsing: room for the servers to come, in the backends that allow
 * them. Before the threads: the arrays never move afterwards. */
static int srv_dyn_postparse(void)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);
		struct server **n;
		int cap;

		if (!(px->cap & PX_CAP_BE))
			continue;
		cap = px->nsrv + (srv_dyn_allowed(px) ? SRV_DYN_SLOTS : 0);
		n = realloc(px->srv, (size_t)(cap ? cap : 1) * sizeof(*n));
		if (!n) {
			cfg_alert(px->conf_file, px->conf_line, "out of memory.");
			return 1;
		}
		px->srv = n;
		px->srv_cap = cap;
	}
	return 0;
}

static struct cfg_post_hook srv_dyn_post = { .fn = srv_dyn_postparse, .order = 70 };

__attribute__((constructor)) static void srv_dyn_register(void)
{
	cfg_register_post(&srv_dyn_post);
}
