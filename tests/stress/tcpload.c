/* tcpload: a bounded TCP load generator and echo origin for stress tests.
 *
 *   tcpload echo PORT MAX_SECONDS
 *       epoll echo server on 127.0.0.1:PORT; exits after MAX_SECONDS.
 *   tcpload client HOST PORT CONNS ROUNDS SIZE MAX_SECONDS
 *       opens CONNS concurrent connections; on each, ROUNDS times: sends SIZE
 *       bytes of a pattern unique to (connection, round), reads SIZE bytes
 *       back and compares them. Prints a summary; exits 0 only if every
 *       connection completed every round with identical bytes in time.
 *
 * Loopback only; every loop is bounded by the connection count and by
 * MAX_SECONDS.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* ---- echo server ---- */

struct echo_conn {
	int fd;
	char buf[16384];
	size_t len;
};

static int echo_main(int port, int max_seconds)
{
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL }, evs[256];
	uint64_t end = now_ms() + (uint64_t)max_seconds * 1000;

	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(lfd, 4096) < 0) {
		perror("echo: bind/listen");
		return 1;
	}
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	printf("echo: listening on 127.0.0.1:%d\n", port);
	fflush(stdout);
	while (now_ms() < end) {
		int n = epoll_wait(ep, evs, 256, 200);

		for (int i = 0; i < n; i++) {
			struct echo_conn *c = evs[i].data.ptr;

			if (!c) {
				for (int k = 0; k < 64; k++) {
					int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
					struct epoll_event cev = { .events = EPOLLIN };

					if (fd < 0)
						break;
					c = calloc(1, sizeof(*c));
					c->fd = fd;
					cev.data.ptr = c;
					epoll_ctl(ep, EPOLL_CTL_ADD, fd, &cev);
				}
				continue;
			}
			/* read what fits, write it back (blocking-free best effort:
			 * the client never has more than one round in flight) */
			ssize_t r = -1;

			errno = EAGAIN;
			if (c->len < sizeof(c->buf))
				r = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);

			if (r > 0)
				c->len += (size_t)r;
			while (c->len) {
				ssize_t w = write(c->fd, c->buf, c->len);

				if (w <= 0)
					break;
				memmove(c->buf, c->buf + w, c->len - (size_t)w);
				c->len -= (size_t)w;
			}
			if (r == 0 || (r < 0 && errno != EAGAIN)) {
				close(c->fd);
				free(c);
			}
		}
	}
	return 0;
}

/* ---- client ---- */

enum cstate { C_CONNECTING, C_SENDING, C_RECEIVING, C_DONE, C_FAILED };

struct client {
	int fd;
	int id;
	enum cstate st;
	int round;
	size_t sent, rcvd;
};

static int rounds, size;

static unsigned char pattern(int id, int round, size_t off)
{
	uint32_t x = (uint32_t)id * 2654435761u ^ (uint32_t)round * 40503u ^ (uint32_t)off * 2246822519u;

	return (unsigned char)(x >> 13);
}

static int client_main(const char *host, int port, int conns, int max_seconds)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct client *cl = calloc((size_t)conns, sizeof(*cl));
	int ep = epoll_create1(0), done = 0, failed = 0, opened = 0;
	uint64_t start = now_ms(), end = start + (uint64_t)max_seconds * 1000;
	struct epoll_event evs[512];
	unsigned char *buf = malloc((size_t)size);
	uint64_t bytes = 0;

	inet_pton(AF_INET, host, &sin.sin_addr);
	while (done + failed < conns && now_ms() < end) {
		/* open connections progressively, at most 500 per iteration */
		for (int k = 0; k < 500 && opened < conns; k++, opened++) {
			struct client *c = &cl[opened];
			struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = c };
			int one = 1;

			c->id = opened;
			c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
			setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			if (c->fd < 0 || (connect(c->fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 &&
			                  errno != EINPROGRESS)) {
				c->st = C_FAILED;
				failed++;
				continue;
			}
			c->st = C_CONNECTING;
			epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
		}
		int n = epoll_wait(ep, evs, 512, 100);

		for (int i = 0; i < n; i++) {
			struct client *c = evs[i].data.ptr;

			if (c->st == C_DONE || c->st == C_FAILED)
				continue;
			if (c->st == C_CONNECTING) {
				int err = 0;
				socklen_t l = sizeof(err);

				getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l);
				if (err) {
					c->st = C_FAILED;
					failed++;
					close(c->fd);
					continue;
				}
				c->st = C_SENDING;
			}
			for (;;) {
				if (c->st == C_SENDING) {
					size_t len = (size_t)size - c->sent;

					for (size_t o = 0; o < len; o++)
						buf[o] = pattern(c->id, c->round, c->sent + o);
					ssize_t w = write(c->fd, buf, len);

					if (w < 0 && errno == EAGAIN)
						break;
					if (w <= 0)
						goto fail;
					c->sent += (size_t)w;
					if (c->sent == (size_t)size)
						c->st = C_RECEIVING;
					continue;
				}
				if (c->st == C_RECEIVING) {
					ssize_t r = read(c->fd, buf, (size_t)size - c->rcvd);

					if (r < 0 && errno == EAGAIN)
						break;
					if (r <= 0)
						goto fail;
					for (ssize_t o = 0; o < r; o++)
						if (buf[o] != pattern(c->id, c->round, c->rcvd + (size_t)o))
							goto fail;
					c->rcvd += (size_t)r;
					bytes += (uint64_t)r;
					if (c->rcvd < (size_t)size)
						continue;
					c->sent = c->rcvd = 0;
					if (++c->round == rounds) {
						c->st = C_DONE;
						done++;
						close(c->fd);
						break;
					}
					c->st = C_SENDING;
					continue;
				}
				break;
			}
			continue;
fail:
			c->st = C_FAILED;
			failed++;
			close(c->fd);
		}
	}
	printf("client: %d connections, %d completed, %d failed, %d unfinished, "
	       "%llu bytes verified, %llu ms\n", conns, done, failed, conns - done - failed,
	       (unsigned long long)bytes, (unsigned long long)(now_ms() - start));
	return done == conns ? 0 : 1;
}

int main(int argc, char **argv)
{
	raise_nofile();
	if (argc == 4 && strcmp(argv[1], "echo") == 0)
		return echo_main(atoi(argv[2]), atoi(argv[3]));
	if (argc == 8 && strcmp(argv[1], "client") == 0) {
		rounds = atoi(argv[5]);
		size = atoi(argv[6]);
		if (rounds < 1 || size < 1 || size > 1 << 20)
			return 2;
		return client_main(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[7]));
	}
	fprintf(stderr, "usage: tcpload echo PORT MAX_SECONDS\n"
	        "       tcpload client HOST PORT CONNS ROUNDS SIZE MAX_SECONDS\n");
	return 2;
}
