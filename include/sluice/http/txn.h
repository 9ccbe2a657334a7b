/* An HTTP transaction: one request and its response on a stream.
 *
 * In HTTP mode a stream serves one client connection and runs one
 * transaction at a time (HTTP/1 answers pipelined requests in order); at
 * the end of each transaction it logs, releases its server slot, and
 * starts the next one with a fresh transaction id, as HAProxy starts a new
 * stream per request.
 *
 * The request and response heads are parsed in place (spans into the
 * stream's req/res buffers); edits live in the arenas. A head stays valid
 * until it is forwarded: then the message is serialised into the outgoing
 * bytes and its spans are dropped (msg.nhdrs = 0, TX_F_REQ_GONE): like
 * HAProxy, response rules see no request headers (use captures or
 * variables); the request line is kept in uri_copy for logs.
 *
 * Owner thread only.
 */
#ifndef SLUICE_HTTP_TXN_H
#define SLUICE_HTTP_TXN_H

#include <stdint.h>
#include <sluice/expr/vars.h>
#include <sluice/http/http_cookie.h>
#include <sluice/http/cache_txn.h>
#include <sluice/http/h1.h>
struct http_reply;
#include <sluice/http/msg.h>
#include <sluice/http/msgedit.h>

#define TXN_URI_MAX    1024    /* %r keeps at most this many bytes (HAProxy: 1024) */
#define TXN_ARENA_SIZE 2048    /* strings created by rules, per message */
#define TXN_MAX_CAPTURES 16
/* header slots per message: tune.http.maxhdr (101, the start line counted)
 * plus room for the fields rules add */
#define TXN_HDRS_CAP   (HTTP_MAX_HDRS_DEFAULT - 1 + HTTP_EDIT_EXTRA_HDRS)

/* txn->flags */
#define TX_F_REQ_GONE     0x0001  /* request head forwarded: req spans invalid */
#define TX_F_RES_GONE     0x0002
#define TX_F_CLI_CLOSE    0x0004  /* close the client connection after this txn */
#define TX_F_SRV_CLOSE    0x0008  /* close the server connection after this txn */
#define TX_F_TUNNEL       0x0010  /* switched to a tunnel (101, CONNECT) */
#define TX_F_REPLIED      0x0020  /* sluice answered itself (error, deny, return...) */
#define TX_F_WAIT_BODY    0x0040  /* a rule waits for the request body */
#define TX_F_CONT_SENT    0x0080  /* "100 Continue" already went to the client */
#define TX_F_FIRST_REQ    0x0100  /* first request of the connection */
#define TX_F_RES_STARTED  0x0200  /* response bytes went to the client */
#define TX_F_TARPIT       0x0400  /* tarpitted: answer when timeout tarpit expires */
#define TX_F_MONITOR      0x0800  /* monitor-uri request */
#define TX_F_LOGGED       0x1000
#define TX_F_RES_TRUNC    0x2000  /* the server closed before its body ended */
#define TX_F_REQ_KEPT     0x4000  /* with REQ_GONE: a bodyless request sent to an
                                   * HTTP/2 server, still whole in the request
                                   * channel until its response head, so that a
                                   * refused stream can be sent again */

/* One side's body transfer state. */
struct txn_body {
	int done;               /* whole message forwarded (or none to send) */
	int until_close;        /* response delimited by the connection close */
	int chunked;
	uint64_t left;          /* Content-Length bytes not approved yet */
	struct h1_chunk chunk;  /* chunked: decoder over the bytes approved */
};

struct http_txn {
	uint64_t id;                 /* txn.id, %rt: per-process request counter */
	int id_set;
	unsigned int flags;          /* TX_F_* */
	struct http_msg req, res;
	struct http_edit req_edit, res_edit;
	struct http_hdr req_hdrs[TXN_HDRS_CAP];
	struct http_hdr res_hdrs[TXN_HDRS_CAP];
	char req_arena[TXN_ARENA_SIZE];
	char res_arena[TXN_ARENA_SIZE];
	char uri_copy[TXN_URI_MAX + 1]; /* request line, for logs (%r %HM %HU %HV);
	                              * valid up to uri_copy_len (not cleared) */
	/* everything from here on is cleared for each transaction */
	struct txn_body req_body, res_body;
	int status;                  /* status sent to the client, -1 before (%ST) */
	int srv_status;              /* status the server sent, -1 none */
	enum http_meth meth;         /* request method (kept after forwarding) */
	size_t uri_copy_len;
	int log_level;               /* set-log-level; -1: default (info, err on errors) */
	int srv_timeout_ms;          /* set-timeout server; 0: the backend's */
	int tunnel_timeout_ms;       /* set-timeout tunnel */
	char *unique_id;             /* unique-id-format rendered once (malloc), or NULL */
	char *req_cap[TXN_MAX_CAPTURES];   /* capture request header values (malloc) */
	char *res_cap[TXN_MAX_CAPTURES];
	char *capture_slots[TXN_MAX_CAPTURES];  /* http-request capture ... id N / len */
	char *cookie_cap_cli, *cookie_cap_srv;  /* capture cookie (%CC %CS), malloc */
	struct var_store vars_txn, vars_req, vars_res;
	/* times, in ms of the loop clock */
	uint64_t req_first_ms;       /* first byte of the request (or accept) */
	uint64_t req_head_ms;        /* head complete */
	uint64_t req_sent_ms;        /* request fully sent to the server */
	uint64_t res_head_ms;        /* response head received */
	uint64_t idle_start_ms;      /* transaction started waiting for a request */
	int Ti, TR, Tq, Tr, Ta;      /* %Ti %TR %Tq %Tr %Ta, -1 unset */
	/* the answer sluice builds itself (errors, deny, return, redirect):
	 * complete HTTP/1 bytes, sent instead of a server's response */
	const char *err_reason;      /* why a request or response was refused (log) */
	int ana_step;                /* request analysis: next step (stream_http.c) */
	struct list *resume;         /* rule to resume at after ACT_V_YIELD */
	int act_strict_off;          /* strict-mode off, kept across a yield */
	char cookie_term[3];         /* %tsc chars 3-4 (persistence cookie) */
	int srv_from_cookie;         /* the request's cookie chose the server */
	struct http_cookie_state ck; /* dates of the request's cookie (maxidle/maxlife) */
	int resp_interim;            /* 1xx heads forwarded so far */
	const struct http_reply *tarpit_reply;   /* tarpit's own reply, or NULL */
	/* compression (src/http/comp.c): the algorithm the request accepts
	 * (COMP_NONE: none), whether this response is compressed with it, and
	 * its stream state (malloc), from the response head to the end of the
	 * transaction (txn_cleanup() frees it on every path) */
	int comp_algo;
	int comp_on;
	struct comp_ctx *comp;
	const struct proxy *stats_px; /* the proxy whose stats page answers, or NULL */
	int stats_admin;             /* its `stats admin` condition matched */
	int stats_rules_done;        /* its `stats http-request` rules ran */
	struct cache_txn cache;      /* the HTTP cache: key, hit, object being
	                              * stored (cache_txn_release() on every path) */
	char *retry_copy;            /* the whole request as first sent, kept for a
	                              * layer-7 retry (retry-on), or NULL (malloc) */
	size_t retry_len;
};

#endif
