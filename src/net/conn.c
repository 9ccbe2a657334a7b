/* Raw TCP/unix transport. Sockets are registered once, edge-triggered, for
 * input, output and peer shutdown; the callback records readiness and wakes
 * the owning task, which does the I/O. Owner thread only.
 *
 * Readiness without a wasted syscall: a read that returns less than the room
 * offered means the socket had no more data, so the read side is marked not
 * ready without a second recv() that would only say EAGAIN; edge-triggered
 * epoll reports the next arrival anyway. The exception is a FIN announced by
 * EPOLLRDHUP: no further event will come for it, so such a socket is read
 * until recv() returns 0. A short write likewise means the socket buffer is
 * full. On request/response traffic this halves the recv() calls.
 *
 * Every connection's descriptor counts in the descriptor budget
 * (fd_budget.h): from accept() (listener.c) or socket() (conn_connect())
 * to conn_close() or conn_fd_close().
 *
 * A connection its owner points at a struct conn_counters (conn_count_start())
 * counts itself there, with relaxed atomics: open until conn_close(), and
 * every byte conn_recv*() and conn_send*() move, whichever layer calls them
 * (a mux, a tunnel, an interim response). The pointer travels with the
 * connection (conn_move()), so a pooled connection is still counted. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sluice/core/fd_budget.h>
#include <sluice/core/sched.h>
#include <sluice/net/conn.h>
#include <sluice/net/tls.h>

static void conn_io_cb(struct poll_handle *h, uint32_t ev)
{
	struct conn *c = h->owner;

	if (ev & (EPOLLIN | EPOLLRDHUP))
		c->flags |= CONN_F_RD_READY;
	if (ev & EPOLLRDHUP)
		c->flags |= CONN_F_RDHUP;
	if (ev & EPOLLOUT)
		c->flags |= CONN_F_WR_READY;
	if (c->flags & (CONN_F_WR_WAITS_RD | CONN_F_RD_WAITS_WR)) {
		/* TLS: a direction blocked on the other one (src/net/tls.c) */
		if ((c->flags & CONN_F_WR_WAITS_RD) && (ev & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP)))
			c->flags = (c->flags & ~CONN_F_WR_WAITS_RD) | CONN_F_WR_READY;
		if ((c->flags & CONN_F_RD_WAITS_WR) && (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			c->flags = (c->flags & ~CONN_F_RD_WAITS_WR) | CONN_F_RD_READY;
	}
	if (ev & (EPOLLERR | EPOLLHUP))
		c->flags |= CONN_F_RD_READY | CONN_F_WR_READY | CONN_F_HUP;
	task_wakeup(c->task, TASK_WOKEN_IO);
}

void conn_init(struct conn *c, struct task *t)
{
	c->ph.fd = -1;
	c->ph.cb = conn_io_cb;
	c->ph.owner = c;
	c->flags = 0;
	c->err = 0;
	c->task = t;
	c->ssl = NULL;
	c->cnt = NULL;
}

int conn_attach(struct conn *c, int fd)
{
	c->ph.fd = fd;
	c->flags &= CONN_F_SRC_SET | CONN_F_DST_SET;
	if (poller_fd_add(&c->ph, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET) < 0) {
		c->err = errno;
		c->ph.fd = -1;
		return -1;
	}
	return 0;
}

/* close() alone: a connection's descriptor is never duplicated, so closing
 * it removes it from the epoll set; an explicit EPOLL_CTL_DEL would be one
 * more syscall per side and session. */
void conn_close(struct conn *c)
{
	if (c->ph.fd < 0)
		return;
	if (c->ssl)
		tls_free(c, !(c->flags & (CONN_F_ERROR | CONN_F_HUP)));
	conn_fd_close(c->ph.fd);
	c->ph.fd = -1;
	conn_count_stop(c);
}

void conn_count_start(struct conn *c, struct conn_counters *cnt)
{
	conn_count_stop(c);
	c->cnt = cnt;
	atomic_fetch_add_explicit(&cnt->open, 1, memory_order_relaxed);
}

void conn_count_stop(struct conn *c)
{
	if (!c->cnt)
		return;
	atomic_fetch_sub_explicit(&c->cnt->open, 1, memory_order_relaxed);
	c->cnt = NULL;
}

void conn_close_rst(struct conn *c)
{
	struct linger nolinger = { .l_onoff = 1, .l_linger = 0 };

	if (c->ph.fd >= 0 && !c->ssl)
		setsockopt(c->ph.fd, SOL_SOCKET, SO_LINGER, &nolinger, sizeof(nolinger));
	conn_close(c);
}

void conn_fd_close(int fd)
{
	poller_fd_forget(fd);
	close(fd);
	fd_budget_closed();
}

static const struct sockaddr_storage *conn_lookup(struct conn *c, struct sockaddr_storage *ss,
                                                  unsigned int flag)
{
	socklen_t l = sizeof(*ss);

	if (!(c->flags & flag) && c->ph.fd >= 0) {
		if (getsockname(c->ph.fd, (struct sockaddr *)ss, &l) < 0)
			ss->ss_family = AF_UNSPEC;
		c->flags |= flag;
	}
	return ss;
}

const struct sockaddr_storage *conn_dst(struct conn *c)
{
	return conn_lookup(c, &c->dst, CONN_F_DST_SET);
}

const struct sockaddr_storage *conn_src(struct conn *c)
{
	return conn_lookup(c, &c->src, CONN_F_SRC_SET);
}

void conn_move(struct conn *dst, struct conn *src, struct task *t)
{
	*dst = *src;
	dst->ph.owner = dst;
	dst->task = t;
	src->ph.fd = -1;
	src->ssl = NULL;
	src->cnt = NULL;
	poller_fd_set_owner(dst->ph.fd, &dst->ph);
}

int conn_adopt(struct conn *c, int fd, unsigned int flags, struct ssl_st *ssl)
{
	c->ssl = ssl;
	if (!poller_fd_is_local(fd)) {
		if (conn_attach(c, fd) < 0) {
			c->ssl = NULL;
			return -1;
		}
		c->flags |= flags & CONN_F_CONNECTED;
		return 0;
	}
	c->ph.fd = fd;
	c->flags = (c->flags & (CONN_F_SRC_SET | CONN_F_DST_SET)) | flags;
	poller_fd_set_owner(fd, &c->ph);
	return 0;
}

ssize_t conn_recv(struct conn *c, struct buffer *b)
{
	return conn_recv_max(c, b, (size_t)-1);
}

static ssize_t raw_recv(struct conn *c, struct buffer *b, size_t max)
{
	ssize_t n;
	size_t room;

	buf_realign(b);
	room = buf_room(b);
	if (room > max)
		room = max;
	if (!room)
		return -1;
	do {
		n = recv(c->ph.fd, buf_tail(b), room, 0);
	} while (n < 0 && errno == EINTR);
	if (n > 0) {
		b->data += (size_t)n;
		if ((size_t)n < room && !(c->flags & (CONN_F_RDHUP | CONN_F_HUP)))
			c->flags &= ~CONN_F_RD_READY;   /* drained: see above */
		return n;
	}
	if (n == 0) {
		c->flags |= CONN_F_RD_SHUT;
		c->flags &= ~CONN_F_RD_READY;
		return 0;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK) {
		c->flags &= ~CONN_F_RD_READY;
	} else {
		c->err = errno;
		c->flags |= CONN_F_ERROR | CONN_F_RD_SHUT;
		c->flags &= ~CONN_F_RD_READY;
	}
	return -1;
}

ssize_t conn_recv_max(struct conn *c, struct buffer *b, size_t max)
{
	ssize_t n = c->ssl ? tls_recv(c, b, max) : raw_recv(c, b, max);

	if (n > 0 && c->cnt)
		atomic_fetch_add_explicit(&c->cnt->bytes_in, (uint64_t)n, memory_order_relaxed);
	return n;
}

ssize_t conn_send(struct conn *c, struct buffer *b)
{
	return conn_send_max(c, b, b->data);
}

static ssize_t raw_send(struct conn *c, struct buffer *b, size_t max)
{
	ssize_t n;
	size_t len = max < b->data ? max : b->data;

	if (!len)
		return 0;
	do {
		n = send(c->ph.fd, buf_head(b), len, MSG_NOSIGNAL | MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n > 0) {
		if ((size_t)n < len)
			c->flags &= ~CONN_F_WR_READY;   /* socket buffer full */
		buf_consume(b, (size_t)n);
		return n;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		c->flags &= ~CONN_F_WR_READY;
	} else {
		c->err = n < 0 ? errno : EPIPE;
		c->flags |= CONN_F_ERROR;
		c->flags &= ~CONN_F_WR_READY;
	}
	return -1;
}

ssize_t conn_send_max(struct conn *c, struct buffer *b, size_t max)
{
	ssize_t n = c->ssl ? tls_send(c, b, max) : raw_send(c, b, max);

	if (n > 0 && c->cnt)
		atomic_fetch_add_explicit(&c->cnt->bytes_out, (uint64_t)n, memory_order_relaxed);
	return n;
}

void conn_shutw(struct conn *c)
{
	if (c->ph.fd < 0 || (c->flags & CONN_F_WR_SHUT))
		return;
	if (c->ssl)
		tls_shutw(c);
	shutdown(c->ph.fd, SHUT_WR);
	c->flags |= CONN_F_WR_SHUT;
}

void conn_set_bufs(int fd, int rcvbuf, int sndbuf)
{
	if (rcvbuf)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (sndbuf)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
}

void conn_apply_sockopts(int fd, const struct conn_sockopts *o)
{
	if (!o)
		return;
	if (o->keepalive) {
		setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &(int){ 1 }, sizeof(int));
		if (o->ka_cnt)
			setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &o->ka_cnt, sizeof(int));
		if (o->ka_idle)
			setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &o->ka_idle, sizeof(int));
		if (o->ka_intvl)
			setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &o->ka_intvl, sizeof(int));
	}
	if (o->nolinger)
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &(struct linger){ 1, 0 },
		           sizeof(struct linger));
	if (o->user_timeout_ms)
		setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &o->user_timeout_ms, sizeof(int));
}

int conn_connect(struct conn *c, const struct sockaddr_storage *dst, socklen_t len)
{
	return conn_connect_opts(c, dst, len, NULL);
}

int conn_connect_opts(struct conn *c, const struct sockaddr_storage *dst, socklen_t len,
                      const struct conn_sockopts *o)
{
	int fd = socket(dst->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;

	if (fd < 0)
		return -1;
	fd_budget_opened();
	/* before connect(): the receive window is announced in the SYN */
	conn_set_bufs(fd, global.rcvbuf_srv, global.sndbuf_srv);
	if (dst->ss_family != AF_UNIX)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (o && dst->ss_family != AF_UNIX) {
		conn_apply_sockopts(fd, o);
		if (o->smart)
			setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &(int){ 0 }, sizeof(int));
		/* the first data leave with the SYN when the server allows it */
		if (o->tfo)
			setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &one, sizeof(one));
		/* source: the port is the kernel's choice at connect() time */
		if (o->src.ss_family == dst->ss_family) {
			setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
			if (bind(fd, (const struct sockaddr *)&o->src, o->srclen) < 0) {
				int e = errno;

				conn_fd_close(fd);
				errno = e;
				return -1;
			}
		}
	}
	if (connect(fd, (const struct sockaddr *)dst, len) < 0 && errno != EINPROGRESS) {
		int e = errno;

		conn_fd_close(fd);
		errno = e;
		return -1;
	}
	if (conn_attach(c, fd) < 0) {
		conn_fd_close(fd);
		errno = c->err;
		return -1;
	}
	c->dst = *dst;
	c->flags |= CONN_F_DST_SET;
	return 0;
}

int conn_connect_status(struct conn *c)
{
	int err = 0;
	socklen_t l = sizeof(err);

	if (!(c->flags & CONN_F_CONNECTED)) {
		if (!(c->flags & (CONN_F_WR_READY | CONN_F_HUP)))
			return EINPROGRESS;
		if (getsockopt(c->ph.fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
			return errno;
		if (err)
			return err;
		c->flags |= CONN_F_CONNECTED;
	}
	/* over TLS, the handshake is part of connecting (as HAProxy: a
	 * failed one is a connection error, retried, then 503) */
	return c->ssl ? tls_handshake(c, 1) : 0;
}

int conn_handshake(struct conn *c)
{
	return c->ssl ? tls_handshake(c, 0) : 0;
}

ssize_t conn_send_bytes(struct conn *c, const void *p, size_t len)
{
	ssize_t n;

	if (c->ssl) {
		n = tls_send_bytes(c, p, len);
	} else {
		do {
			n = send(c->ph.fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		} while (n < 0 && errno == EINTR);
	}
	if (n > 0 && c->cnt)
		atomic_fetch_add_explicit(&c->cnt->bytes_out, (uint64_t)n, memory_order_relaxed);
	return n;
}
