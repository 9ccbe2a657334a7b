/* A connection: a non-blocking socket registered edge-triggered in its
 * owner thread's epoll, and readiness flags that the I/O callback sets and
 * the stream clears when a call returns EAGAIN. Owner thread only. */
#ifndef SLUICE_NET_CONN_H
#define SLUICE_NET_CONN_H

#include <sys/socket.h>
#include <sys/types.h>
#include <sluice/core/buf.h>
#include <sluice/core/poller.h>
#include <sluice/net/conn_counters.h>

#define CONN_F_RD_READY   0x01
#define CONN_F_WR_READY   0x02
#define CONN_F_RD_SHUT    0x04   /* end of input seen (FIN) */
#define CONN_F_WR_SHUT    0x08   /* we sent our FIN */
#define CONN_F_ERROR      0x10
#define CONN_F_HUP        0x20   /* peer closed both ways / reset */
#define CONN_F_SRC_SET    0x40   /* src holds the address (else: ask lazily) */
#define CONN_F_RDHUP      0x100  /* peer's FIN announced by epoll: read until EOF */
#define CONN_F_DST_SET    0x80   /* dst holds the address (else: ask lazily) */
#define CONN_F_TLS_HS     0x200  /* TLS: handshake not complete */
#define CONN_F_WR_WAITS_RD 0x400 /* TLS: the write side waits for input */
#define CONN_F_RD_WAITS_WR 0x800 /* TLS: the read side waits for room to write */
#define CONN_F_CONNECTED  0x1000 /* outgoing: the TCP connection is established */

struct task;
struct ssl_st;

struct conn {
	struct poll_handle ph;      /* ph.fd < 0 when closed */
	unsigned int flags;
	int err;                    /* errno of the failure */
	struct task *task;          /* woken on I/O events */
	struct ssl_st *ssl;         /* the TLS transport (src/net/tls.c), NULL: raw */
	struct conn_counters *cnt;  /* counted there (conn_count_start()), or NULL;
	                             * moves with the connection (conn_move()) */
	struct sockaddr_storage src;
	struct sockaddr_storage dst;
};

void conn_init(struct conn *c, struct task *t);
/* Takes ownership of <fd> (non-blocking) and registers it. */
int  conn_attach(struct conn *c, int fd);
void conn_close(struct conn *c);
/* Closes with a reset instead of a FIN (SO_LINGER 0), so that no TIME_WAIT
 * is left on our side: for connections sluice closes first every few
 * seconds, health checks (HAProxy closes its checks so). */
void conn_close_rst(struct conn *c);
/* Closes a connection's descriptor that no struct conn holds (an accepted
 * socket not attached yet, a handed-over one that could not be adopted):
 * it leaves the poller's table and the descriptor budget. */
void conn_fd_close(int fd);
/* Reads into <b>. Returns bytes read, 0 on EOF (sets RD_SHUT), -1 when it
 * would block (clears RD_READY) or on error (sets ERROR). */
ssize_t conn_recv(struct conn *c, struct buffer *b);
ssize_t conn_send(struct conn *c, struct buffer *b);
/* The same, reading at most <max> bytes / sending at most the first <max>.
 * Through TLS when c->ssl is set: the handshake runs inside these calls. */
ssize_t conn_recv_max(struct conn *c, struct buffer *b, size_t max);
ssize_t conn_send_max(struct conn *c, struct buffer *b, size_t max);
/* Moves an open connection to another struct conn of the same thread,
 * whose events wake <t> from now on. No syscall: the poller's descriptor
 * table is re-pointed. */
void conn_move(struct conn *dst, struct conn *src, struct task *t);
/* Takes <fd>, an open connection another struct conn gave up (a server
 * connection handed over with a queue slot), with its TLS state <ssl> (or
 * NULL): re-pointed if this thread's poller holds it, with the giver's
 * readiness <flags> (CONN_F_*) and the events that came since; registered
 * like conn_attach() otherwise. */
int conn_adopt(struct conn *c, int fd, unsigned int flags, struct ssl_st *ssl);
void conn_shutw(struct conn *c);
/* Sends a few bytes outside of any buffer (an interim "100 Continue") at
 * once, through the transport. Returns the bytes sent (all or nothing
 * under TLS: a record OpenSSL could not send at once marks the connection
 * failed, since a TLS write must be retried with the same bytes), or -1. */
ssize_t conn_send_bytes(struct conn *c, const void *p, size_t len);
/* Starts a non-blocking connect to <dst>. Returns 0 (in progress or done)
 * or -1 with errno. */
int  conn_connect(struct conn *c, const struct sockaddr_storage *dst, socklen_t len);

/* Socket options of one side of a proxy (option tcpka, nolinger, source...). */
struct conn_sockopts {
	int keepalive;                 /* SO_KEEPALIVE */
	int ka_cnt, ka_idle, ka_intvl; /* TCP_KEEPCNT, TCP_KEEPIDLE, TCP_KEEPINTVL
	                                * (seconds); 0: the kernel's */
	int nolinger;                  /* close with a reset */
	int smart;                     /* tcp-smart-connect: no quick ACK */
	int tfo;                       /* TCP fast open on connect (server `tfo`) */
	int user_timeout_ms;           /* TCP_USER_TIMEOUT (`tcp-ut`), 0: the kernel's */
	struct sockaddr_storage src;   /* source: bind there first (ss_family 0: no) */
	socklen_t srclen;
};
/* conn_connect() with the options of <o> (may be NULL). */
int  conn_connect_opts(struct conn *c, const struct sockaddr_storage *dst, socklen_t len,
                       const struct conn_sockopts *o);
/* The options of <o> that apply to an established socket <fd>. */
void conn_apply_sockopts(int fd, const struct conn_sockopts *o);
/* tune.rcvbuf.* / tune.sndbuf.* on socket <fd> (0: leave the kernel's). */
void conn_set_bufs(int fd, int rcvbuf, int sndbuf);
/* Advances the transport's handshake on an accepted connection (TLS): 0
 * once it is complete (at once on a raw socket), EINPROGRESS while it
 * waits for the socket, or an errno: ECONNRESET (the peer closed), EPROTO
 * (TLS failure), other socket errors. */
int  conn_handshake(struct conn *c);
/* After a connect: 0 if established (TLS handshake included), an errno
 * otherwise (EINPROGRESS while still pending). */
int  conn_connect_status(struct conn *c);

/* The local address of an accepted (dst) or outgoing (src) connection,
 * looked up on first use only: most sessions never need it. */
const struct sockaddr_storage *conn_dst(struct conn *c);
const struct sockaddr_storage *conn_src(struct conn *c);

static inline int conn_is_open(const struct conn *c)
{
	return c->ph.fd >= 0;
}

/* Counts the open connection <c> in <cnt> from now on: one more open
 * there, then the bytes it receives and sends (TLS payload, not records),
 * until conn_close() or conn_count_stop(). A connection is counted in one
 * place at a time. */
void conn_count_start(struct conn *c, struct conn_counters *cnt);
/* <c> leaves its counters (one less open there) but stays open: it changes
 * hands (an HTTP/1 connection becomes an HTTP/2 one). */
void conn_count_stop(struct conn *c);
/* <c>, a connection taken from a struct conn that gave it up without
 * closing it (conn_adopt()), goes on counting in <cnt>, where it was
 * counted as open all along. */
static inline void conn_count_resume(struct conn *c, struct conn_counters *cnt)
{
	c->cnt = cnt;
}

#endif
