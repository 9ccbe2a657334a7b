/* `resolvers` sections, read and checked as HAProxy 2.6 reads them. sluice
 * resolves server names once, at start-up, with the system's resolver
 * (getaddrinfo); it does not query these name servers at run time, which
 * the configuration is warned about. Servers name a section with
 * `resolvers`; `init-addr` says what to do when a name does not resolve at
 * start-up (src/net/resolvers.c). */
#ifndef SLUICE_NET_RESOLVERS_H
#define SLUICE_NET_RESOLVERS_H

/* 1 if a resolvers section of that name exists. */
int resolvers_exist(const char *name);

/* Frees the sections (configuration free). */
void resolvers_free_all(void);

/* init-addr methods, tried in order */
enum { INIT_ADDR_NONE_SET = 0, INIT_ADDR_LIBC, INIT_ADDR_LAST, INIT_ADDR_NONE, INIT_ADDR_IP };

#endif
