/* Server parameters of the PROXY protocol's TLVs (send-proxy-v2-ssl,
 * send-proxy-v2-ssl-cn, proxy-v2-options), redirection (redir), stick
 * tables (non-stick, stick) and websockets (ws); and the v2 PROXY header
 * a stream sends with those TLVs (src/proxy/srv_opts.c). */
#ifndef SLUICE_PROXY_SRV_OPTS_H
#define SLUICE_PROXY_SRV_OPTS_H

#include <stddef.h>
#include <stdint.h>

struct cfg_ctx;
struct server;
struct stream;

/* Parses the server parameter at args[*i]. Returns 1 if it was one of
 * these (with *i on its last word), 0 if not, -1 with <err> set. */
int srv_opts_parse(struct cfg_ctx *ctx, struct server *s, char **args, int nargs, int *i,
                   char *err, size_t errlen);

/* default-server inheritance of these parameters. */
void srv_opts_copy(struct server *dst, const struct server *src);
void srv_opts_free(struct server *s);

/* `redir`: a GET or HEAD request of stream <s> for <srv> is answered
 * with a 302 to the server's prefix followed by the request's path, as
 * HAProxy does, instead of going to the server. Returns 1 if answered. */
int srv_redirect(struct stream *s, struct server *srv);

/* The v2 PROXY header of stream <s> toward <srv> into <buf>, with the
 * TLVs the server asks for. Returns its length, 0 if <len> is short. */
size_t srv_pp_v2_build(struct stream *s, const struct server *srv, uint8_t *buf, size_t len);

#endif
