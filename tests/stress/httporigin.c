/* httporigin: the origin server of the HTTP body stress test.
 *
 *   httporigin PORT MAX_SECONDS
 *
 * One thread, epoll, any number of keep-alive connections on 127.0.0.1:PORT;
 * exits after MAX_SECONDS or on SIGTERM/SIGINT, printing its totals.
 *
 * Per request it reads the whole body (Content-Length, chunked with or
 * without trailers, or none), then answers with a body derived from the
 * request, so that the client can check every byte end to end:
 *
 *   request header            meaning
 *   X-Resp-Len: N             response body length (default 0)
 *   X-Resp-Seed: HEX          seed of the response body's pstream
 *   X-Resp-Chunked: 1         chunked response (random chunk sizes, a trailer)
 *   X-Req-Id: TEXT            echoed, so that the client sees the order holds
 *   X-Resp-Delay-Ms: N        the response starts N ms after the request ended
 *                             (a held request: the descriptor budget test)
 *   Expect: 100-continue      an interim 100 goes out before the body is read
 *   trailer X-Req-Sum: HEX    checked against the checksum of the body received
 *
 *   response header           meaning
 *   X-Body-Len, X-Body-Sum    length and fnv64 of the request body received
 *   X-Req-Trailers: N         trailers seen after a chunked request body
 *   X-Req-Sum-Check           ok, bad or none (the X-Req-Sum trailer)
 *   trailer X-Resp-Sum        fnv64 of a chunked response body
 *
 * A request is answered only once its body has been read, and the next
 * (pipelined) request is read only once that answer has gone out: the
 * origin is strictly in order, as HTTP/1.1 wants.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include "httpgen.h"

#define IO_SIZE 65536

enum ostate { O_HEAD, O_BODY, O_DELAY, O_RESP };

struct oconn {
	int fd;
	uint32_t events;          /* epoll interest registered */
	enum ostate st;
	/* request */
	int req_chunked;
	int close_after;
	uint64_t cl_left;
	uint64_t body_len;
	uint64_t sum;
	struct chunked ck;
	uint64_t resp_len;
	uint64_t resp_seed;
	uint64_t delay_ms;
	uint64_t due_ms;          /* O_DELAY: when the response starts */
	struct oconn *dprev, *dnext;   /* in the delayed list, by due date */
	int resp_chunked;
	char req_id[64];
	/* response */
	struct bodygen gen;
	uint8_t in[IO_SIZE];
	size_t in_off, in_len;
	uint8_t out[IO_SIZE];
	size_t out_off, out_len;
};

static volatile sig_atomic_t stop_flag;
static int epfd;
static struct oconn *delayed_head, *delayed_tail;   /* earliest first */
static unsigned long long n_requests, n_conns, n_errors, n_continue;

static void on_signal(int sig)
{
	stop_flag = sig;
}

static void oc_error(struct oconn *c, const char *what)
{
	if (++n_errors <= 20)
		fprintf(stderr, "origin: error on fd %d (request %s): %s\n", c->fd, c->req_id, what);
}

static void delayed_unlink(struct oconn *c)
{
	if (c->dprev)
		c->dprev->dnext = c->dnext;
	else
		delayed_head = c->dnext;
	if (c->dnext)
		c->dnext->dprev = c->dprev;
	else
		delayed_tail = c->dprev;
	c->dprev = c->dnext = NULL;
}

/* Requests held for the same delay arrive in due order: the walk from the
 * tail stops at once. */
static void delayed_insert(struct oconn *c)
{
	struct oconn *p = delayed_tail;

	while (p && p->due_ms > c->due_ms)
		p = p->dprev;
	c->dprev = p;
	c->dnext = p ? p->dnext : delayed_head;
	if (c->dnext)
		c->dnext->dprev = c;
	else
		delayed_tail = c;
	if (p)
		p->dnext = c;
	else
		delayed_head = c;
}

static void oc_close(struct oconn *c)
{
	if (c->st == O_DELAY)
		delayed_unlink(c);
	close(c->fd);   /* removes it from epoll */
	free(c);
}

static void oc_interest(struct oconn *c)
{
	uint32_t ev = 0;
	struct epoll_event e;

	if (c->st == O_HEAD || c->st == O_BODY)
		ev |= EPOLLIN;
	if (c->out_len > c->out_off || (c->st == O_RESP && !c->gen.done))
		ev |= EPOLLOUT;
	if (ev == c->events)
		return;
	e.events = ev;
	e.data.ptr = c;
	epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &e);
	c->events = ev;
}

static void out_append(struct oconn *c, const char *s, size_t n)
{
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (n <= sizeof(c->out) - c->out_len) {
		memcpy(c->out + c->out_len, s, n);
		c->out_len += n;
	}
}

/* ---- request ---- */

static int parse_head(struct oconn *c, const uint8_t *h, size_t hl)
{
	const char *v;
	size_t n;

	const uint8_t *eol = memchr(h, '\n', hl);

	if (!eol || eol - h < 14 || memcmp(eol - 10, " HTTP/1.1\r", 10) != 0)
		return -1;
	c->req_id[0] = 0;
	if (head_find(h, hl, "X-Req-Id", &v, &n)) {
		n = n < sizeof(c->req_id) - 1 ? n : sizeof(c->req_id) - 1;
		memcpy(c->req_id, v, n);
		c->req_id[n] = 0;
	}
	c->req_chunked = head_has(h, hl, "Transfer-Encoding", "chunked");
	c->cl_left = c->req_chunked ? 0 : head_u64(h, hl, "Content-Length", 10, 0);
	c->close_after = head_has(h, hl, "Connection", "close");
	c->resp_len = head_u64(h, hl, "X-Resp-Len", 10, 0);
	c->resp_seed = head_u64(h, hl, "X-Resp-Seed", 16, 0);
	c->resp_chunked = head_has(h, hl, "X-Resp-Chunked", "1");
	c->delay_ms = head_u64(h, hl, "X-Resp-Delay-Ms", 10, 0);
	c->body_len = 0;
	c->sum = FNV_INIT;
	memset(&c->ck, 0, sizeof(c->ck));
	if (head_has(h, hl, "Expect", "100-continue")) {
		out_append(c, "HTTP/1.1 100 Continue\r\n\r\n", 25);
		n_continue++;
	}
	return 0;
}

static void on_body(void *ctx, const uint8_t *p, size_t n)
{
	struct oconn *c = ctx;

	c->sum = fnv64(c->sum, p, n);
	c->body_len += n;
}

/* Consumes body bytes from the input; returns 1 once the body is over,
 * 0 if more is needed, -1 on bad framing. */
static int read_body(struct oconn *c)
{
	uint8_t *p = c->in + c->in_off;
	size_t n = c->in_len - c->in_off, k;

	if (!c->req_chunked) {
		k = n < c->cl_left ? n : (size_t)c->cl_left;
		on_body(c, p, k);
		c->cl_left -= k;
		c->in_off += k;
		return c->cl_left == 0;
	}
	c->in_off += ck_feed(&c->ck, p, n, on_body, c);
	if (c->ck.st == CK_ERROR) {
		oc_error(c, c->ck.err);
		return -1;
	}
	return c->ck.st == CK_DONE;
}

/* The X-Req-Sum trailer against what was received. */
static const char *trailer_check(struct oconn *c)
{
	char want[40];
	const char *v;

	if (!c->req_chunked)
		return "none";
	v = strcasestr(c->ck.trailers, "X-Req-Sum:");
	if (!v)
		return "none";
	snprintf(want, sizeof(want), "%016llx", (unsigned long long)c->sum);
	v += 10;
	while (*v == ' ')
		v++;
	if (strncasecmp(v, want, 16) != 0) {
		oc_error(c, "request trailer X-Req-Sum does not match the body");
		return "bad";
	}
	return "ok";
}

static void start_response(struct oconn *c)
{
	char h[1024];
	int n;

	n = snprintf(h, sizeof(h),
	             "HTTP/1.1 200 OK\r\nX-Req-Id: %s\r\nX-Body-Len: %llu\r\n"
	             "X-Body-Sum: %016llx\r\nX-Req-Trailers: %d\r\nX-Req-Sum-Check: %s\r\n%s",
	             c->req_id, (unsigned long long)c->body_len, (unsigned long long)c->sum,
	             c->ck.ntrailers, trailer_check(c),
	             c->close_after ? "Connection: close\r\n" : "");
	if (c->resp_chunked)
		n += snprintf(h + n, sizeof(h) - (size_t)n,
		              "Transfer-Encoding: chunked\r\nTrailer: X-Resp-Sum\r\n\r\n");
	else
		n += snprintf(h + n, sizeof(h) - (size_t)n, "Content-Length: %llu\r\n\r\n",
		              (unsigned long long)c->resp_len);
	out_append(c, h, (size_t)n);
	bg_init(&c->gen, c->resp_len, c->resp_seed, c->resp_chunked, c->resp_seed ^ 0x5bd1e995);
	if (c->resp_chunked)
		snprintf(c->gen.trailers, sizeof(c->gen.trailers), "X-Resp-Sum: %%SUM%%\r\n");
	c->st = O_RESP;
	n_requests++;
}

/* Parses what the input holds, as far as the current state allows.
 * Returns -1 if the connection must go. */
static int process_input(struct oconn *c)
{
	while (c->st == O_HEAD || c->st == O_BODY) {
		if (c->st == O_HEAD) {
			size_t hl = head_len(c->in + c->in_off, c->in_len - c->in_off);

			if (!hl) {
				if (c->in_off == 0 && c->in_len == sizeof(c->in)) {
					oc_error(c, "request head too large");
					return -1;
				}
				break;
			}
			if (parse_head(c, c->in + c->in_off, hl) < 0) {
				oc_error(c, "bad request line");
				return -1;
			}
			c->in_off += hl;
			c->st = O_BODY;
		}
		int r = read_body(c);

		if (r < 0)
			return -1;
		if (!r)
			break;
		if (c->delay_ms) {
			c->st = O_DELAY;
			c->due_ms = hg_now_ms() + c->delay_ms;
			delayed_insert(c);
			break;
		}
		start_response(c);
	}
	if (c->in_off == c->in_len) {
		c->in_off = c->in_len = 0;
	} else if (c->in_off > sizeof(c->in) / 2) {
		memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
		c->in_len -= c->in_off;
		c->in_off = 0;
	}
	return 0;
}

/* ---- I/O ---- */

static int oc_read(struct oconn *c)
{
	for (int rounds = 0; rounds < 4 && (c->st == O_HEAD || c->st == O_BODY); rounds++) {
		ssize_t r;

		if (c->in_off && c->in_len == sizeof(c->in)) {
			memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
			c->in_len -= c->in_off;
			c->in_off = 0;
		}
		r = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, 0);
		if (r == 0) {
			if (c->st != O_HEAD || c->in_len > c->in_off)
				oc_error(c, "client closed in the middle of a request");
			return -1;
		}
		if (r < 0)
			return errno == EAGAIN ? 0 : -1;
		c->in_len += (size_t)r;
		if (process_input(c) < 0)
			return -1;
	}
	return 0;
}

/* Sends the output, refilling it from the body generator; when a response
 * is complete, goes on with the next request already received. */
static int oc_write(struct oconn *c)
{
	for (;;) {
		ssize_t w;

		if (c->out_off == c->out_len) {
			c->out_off = c->out_len = 0;
			if (c->st == O_RESP && !c->gen.done)
				c->out_len = bg_fill(&c->gen, c->out, sizeof(c->out));
		}
		if (c->out_off == c->out_len) {
			if (c->st != O_RESP)
				return 0;
			if (c->close_after)
				return -1;
			c->st = O_HEAD;
			if (process_input(c) < 0)
				return -1;
			if (c->st != O_RESP && c->out_off == c->out_len)
				return 0;
			continue;
		}
		w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
		if (w < 0)
			return errno == EAGAIN ? 0 : -1;
		c->out_off += (size_t)w;
	}
}

/* Starts the responses whose delay is over; returns the ms until the next
 * one is due (at most <cap>). */
static int run_delayed(int cap)
{
	uint64_t now = hg_now_ms();

	while (delayed_head && delayed_head->due_ms <= now) {
		struct oconn *c = delayed_head;

		delayed_unlink(c);
		start_response(c);
		if (oc_write(c) < 0)
			oc_close(c);
		else
			oc_interest(c);
	}
	if (delayed_head && delayed_head->due_ms - now < (uint64_t)cap)
		return (int)(delayed_head->due_ms - now);
	return cap;
}

static void accept_all(int lfd)
{
	for (int k = 0; k < 64; k++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
		struct oconn *c;
		struct epoll_event e;

		if (fd < 0)
			return;
		/* responses go out in several writes: no Nagle delay between them */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			return;
		}
		c->fd = fd;
		c->events = EPOLLIN;
		e.events = EPOLLIN;
		e.data.ptr = c;
		epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e);
		n_conns++;
	}
}

static int listen_on(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 4096) < 0) {
		perror("origin: bind/listen");
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL }, evs[256];
	struct rlimit rl;
	uint64_t end;
	int lfd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3) {
		fprintf(stderr, "usage: httporigin PORT MAX_SECONDS\n");
		return 2;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	lfd = listen_on(atoi(argv[1]));
	if (lfd < 0)
		return 1;
	end = hg_now_ms() + (uint64_t)atoi(argv[2]) * 1000;
	epfd = epoll_create1(0);
	epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev);
	printf("origin: listening on 127.0.0.1:%s\n", argv[1]);
	fflush(stdout);
	while (!stop_flag && hg_now_ms() < end) {
		int n = epoll_wait(epfd, evs, 256, run_delayed(200));

		for (int i = 0; i < n; i++) {
			struct oconn *c = evs[i].data.ptr;
			int r = 0;

			if (!c) {
				accept_all(lfd);
				continue;
			}
			if (c->st == O_DELAY) {
				/* a held request whose client left: reported again
				 * and again (no interest masks a hang-up) */
				if (evs[i].events & (EPOLLERR | EPOLLHUP))
					oc_close(c);
				continue;
			}
			if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
				r = oc_read(c);
			if (r == 0)
				r = oc_write(c);
			if (r < 0)
				oc_close(c);
			else
				oc_interest(c);
		}
	}
	printf("origin: %llu requests, %llu connections, %llu interim 100, %llu errors\n",
	       n_requests, n_conns, n_continue, n_errors);
	return n_errors ? 1 : 0;
}
