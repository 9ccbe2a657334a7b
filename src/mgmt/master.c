/* The master process of master-worker mode (-W, -Ws, `master-worker`).
 *
 * The master parses the configuration once (to refuse a bad one at start,
 * and for its own settings), then runs no proxy: one thread, one poll()
 * loop, a list of workers. Each worker is this binary exec'ed again with
 * the same arguments (so that a reload runs the binary found at the same
 * path, and parses the configuration afresh) and MWORKER_ENV_FD naming its
 * end of a control channel (src/mgmt/mworker.c).
 *
 * Listening sockets: the master holds one reference to every socket the
 * current worker listens on (sent by the worker after binding) and hands
 * them to the next worker, which reuses those whose address it still
 * binds. The kernel queues therefore never close across a reload: the old
 * worker stops polling them (soft stop) while the new one polls them.
 * Sockets inherited from whoever started the master (fd@N) simply stay
 * open in the master and are inherited by every worker at exec.
 *
 * A reload (SIGUSR2, `reload`) starts a new worker; until it says READY
 * the old one serves alone. If the new one exits first (bad configuration,
 * a port it cannot bind), the reload failed: "[ALERT]"s from the worker's
 * parser, "Loading failure!", and the old worker never noticed. On READY,
 * the sockets the master held are replaced by the new worker's, and the
 * old workers get SIGUSR1 (soft stop).
 *
 * `program` sections (src/mgmt/program.c) are processes of the same list,
 * without a control channel: started before the first worker, given
 * SIGUSR1 and started again on reload (start-on-reload), signalled on
 * stop, reported when they exit, never a reason for the master to stop.
 *
 * Signals are turned into bytes on a pipe (the handler does nothing else),
 * and handled in the loop. The master CLI is served one connection at a
 * time, in the loop: a command forwarded to a worker waits for its answer
 * (bounded by a timeout), which is fine for an operator's socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sluice/core/clock.h>
#include <sluice/core/global.h>
#include <sluice/mgmt/cli.h>
#include <sluice/mgmt/mworker.h>
#include <sluice/net/addr.h>

#define MW_MAX_MCLI      16
#define MW_MAX_PROCS     256
#define MW_FWD_TIMEOUT_MS 10000
#define MW_OUT_MAX       (1 << 20)

enum proc_state { PROC_STARTING, PROC_CURRENT, PROC_OLD };

struct held {
	char *key;
	int fd;
};

struct mw_proc {
	int pid;
	int ctrl;                 /* master's end of the channel, -1: closed */
	enum proc_state state;
	int reloads;              /* reloads it went through */
	uint64_t start_ms;
	struct held *pend;        /* sockets announced before READY */
	int npend;
	const struct program *prog; /* a `program`, NULL for a worker */
};

static struct mw_proc *procs[MW_MAX_PROCS];
static int nprocs;
static struct held *held;     /* the current worker's sockets */
static int nheld;
static int mcli_fd[MW_MAX_MCLI];
static struct mcli_bind mcli_conf[MW_MAX_MCLI];
static int nmcli;
static int sig_pipe[2] = { -1, -1 };
static char exe_path[4096];
static char **worker_argv;
static const char *pidfile;
static int master_pid;
static uint64_t master_start_ms;
static int reloads, failed_reloads;
static int stopping;          /* a stop signal came: exit once no worker is left */
static int exit_code;
static int reload_pending;

/* ---- messages: "[LEVEL]   (pid) : text", as HAProxy's master ---- */

static void mw_log(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void mw_log(const char *level, const char *fmt, ...)
{
	char line[1024], lvl[16];
	va_list ap;
	int n;

	if (global.quiet && strcmp(level, "ALERT") != 0)
		return;
	snprintf(lvl, sizeof(lvl), "[%s]", level);
	n = snprintf(line, sizeof(line), "%-10s (%d) : ", lvl, master_pid);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	n = (int)strlen(line);
	line[n++] = '\n';
	/* one write: a worker writes to the same stderr */
	if (write(2, line, n) < 0) {
		/* nowhere to report it */
	}
}

/* ---- systemd (-Ws): sd_notify without libsystemd ---- */

static void sd_notify_state(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	socklen_t len;
	size_t pl;
	int fd;

	static int stopping_sent;
	char msg[64];

	if (!global.systemd_notify || !path || !*path)
		return;
	if (!strcmp(state, "STOPPING=1") && stopping_sent++)
		return;
	/* as HAProxy: systemd learns the master's pid with READY */
	if (!strcmp(state, "READY=1")) {
		snprintf(msg, sizeof(msg), "READY=1\nMAINPID=%d", master_pid);
		state = msg;
	}
	pl = strlen(path);
	if (pl >= sizeof(sun.sun_path))
		return;
	memcpy(sun.sun_path, path, pl);
	if (path[0] == '@')
		sun.sun_path[0] = '\0';   /* abstract namespace */
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + pl);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sun, len);
	close(fd);
}

/* ---- control channel ---- */

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

static void held_free(struct held *h, int n)
{
	for (int i = 0; i < n; i++) {
		if (h[i].fd >= 0)
			close(h[i].fd);
		free(h[i].key);
	}
	free(h);
}

static void proc_free(struct mw_proc *p)
{
	if (p->ctrl >= 0)
		close(p->ctrl);
	held_free(p->pend, p->npend);
	free(p);
}

static void proc_remove(int idx)
{
	proc_free(procs[idx]);
	memmove(&procs[idx], &procs[idx + 1], (nprocs - idx - 1) * sizeof(procs[0]));
	nprocs--;
}

/* The <nth> current worker, newest first; before the first worker is
 * ready, the one starting (its CLI answers once it runs). */
static struct mw_proc *proc_current(int nth)
{
	int any = 0;

	for (int i = nprocs - 1; i >= 0; i--) {
		if (procs[i]->prog)
			continue;
		any |= procs[i]->state == PROC_CURRENT;
		if (procs[i]->state == PROC_CURRENT && --nth == 0)
			return procs[i];
	}
	if (!any && nth == 1)
		for (int i = nprocs - 1; i >= 0; i--)
			if (procs[i]->state == PROC_STARTING && !procs[i]->prog)
				return procs[i];
	return NULL;
}

static int has_current_worker(void)
{
	for (int i = 0; i < nprocs; i++)
		if (procs[i]->state == PROC_CURRENT && !procs[i]->prog)
			return 1;
	return 0;
}

static int proc_alive(const struct mw_proc *p)
{
	for (int i = 0; i < nprocs; i++)
		if (procs[i] == p)
			return 1;
	return 0;
}

static struct mw_proc *proc_by_pid(int pid)
{
	for (int i = 0; i < nprocs; i++)
		if (procs[i]->pid == pid)
			return procs[i];
	return NULL;
}

static void kill_all(int sig)
{
	for (int i = 0; i < nprocs; i++)
		kill(procs[i]->pid, sig);
}

/* ---- workers ---- */

static void child_exec(int ctrl)
{
	char num[16];
	sigset_t all;

	/* the worker dies with the master, whatever kills the master */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != master_pid)
		_exit(1);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	fcntl(ctrl, F_SETFD, 0);
	snprintf(num, sizeof(num), "%d", ctrl);
	setenv(MWORKER_ENV_FD, num, 1);
	execv(exe_path, worker_argv);
	fprintf(stderr, "[ALERT] cannot execute %s: %s\n", exe_path, strerror(errno));
	_exit(1);
}

static int spawn_worker(void)
{
	struct mw_proc *p;
	int sv[2];
	pid_t pid;

	if (nprocs == MW_MAX_PROCS) {
		mw_log("ALERT", "Too many workers, cannot fork a new one.");
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		mw_log("ALERT", "Cannot create the worker's control channel: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		mw_log("ALERT", "Cannot fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		close(sv[0]);
		child_exec(sv[1]);
	}
	close(sv[1]);
	p = calloc(1, sizeof(*p));
	if (!p) {
		close(sv[0]);
		kill(pid, SIGTERM);
		return -1;
	}
	p->pid = pid;
	p->ctrl = sv[0];
	p->state = PROC_STARTING;
	p->start_ms = clock_mono_ms();
	procs[nprocs++] = p;
	/* the sockets to reuse (blocking: the worker reads them as it starts;
	 * if it died, sendmsg() fails and SIGCHLD tells the rest) */
	for (int i = 0; i < nheld; i++) {
		char msg[MWORKER_MSG_MAX];

		snprintf(msg, sizeof(msg), "L %s", held[i].key);
		if (ctrl_send(p->ctrl, msg, held[i].fd) < 0)
			break;
	}
	ctrl_send(p->ctrl, "E", -1);
	fcntl(p->ctrl, F_SETFL, fcntl(p->ctrl, F_GETFL) | O_NONBLOCK);
	mw_log("NOTICE", "New worker (%d) forked", pid);
	return 0;
}

/* Starts an instance of <prog>: no control channel, no listener. */
static void spawn_program(const struct program *prog)
{
	struct mw_proc *p;
	pid_t pid;

	if (nprocs == MW_MAX_PROCS) {
		mw_log("ALERT", "Too many processes, cannot fork program '%s'.", prog->name);
		return;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return;
	pid = fork();
	if (pid < 0) {
		mw_log("ALERT", "Cannot fork program '%s': %s", prog->name, strerror(errno));
		free(p);
		return;
	}
	if (pid == 0) {
		sigset_t all;

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != master_pid)
			_exit(1);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		execvp(prog->argv[0], prog->argv);
		fprintf(stderr, "[ALERT] program '%s': cannot execute %s: %s\n", prog->name,
		        prog->argv[0], strerror(errno));
		_exit(1);
	}
	p->pid = pid;
	p->ctrl = -1;
	p->state = PROC_CURRENT;
	p->start_ms = clock_mono_ms();
	p->prog = prog;
	procs[nprocs++] = p;
	mw_log("NOTICE", "New program '%s' (%d) forked", prog->name, pid);
}

/* A reload: the programs that restart on reload get SIGUSR1 and a new
 * instance; the others go on. */
static void reload_programs(void)
{
	int n = nprocs;

	for (int i = 0; i < n; i++) {
		struct mw_proc *p = procs[i];

		if (!p->prog || p->state != PROC_CURRENT || !p->prog->start_on_reload)
			continue;
		p->state = PROC_OLD;
		kill(p->pid, SIGUSR1);
		spawn_program(p->prog);
	}
}

static void worker_ready(struct mw_proc *p)
{
	held_free(held, nheld);
	held = p->pend;
	nheld = p->npend;
	p->pend = NULL;
	p->npend = 0;
	for (int i = 0; i < nprocs; i++) {
		struct mw_proc *o = procs[i];

		if (o == p || o->state != PROC_CURRENT || o->prog)
			continue;
		o->state = PROC_OLD;
		kill(o->pid, SIGUSR1);
	}
	p->state = PROC_CURRENT;
	/* old workers that went through too many reloads */
	for (int i = 0; global.mworker_max_reloads >= 0 && i < nprocs; i++) {
		struct mw_proc *o = procs[i];

		if (o->state == PROC_OLD && !o->prog && o->reloads > global.mworker_max_reloads) {
			mw_log("WARNING", "Worker (%d) reached the maximum number of reloads (%d), "
			       "sending SIGTERM", o->pid, global.mworker_max_reloads);
			kill(o->pid, SIGTERM);
		}
	}
	mw_log("NOTICE", "Loading success.");
	sd_notify_state("READY=1");
}

/* A message on <p>'s channel. */
static void ctrl_read(struct mw_proc *p)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int) * 4)];
	} cm;
	char buf[MWORKER_MSG_MAX];

	for (;;) {
		struct iovec iov = { buf, sizeof(buf) - 1 };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
		                      .msg_control = cm.b, .msg_controllen = sizeof(cm.b) };
		int fd = -1;
		ssize_t n = recvmsg(p->ctrl, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);

		if (n < 0 && (errno == EINTR))
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			close(p->ctrl);   /* the process is going: SIGCHLD follows */
			p->ctrl = -1;
			return;
		}
		buf[n] = '\0';
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
				int f;

				memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				if (fd < 0)
					fd = f;
				else
					close(f);
			}
		}
		if (!strncmp(buf, "L ", 2) && fd >= 0 && p->state == PROC_STARTING) {
			struct held *nh = realloc(p->pend, (p->npend + 1) * sizeof(*nh));

			if (!nh || !(nh[p->npend].key = strdup(buf + 2))) {
				if (nh)
					p->pend = nh;
				close(fd);
				continue;
			}
			p->pend = nh;
			nh[p->npend++].fd = fd;
			continue;
		}
		if (fd >= 0)
			close(fd);
		if (!strcmp(buf, "READY") && p->state == PROC_STARTING)
			worker_ready(p);
	}
}

static void start_reload(void)
{
	for (int i = 0; i < nprocs; i++) {
		if (procs[i]->state == PROC_STARTING) {
			reload_pending = 1;   /* after this one is READY or gone */
			return;
		}
	}
	mw_log("NOTICE", "Reloading sluice");
	sd_notify_state("RELOADING=1");
	reloads++;
	for (int i = 0; i < nprocs; i++)
		procs[i]->reloads++;
	reload_programs();
	if (spawn_worker() < 0) {
		failed_reloads++;
		mw_log("WARNING", "Loading failure!");
		sd_notify_state("READY=1");
	}
}

static void describe_status(int status, int *code, char *why, size_t len)
{
	if (WIFSIGNALED(status)) {
		*code = 128 + WTERMSIG(status);
		snprintf(why, len, "%s", strsignal(WTERMSIG(status)));
	} else {
		*code = WEXITSTATUS(status);
		snprintf(why, len, "Exit");
	}
}

static void master_exit(int code) __attribute__((noreturn));

static void master_exit(int code)
{
	mw_log("WARNING", "All workers exited. Exiting... (%d)", code);
	sd_notify_state("STOPPING=1");
	if (pidfile)
		unlink(pidfile);
	for (int i = 0; i < nmcli; i++) {
		struct sl_addr a;
		char err[128];

		if (addr_parse(mcli_conf[i].addr, &a, ADDR_O_PORT_REQUIRED | ADDR_O_NUMERIC, err,
		               sizeof(err)) == 0 && a.kind == ADDR_UNIX)
			unlink(((struct sockaddr_un *)&a.ss)->sun_path);
	}
	exit(code);
}

static void reap_children(void)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		struct mw_proc *p = proc_by_pid(pid);
		char why[64];
		int code, idx = -1;

		if (!p)
			continue;
		for (int i = 0; i < nprocs; i++)
			if (procs[i] == p)
				idx = i;
		describe_status(status, &code, why, sizeof(why));
		if (p->prog) {
			/* a program: reported, never a reason to stop */
			mw_log(p->state == PROC_OLD ? "WARNING" : "ALERT",
			       "%s program '%s' (%d) exited with code %d (%s)",
			       p->state == PROC_OLD ? "Former" : "Current", p->prog->name, pid, code,
			       why);
			proc_remove(idx);
			if (stopping && nprocs == 0)
				master_exit(exit_code);
			continue;
		}
		switch (p->state) {
		case PROC_STARTING:
			mw_log("ALERT", "New worker (%d) exited with code %d (%s)", pid, code, why);
			if (reloads == 0 && !has_current_worker()) {
				/* the first worker could not start: nothing runs */
				proc_remove(idx);
				exit_code = code ? code : 1;
				stopping = 1;
				kill_all(SIGTERM);   /* the programs */
				if (nprocs == 0)
					master_exit(exit_code);
				continue;
			}
			if (stopping)
				break;   /* stopped while starting: not a failed reload */
			failed_reloads++;
			mw_log("WARNING", "Loading failure!");
			sd_notify_state("READY=1");
			break;
		case PROC_CURRENT:
			mw_log("ALERT", "Current worker (%d) exited with code %d (%s)", pid, code, why);
			exit_code = code;
			if (!stopping && !global.mworker_no_exit_on_failure) {
				mw_log("ALERT", "exit-on-failure: killing every processes with SIGTERM");
				stopping = 1;
				for (int i = 0; i < nprocs; i++)
					if (procs[i] != p)
						kill(procs[i]->pid, SIGTERM);
			}
			break;
		case PROC_OLD:
			mw_log("WARNING", "Former worker (%d) exited with code %d (%s)", pid, code, why);
			break;
		}
		proc_remove(idx);
		if (stopping && nprocs == 0)
			master_exit(exit_code);
	}
	if (reload_pending) {
		int starting = 0;

		for (int i = 0; i < nprocs; i++)
			starting |= procs[i]->state == PROC_STARTING;
		if (!starting) {
			reload_pending = 0;
			start_reload();
		}
	}
}

/* ---- signals ---- */

static void on_signal(int sig)
{
	unsigned char c = (unsigned char)sig;
	int e = errno;

	if (write(sig_pipe[1], &c, 1) < 0) {
		/* the pipe is full: signals are pending anyway */
	}
	errno = e;
}

static void handle_signal(int sig)
{
	switch (sig) {
	case SIGCHLD:
		reap_children();
		break;
	case SIGUSR2:
	case SIGHUP:
		if (sig == SIGUSR2)
			start_reload();
		else
			kill_all(SIGHUP);
		break;
	case SIGINT:
	case SIGTERM:
		mw_log("WARNING", "Exiting Master process...");
		sd_notify_state("STOPPING=1");
		stopping = 1;
		kill_all(sig);
		if (nprocs == 0)
			master_exit(exit_code);
		break;
	case SIGUSR1:
		stopping = 1;
		kill_all(SIGUSR1);
		if (nprocs == 0)
			master_exit(exit_code);
		break;
	}
}

static void setup_signals(void)
{
	struct sigaction sa;
	int sigs[] = { SIGCHLD, SIGUSR1, SIGUSR2, SIGHUP, SIGINT, SIGTERM };

	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		mw_log("ALERT", "cannot create a pipe: %s", strerror(errno));
		exit(1);
	}
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = on_signal;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* ---- master CLI ---- */

struct outbuf {
	char *buf;
	size_t len, cap;
};

static void out_add(struct outbuf *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 1024;
		char *nb;

		while (cap < o->len + n + 1)
			cap *= 2;
		if (cap > MW_OUT_MAX)
			return;
		nb = realloc(o->buf, cap);
		if (!nb)
			return;
		o->buf = nb;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void out_printf(struct outbuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void out_printf(struct outbuf *o, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		out_add(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static const struct {
	const char *cmd, *help;
	int level;
} mcli_help[] = {
	{ "@!<pid>",          "send a command to the <pid> process", CLI_LEVEL_USER },
	{ "@<relative pid>",  "send a command to the <relative pid> process", CLI_LEVEL_USER },
	{ "@master",          "send a command to the master process", CLI_LEVEL_USER },
	{ "operator",         "lower the level of the current CLI session to operator",
	  CLI_LEVEL_ADMIN },
	{ "reload",           "reload haproxy", CLI_LEVEL_OPERATOR },
	{ "show proc",        "show processes status", CLI_LEVEL_USER },
	{ "show version",     "show version of the current process", CLI_LEVEL_USER },
	{ "user",             "lower the level of the current CLI session to user",
	  CLI_LEVEL_OPERATOR },
	{ "help [<command>]", "list matching or all commands", CLI_LEVEL_USER },
	{ "quit",             "disconnect", CLI_LEVEL_USER },
};

static void mcli_print_help(struct outbuf *o, int level)
{
	for (size_t i = 0; i < sizeof(mcli_help) / sizeof(mcli_help[0]); i++)
		if (mcli_help[i].level <= level)
			out_printf(o, "  %-38s: %s\n", mcli_help[i].cmd, mcli_help[i].help);
}

static void mcli_show_proc(struct outbuf *o)
{
	char line[256], up[32], rl[48], pid[16];
	uint64_t now = clock_mono_ms();
	int old = 0;

	mcli_fmt_proc_line(line, sizeof(line), "#<PID>", "<type>", "<reloads>", "<uptime>",
	                   "<version>");
	out_add(o, line, strlen(line));
	snprintf(pid, sizeof(pid), "%d", master_pid);
	snprintf(rl, sizeof(rl), "%d [failed: %d]", reloads, failed_reloads);
	mcli_fmt_uptime(up, sizeof(up), (now - master_start_ms) / 1000);
	mcli_fmt_proc_line(line, sizeof(line), pid, "master", rl, up, SLUICE_VERSION);
	out_add(o, line, strlen(line));
	out_printf(o, "# workers\n");
	for (int i = nprocs - 1; i >= 0; i--) {
		struct mw_proc *p = procs[i];

		/* a worker still starting is listed with the current ones, as
		 * HAProxy lists a worker as soon as it is forked */
		if (p->prog)
			continue;
		if (p->state == PROC_OLD) {
			old++;
			continue;
		}
		snprintf(pid, sizeof(pid), "%d", p->pid);
		snprintf(rl, sizeof(rl), "%d", p->reloads);
		mcli_fmt_uptime(up, sizeof(up), (now - p->start_ms) / 1000);
		mcli_fmt_proc_line(line, sizeof(line), pid, "worker", rl, up, SLUICE_VERSION);
		out_add(o, line, strlen(line));
	}
	if (old) {
		out_printf(o, "# old workers\n");
		for (int i = nprocs - 1; i >= 0; i--) {
			struct mw_proc *p = procs[i];

			if (p->state != PROC_OLD || p->prog)
				continue;
			snprintf(pid, sizeof(pid), "%d", p->pid);
			snprintf(rl, sizeof(rl), "%d", p->reloads);
			mcli_fmt_uptime(up, sizeof(up), (now - p->start_ms) / 1000);
			mcli_fmt_proc_line(line, sizeof(line), pid, "worker", rl, up, SLUICE_VERSION);
			out_add(o, line, strlen(line));
		}
	}
	out_printf(o, "# programs\n");
	for (int i = 0; i < nprocs; i++) {
		struct mw_proc *p = procs[i];

		if (!p->prog)
			continue;
		snprintf(pid, sizeof(pid), "%d", p->pid);
		snprintf(rl, sizeof(rl), "%d", p->reloads);
		mcli_fmt_uptime(up, sizeof(up), (now - p->start_ms) / 1000);
		mcli_fmt_proc_line(line, sizeof(line), pid, p->prog->name, rl, up, "-");
		out_add(o, line, strlen(line));
	}
	out_printf(o, "\n");
}

/* Sends <cmd> to <p>'s CLI through a new socketpair and appends what it
 * answers, waiting at most MW_FWD_TIMEOUT_MS. */
static void mcli_forward(struct mw_proc *p, const char *cmd, struct outbuf *o)
{
	uint64_t deadline = clock_mono_ms() + MW_FWD_TIMEOUT_MS;
	char buf[4096];
	int sv[2];

	if (p->ctrl < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		out_printf(o, "Can't connect to the target CLI!\n");
		return;
	}
	if (ctrl_send(p->ctrl, "C", sv[1]) < 0) {
		close(sv[0]);
		close(sv[1]);
		out_printf(o, "Can't connect to the target CLI!\n");
		return;
	}
	close(sv[1]);
	if (send(sv[0], cmd, strlen(cmd), MSG_NOSIGNAL) < 0 ||
	    send(sv[0], "\n", 1, MSG_NOSIGNAL) < 0) {
		close(sv[0]);
		return;
	}
	for (;;) {
		uint64_t now = clock_mono_ms();
		struct pollfd pf = { sv[0], POLLIN, 0 };
		ssize_t n;

		if (now >= deadline || poll(&pf, 1, (int)(deadline - now)) <= 0)
			break;
		n = recv(sv[0], buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		out_add(o, buf, (size_t)n);
	}
	close(sv[0]);
}

static struct mw_proc *mcli_target_proc(const struct mcli_cmd *c)
{
	if (c->target == MCLI_T_RELATIVE)
		return c->num > 0 ? proc_current((int)c->num) : NULL;
	if (c->target == MCLI_T_PID) {
		struct mw_proc *p = proc_by_pid((int)c->num);

		return p && p->state != PROC_STARTING && !p->prog ? p : NULL;
	}
	return NULL;
}

/* Runs one line of the master CLI. Returns 1 if the connection must close
 * without an answer (reload), else 0. */
static int mcli_run_line(char *line, struct outbuf *o, int *level)
{
	char *cmds[64];
	int n = mcli_split_line(line, cmds, 64);
	struct mcli_cmd sess = { .target = MCLI_T_MASTER };

	for (int i = 0; i < n; i++) {
		struct mcli_cmd c;
		struct mw_proc *p = NULL;

		if (mcli_parse_cmd(cmds[i], &c) < 0) {
			out_printf(o, "Can't find the target PID matching the prefix '%s'\n", c.prefix);
			continue;
		}
		if (c.target != MCLI_T_NONE && !*c.cmd) {
			sess = c;   /* "@1;" : the next commands go there */
			continue;
		}
		if (c.target == MCLI_T_NONE) {
			c.target = sess.target;
			c.num = sess.num;
			c.prefix = sess.prefix;
		}
		if (!*c.cmd)
			continue;
		if (c.target != MCLI_T_MASTER) {
			p = mcli_target_proc(&c);
			if (!p) {
				out_printf(o, "Can't find the target PID matching the prefix '%s'\n",
				           c.prefix ? c.prefix : "@");
				continue;
			}
			mcli_forward(p, c.cmd, o);
			continue;
		}
		/* the master's own commands */
		if (!strcmp(c.cmd, "show proc")) {
			mcli_show_proc(o);
		} else if (!strcmp(c.cmd, "show version")) {
			out_printf(o, "%s\n", SLUICE_VERSION);
		} else if (!strcmp(c.cmd, "reload") && *level >= CLI_LEVEL_OPERATOR) {
			start_reload();
			return 1;
		} else if (!strcmp(c.cmd, "help") || !strncmp(c.cmd, "help ", 5)) {
			out_printf(o, "The following commands are valid at this level:\n");
			mcli_print_help(o, *level);
		} else if (!strcmp(c.cmd, "operator") && *level >= CLI_LEVEL_OPERATOR) {
			*level = CLI_LEVEL_OPERATOR;
		} else if (!strcmp(c.cmd, "user")) {
			*level = CLI_LEVEL_USER;
		} else if (!strcmp(c.cmd, "quit")) {
			return 0;
		} else {
			out_printf(o, "Unknown command, but maybe one of the following ones is a "
			           "better match:\n");
			mcli_print_help(o, *level);
		}
	}
	return 0;
}

/* One master CLI connection: one line, its answer, then the end (prompt
 * mode is not offered: the master serves one connection at a time). */
static void mcli_serve(int fd, int level)
{
	struct timeval tv = { 2, 0 };
	char line[16384];
	size_t len = 0;
	struct outbuf o = { 0 };

	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (len < sizeof(line) - 1) {
		ssize_t n = recv(fd, line + len, sizeof(line) - 1 - len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (memchr(line, '\n', len))
			break;
	}
	line[len] = '\0';
	if (memchr(line, '\n', len))
		*(char *)memchr(line, '\n', len) = '\0';
	if (len && mcli_run_line(line, &o, &level) == 0 && o.len) {
		size_t off = 0;

		while (off < o.len) {
			ssize_t n = send(fd, o.buf + off, o.len - off, MSG_NOSIGNAL);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			off += (size_t)n;
		}
	}
	free(o.buf);
	close(fd);
}

static int mcli_bind_one(struct mcli_bind *b)
{
	struct sl_addr a;
	char err[256];
	int fd, one = 1;

	if (addr_parse(b->addr, &a, ADDR_O_PORT_REQUIRED, err, sizeof(err)) < 0) {
		mw_log("ALERT", "-S: %s", err);
		return -1;
	}
	if (a.kind == ADDR_FD) {
		int acc = 0;
		socklen_t l = sizeof(acc);

		if (getsockopt(a.fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l) < 0 || !acc) {
			mw_log("ALERT", "-S: fd@%d is not a listening socket", a.fd);
			return -1;
		}
		fcntl(a.fd, F_SETFD, FD_CLOEXEC);   /* the workers need not have it */
		fcntl(a.fd, F_SETFL, fcntl(a.fd, F_GETFL) | O_NONBLOCK);
		return a.fd;
	}
	fd = socket(a.ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		mw_log("ALERT", "-S: cannot create socket: %s", strerror(errno));
		return -1;
	}
	if (a.kind == ADDR_INET)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (a.kind == ADDR_UNIX) {
		const char *path = ((struct sockaddr_un *)&a.ss)->sun_path;
		struct stat st;

		if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
			unlink(path);
	}
	if (bind(fd, (struct sockaddr *)&a.ss, a.len) < 0 || listen(fd, 16) < 0) {
		mw_log("ALERT", "-S: cannot bind socket (%s) for [%s]", strerror(errno), b->addr);
		close(fd);
		return -1;
	}
	if (a.kind == ADDR_UNIX) {
		const char *path = ((struct sockaddr_un *)&a.ss)->sun_path;
		long uid = b->uid, gid = b->gid;

		if (*b->user) {
			struct passwd *pw = getpwnam(b->user);

			uid = pw ? (long)pw->pw_uid : -1;
		}
		if (*b->group) {
			struct group *gr = getgrnam(b->group);

			gid = gr ? (long)gr->gr_gid : -1;
		}
		if ((uid >= 0 || gid >= 0) && chown(path, (uid_t)uid, (gid_t)gid) < 0)
			mw_log("WARNING", "-S: cannot chown %s: %s", path, strerror(errno));
		if (b->mode >= 0)
			chmod(path, (mode_t)b->mode);
	}
	return fd;
}

static void daemonize(void)
{
	pid_t pid = fork();
	int fd;

	if (pid < 0) {
		mw_log("ALERT", "cannot fork: %s", strerror(errno));
		exit(1);
	}
	if (pid > 0)
		_exit(0);
	setsid();
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
}

void master_run(char **argv, const struct master_opts *o)
{
	ssize_t n;

	master_pid = getpid();
	master_start_ms = clock_mono_ms();
	worker_argv = argv;
	n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
	if (n <= 0) {
		snprintf(exe_path, sizeof(exe_path), "%s", argv[0]);
	} else {
		exe_path[n] = '\0';
		/* a binary replaced on disk since: the path names the new one */
		if (strlen(exe_path) > 10 && !strcmp(exe_path + strlen(exe_path) - 10, " (deleted)"))
			exe_path[strlen(exe_path) - 10] = '\0';
	}
	for (int i = 0; i < o->nmcli; i++) {
		char err[256];

		if (mcli_bind_parse(o->mcli[i], &mcli_conf[nmcli], err, sizeof(err)) < 0) {
			mw_log("ALERT", "-S '%s': %s", o->mcli[i], err);
			exit(1);
		}
		mcli_fd[nmcli] = mcli_bind_one(&mcli_conf[nmcli]);
		if (mcli_fd[nmcli] < 0)
			exit(1);
		nmcli++;
	}
	setup_signals();
	if (o->daemon) {
		daemonize();
		master_pid = getpid();
	}
	pidfile = o->pidfile;
	if (pidfile) {
		FILE *f = fopen(pidfile, "w");

		if (!f) {
			mw_log("ALERT", "cannot create pidfile %s: %s", pidfile, strerror(errno));
			exit(1);
		}
		fprintf(f, "%d\n", master_pid);
		fclose(f);
	}
	for (const struct program *prog = programs; prog; prog = prog->next)
		spawn_program(prog);
	if (spawn_worker() < 0) {
		stopping = 1;
		kill_all(SIGTERM);
		if (nprocs == 0)
			master_exit(1);
	}

	for (;;) {
		struct pollfd pf[1 + MW_MAX_MCLI + MW_MAX_PROCS];
		struct mw_proc *pp[MW_MAX_PROCS];
		int np = 0, nw = 0;

		pf[np++] = (struct pollfd){ sig_pipe[0], POLLIN, 0 };
		for (int i = 0; i < nmcli; i++)
			pf[np++] = (struct pollfd){ mcli_fd[i], POLLIN, 0 };
		for (int i = 0; i < nprocs; i++) {
			if (procs[i]->ctrl < 0)
				continue;
			pp[nw++] = procs[i];
			pf[np++] = (struct pollfd){ procs[i]->ctrl, POLLIN, 0 };
		}
		if (poll(pf, np, 1000) < 0 && errno != EINTR)
			continue;
		if (pf[0].revents) {
			unsigned char sigs[64];
			ssize_t r = read(sig_pipe[0], sigs, sizeof(sigs));

			for (ssize_t i = 0; i < r; i++)
				handle_signal(sigs[i]);
		}
		for (int i = 0; i < nw; i++) {
			/* a worker may have gone meanwhile (SIGCHLD above) */
			if (pf[1 + nmcli + i].revents && proc_alive(pp[i]))
				ctrl_read(pp[i]);
		}
		for (int i = 0; i < nmcli; i++) {
			if (!pf[1 + i].revents)
				continue;
			int cfd = accept4(mcli_fd[i], NULL, NULL, SOCK_CLOEXEC);

			if (cfd >= 0)
				mcli_serve(cfd, mcli_conf[i].level);
		}
		/* a signal lost between the pipe and a full pipe: reap anyway */
		reap_children();
	}
}
