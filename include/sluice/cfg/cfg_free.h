/* Freeing what the configuration built: proxies, their servers, binds,
 * rules, ACLs, logs and error pages, the stats sockets and the global
 * section's allocations.
 *
 * For the configuration fuzzer, which parses thousands of configurations
 * in one process, for tests, and for a clean exit under a leak checker.
 * Only while no thread runs: nothing here takes a lock, and no listener
 * may have been created from what is freed (listeners_bind_all() was not
 * called).
 */
#ifndef SLUICE_CFG_CFG_FREE_H
#define SLUICE_CFG_CFG_FREE_H

struct proxy;
struct server;
struct bind_conf;

/* Frees <px> (a frontend, backend, listen or defaults section) and
 * everything it owns. The caller has unlinked it from its list. A proxy
 * that inherited from a defaults section must be freed before that
 * section (they may share the default_backend's file name). */
void cfg_free_proxy(struct proxy *px);

void cfg_free_server(struct server *srv);
void cfg_free_bind_conf(struct bind_conf *bc);

/* Frees every proxy of `proxies` (defaults sections are in no such list). */
void cfg_free_proxies(void);

/* cfg_free_proxies(), then the stats sockets (cli_binds), the
 * global log targets, pidfile and node name, the http-errors sections
 * (http_cfg_free()), the hash-type settings left (lb_hash_free_all()),
 * then every pattern reference left
 * (pat_refs_free_all()). The lists are left empty and usable.
 *
 * What it cannot reach: the defaults sections (proxy.c keeps them in a
 * list of its own; free them with cfg_free_proxy() after the proxies that
 * inherited from them and before this call: it frees what their error
 * pages and ACLs may still use) and interned variable names (vars.c). */
void cfg_free_all(void);

#endif
