/* holdload: the client of the descriptor budget test (test_fd_budget.sh,
 * bench/fd_budget.sh); the origin is httporigin.c, which holds a request
 * for the time its X-Resp-Delay-Ms header asks.
 *
 *   holdload HOST PORT WARM HOLD BURST GOOD_MS HOLD_MS MAX_SECONDS
 *
 * Phases, one after the other:
 *   idle   a "good" client alone for GOOD_MS: one request per new connection,
 *          one at a time; its latency from connect() to the last byte
 *   warm   WARM keep-alive connections at once, one request each, then all
 *          closed: the proxy keeps their server connections as idle ones
 *   hold   HOLD connections at once, each with a request the origin holds
 *          for HOLD_MS (the proxy then holds two descriptors for each)
 *   load   once every held request is out and the proxy had time to pass
 *          them on: BURST more connections at once, one plain request each,
 *          while the good client runs again for GOOD_MS
 * then it waits (up to MAX_SECONDS in all) for every held answer.
 *
 * Prints one line per phase (counts by status, latency percentiles of the
 * good client) and exits 0 only if every request got a 200.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RESP_MAX 4096

enum cstate { C_CONNECTING, C_SENDING, C_READING, C_DONE };

struct hconn {
	int fd;
	enum cstate st;
	char req[160];
	size_t req_len, req_off;
	char resp[RESP_MAX];
	size_t resp_len;
	int status;              /* 0: no complete answer */
};

struct tally {
	int n, ok, s503, other, errors;
};

static struct sockaddr_in dst;

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Length of the whole answer at the start of <b>, 0 if not complete yet.
 * <closed>: the peer closed (an answer without Content-Length ends there). */
static size_t answer_len(const char *b, size_t n, int closed, int *status)
{
	const char *end = memmem(b, n, "\r\n\r\n", 4), *cl;
	size_t head, body = 0;

	if (!end || n < 12 || memcmp(b, "HTTP/1.", 7) != 0)
		return 0;
	head = (size_t)(end - b) + 4;
	*status = atoi(b + 9);
	cl = memmem(b, head, "\r\nContent-Length:", 17);
	if (!cl)
		cl = memmem(b, head, "\r\ncontent-length:", 17);
	if (!cl)
		return closed ? n : 0;
	body = strtoul(cl + 17, NULL, 10);
	return n >= head + body ? head + body : 0;
}

static void tally_add(struct tally *t, int status)
{
	t->n++;
	if (status == 200)
		t->ok++;
	else if (status == 503)
		t->s503++;
	else if (status > 0)
		t->other++;
	else
		t->errors++;
}

static void tally_print(const char *name, const struct tally *t)
{
	printf("%s: %d requests, %d x 200, %d x 503, %d other, %d errors\n", name, t->n, t->ok,
	       t->s503, t->other, t->errors);
}

/* ---- the good client: blocking, one request at a time ---- */

struct good {
	int ms;
	struct tally t;
	uint64_t *lat_us;
	int cap;
	int slow;                /* requests over 200 ms */
};

/* One request on a new connection; *connect_us: how long connect() took
 * (a SYN dropped by a full backlog shows as a second or more there). */
static int good_one(uint64_t *connect_us)
{
	static const char req[] = "GET /good HTTP/1.1\r\nHost: holdload\r\n\r\n";
	char b[RESP_MAX];
	size_t n = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0), status = 0;
	struct timeval tv = { .tv_sec = 30 };

	if (fd < 0)
		return 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	*connect_us = now_us();
	if (connect(fd, (struct sockaddr *)&dst, sizeof(dst)) < 0) {
		close(fd);
		return 0;
	}
	*connect_us = now_us() - *connect_us;
	if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(req) - 1) {
		close(fd);
		return 0;
	}
	for (;;) {
		ssize_t r = recv(fd, b + n, sizeof(b) - n, 0);

		if (r > 0)
			n += (size_t)r;
		if (answer_len(b, n, r == 0, &status) || r <= 0 || n == sizeof(b))
			break;
	}
	close(fd);
	return answer_len(b, n, 1, &status) ? status : 0;
}

static void *good_run(void *arg)
{
	struct good *g = arg;
	uint64_t end = now_us() + (uint64_t)g->ms * 1000;

	while (now_us() < end && g->t.n < g->cap) {
		uint64_t t0 = now_us(), conn_us = 0;
		int status = good_one(&conn_us);

		g->lat_us[g->t.n] = now_us() - t0;
		tally_add(&g->t, status);
		/* the first few slow ones, to tell a SYN retransmission (the
		 * connect took the time) from a wait in the proxy */
		if (g->lat_us[g->t.n - 1] > 200000 && g->slow++ < 5)
			fprintf(stderr, "slow good request: %.1f ms, of which connect %.1f ms\n",
			        g->lat_us[g->t.n - 1] / 1000.0, conn_us / 1000.0);
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* the good client's latency at quantile <q> (0..1), in ms; sorted first */
static double good_pct(const struct good *g, double q)
{
	int n = g->t.n, i = (int)(n * q);

	return n ? g->lat_us[i < n ? i : n - 1] / 1000.0 : 0.0;
}

static void good_print(const char *name, struct good *g)
{
	qsort(g->lat_us, (size_t)g->t.n, sizeof(uint64_t), cmp_u64);
	printf("%s: %d requests, %d x 200, %d x 503, %d other, %d errors; "
	       "latency ms p50 %.2f p99 %.2f max %.2f\n", name, g->t.n, g->t.ok, g->t.s503,
	       g->t.other, g->t.errors, good_pct(g, 0.5), good_pct(g, 0.99), good_pct(g, 1));
}

/* ---- many connections at once: one epoll loop ---- */

static int open_conn(struct hconn *c, const char *path, int delay_ms)
{
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (c->fd < 0)
		return -1;
	if (delay_ms)
		c->req_len = (size_t)snprintf(c->req, sizeof(c->req), "GET %s HTTP/1.1\r\n"
		                              "Host: holdload\r\nX-Resp-Delay-Ms: %d\r\n\r\n",
		                              path, delay_ms);
	else
		c->req_len = (size_t)snprintf(c->req, sizeof(c->req), "GET %s HTTP/1.1\r\n"
		                              "Host: holdload\r\n\r\n", path);
	c->st = C_CONNECTING;
	if (connect(c->fd, (struct sockaddr *)&dst, sizeof(dst)) < 0 && errno != EINPROGRESS)
		return -1;
	return 0;
}

static void conn_step(struct hconn *c)
{
	if (c->st == C_CONNECTING || c->st == C_SENDING) {
		ssize_t w = send(c->fd, c->req + c->req_off, c->req_len - c->req_off, MSG_NOSIGNAL);

		if (w < 0 && errno == EAGAIN)
			return;
		if (w < 0) {
			c->st = C_DONE;
			return;
		}
		c->req_off += (size_t)w;
		c->st = c->req_off == c->req_len ? C_READING : C_SENDING;
	}
	while (c->st == C_READING) {
		ssize_t r = recv(c->fd, c->resp + c->resp_len, sizeof(c->resp) - c->resp_len, 0);

		if (r < 0 && errno == EAGAIN)
			return;
		if (r > 0)
			c->resp_len += (size_t)r;
		if (answer_len(c->resp, c->resp_len, r <= 0, &c->status) == 0) {
			c->status = 0;
			if (r > 0 && c->resp_len < sizeof(c->resp))
				continue;
		}
		c->st = C_DONE;
	}
}

/* Drives <n> connections until each is done or <deadline_us>; with
 * <until_sent>, returns as soon as every request is out. Returns how many
 * are not done. */
static int run_conns(int ep, struct hconn *cs, int n, uint64_t deadline_us, int until_sent)
{
	struct epoll_event evs[256];
	int left = n;

	for (;;) {
		int pending = 0;

		left = 0;
		for (int i = 0; i < n; i++) {
			left += cs[i].st != C_DONE;
			pending += cs[i].st == C_CONNECTING || cs[i].st == C_SENDING;
		}
		if (!left || (until_sent && !pending) || now_us() >= deadline_us)
			return left;
		int k = epoll_wait(ep, evs, 256, 50);

		for (int i = 0; i < k; i++) {
			struct hconn *c = evs[i].data.ptr;

			if (c->st != C_DONE) {
				conn_step(c);
				if (c->st == C_DONE) {
					close(c->fd);   /* leaves the epoll set too */
					c->fd = -1;
				}
			}
		}
	}
}

static struct hconn *start_conns(int ep, int n, const char *path, int delay_ms)
{
	struct hconn *cs = calloc((size_t)n, sizeof(*cs));

	for (int i = 0; cs && i < n; i++) {
		struct epoll_event e = { .events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = &cs[i] };

		if (open_conn(&cs[i], path, delay_ms) < 0) {
			cs[i].st = C_DONE;
			continue;
		}
		epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &e);
	}
	return cs;
}

static void finish_conns(struct hconn *cs, int n, const char *name, struct tally *t)
{
	for (int i = 0; i < n; i++) {
		tally_add(t, cs[i].status);
		if (cs[i].fd >= 0)
			close(cs[i].fd);
	}
	tally_print(name, t);
	free(cs);
}

int main(int argc, char **argv)
{
	struct rlimit rl;
	struct good g_idle = { 0 }, g_load = { 0 };
	struct tally t_warm = { 0 }, t_hold = { 0 }, t_burst = { 0 };
	struct hconn *warm, *hold, *burst;
	pthread_t th;
	uint64_t end;
	int nwarm, nhold, nburst, good_ms, hold_ms, ep;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 9) {
		fprintf(stderr, "usage: holdload HOST PORT WARM HOLD BURST GOOD_MS HOLD_MS MAX_SECONDS\n");
		return 2;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	dst.sin_family = AF_INET;
	dst.sin_port = htons((uint16_t)atoi(argv[2]));
	inet_pton(AF_INET, argv[1], &dst.sin_addr);
	nwarm = atoi(argv[3]);
	nhold = atoi(argv[4]);
	nburst = atoi(argv[5]);
	good_ms = atoi(argv[6]);
	hold_ms = atoi(argv[7]);
	end = now_us() + (uint64_t)atoi(argv[8]) * 1000000;
	ep = epoll_create1(0);
	g_idle.ms = g_load.ms = good_ms;
	g_idle.cap = g_load.cap = 1000000;
	g_idle.lat_us = calloc((size_t)g_idle.cap, sizeof(uint64_t));
	g_load.lat_us = calloc((size_t)g_load.cap, sizeof(uint64_t));

	good_run(&g_idle);
	good_print("idle good client", &g_idle);

	warm = start_conns(ep, nwarm, "/warm", 0);
	run_conns(ep, warm, nwarm, end, 0);
	finish_conns(warm, nwarm, "warm", &t_warm);
	usleep(300 * 1000);   /* the proxy sees the closes and pools */

	hold = start_conns(ep, nhold, "/hold", hold_ms);
	run_conns(ep, hold, nhold, end, 1);
	/* every held request is out; the proxy passes them on meanwhile */
	usleep((useconds_t)(300 + nhold / 10) * 1000);
	printf("hold: %d requests held for %d ms\n", nhold, hold_ms);

	pthread_create(&th, NULL, good_run, &g_load);
	burst = start_conns(ep, nburst, "/burst", 0);
	run_conns(ep, burst, nburst, end, 0);
	pthread_join(th, NULL);
	finish_conns(burst, nburst, "burst", &t_burst);
	good_print("loaded good client", &g_load);

	run_conns(ep, hold, nhold, end, 0);
	finish_conns(hold, nhold, "held", &t_hold);
	/* for scripts: good p50 p99 alone, p50 p99 max loaded, 503s, others */
	printf("summary: %.2f %.2f %.2f %.2f %.2f %d %d\n", good_pct(&g_idle, 0.5),
	       good_pct(&g_idle, 0.99), good_pct(&g_load, 0.5), good_pct(&g_load, 0.99),
	       good_pct(&g_load, 1), g_idle.t.s503 + g_load.t.s503 + t_warm.s503 + t_hold.s503 +
	       t_burst.s503, g_idle.t.other + g_idle.t.errors + g_load.t.other + g_load.t.errors +
	       t_warm.other + t_warm.errors + t_hold.other + t_hold.errors + t_burst.other +
	       t_burst.errors);
	return t_warm.ok == nwarm && t_hold.ok == nhold && t_burst.ok == nburst &&
	       g_idle.t.ok == g_idle.t.n && g_load.t.ok == g_load.t.n ? 0 : 1;
}
