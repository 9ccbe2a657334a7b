/* Freeing the configuration (see cfg_free.h).
 *
 * Ownership, as the modules that fill a proxy set it:
 *   - every string of a proxy, server, bind line and rule is its own copy
 *     (defbe_file included: proxy_inherit() duplicates it);
 *   - rules (act.c) own their condition and arguments; a condition owns its
 *     anonymous ACLs and only points to the named ones of px->acls, so rules
 *     go before the ACL list;
 *   - ACL terms and map converters hold counted references on pattern
 *     indexes; pat_refs_free_all() frees whatever is left at the end;
 *   - an error-page table holds counted references on its replies.
 *
 * Single-threaded, before any listener exists or after every thread ended.
 */
#include <stdlib.h>
#include <sluice/cfg/cfg_free.h>
#include <sluice/core/global.h>
#include <sluice/core/log.h>
#include <sluice/expr/acl.h>
#include <sluice/expr/pattern.h>
#include <sluice/net/ssl_conf.h>
#include <sluice/net/ssl_crt.h>
#include <sluice/http/act.h>
#include <sluice/http/cache.h>
#include <sluice/http/comp.h>
#include <sluice/http/errors.h>
#include <sluice/http/http_cfg.h>
#include <sluice/http/userlist.h>
#include <sluice/mgmt/stats_page.h>
#include <sluice/mgmt/cli.h>
#include <sluice/proxy/errcap.h>
#include <sluice/proxy/check.h>
#include <sluice/proxy/check_http.h>
#include <sluice/proxy/check_tcp.h>
#include <sluice/proxy/lb_hash.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/stick_rules.h>
#include <sluice/proxy/stktable.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_dyn.h>
#include <sluice/net/resolvers.h>
#include <sluice/proxy/peers.h>
#include <sluice/http/h1_case.h>
#include <sluice/proxy/px_logfmt.h>
#include <sluice/proxy/srv_opts.h>
#include <sluice/net/unix_sock.h>

static void free_logs(struct list *logs)
{
	while (!list_empty(logs)) {
		struct log_target *t = list_elem(logs->next, struct log_target, list);

		list_del_init(&t->list);
		log_target_free(t);
	}
}

static void free_binds(struct list *binds)
{
	while (!list_empty(binds)) {
		struct bind_conf *bc = list_elem(binds->next, struct bind_conf, list);

		list_del_init(&bc->list);
		cfg_free_bind_conf(bc);
	}
}

void cfg_free_bind_conf(struct bind_conf *bc)
{
	if (!bc)
		return;
	free(bc->file);
	free(bc->addr_str);
	free(bc->name);
	ssl_bind_conf_free(bc->ssl);
	free(bc);
}

void cfg_free_server(struct server *srv)
{
	if (!srv)
		return;
	free(srv->name);
	free(srv->conf_file);
	free(srv->addr_str);
	free(srv->cookie);
	free(srv->track_name);
	free(srv->resolvers_name);
	srv_opts_free(srv);
	ssl_srv_conf_free(srv->ssl);
	check_srv_free(srv);
	free(srv->idle);   /* per-thread lists, empty while nothing ran */
	lock_destroy(&srv->queue.lock);
	free(srv);
}

static void free_use_backends(struct list *rules)
{
	while (!list_empty(rules)) {
		struct use_backend_rule *r = list_elem(rules->next, struct use_backend_rule, list);

		list_del_init(&r->list);
		acl_cond_free(r->cond);
		if (r->dyn) {
			lf_free(r->dyn);
			free(r->dyn);
		}
		free(r->name);
		free(r->file);
		free(r);
	}
}

static void free_use_servers(struct list *rules)
{
	while (!list_empty(rules)) {
		struct use_server_rule *r = list_elem(rules->next, struct use_server_rule, list);

		list_del_init(&r->list);
		acl_cond_free(r->cond);
		free(r->name);
		free(r->file);
		free(r);
	}
}

static void free_rules(struct proxy *px)
{
	for (int set = 0; set < ACT_RULESETS; set++)
		act_free_rules(act_rules_of(px, (enum act_ruleset)set));
	free_use_backends(&px->use_backends);
	if (px->use_servers.next)
		free_use_servers(&px->use_servers);
	stick_rules_free(&px->stick_rules);
}

static void free_http_settings(struct proxy *px)
{
	if (px->errors) {
		http_errors_deinit(px->errors);
		free(px->errors);
	}
	free(px->monitor_uri);
	stats_page_release(px->stats);
	free(px->send_name_hdr);
	free(px->capture_cookie);
	for (int i = 0; i < px->nmonitor_fail; i++)
		acl_cond_free(px->monitor_fail[i]);
	free(px->monitor_fail);
	for (int i = 0; i < px->npersist_rules; i++)
		acl_cond_free(px->persist_rules[i].cond);
	free(px->persist_rules);
	free(px->fwdfor.hdr);
	free(px->origto.hdr);
	free(px->unique_id_fmt_str);
	free(px->unique_id_fmt_file);
	if (px->unique_id_fmt) {
		lf_free(px->unique_id_fmt);
		free(px->unique_id_fmt);
	}
	free(px->unique_id_hdr);
	for (int i = 0; i < px->nreq_cap && i < PX_MAX_CAPTURES; i++)
		free(px->req_cap[i].name);
	for (int i = 0; i < px->nres_cap && i < PX_MAX_CAPTURES; i++)
		free(px->res_cap[i].name);
	free(px->cookie_name);
	free(px->srv_state_file_name);
	free(px->log_tag);
	free(px->cookie_domain);
	free(px->lb_arg);
	comp_cfg_free(px);
}

void cfg_free_proxy(struct proxy *px)
{
	if (!px)
		return;
	/* rules first: their conditions point to the named ACLs */
	free_rules(px);
	if (px->acls) {
		acl_list_free(px->acls);
		free(px->acls);
	}
	free_logs(&px->logs);
	free(px->log_format);
	px_error_log_format_free(px);
	free(px->log_format_file);
	lf_free(&px->logfmt);
	free_binds(&px->binds);
	for (int i = 0; i < px->nsrv; i++)
		cfg_free_server(px->srv[i]);
	free(px->srv);
	cfg_free_server(px->defsrv);
	free(px->defbe_name);
	free(px->defbe_file);   /* each proxy owns its copy */
	free_http_settings(px);
	lb_hash_forget(px);      /* a proxy allocated at the same address later
	                          * must not find its hash settings */
	hchk_free(px);
	tchk_free(px);
	lock_destroy(&px->lb_lock);
	lock_destroy(&px->state_lock);
	errcap_free(px);
	lock_destroy(&px->queue.lock);
	free(px->name);
	free(px->conf_file);
	free(px);
}

void cfg_free_proxies(void)
{
	while (!list_empty(&proxies)) {
		struct proxy *px = list_elem(proxies.next, struct proxy, list);

		list_del_init(&px->list);
		cfg_free_proxy(px);
	}
}

void cfg_free_all(void)
{
	cfg_free_proxies();
	srv_dyn_free_all();   /* the servers deleted at run time */
	resolvers_free_all();
	peers_free_all();
	unix_sock_free();
	h1_case_free();
	/* after the rules that referenced them */
	stktable_free_all();
	free_binds(&cli_binds);
	free_logs(&global.logs);
	free(global.pidfile);
	global.pidfile = NULL;
	free(global.node);
	global.node = NULL;
	free(global.localpeer);
	global.localpeer = NULL;
	free(global.desc);
	global.desc = NULL;
	free(global.log_tag);
	global.log_tag = NULL;
	free(global.log_send_hostname);
	global.log_send_hostname = NULL;
	/* the proxies' error pages borrowed the formats of these sections */
	http_cfg_free();
	userlists_free_all();
	caches_free_all();
	lb_hash_free_all();
	/* after the bind lines and servers that use its certificates */
	ssl_store_free_all();
	/* last: ACL terms and converters of the proxies held references */
	pat_refs_free_all();
}
