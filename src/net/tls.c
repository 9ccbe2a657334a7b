/* The TLS transport (OpenSSL 3). A connection with c->ssl set reads and
 * writes through it; nothing above conn_recv()/conn_send() knows. Owner
 * thread only, like the connection: an SSL object is never used by two
 * threads at once (a server connection handed to another thread moves
 * with its SSL, see conn_adopt()).
 *
 * Readiness. The poller is edge-triggered and the connection keeps one
 * readiness flag per direction (CONN_F_RD_READY, CONN_F_WR_READY), cleared
 * when a call would block. Under TLS a read may need the socket to be
 * writable (a handshake message to send, in TLS 1.2 a renegotiation, which
 * is refused) and a write may need input (the handshake of a client
 * connection before its first write). When OpenSSL says "want read" for a
 * write, CONN_F_WR_WAITS_RD is set and the write side reported blocked; the
 * next input event then marks the write side ready too (conn_io_cb()), and
 * symmetrically with CONN_F_RD_WAITS_WR. A direction is only ever reported
 * blocked after OpenSSL's own socket call returned EAGAIN, so no edge is
 * missed, and a flag is only set by an event, so nothing spins.
 *
 * Reads loop over SSL_read_ex() until the buffer is full, OpenSSL says
 * "want read" (the socket is drained: the next edge will come) or the
 * stream ends: a short read says nothing under TLS (one record per call,
 * and records buffered inside OpenSSL raise no event), so readiness is
 * only cleared on an explicit "want read".
 *
 * The socket is reached through a BIO of our own (send() with
 * MSG_NOSIGNAL, and bytes handed over before the handshake: what followed
 * a PROXY header on an accepted connection, a PROXY header to send in
 * clear before a client handshake). Its BIO_METHOD is the one object shared
 * by all threads here: created once by whichever thread needs it first
 * (pthread_once()), read-only after, never freed.
 *
 * A peer that closes without close_notify ends the stream like a FIN
 * (SSL_OP_IGNORE_UNEXPECTED_EOF, set on every SSL_CTX): HTTP/1 says where
 * a message ends, and truncation is detected there.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <openssl/err.h>
#include <sluice/core/buf.h>
#include <sluice/net/conn.h>
#include <sluice/net/tls.h>

/* What the BIO knows of its connection: the descriptor (a struct conn
 * moves, its descriptor does not) and bytes to hand over first. */
struct tls_bio {
	int fd;
	uint32_t pre_len, pre_off;   /* pre[]: bytes to read first (server) or
	                              * to send first (client) */
	int pre_is_output;
	int pending_err;             /* a failure met after data, for the next read */
	unsigned long last_err;      /* OpenSSL error that failed the conn
	                              * (the first failure's) */
	unsigned char pre[];
};

static BIO_METHOD *tls_bio_method;   /* set once, see tls_bio_init() */

static int tls_bio_write(BIO *bio, const char *p, int len)
{
	struct tls_bio *tb = BIO_get_data(bio);
	ssize_t n;

	BIO_clear_retry_flags(bio);
	while (tb->pre_is_output && tb->pre_off < tb->pre_len) {
		n = send(tb->fd, tb->pre + tb->pre_off, tb->pre_len - tb->pre_off,
		         MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				BIO_set_retry_write(bio);
			return -1;
		}
		tb->pre_off += (uint32_t)n;
	}
	do {
		n = send(tb->fd, p, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		BIO_set_retry_write(bio);
	return (int)n;
}

static int tls_bio_read(BIO *bio, char *p, int len)
{
	struct tls_bio *tb = BIO_get_data(bio);
	ssize_t n;

	BIO_clear_retry_flags(bio);
	if (!tb->pre_is_output && tb->pre_off < tb->pre_len) {
		uint32_t left = tb->pre_len - tb->pre_off;

		n = (uint32_t)len < left ? len : (int)left;
		memcpy(p, tb->pre + tb->pre_off, (size_t)n);
		tb->pre_off += (uint32_t)n;
		return (int)n;
	}
	do {
		n = recv(tb->fd, p, (size_t)len, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		BIO_set_retry_read(bio);
	return (int)n;
}

static long tls_bio_ctrl(BIO *bio, int cmd, long num, void *ptr)
{
	return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int tls_bio_create(BIO *bio)
{
	BIO_set_init(bio, 1);
	return 1;
}

static int tls_bio_destroy(BIO *bio)
{
	free(BIO_get_data(bio));
	BIO_set_data(bio, NULL);
	return 1;
}

/* The first TLS connection of any thread creates the method, which lives
 * until exit. Worker threads get there concurrently (two backend connects
 * at start-up), hence pthread_once(): with a plain check-then-set, both
 * threads could create one and one was lost (LeakSanitizer: a 96-byte
 * BIO_METHOD and its 7-byte name "sluice"), or a thread could build a BIO
 * on a method whose callbacks were not set yet. */
static pthread_once_t tls_bio_once = PTHREAD_ONCE_INIT;

static void tls_bio_method_create(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "sluice");

	if (!m ||
	    !BIO_meth_set_write(m, tls_bio_write) ||
	    !BIO_meth_set_read(m, tls_bio_read) ||
	    !BIO_meth_set_ctrl(m, tls_bio_ctrl) ||
	    !BIO_meth_set_create(m, tls_bio_create) ||
	    !BIO_meth_set_destroy(m, tls_bio_destroy)) {
		BIO_meth_free(m);
		return;
	}
	tls_bio_method = m;   /* published complete: pthread_once() orders it */
}

/* 0, or -1 if the method could not be created (every later call too). */
static int tls_bio_init(void)
{
	pthread_once(&tls_bio_once, tls_bio_method_create);
	return tls_bio_method ? 0 : -1;
}

static int tls_attach(struct conn *c, SSL_CTX *ctx, const void *pre, size_t pre_len,
                      int pre_is_output)
{
	struct tls_bio *tb;
	BIO *bio;
	SSL *ssl;

	if (tls_bio_init() < 0)
		return -1;
	tb = malloc(sizeof(*tb) + pre_len);
	if (!tb)
		return -1;
	tb->fd = c->ph.fd;
	tb->pre_len = (uint32_t)pre_len;
	tb->pre_off = 0;
	tb->pre_is_output = pre_is_output;
	tb->last_err = 0;
	tb->pending_err = 0;
	if (pre_len)
		memcpy(tb->pre, pre, pre_len);
	ssl = SSL_new(ctx);
	bio = ssl ? BIO_new(tls_bio_method) : NULL;
	if (!bio) {
		SSL_free(ssl);
		free(tb);
		return -1;
	}
	BIO_set_data(bio, tb);
	SSL_set_bio(ssl, bio, bio);
	c->ssl = ssl;
	c->flags |= CONN_F_TLS_HS;
	return 0;
}

int tls_conn_accept(struct conn *c, SSL_CTX *ctx, const void *early, size_t early_len)
{
	if (tls_attach(c, ctx, early, early_len, 0) < 0)
		return -1;
	SSL_set_accept_state(c->ssl);
	/* bytes handed over are input that no edge will announce */
	if (early_len)
		c->flags |= CONN_F_RD_READY;
	return 0;
}

int tls_conn_connect(struct conn *c, SSL_CTX *ctx, const char *sni, SSL_SESSION *sess,
                     const void *preface, size_t preface_len)
{
	if (tls_attach(c, ctx, preface, preface_len, 1) < 0)
		return -1;
	SSL_set_connect_state(c->ssl);
	if ((sni && *sni && !SSL_set_tlsext_host_name(c->ssl, sni)) ||
	    (sess && !SSL_set_session(c->ssl, sess))) {
		SSL_free(c->ssl);
		c->ssl = NULL;
		c->flags &= ~CONN_F_TLS_HS;
		return -1;
	}
	return 0;
}

/* The connection failed in TLS: keeps OpenSSL's reason for the log. */
static void tls_failed(struct conn *c, int code)
{
	struct tls_bio *tb = BIO_get_data(SSL_get_rbio(c->ssl));
	unsigned long e = ERR_peek_last_error();

	if (tb && e && !tb->last_err)
		tb->last_err = e;
	ERR_clear_error();
	c->err = code;
	c->flags |= CONN_F_ERROR | CONN_F_RD_SHUT;
	c->flags &= ~(CONN_F_RD_READY | CONN_F_WR_READY);
}

/* After a call of <for_write> direction failed with <rc>: records what it
 * waits for. Returns EINPROGRESS (blocked), 0 (end of stream), or an
 * errno after marking the connection failed. */
static int tls_blocked(struct conn *c, int rc, int for_write)
{
	switch (SSL_get_error(c->ssl, rc)) {
	case SSL_ERROR_WANT_READ:
		c->flags &= ~CONN_F_RD_READY;
		if (for_write)
			c->flags = (c->flags & ~CONN_F_WR_READY) | CONN_F_WR_WAITS_RD;
		return EINPROGRESS;
	case SSL_ERROR_WANT_WRITE:
		c->flags &= ~CONN_F_WR_READY;
		if (!for_write)
			c->flags = (c->flags & ~CONN_F_RD_READY) | CONN_F_RD_WAITS_WR;
		return EINPROGRESS;
	case SSL_ERROR_ZERO_RETURN:
		return 0;
	case SSL_ERROR_SYSCALL:
		/* a socket error (errno), or an end of stream OpenSSL did not
		 * expect where SSL_OP_IGNORE_UNEXPECTED_EOF does not apply */
		if (!ERR_peek_error() && !errno)
			return 0;
		tls_failed(c, errno ? errno : EPIPE);
		return c->err;
	default:
		tls_failed(c, EPROTO);
		return EPROTO;
	}
}

int tls_handshake(struct conn *c, int for_write)
{
	int rc, st;

	if (!(c->flags & CONN_F_TLS_HS))
		return 0;
	if (c->flags & CONN_F_ERROR)
		return c->err ? c->err : EPROTO;
	ERR_clear_error();
	errno = 0;
	rc = SSL_do_handshake(c->ssl);
	if (rc == 1) {
		c->flags &= ~CONN_F_TLS_HS;
		return 0;
	}
	st = tls_blocked(c, rc, for_write);
	if (st == 0) {
		/* the peer closed in the middle of the handshake: before its
		 * first message was complete, it never spoke TLS (a probe, a
		 * port scan); after, the handshake failed */
		st = SSL_get_state(c->ssl) == TLS_ST_BEFORE ? ENODATA : EPROTO;
		tls_failed(c, st);
	}
	return st;
}

ssize_t tls_recv(struct conn *c, struct buffer *b, size_t max)
{
	size_t room, total = 0;

	if (c->flags & CONN_F_TLS_HS) {
		if (tls_handshake(c, 0))
			return -1;
	}
	{
		struct tls_bio *tb = BIO_get_data(SSL_get_rbio(c->ssl));

		if (tb->pending_err) {
			tls_failed(c, tb->pending_err);
			return -1;
		}
	}
	buf_realign(b);
	room = buf_room(b);
	if (room > max)
		room = max;
	if (!room)
		return -1;
	while (total < room) {
		size_t n = 0;
		int st;

		ERR_clear_error();
		errno = 0;
		if (SSL_read_ex(c->ssl, buf_tail(b) + total, room - total, &n)) {
			total += n;
			continue;
		}
		if (total) {
			/* report the data now. Blocking and a clean end are met
			 * again by the next call; a failure is not (OpenSSL only
			 * says "syscall" then, with an empty error queue): it is
			 * kept for the next call */
			int e = SSL_get_error(c->ssl, 0);

			if (e == SSL_ERROR_WANT_READ) {
				c->flags &= ~CONN_F_RD_READY;
			} else if (e == SSL_ERROR_SSL || (e == SSL_ERROR_SYSCALL && errno)) {
				struct tls_bio *tb = BIO_get_data(SSL_get_rbio(c->ssl));

				tb->pending_err = e == SSL_ERROR_SSL ? EPROTO : errno;
				tb->last_err = ERR_peek_last_error();
			}
			break;
		}
		st = tls_blocked(c, 0, 0);
		if (st == 0) {
			c->flags |= CONN_F_RD_SHUT;
			c->flags &= ~CONN_F_RD_READY;
			return 0;
		}
		return -1;
	}
	b->data += total;
	return (ssize_t)total;
}

ssize_t tls_send(struct conn *c, struct buffer *b, size_t max)
{
	size_t len = max < b->data ? max : b->data, sent = 0;

	if (c->flags & CONN_F_TLS_HS) {
		if (tls_handshake(c, 1))
			return -1;
	}
	if (!len)
		return 0;
	while (sent < len) {
		size_t n = 0;
		int rc;

		ERR_clear_error();
		errno = 0;
		rc = SSL_write_ex(c->ssl, buf_head(b) + sent, len - sent, &n);
		if (rc) {
			sent += n;
			continue;
		}
		if (tls_blocked(c, rc, 1) != EINPROGRESS && !(c->flags & CONN_F_ERROR))
			tls_failed(c, EPIPE);   /* the peer closed: nothing more goes */
		break;
	}
	if (!sent)
		return -1;
	buf_consume(b, sent);
	return (ssize_t)sent;
}

ssize_t tls_send_bytes(struct conn *c, const void *p, size_t len)
{
	size_t n = 0;

	if ((c->flags & CONN_F_TLS_HS) && tls_handshake(c, 1))
		return -1;
	ERR_clear_error();
	if (SSL_write_ex(c->ssl, p, len, &n) && n == len)
		return (ssize_t)n;
	/* part of it may sit in OpenSSL's buffer, to be retried with the
	 * same bytes only: the connection cannot go on */
	tls_failed(c, EPIPE);
	return -1;
}

void tls_shutw(struct conn *c)
{
	if (!(c->flags & (CONN_F_TLS_HS | CONN_F_ERROR))) {
		ERR_clear_error();
		SSL_shutdown(c->ssl);   /* close_notify; the reply is not awaited */
		ERR_clear_error();
	}
}

/* Discards what the peer sent and nobody will read. Closing a socket
 * with unread input makes the kernel answer with a reset, which may reach
 * the peer before the alert just sent and make it lose that alert (a TLS
 * 1.3 client judged after its Finished has usually sent its request
 * already). HAProxy drains the same way before closing. */
static void tls_drain(int fd)
{
	int n = 16;   /* bounded: a peer still sending gets its reset */

	while (n-- && recv(fd, NULL, 1 << 30, MSG_TRUNC | MSG_DONTWAIT) > 0)
		;
}

void tls_free(struct conn *c, int clean)
{
	if (!c->ssl)
		return;
	if ((c->flags & (CONN_F_ERROR | CONN_F_HUP)) == CONN_F_ERROR && c->ph.fd >= 0)
		tls_drain(c->ph.fd);
	if (clean && !(c->flags & CONN_F_WR_SHUT))
		tls_shutw(c);
	SSL_free(c->ssl);
	c->ssl = NULL;
	c->flags &= ~(CONN_F_TLS_HS | CONN_F_WR_WAITS_RD | CONN_F_RD_WAITS_WR);
}

unsigned long tls_error_code(const struct ssl_st *ssl)
{
	const struct tls_bio *tb = ssl ? BIO_get_data(SSL_get_rbio(ssl)) : NULL;

	return tb ? tb->last_err : 0;
}

const char *tls_error_str(const struct conn *c)
{
	struct tls_bio *tb;
	const char *r;

	if (!c->ssl || !(tb = BIO_get_data(SSL_get_rbio(c->ssl))) || !tb->last_err)
		return "";
	r = ERR_reason_error_string(tb->last_err);
	return r ? r : "";
}
