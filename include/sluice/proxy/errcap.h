/* Captures of the last invalid request and response of each proxy, for
 * the CLI's `show errors` (src/proxy/errcap.c). */
#ifndef SLUICE_PROXY_ERRCAP_H
#define SLUICE_PROXY_ERRCAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct proxy;
struct server;

/* One capture: a copy of the bytes a parser refused. */
struct errcap {
	int64_t when_ms;             /* wall clock, ms */
	uint32_t event;              /* number of the error since start */
	int is_resp;
	char other[64];              /* the backend of a request ("<NONE>" if
	                              * none yet), the frontend of a response */
	int other_id;                /* its iid, -1 if none */
	char srv[64];                /* "<NONE>" if none */
	int srv_id;                  /* -1 if none */
	struct sockaddr_storage src; /* the client */
	size_t len;                  /* bytes received when the error was found */
	size_t pos;                  /* offset of the error */
	char reason[96];
	size_t bufsize;              /* the buffer's size (tune.bufsize) */
	char *data;                  /* the first min(len, bufsize) bytes */
	size_t data_len;
};

/* A request refused by frontend <fe> (is_resp 0), or a response refused by
 * backend <be> (is_resp 1). Any thread; copies at most tune.bufsize bytes
 * into the proxy's slot for that direction, under the proxy's capture
 * lock: memory is bounded by two buffers per proxy that saw an error. */
void errcap_record(struct proxy *px, int is_resp, const struct proxy *other,
                   const struct server *srv, const struct sockaddr_storage *src,
                   const char *buf, size_t len, size_t pos, const char *reason);

/* Copies the capture of <px> for <is_resp> into <out> (its data malloc'ed:
 * free with errcap_release()). Returns 0, or -1 if there is none. */
int errcap_get(struct proxy *px, int is_resp, struct errcap *out);
void errcap_release(struct errcap *c);

/* Errors captured since start, by every proxy. */
uint32_t errcap_total(void);

/* Frees the captures of <px> (at exit). */
void errcap_free(struct proxy *px);

#endif
