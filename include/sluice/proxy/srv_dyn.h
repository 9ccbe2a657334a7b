/* Servers added and deleted at run time (`add server`, `del server`), as
 * HAProxy 2.6 allows them: see src/proxy/srv_dyn.c. */
#ifndef SLUICE_PROXY_SRV_DYN_H
#define SLUICE_PROXY_SRV_DYN_H

#include <stddef.h>

struct proxy;
struct server;

/* Room for servers added at run time in each backend whose algorithm
 * allows them. */
#define SRV_DYN_SLOTS  1024

/* 1 when <be>'s load-balancing algorithm allows servers to come and go. */
int srv_dyn_allowed(const struct proxy *be);

/* `add server <be>/<name> <addr> [params]`: args[0] is the name. Returns
 * 0, or -1 with HAProxy's message in <msg>. */
int srv_dyn_add(struct proxy *be, char **args, int nargs, char *msg, size_t len);

/* `del server`: <s> must be in maintenance, unused, and referenced by no
 * rule or tracking server. Returns 0, or -1 with the message. */
int srv_dyn_del(struct server *s, char *msg, size_t len);

/* The deleted servers (a list through grave_next), kept until exit: a
 * stream that ended may still name its server in its log line. */
struct server *srv_dyn_graveyard(void);
void srv_dyn_free_all(void);

#endif
