/* use-server <server> [{if | unless} <condition>]: in a backend, the first
 * rule whose condition matches names the server a request goes to, before
 * persistence and load balancing, if that server is usable. A rule naming
 * a server that is not usable (down, maintenance) is skipped: the next
 * rules, then persistence and the balancer decide (HAProxy 2.6 without
 * force-persist).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/expr/acl.h>
#include <sluice/expr/sample.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/stream_int.h>

static int kw_use_server(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	struct use_server_rule *r;
	struct acl_cond *cond;

	if (nargs < 2) {
		snprintf(err, errlen, "expects a server name.");
		return -1;
	}
	if (proxy_parse_switch_cond(ctx, args, nargs, &cond, err, errlen) < 0)
		return -1;
	r = calloc(1, sizeof(*r));
	if (!r || !(r->name = strdup(args[1])) || !(r->file = strdup(ctx->file))) {
		if (r)
			free(r->name);
		free(r);
		acl_cond_free(cond);
		snprintf(err, errlen, "out of memory.");
		return -1;
	}
	r->cond = cond;
	r->line = ctx->line;
	list_append(&ctx->px->use_servers, &r->list);
	return 0;
}

static const struct cfg_kw use_server_kws[] = {
	{ "use-server", NULL, CFG_SEC_BE_ONLY, kw_use_server },
	{ NULL }
};
CFG_REGISTER(use_server_kws)

/* Every rule's server, by name in its backend. */
static int use_server_resolve(void)
{
	struct list *pos, *rp, *tmp, *tmp2;
	int errors = 0;

	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		if (!px->use_servers.next)
			continue;
		list_for_each_safe(rp, tmp2, &px->use_servers) {
			struct use_server_rule *r = list_elem(rp, struct use_server_rule, list);

			r->srv = server_find(px, r->name);
			if (r->srv)
				r->srv->non_purgeable = 1;   /* del server refuses it */
			if (!r->srv) {
				cfg_alert(r->file, r->line, "unable to find server '%s' referenced in a "
				          "'use-server' rule of backend '%s'.", r->name, px->name);
				errors++;
			}
		}
	}
	return errors;
}

static struct cfg_post_hook use_server_post = { .fn = use_server_resolve, .order = 10 };

__attribute__((constructor)) static void use_server_register(void)
{
	cfg_register_post(&use_server_post);
}

struct server *stream_use_server(struct stream *s)
{
	struct list *pos, *tmp;

	if (!s->be || !s->be->use_servers.next)
		return NULL;
	list_for_each_safe(pos, tmp, &s->be->use_servers) {
		struct use_server_rule *r = list_elem(pos, struct use_server_rule, list);

		if (r->cond) {
			struct smp_ctx c;

			stream_smp_ctx_init(s, &c, SMP_DIR_REQ);
			if (acl_cond_eval(r->cond, &c) != ACL_TEST_PASS)
				continue;
		}
		if (r->srv && srv_is_usable(r->srv))
			return r->srv;
	}
	return NULL;
}
