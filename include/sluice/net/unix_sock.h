/* UNIX listening sockets: the global `unix-bind` defaults (path prefix,
 * mode, owner) and the bind options user/group/uid/gid, applied once the
 * socket exists (src/net/unix_sock.c). */
#ifndef SLUICE_NET_UNIX_SOCK_H
#define SLUICE_NET_UNIX_SOCK_H

#include <stddef.h>

struct bind_conf;

/* The bind options `user`, `group`, `uid`, `gid` <v> on <bc>. 0, or -1
 * with HAProxy's message. */
int unix_sock_owner_opt(struct bind_conf *bc, const char *opt, const char *v, char *err,
                        size_t errlen);

/* A new bind line's unix address gets the `unix-bind` prefix, and its
 * mode and owner unless the line sets them (called after its options).
 * <addr> is the address as written; 0, or -1 when the prefixed path is
 * too long. */
int unix_sock_defaults(struct bind_conf *bc, char *err, size_t errlen);

/* The mode and owner of the socket at <path> once bound. 0, or -1. */
int unix_sock_apply(const struct bind_conf *bc, const char *path, char *err, size_t errlen);

void unix_sock_free(void);

#endif
