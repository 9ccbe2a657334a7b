/* Server selection (`balance`). */
#ifndef SLUICE_PROXY_LB_H
#define SLUICE_PROXY_LB_H

#include <stdint.h>
#include <sys/socket.h>

struct proxy;
struct server;

enum lb_result {
	LB_OK = 0,        /* *out has a slot taken for the stream */
	LB_QUEUE_BE,      /* every candidate is full: wait in the backend queue */
	LB_QUEUE_SRV,     /* the chosen server (*out) is full: wait in its queue */
	LB_NOSRV,         /* no usable server */
};

/* Chooses a server for a new session from <src>. <hkey> is the hash of the
 * request's key for balance uri|url_param|hdr (NULL when the request has
 * none: round robin). <avoid> (may be NULL) is skipped when another
 * candidate exists (redispatch). */
enum lb_result lb_pick(struct proxy *be, const struct sockaddr_storage *src,
                       const uint32_t *hkey, struct server *avoid, struct server **out);

const char *lb_algo_name(int algo);

#endif
