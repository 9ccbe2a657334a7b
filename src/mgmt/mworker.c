/* The worker's side of master-worker mode.
 *
 * A worker is this binary exec'ed by the master with MWORKER_ENV_FD naming
 * its end of a SOCK_SEQPACKET socketpair (the control channel; messages in
 * include/sluice/mgmt/mworker.h). At start-up, on the main thread before
 * any other runs, it receives the listening sockets the master holds (those
 * of the previous worker) and keeps them in a table that listener_create()
 * looks into by key: an address found there is not bound again, so its
 * kernel queue lives on. Once bound, it sends the master every socket it
 * listens on, then READY; the master then soft-stops the previous worker.
 *
 * Afterwards thread 1 polls the channel: each "C" message carries one end
 * of a socketpair that the master made for a master CLI command forwarded
 * to this worker (@1, @!pid); it becomes a CLI session at admin level, as
 * if accepted on a stats socket. End of file means the master is gone:
 * PR_SET_PDEATHSIG (set by the master before exec) stops this process.
 *
 * Ownership: the inherited table is written and read on the main thread
 * before the threads start; the channel's poll handle belongs to thread 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sluice/core/fd_budget.h>
#include <sluice/core/global.h>
#include <sluice/core/poller.h>
#include <sluice/core/sched.h>
#include <sluice/core/thread.h>
#include <sluice/mgmt/cli.h>
#include <sluice/mgmt/mworker.h>
#include <sluice/net/conn.h>
#include <sluice/net/listener.h>
#include <sluice/proxy/proxy.h>

struct inherited {
	char *key;
	int fd;       /* -1 once taken */
};

static int ctrl_fd = -1;
static struct inherited *inh;
static int ninh;

/* The master's connections come through this listener: admin level, not
 * counted against `stats maxconn` limits of the stats sockets. */
static struct bind_conf mcli_bc = { .is_cli = 1, .cli_level = CLI_LEVEL_ADMIN,
                                    .addr_str = "master", .mode_perm = -1 };
static struct listener mcli_lst = { .bc = &mcli_bc, .shared_fd = -1 };
static struct poll_handle ctrl_ph;

int mworker_child_detect(void)
{
	const char *v = getenv(MWORKER_ENV_FD);
	char *end;
	long fd;

	if (!v)
		return 0;
	fd = strtol(v, &end, 10);
	unsetenv(MWORKER_ENV_FD);
	if (*end || fd < 0 || fcntl((int)fd, F_GETFD) < 0)
		return 0;
	ctrl_fd = (int)fd;
	fcntl(ctrl_fd, F_SETFD, FD_CLOEXEC);
	global.mworker_child = 1;
	return 1;
}

/* Receives one message and at most one descriptor. Returns the text's
 * length, 0 at end of file, -1 on error. */
static ssize_t ctrl_recv(int fd, char *buf, size_t len, int *rfd, int flags)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { buf, len - 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
	                      .msg_control = cm.b, .msg_controllen = sizeof(cm.b) };
	ssize_t n;

	*rfd = -1;
	do {
		n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | flags);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(int))) {
			int nfd = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			int *fds = (int *)CMSG_DATA(c);

			for (int i = 0; i < nfd; i++) {
				if (*rfd < 0)
					*rfd = fds[i];
				else
					close(fds[i]);   /* one per message: extras are dropped */
			}
		}
	}
	return n;
}

static int ctrl_send(int fd, const char *text, int pass_fd)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { (void *)text, strlen(text) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (pass_fd >= 0) {
		memset(&cm, 0, sizeof(cm));
		msg.msg_control = cm.b;
		msg.msg_controllen = sizeof(cm.b);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
	}
	do {
		n = sendmsg(fd, &msg, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -1 : 0;
}

static int inherited_add(const char *key, size_t keylen, int fd)
{
	struct inherited *ni = realloc(inh, (ninh + 1) * sizeof(*inh));

	if (!ni)
		return -1;
	inh = ni;
	inh[ninh].key = strndup(key, keylen);
	if (!inh[ninh].key)
		return -1;
	inh[ninh].fd = fd;
	ninh++;
	return 0;
}

int mworker_child_recv_listeners(void)
{
	char buf[MWORKER_MSG_MAX];

	for (;;) {
		int fd;
		ssize_t n = ctrl_recv(ctrl_fd, buf, sizeof(buf), &fd, 0);

		if (n <= 0)
			return -1;
		if (!strcmp(buf, "E"))
			return 0;
		if (strncmp(buf, "L ", 2) != 0 || fd < 0) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (inherited_add(buf + 2, strlen(buf + 2), fd) < 0) {
			close(fd);
			return -1;
		}
	}
}

int mworker_take_listener(const char *key)
{
	for (int i = 0; i < ninh; i++) {
		if (inh[i].fd >= 0 && !strcmp(inh[i].key, key)) {
			int fd = inh[i].fd;

			inh[i].fd = -1;
			return fd;
		}
	}
	return -1;
}

static int send_one(const char *key, int fd, void *arg)
{
	char msg[MWORKER_MSG_MAX];

	if (strlen(key) + 3 > sizeof(msg))
		return 0;   /* too long to hand over: the next worker binds anew */
	snprintf(msg, sizeof(msg), "L %s", key);
	return ctrl_send(ctrl_fd, msg, fd);
}

void mworker_close_untaken(void)
{
	/* what the new configuration no longer listens on: the previous
	 * process serves what is queued there until it stops */
	for (int i = 0; i < ninh; i++) {
		if (inh[i].fd >= 0)
			close(inh[i].fd);
		free(inh[i].key);
	}
	free(inh);
	inh = NULL;
	ninh = 0;
}

int mworker_child_ready(void)
{
	mworker_close_untaken();
	if (listeners_for_each_socket(send_one, NULL) < 0)
		return -1;
	return ctrl_send(ctrl_fd, "READY", -1);
}

/* Thread 1: a message from the master. */
static void ctrl_cb(struct poll_handle *h, uint32_t ev)
{
	char buf[MWORKER_MSG_MAX];
	struct sockaddr_storage from;

	for (;;) {
		int fd;
		ssize_t n = ctrl_recv(h->fd, buf, sizeof(buf), &fd, MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			/* the master is gone (its death signal stops us) */
			poller_del(h);
			return;
		}
		if (strcmp(buf, "C") != 0 || fd < 0) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		fd_budget_opened();
		memset(&from, 0, sizeof(from));
		from.ss_family = AF_UNIX;
		atomic_fetch_add(&global.cli_conns, 1);
		atomic_fetch_add(&mcli_lst.nbconn, 1);
		if (cli_accept(&mcli_lst, fd, &from) < 0)
			listener_conn_closed(&mcli_lst);
	}
}

static int mworker_thread_init(int tid)
{
	if (tid != 0 || ctrl_fd < 0)
		return 0;
	ctrl_ph.fd = ctrl_fd;
	ctrl_ph.cb = ctrl_cb;
	ctrl_ph.owner = NULL;
	return poller_add(&ctrl_ph, EPOLLIN) < 0 ? -1 : 0;
}

static struct thread_init_hook mworker_hook = { .fn = mworker_thread_init };

__attribute__((constructor)) static void mworker_register(void)
{
	thread_register_init(&mworker_hook);
}

/* ---- stand-alone handover (-x, expose-fd listeners) ---- */

#define SOCKS_BATCH 200   /* descriptors per message (SCM_MAX_FD is 253) */

struct socks_batch {
	int out;                  /* the CLI connection */
	char text[SOCKS_BATCH * 420];
	size_t len;
	int fds[SOCKS_BATCH];
	int n;
	int failed;
};

/* One sendmsg() of the batch, waiting (bounded) while the socket is full. */
static int socks_flush(struct socks_batch *b)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * SOCKS_BATCH)];
	} cm;
	struct iovec iov = { b->text, b->len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	int tries = 0;
	ssize_t r;

	if (!b->n)
		return 0;
	memset(&cm, 0, sizeof(cm));
	msg.msg_control = cm.buf;
	msg.msg_controllen = CMSG_SPACE(sizeof(int) * b->n);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * b->n);
	memcpy(CMSG_DATA(c), b->fds, sizeof(int) * b->n);
	/* the text goes whole with its descriptors, or not at all: a short
	 * write would split the lines from them, so the socket must take it */
	for (;;) {
		r = sendmsg(b->out, &msg, MSG_NOSIGNAL);
		if (r >= 0 || (errno != EAGAIN && errno != EINTR) || ++tries > 100)
			break;
		usleep(10000);
	}
	if (r != (ssize_t)b->len)
		return -1;
	b->len = 0;
	b->n = 0;
	return 0;
}

static int socks_add(const char *key, int fd, void *arg)
{
	struct socks_batch *b = arg;
	size_t kl = strlen(key);

	if (kl + 1 > 419)
		return 0;   /* too long to describe: the new process binds it */
	if (b->n == SOCKS_BATCH && socks_flush(b) < 0)
		return -1;
	memcpy(b->text + b->len, key, kl);
	b->text[b->len + kl] = '\n';
	b->len += kl + 1;
	b->fds[b->n++] = fd;
	return 0;
}

int mworker_send_sockets(int fd)
{
	struct socks_batch *b = calloc(1, sizeof(*b));
	int ret;

	if (!b)
		return -1;
	b->out = fd;
	ret = listeners_for_each_socket(socks_add, b);
	if (ret == 0)
		ret = socks_flush(b);
	free(b);
	return ret;
}

int mworker_fetch_sockets(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t cap = 65536, len = 0;
	char *text = malloc(cap);
	int *fds = NULL, nfds = 0, fd, ret = -1;
	char **keys = NULL;

	if (!text) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "socket path too long");
		free(text);
		return -1;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		snprintf(err, errlen, "cannot connect to '%s': %s", path, strerror(errno));
		goto out;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){ 5, 0 }, sizeof(struct timeval));
	if (send(fd, "_getsocks\n", 10, MSG_NOSIGNAL) != 10) {
		snprintf(err, errlen, "cannot write to '%s': %s", path, strerror(errno));
		goto out;
	}
	for (;;) {
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(int) * 253)];
		} cm;
		struct iovec iov;
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
		                      .msg_control = cm.buf, .msg_controllen = sizeof(cm.buf) };
		ssize_t n;

		if (cap - len < 4096) {
			char *nt = realloc(text, cap * 2);

			if (!nt)
				goto bad;
			text = nt;
			cap *= 2;
		}
		iov.iov_base = text + len;
		iov.iov_len = cap - len - 1;
		n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "cannot read from '%s': %s", path, strerror(errno));
			goto bad;
		}
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
			int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			int *nf;

			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			nf = realloc(fds, (nfds + k) * sizeof(int));
			if (!nf)
				goto bad;
			fds = nf;
			memcpy(fds + nfds, CMSG_DATA(c), k * sizeof(int));
			nfds += k;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	text[len] = '\0';
	/* one key per descriptor, in order; anything else is the answer of a
	 * CLI that has no such socket to give (an error message) */
	keys = malloc((nfds + 1) * sizeof(*keys));
	if (!keys)
		goto bad;
	{
		char first[201];

		snprintf(first, sizeof(first), "%.*s", (int)strcspn(text, "\n"), text);
		if (mcli_socks_split(text, keys, nfds + 1) != nfds) {
			snprintf(err, errlen, "'%s' did not send its sockets: %s", path, first);
			goto bad;
		}
	}
	for (int i = 0; i < nfds; i++) {
		if (inherited_add(keys[i], strlen(keys[i]), fds[i]) < 0)
			goto bad;
		fds[i] = -1;
	}
	ret = 0;
	goto out;
bad:
	for (int i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
out:
	if (fd >= 0)
		close(fd);
	free(keys);
	free(fds);
	free(text);
	return ret;
}
