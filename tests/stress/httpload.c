/* httpload: the client of the HTTP body stress test (origin: httporigin.c).
 *
 *   httpload HOST PORT CONNS REQS MAX_BODY MAX_SECONDS [SEED]
 *
 * Opens CONNS connections at once; on each, sends REQS requests on one
 * keep-alive connection, pipelined: up to 2..5 requests (by connection) are
 * written before their responses are read, while reading goes on in
 * parallel so that large bodies cannot deadlock. Request and response
 * bodies are 0 to MAX_BODY bytes of a pstream, Content-Length or chunked
 * (random chunk sizes, some extensions, some with trailers), a few requests
 * without any body header; a few send `Expect: 100-continue` and hold their
 * body until the interim 100 arrives (nothing else in flight then).
 *
 * Every response is verified: status 200, the request it answers (X-Req-Id,
 * so order holds), the length and checksum of the request body as the origin
 * saw it, the request trailers it saw, every byte of the response body
 * against the stream its seed gives, and the X-Resp-Sum trailer of chunked
 * responses. Exits 0 only if every request of every connection passed
 * within MAX_SECONDS; prints one line per failure (the first 30) and a
 * summary. The plan is a function of SEED: a failure can be replayed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include "httpgen.h"

#define IO_SIZE   65536
#define STALL_MS  15000
#define WAIT100_MS 5000

enum framing { F_NONE, F_CL, F_CHUNKED };
enum wstate { W_IDLE, W_WAIT100, W_BODY, W_DONE };

struct creq {
	uint64_t body_len, body_seed;
	uint64_t resp_len, resp_seed;
	uint64_t dice;
	uint64_t sent_sum;       /* fnv64 of the body, once generated */
	enum framing framing;
	int resp_chunked;
	int trailer;             /* chunked request ending in X-Req-Sum */
	int expect100;
};

struct cconn {
	int fd, id;
	uint32_t events;
	int depth;               /* pipelining: requests in flight at most */
	int failed, closed;
	uint64_t last_progress;
	struct creq *rq;
	/* writing */
	int w_idx;
	enum wstate ws;
	uint64_t wait100_since;
	struct bodygen wg;
	uint8_t out[IO_SIZE];
	size_t out_off, out_len;
	/* reading */
	int r_idx;
	int r_in_body;
	int r_chunked;
	uint64_t r_left, r_got, r_sum;
	size_t r_bad;            /* offset of a difference + 1, 0 if none */
	struct pstream r_ps;
	struct chunked ck;
	uint8_t in[IO_SIZE];
	size_t in_off, in_len;
};

static struct {
	int conns, reqs;
	uint64_t max_body, seed;
	unsigned long long ok, failed_reqs, bytes_up, bytes_down;
	unsigned long long req_chunked, resp_chunked, no_body_hdr, trailers_sent;
	unsigned long long trailers_seen, resp_trailers_ok, expect_sent, continue_rcvd;
	unsigned long long interim_other, largest_req, largest_resp;
	int max_inflight, messages;
} G;

static int epfd;

/* ---- the plan ---- */

static uint64_t pick_size(uint64_t *dice)
{
	uint64_t r = sm64_next(dice) % 100;

	if (r < 15)
		return 0;
	if (G.max_body <= 16384)   /* small bodies only: the mix below is for big ones */
		return sm64_range(dice, 1, G.max_body ? G.max_body : 1);
	if (r < 60)
		return sm64_range(dice, 1, 16384);
	if (r < 88)
		return sm64_range(dice, 16385, 262144);
	return sm64_range(dice, 262145, G.max_body > 262145 ? G.max_body : 262145);
}

static void plan_request(struct creq *q, int conn, int idx)
{
	uint64_t dice = G.seed ^ ((uint64_t)conn << 32 | (uint64_t)idx);

	sm64_next(&dice);
	q->body_len = pick_size(&dice);
	q->resp_len = pick_size(&dice);
	q->body_seed = sm64_next(&dice);
	q->resp_seed = sm64_next(&dice);
	q->dice = sm64_next(&dice);
	q->expect100 = conn % 5 == 0 && idx == 3;
	if (q->expect100 && !q->body_len)
		q->body_len = sm64_range(&dice, 1, 100000);
	if (q->body_len)
		q->framing = sm64_next(&dice) & 1 ? F_CHUNKED : F_CL;
	else
		q->framing = (enum framing)(sm64_next(&dice) % 3);
	q->resp_chunked = (int)(sm64_next(&dice) & 1);
	q->trailer = q->framing == F_CHUNKED && (sm64_next(&dice) & 1);
	G.largest_req = q->body_len > G.largest_req ? q->body_len : G.largest_req;
	G.largest_resp = q->resp_len > G.largest_resp ? q->resp_len : G.largest_resp;
}

/* ---- failures ---- */

static void cc_close(struct cconn *c)
{
	if (!c->closed) {
		close(c->fd);
		c->closed = 1;
	}
}

static void cc_fail(struct cconn *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Fails the request being read and every one after it on this connection. */
static void cc_fail(struct cconn *c, const char *fmt, ...)
{
	va_list ap;

	if (c->failed)
		return;
	c->failed = 1;
	G.failed_reqs += (unsigned long long)(G.reqs - c->r_idx);
	if (G.messages++ < 30) {
		fprintf(stderr, "FAIL conn %d request %d (seed %llx): ", c->id, c->r_idx,
		        (unsigned long long)G.seed);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fprintf(stderr, "\n");
	}
	cc_close(c);
}

/* ---- writing ---- */

static void write_head(struct cconn *c, struct creq *q)
{
	char *h = (char *)c->out + c->out_len;
	size_t room = sizeof(c->out) - c->out_len;
	int n;

	n = snprintf(h, room, "%s /stress/%d/%d HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	             "X-Req-Id: %d-%d\r\nX-Resp-Len: %llu\r\nX-Resp-Seed: %llx\r\n%s%s",
	             q->framing == F_NONE ? "GET" : "POST", c->id, c->w_idx, c->id, c->w_idx,
	             (unsigned long long)q->resp_len, (unsigned long long)q->resp_seed,
	             q->resp_chunked ? "X-Resp-Chunked: 1\r\n" : "",
	             q->expect100 ? "Expect: 100-continue\r\n" : "");
	if (q->framing == F_CL)
		n += snprintf(h + n, room - (size_t)n, "Content-Length: %llu\r\n",
		              (unsigned long long)q->body_len);
	else if (q->framing == F_CHUNKED)
		n += snprintf(h + n, room - (size_t)n, "Transfer-Encoding: chunked\r\n%s",
		              q->trailer ? "Trailer: X-Req-Sum\r\n" : "");
	n += snprintf(h + n, room - (size_t)n, "\r\n");
	c->out_len += (size_t)n;
	bg_init(&c->wg, q->body_len, q->body_seed, q->framing == F_CHUNKED, q->dice);
	c->wg.chunk_ext = 1;
	if (q->trailer) {
		snprintf(c->wg.trailers, sizeof(c->wg.trailers),
		         "X-Req-Sum: %%SUM%%\r\nX-Filler: %llu\r\n", (unsigned long long)q->dice);
		G.trailers_sent++;
	}
	G.req_chunked += q->framing == F_CHUNKED;
	G.no_body_hdr += q->framing == F_NONE;
	G.expect_sent += q->expect100;
}

/* Produces the next bytes to send into the empty output buffer, as the
 * pipelining window and a pending 100-continue allow. Returns 0 if there
 * is nothing to send now. */
static int produce(struct cconn *c)
{
	struct creq *q;
	int inflight;

	c->out_off = c->out_len = 0;
	for (;;) {
		if (c->ws == W_DONE || c->ws == W_WAIT100)
			return 0;
		q = &c->rq[c->w_idx];
		if (c->ws == W_BODY) {
			if (!c->wg.done) {
				c->out_len += bg_fill(&c->wg, c->out + c->out_len,
				                      sizeof(c->out) - c->out_len);
				return c->out_len > 0;
			}
			q->sent_sum = c->wg.sum;
			c->ws = ++c->w_idx == G.reqs ? W_DONE : W_IDLE;
			continue;
		}
		/* W_IDLE: may the next request start? */
		if (c->w_idx - c->r_idx >= c->depth || (q->expect100 && c->r_idx < c->w_idx) ||
		    sizeof(c->out) - c->out_len < 2048)
			return c->out_len > 0;
		write_head(c, q);
		inflight = c->w_idx + 1 - c->r_idx;
		G.max_inflight = inflight > G.max_inflight ? inflight : G.max_inflight;
		if (q->expect100) {
			c->ws = W_WAIT100;
			c->wait100_since = hg_now_ms();
			return 1;
		}
		c->ws = W_BODY;
	}
}

static int cc_write(struct cconn *c)
{
	for (;;) {
		ssize_t w;

		if (c->out_off == c->out_len && !produce(c))
			return 0;
		w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EAGAIN)
				return 0;
			cc_fail(c, "send: %s", strerror(errno));
			return -1;
		}
		c->out_off += (size_t)w;
		G.bytes_up += (unsigned long long)w;
		c->last_progress = hg_now_ms();
	}
}

/* ---- reading ---- */

static void on_resp_data(void *ctx, const uint8_t *p, size_t n)
{
	struct cconn *c = ctx;
	size_t k;

	if (c->r_chunked)
		c->r_sum = fnv64(c->r_sum, p, n);
	if (c->r_bad)
		return;
	k = ps_check(&c->r_ps, p, n);
	if (k != n)
		c->r_bad = c->r_got + k + 1;
	c->r_got += n;
}

/* What the origin saw of the request body must be what was sent. */
static int check_echo(struct cconn *c, const uint8_t *h, size_t hl, struct creq *q)
{
	char want[32];
	const char *v = "";
	size_t vl = 0;

	snprintf(want, sizeof(want), "%d-%d", c->id, c->r_idx);
	if (!head_find(h, hl, "X-Req-Id", &v, &vl) || vl != strlen(want) || memcmp(v, want, vl)) {
		cc_fail(c, "response is not for this request (X-Req-Id \"%.*s\", want %s)",
		        (int)vl, v, want);
		return -1;
	}
	if (head_u64(h, hl, "X-Body-Len", 10, ~0ULL) != q->body_len ||
	    head_u64(h, hl, "X-Body-Sum", 16, 0) != q->sent_sum) {
		cc_fail(c, "origin saw %llu bytes (sum %llx), sent %llu (sum %llx)",
		        (unsigned long long)head_u64(h, hl, "X-Body-Len", 10, ~0ULL),
		        (unsigned long long)head_u64(h, hl, "X-Body-Sum", 16, 0),
		        (unsigned long long)q->body_len, (unsigned long long)q->sent_sum);
		return -1;
	}
	if (!head_has(h, hl, "X-Req-Sum-Check", q->trailer ? "ok" : "none")) {
		cc_fail(c, "request trailer not seen right by the origin (sent: %d)", q->trailer);
		return -1;
	}
	G.trailers_seen += q->trailer;
	return 0;
}

/* A complete response head at the input; returns -1 on failure. */
static int on_head(struct cconn *c, const uint8_t *h, size_t hl)
{
	struct creq *q = &c->rq[c->r_idx];
	int status = hl > 12 && !memcmp(h, "HTTP/1.1 ", 9) ? atoi((const char *)h + 9) : 0;

	if (status >= 100 && status < 200) {
		if (status == 100 && c->ws == W_WAIT100 && c->w_idx == c->r_idx) {
			c->ws = W_BODY;
			G.continue_rcvd++;
		} else {
			G.interim_other++;
		}
		return 0;
	}
	if (c->r_idx >= c->w_idx) {
		cc_fail(c, "response before the request was sent: %.*s", (int)(hl > 80 ? 80 : hl), h);
		return -1;
	}
	if (status != 200) {
		cc_fail(c, "status %d: %.*s", status, (int)(hl > 200 ? 200 : hl), h);
		return -1;
	}
	if (check_echo(c, h, hl, q) < 0)
		return -1;
	c->r_chunked = head_has(h, hl, "Transfer-Encoding", "chunked");
	c->r_left = c->r_chunked ? 0 : head_u64(h, hl, "Content-Length", 10, ~0ULL);
	if (!c->r_chunked && c->r_left == ~0ULL) {
		cc_fail(c, "response without length");
		return -1;
	}
	G.resp_chunked += c->r_chunked;
	memset(&c->ck, 0, sizeof(c->ck));
	ps_init(&c->r_ps, q->resp_seed);
	c->r_got = 0;
	c->r_bad = 0;
	c->r_sum = FNV_INIT;
	c->r_in_body = 1;
	return 0;
}

/* The response body is complete: check it. */
static int on_end(struct cconn *c)
{
	struct creq *q = &c->rq[c->r_idx];
	char want[40];

	if (c->r_bad) {
		cc_fail(c, "response body differs from the stream at offset %llu",
		        (unsigned long long)c->r_bad - 1);
		return -1;
	}
	if (c->r_got != q->resp_len) {
		cc_fail(c, "response body of %llu bytes, want %llu", (unsigned long long)c->r_got,
		        (unsigned long long)q->resp_len);
		return -1;
	}
	if (c->r_chunked) {
		snprintf(want, sizeof(want), "X-Resp-Sum: %016llx\n", (unsigned long long)c->r_sum);
		if (!strcasestr(c->ck.trailers, want)) {
			cc_fail(c, "response trailers \"%s\", want \"%s\"", c->ck.trailers, want);
			return -1;
		}
		G.resp_trailers_ok++;
	}
	G.ok++;
	c->r_in_body = 0;
	if (++c->r_idx == G.reqs)
		cc_close(c);
	return 0;
}

/* Body bytes at the input; returns -1 on failure. */
static int feed_body(struct cconn *c)
{
	const uint8_t *p = c->in + c->in_off;
	size_t n = c->in_len - c->in_off, k;

	if (c->r_chunked) {
		c->in_off += ck_feed(&c->ck, p, n, on_resp_data, c);
		if (c->ck.st == CK_ERROR) {
			cc_fail(c, "response framing: %s", c->ck.err);
			return -1;
		}
		return c->ck.st == CK_DONE ? on_end(c) : 0;
	}
	k = n < c->r_left ? n : (size_t)c->r_left;
	on_resp_data(c, p, k);
	c->r_left -= k;
	c->in_off += k;
	return c->r_left == 0 ? on_end(c) : 0;
}

static int process_input(struct cconn *c)
{
	while (!c->closed && c->in_off < c->in_len) {
		size_t hl;

		if (c->r_in_body) {
			if (feed_body(c) < 0)
				return -1;
			continue;
		}
		hl = head_len(c->in + c->in_off, c->in_len - c->in_off);
		if (!hl) {
			if (c->in_off == 0 && c->in_len == sizeof(c->in)) {
				cc_fail(c, "response head too large");
				return -1;
			}
			break;
		}
		if (on_head(c, c->in + c->in_off, hl) < 0)
			return -1;
		c->in_off += hl;
		if (c->r_in_body && !c->r_chunked && c->r_left == 0 && on_end(c) < 0)
			return -1;
	}
	if (c->in_off && c->in_off == c->in_len)
		c->in_off = c->in_len = 0;
	return 0;
}

static int cc_read(struct cconn *c)
{
	for (int rounds = 0; rounds < 8 && !c->closed; rounds++) {
		ssize_t r;

		if (c->in_off) {
			memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
			c->in_len -= c->in_off;
			c->in_off = 0;
		}
		r = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, 0);
		if (r == 0) {
			cc_fail(c, "connection closed by the proxy (%s)",
			        c->r_in_body ? "in a response body" : "waiting for a response");
			return -1;
		}
		if (r < 0) {
			if (errno == EAGAIN)
				return 0;
			cc_fail(c, "recv: %s", strerror(errno));
			return -1;
		}
		c->in_len += (size_t)r;
		G.bytes_down += (unsigned long long)r;
		c->last_progress = hg_now_ms();
		if (process_input(c) < 0)
			return -1;
	}
	return 0;
}

/* ---- connections and the loop ---- */

static void cc_interest(struct cconn *c)
{
	struct epoll_event e;
	uint32_t ev = EPOLLIN;

	if (c->closed)
		return;
	/* cc_write() ran after every event and produced all it could: only
	 * bytes that did not fit need the socket to become writable (asking
	 * for more while the pipelining window is full would spin) */
	if (c->out_off < c->out_len)
		ev |= EPOLLOUT;
	if (ev == c->events)
		return;
	e.events = ev;
	e.data.ptr = c;
	epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &e);
	c->events = ev;
}

static int cc_open(struct cconn *c, const struct sockaddr_in *sin)
{
	struct epoll_event e;
	int one = 1;

	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (c->fd < 0)
		return -1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, (const struct sockaddr *)sin, sizeof(*sin)) < 0 &&
	    errno != EINPROGRESS) {
		close(c->fd);
		return -1;
	}
	c->events = EPOLLIN | EPOLLOUT;
	e.events = c->events;
	e.data.ptr = c;
	epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &e);
	c->last_progress = hg_now_ms();
	return 0;
}

static void cc_event(struct cconn *c, uint32_t ev)
{
	if (ev & EPOLLERR) {
		int err = 0;
		socklen_t len = sizeof(err);

		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		cc_fail(c, "socket error: %s", strerror(err));
		return;
	}
	if ((ev & (EPOLLIN | EPOLLHUP)) && cc_read(c) < 0)
		return;
	/* a response read may have opened the pipelining window */
	if (!c->closed && cc_write(c) < 0)
		return;
	cc_interest(c);
}

/* Connections that made no progress for too long, or wait for a 100 that
 * does not come, fail with their state. */
static void check_stalls(struct cconn *cs, uint64_t now)
{
	for (int i = 0; i < G.conns; i++) {
		struct cconn *c = &cs[i];

		if (c->closed)
			continue;
		if (c->ws == W_WAIT100 && now - c->wait100_since > WAIT100_MS)
			cc_fail(c, "no 100 Continue after %d ms", WAIT100_MS);
		else if (now - c->last_progress > STALL_MS)
			cc_fail(c, "stalled %d ms: writing request %d (state %d, %zu bytes buffered), "
			        "reading response %d (%s, %llu body bytes)", STALL_MS, c->w_idx, c->ws,
			        c->out_len - c->out_off, c->r_idx, c->r_in_body ? "body" : "head",
			        (unsigned long long)c->r_got);
	}
}

static int run(struct cconn *cs, uint64_t end)
{
	struct epoll_event evs[256];
	uint64_t now = hg_now_ms(), last_check = now;
	int open_conns;

	do {
		int n = epoll_wait(epfd, evs, 256, 100);

		for (int i = 0; i < n; i++)
			cc_event(evs[i].data.ptr, evs[i].events);
		now = hg_now_ms();
		if (now - last_check >= 500) {
			check_stalls(cs, now);
			last_check = now;
		}
		open_conns = 0;
		for (int i = 0; i < G.conns; i++)
			open_conns += !cs[i].closed;
	} while (open_conns && now < end);
	for (int i = 0; i < G.conns; i++)
		if (!cs[i].closed)
			cc_fail(&cs[i], "not finished after the time limit");
	return 0;
}

static void summary(uint64_t ms)
{
	printf("httpload: %d connections x %d requests in %llu ms: %llu ok, %llu failed\n",
	       G.conns, G.reqs, (unsigned long long)ms, G.ok, G.failed_reqs);
	printf("httpload: sent %.1f MB, received %.1f MB (heads included); "
	       "largest request body %llu, largest response body %llu\n",
	       G.bytes_up / 1e6, G.bytes_down / 1e6, G.largest_req, G.largest_resp);
	printf("httpload: chunked requests %llu (trailers %llu sent, %llu seen by the origin), "
	       "no body header %llu; chunked responses %llu (trailer verified %llu)\n",
	       G.req_chunked, G.trailers_sent, G.trailers_seen, G.no_body_hdr, G.resp_chunked,
	       G.resp_trailers_ok);
	printf("httpload: expect 100-continue %llu, 100 received %llu, other interim %llu; "
	       "most requests in flight on a connection %d\n",
	       G.expect_sent, G.continue_rcvd, G.interim_other, G.max_inflight);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct cconn *cs;
	struct rlimit rl;
	uint64_t start, end;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 7 || argc > 8) {
		fprintf(stderr, "usage: httpload HOST PORT CONNS REQS MAX_BODY MAX_SECONDS [SEED]\n");
		return 2;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	inet_pton(AF_INET, argv[1], &sin.sin_addr);
	sin.sin_port = htons((uint16_t)atoi(argv[2]));
	G.conns = atoi(argv[3]);
	G.reqs = atoi(argv[4]);
	G.max_body = strtoull(argv[5], NULL, 10);
	G.seed = argc > 7 ? strtoull(argv[7], NULL, 16) : (uint64_t)time(NULL);
	start = hg_now_ms();
	end = start + (uint64_t)atoi(argv[6]) * 1000;
	if (G.conns < 1 || G.reqs < 1)
		return 2;
	printf("httpload: seed %llx\n", (unsigned long long)G.seed);
	epfd = epoll_create1(0);
	cs = calloc((size_t)G.conns, sizeof(*cs));
	if (!cs)
		return 1;
	for (int i = 0; i < G.conns; i++) {
		struct cconn *c = &cs[i];

		c->id = i;
		c->depth = 2 + i % 4;
		c->rq = calloc((size_t)G.reqs, sizeof(*c->rq));
		if (!c->rq)
			return 1;
		for (int k = 0; k < G.reqs; k++)
			plan_request(&c->rq[k], i, k);
		if (cc_open(c, &sin) < 0) {
			c->closed = 1;
			cc_fail(c, "connect: %s", strerror(errno));
		}
	}
	run(cs, end);
	summary(hg_now_ms() - start);
	return G.ok == (unsigned long long)G.conns * (unsigned long long)G.reqs ? 0 : 1;
}
