/* sluice: command line, start-up and shutdown (the global section's own
 * keywords are in src/core/global_cfg.c).
 *
 * Signals: SIGINT and SIGTERM stop at once: the pid file is removed and the
 * signal is re-raised with its default action, so that the process dies from
 * that signal, as varnishtest and init systems expect of HAProxy. In a
 * sanitizer build the threads first leave their loops and free what they
 * kept, and LeakSanitizer checks the heap before the signal is re-raised:
 * a leak then ends the process with LeakSanitizer's exit code instead, which
 * the tests see (a second signal dies at once). SIGUSR1
 * stops gracefully: listeners close, established sessions finish, then the
 * process exits 0. Worker threads block every signal; the main thread (which
 * is also thread 1) receives them.
 */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <lua.h>
#include <nghttp2/nghttp2ver.h>
#include <openssl/crypto.h>
#include <openssl/opensslv.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <zlib.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define LEAK_CHECK_ON_STOP 1
#else
#define LEAK_CHECK_ON_STOP 0
#endif
#include <sluice/cfg/cfg.h>
#include <sluice/cfg/cond.h>
#include <sluice/core/startlog.h>
#include <sluice/core/clock.h>
#include <sluice/core/fd_budget.h>
#include <sluice/core/global.h>
#include <sluice/core/pool.h>
#include <sluice/core/log.h>
#include <sluice/core/sched.h>
#include <sluice/core/thread.h>
#include <sluice/mgmt/cli.h>
#include <sluice/mgmt/mworker.h>
#include <sluice/net/listener.h>
#include <sluice/proxy/check.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>

#define MAX_CFG_FILES 64
#define MAX_OLD_PIDS  64

static const char *pidfile_path;   /* what the signal handler unlinks */

/* HAProxy's default thread count: the CPUs the process is bound to. */
static int default_nbthread(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 1;
	n = CPU_COUNT(&set);
	return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : n;
}

/* ---- version ---- */

static void print_version(int verbose)
{
	printf("sluice version %s - a reverse proxy and load balancer\n", SLUICE_VERSION);
	if (!verbose)
		return;
	printf("HAProxy configuration language level: %s\n", SLUICE_CFG_LEVEL);
	printf("Build options :\n  CC = %s\n  CFLAGS = %s\n", BUILD_CC, BUILD_CFLAGS);
	printf("\nFeature list : %s\n", sluice_build_features);
	printf("\nDefault settings :\n  bufsize = %d, maxpollevents = %d, runqueue-depth = %d, "
	       "maxaccept = %d, nbthread = %d\n", global.bufsize, global.maxpollevents,
	       global.runqueue_depth, global.maxaccept, default_nbthread());
	printf("\nBuilt with multi-threading support (MAX_THREADS=%d).\n", MAX_THREADS);
	printf("Built with OpenSSL version : %s\n", OPENSSL_VERSION_TEXT);
	printf("Running on OpenSSL version : %s\n", OpenSSL_version(OPENSSL_VERSION));
	{
		char pv[64] = "";

		pcre2_config(PCRE2_CONFIG_VERSION, pv);
		uint32_t jit = 0;
		pcre2_config(PCRE2_CONFIG_JIT, &jit);
		printf("Built with PCRE2 version : %s\n", pv);
		printf("PCRE2 library supports JIT : %s\n", jit ? "yes" : "no");
	}
	printf("Built with Lua version : %s\n", LUA_RELEASE);
	printf("Built with libnghttp2 version : %s\n", NGHTTP2_VERSION);
	printf("Built with zlib version : %s (running %s)\n", ZLIB_VERSION, zlibVersion());
	printf("\nAvailable polling systems :\n      epoll : pref=300, test result OK\n");
}

static void usage(const char *prog)
{
	fprintf(stderr,
	        "Usage : %s [-f <cfgfile|cfgdir>]* [ -vdD ] [ -p <pidfile> ] [ -c ]\n"
	        "        [ -cc <expr> ] [ -q ]\n"
	        "        -v displays version ; -vv shows known build options.\n"
	        "        -d enters debug mode (foreground) ; -D goes daemon.\n"
	        "        -f <file|dir> loads a configuration file or every *.cfg of a directory\n"
	        "        -p writes pids of all children to this file\n"
	        "        -c checks the configuration and exits\n"
	        "        -cc <expr> evaluates a condition: exit 0 if true, 1 if false, 2 on error\n"
	        "        -q quiet mode : don't display messages\n"
	        "        -W master-worker mode ; -Ws the same, with systemd notifications\n"
	        "        -S <bind>[,<opts>] master CLI socket (with -W)\n"
	        "        -sf/-st [pid ]* stops (soft / hard) these pids once started\n",
	        prog);
	exit(1);
}

/* ---- signals ---- */

static volatile sig_atomic_t hard_stop_sig;   /* leak check pending (sanitizers) */

static void on_hard_stop(int sig)
{
	if (pidfile_path)
		unlink(pidfile_path);
	if (LEAK_CHECK_ON_STOP && !hard_stop_sig) {
		hard_stop_sig = sig;   /* main() checks, then re-raises it */
		atomic_store(&global.hard_stop, 1);
		threads_wake_all();
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* After a hard stop in a sanitizer build: the leak check a death by signal
 * would skip, then that death. */
static void leak_check_then_die(void)
{
#if LEAK_CHECK_ON_STOP
	int sig = hard_stop_sig;

	if (!sig)
		return;
	__lsan_do_leak_check();   /* exits with LeakSanitizer's code on a leak */
	signal(sig, SIG_DFL);
	raise(sig);
#endif
}

static volatile sig_atomic_t soft_stop_requested;

static void on_soft_stop(int sig)
{
	soft_stop_requested = 1;
	threads_wake_all();
}

/* Thread 1's watcher: starts the soft stop on SIGUSR1 and ends the process
 * when no session is left. */
/* hard-stop-after is reached: what HAProxy 2.6 says, then everything
 * closes (the threads leave their loops, the connections go with the
 * process). */
static void hard_stop_now(void)
{
	struct list *pos, *tmp;

	if (!global.quiet) {
		fprintf(stderr, "%-10s (%d) : soft-stop running for too long, performing a "
		        "hard-stop.\n", "[WARNING]", global.pid);
		list_for_each_safe(pos, tmp, &proxies) {
			struct proxy *px = list_elem(pos, struct proxy, list);
			int n = atomic_load(&px->feconn);

			if ((px->cap & PX_CAP_FE) && n > 0)
				fprintf(stderr, "%-10s (%d) : Proxy %s hard-stopped (%d remaining "
				        "conns will be closed).\n", "[WARNING]", global.pid, px->name, n);
		}
	}
	atomic_store(&global.hard_stop, 1);
	threads_wake_all();
}

static struct task *stop_watch(struct task *t, void *ctx, unsigned int state)
{
	static uint64_t stop_start;
	static int listeners_stopped;

	if (soft_stop_requested && !atomic_load(&global.stopping)) {
		stop_start = th_ctx->now_ms;
		atomic_store(&global.stop_ms, stop_start);
		atomic_store(&global.stopping, 1);
	}
	/* `grace`: stopping (the `stopping` fetch says so) but still
	 * accepting for that long, then the real soft stop */
	if (atomic_load(&global.stopping) && !listeners_stopped &&
	    th_ctx->now_ms - stop_start >= (uint64_t)global.grace_ms) {
		listeners_stopped = 1;
		listeners_soft_stop();
	}
	if (listeners_stopped && listeners_soft_stop_done() &&
	    atomic_load(&global.actconn) == 0) {
		atomic_store(&global.hard_stop, 1);
		threads_wake_all();
		return t;
	}
	if (atomic_load(&global.stopping) && global.hard_stop_after &&
	    th_ctx->now_ms - stop_start >= (uint64_t)global.hard_stop_after) {
		hard_stop_now();
		return t;
	}
	pool_maybe_trim(th_ctx->now_ms);
	task_set_expire(t, th_ctx->now_ms + (atomic_load(&global.stopping) ?
	                (global.hard_stop_after && global.hard_stop_after < 100 ?
	                 (uint64_t)global.hard_stop_after :
	                 !listeners_stopped && global.grace_ms < 100 ? (uint64_t)global.grace_ms + 1 :
	                 100) : 250));
	return t;
}

static struct task *stop_watch_task;

static int stop_watch_init(int tid)
{
	if (pool_init_thread(tid) < 0)
		return -1;
	if (tid != 0)
		return 0;
	stop_watch_task = task_new(stop_watch, NULL, 0, TC_BULK, "stop_watch");
	if (!stop_watch_task)
		return -1;
	task_set_expire(stop_watch_task, th_ctx->now_ms + 250);
	return 0;
}

/* Whichever way the loops ended (a hard stop leaves the task with no
 * timer and in no queue), the task goes with its thread. */
static void stop_watch_deinit(int tid)
{
	if (tid == 0 && stop_watch_task) {
		task_destroy(stop_watch_task);
		stop_watch_task = NULL;
	}
}

static struct thread_init_hook stop_watch_hook = { .fn = stop_watch_init,
                                                   .deinit = stop_watch_deinit };

static void setup_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_hard_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_soft_stop;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* ---- start-up ---- */

static int count_log_targets(void)
{
	struct list *pos, *tmp, *lpos, *ltmp;
	int n = 0;

	list_for_each_safe(lpos, ltmp, &global.logs)
		n++;
	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		list_for_each_safe(lpos, ltmp, &px->logs)
			n++;
	}
	return n;
}

/* maxconn, maxsock and ulimit-n by HAProxy 2.6's rules (fd_budget.c), then
 * the soft descriptor limit. Returns -1 if the process must not start. */
static int setup_limits(void)
{
	struct rlimit rl = { 1024, 1024 };
	struct fd_limits fl = { 0 };

	getrlimit(RLIMIT_NOFILE, &rl);
	fl.boot_cur = rl.rlim_cur == RLIM_INFINITY ? -1 : (long)rl.rlim_cur;
	fl.boot_max = rl.rlim_max == RLIM_INFINITY ? -1 : (long)rl.rlim_max;
	fl.fd_hard_limit = global.fd_hard_limit;
	fl.ulimit_n = global.rlimit_nofile;
	fl.maxconn = global.maxconn;
	fl.nbthread = global.nbthread;
	fl.listen_fds = listeners_count_sockets();
	fl.log_fds = count_log_targets();
	fl.check_fds = check_count();
	/* as HAProxy: CLI connections count only where a stats socket is */
	fl.stats_maxconn = list_empty(&cli_binds) ? 0 : global.stats_maxconn;
	fl.pool_low_ratio = global.pool_low_ratio;
	fl.pool_high_ratio = global.pool_high_ratio;
	fd_limits_compute(&fl);
	global.maxconn = fl.maxconn;
	global.maxsock = fl.maxsock;
	global.pool_low_count = fl.pool_low_count;
	global.pool_high_count = fl.pool_high_count;
	if (fl.maxconn_derived && global.debug)
		fprintf(stderr, "Note: setting global.maxconn to %d.\n", global.maxconn);
	if (fd_limits_apply(&fl) < 0)
		return -1;
	if (global.rlimit_nofile < global.maxsock && fl.ulimit_n > 0 && !global.quiet)
		fprintf(stderr, "[WARNING] ulimit-n %ld is below the %d descriptors that maxconn "
		        "%d needs (maxsock): connections will fail when they run out.\n",
		        global.rlimit_nofile, global.maxsock, global.maxconn);
	atomic_store(&global.maxconn_rt, global.maxconn);
	return 0;
}

static int write_pidfile(const char *path, int pid)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "[ALERT] cannot create pidfile %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "%d\n", pid);
	fclose(f);
	return 0;
}

static int open_log_targets(void)
{
	struct list *pos, *tmp, *lpos, *ltmp;
	char err[256];
	int errors = 0;

	list_for_each_safe(lpos, ltmp, &global.logs) {
		struct log_target *t = list_elem(lpos, struct log_target, list);

		if (log_target_open(t, err, sizeof(err)) < 0) {
			cfg_alert(t->conf_file, t->conf_line, "log: %s", err);
			errors++;
		}
	}
	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		list_for_each_safe(lpos, ltmp, &px->logs) {
			struct log_target *t = list_elem(lpos, struct log_target, list);

			if (log_target_open(t, err, sizeof(err)) < 0) {
				cfg_alert(t->conf_file, t->conf_line, "log: %s", err);
				errors++;
			}
		}
	}
	return errors;
}

static void daemonize(void)
{
	pid_t pid = fork();

	if (pid < 0) {
		fprintf(stderr, "[ALERT] cannot fork: %s\n", strerror(errno));
		exit(1);
	}
	if (pid > 0)
		_exit(0);
	setsid();
	int fd = open("/dev/null", O_RDWR);

	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
}

int main(int argc, char **argv)
{
	const char *cfg_files[MAX_CFG_FILES];
	int ncfg = 0, errors = 0;
	const char *cond_expr = NULL;
	const char *pidfile = NULL;
	int check_only = 0, daemon_opt = 0;
	struct master_opts mopts = { .nmcli = 0 };
	int old_pids[MAX_OLD_PIDS], nold_pids = 0, old_sig = 0;
	const char *xsock = NULL;   /* -x: the old process's stats socket */

	mworker_child_detect();   /* started by a master: a worker */

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-f") && i + 1 < argc) {
			if (ncfg == MAX_CFG_FILES) {
				fprintf(stderr, "[ALERT] too many -f options (max %d).\n", MAX_CFG_FILES);
				return 1;
			}
			cfg_files[ncfg++] = argv[++i];
		} else if (!strcmp(a, "-c")) {
			check_only = 1;
		} else if (!strcmp(a, "-cc") && i + 1 < argc) {
			cond_expr = argv[++i];
		} else if (!strcmp(a, "-dD")) {
			global.debug = global.diag = 1;
		} else if (!strcmp(a, "-dW")) {
			global.zero_warning = 1;   /* as `zero-warning` */
		} else if (!strcmp(a, "-d") || !strncmp(a, "-dV", 3)) {
			global.debug = 1;
		} else if (!strcmp(a, "-D")) {
			daemon_opt = 1;
		} else if (!strcmp(a, "-p") && i + 1 < argc) {
			pidfile = argv[++i];
		} else if (!strcmp(a, "-L") && i + 1 < argc) {
			/* the local peer name (peers sections): stored */
			free(global.localpeer);
			global.localpeer = strdup(argv[++i]);
			global.localpeer_cmdline = 1;
		} else if (!strcmp(a, "-q")) {
			global.quiet = 1;
		} else if (!strcmp(a, "-v") || !strcmp(a, "-V")) {
			print_version(0);
			return 0;
		} else if (!strcmp(a, "-vv")) {
			print_version(1);
			return 0;
		} else if (!strcmp(a, "-W")) {
			global.master_worker = 1;
		} else if (!strcmp(a, "-Ws")) {
			global.master_worker = 1;
			global.systemd_notify = 1;
		} else if (!strcmp(a, "-S") && i + 1 < argc) {
			if (mopts.nmcli == (int)(sizeof(mopts.mcli) / sizeof(mopts.mcli[0]))) {
				fprintf(stderr, "[ALERT] too many -S options.\n");
				return 1;
			}
			mopts.mcli[mopts.nmcli++] = argv[++i];
		} else if (!strcmp(a, "-sf") || !strcmp(a, "-st")) {
			/* the pids that follow, up to the next option */
			old_sig = a[2] == 'f' ? SIGUSR1 : SIGTERM;
			while (i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9') {
				long pid = strtol(argv[++i], NULL, 10);

				if (nold_pids < MAX_OLD_PIDS && pid > 0)
					old_pids[nold_pids++] = (int)pid;
			}
		} else if (!strcmp(a, "-x") && i + 1 < argc) {
			xsock = argv[++i];
		} else if (!strcmp(a, "--")) {
			while (++i < argc && ncfg < MAX_CFG_FILES)
				cfg_files[ncfg++] = argv[i];
		} else {
			fprintf(stderr, "[ALERT] unknown option '%s'.\n", a);
			usage(argv[0]);
		}
	}

	if (cond_expr) {
		char err[256];
		int r = cfg_cond_eval_str(cond_expr, err, sizeof(err));

		if (r < 0) {
			fprintf(stderr, "[ALERT] failed to evaluate condition: %s\n", err);
			return 2;
		}
		return r ? 0 : 1;
	}
	if (!ncfg)
		usage(argv[0]);
	/* -c wins over -D whatever their order: checking never starts anything */
	global.mode = check_only ? MODE_CHECK : daemon_opt ? MODE_DAEMON : MODE_FOREGROUND;

	global.pid = getpid();
	startlog_begin();   /* kept for `show startup-logs` */
	for (int i = 0; i < ncfg; i++)
		errors += cfg_parse_path(cfg_files[i]);
	/* known before the post-parse hooks: lua-load-per-thread makes a Lua
	 * state per thread there */
	if (!global.nbthread)
		global.nbthread = default_nbthread();
	if (!errors)
		errors += cfg_postparse();
	if (errors) {
		fprintf(stderr, "[ALERT] Fatal errors found in configuration.\n");
		return 1;
	}
	if (global.zero_warning && cfg_warning_count()) {
		fprintf(stderr, "[ALERT] Some warnings were found and 'zero-warning' is set. "
		        "Aborting.\n");
		return 1;
	}
	if (global.mode == MODE_CHECK) {
		if (!global.quiet)
			printf("Configuration file is valid\n");
		return 0;
	}
	if (global.daemon && global.mode != MODE_CHECK && !global.debug)
		global.mode = MODE_DAEMON;
	if (global.mworker_child) {
		/* the master daemonized, holds the pid file and the -S sockets */
		global.mode = MODE_FOREGROUND;
		pidfile = NULL;
		free(global.pidfile);
		global.pidfile = NULL;
	} else if (global.master_worker) {
		mopts.pidfile = pidfile ? pidfile : global.pidfile;
		mopts.daemon = global.mode == MODE_DAEMON;
		master_run(argv, &mopts);
	}

	if (setup_limits() < 0)
		return 1;
	global.start_ms = clock_mono_ms();
	global.start_wall = time(NULL);
	if (!global.node) {
		char host[256] = "";

		gethostname(host, sizeof(host) - 1);
		global.node = strdup(host);
	}
	if (!global.localpeer)
		global.localpeer = strdup(global.node ? global.node : "");
	if (threads_prepare() < 0) {
		fprintf(stderr, "[ALERT] cannot create thread contexts: %s\n", strerror(errno));
		return 1;
	}
	if (global.mworker_child && mworker_child_recv_listeners() < 0) {
		fprintf(stderr, "[ALERT] cannot read the listening sockets from the master.\n");
		return 1;
	}
	if (xsock && !global.mworker_child) {
		char err[300];

		/* as HAProxy: without the old sockets, bind new ones */
		if (mworker_fetch_sockets(xsock, err, sizeof(err)) < 0 && !global.quiet)
			fprintf(stderr, "[WARNING] -x: %s; binding new sockets.\n", err);
	}
	if (listeners_bind_all() || open_log_targets()) {
		fprintf(stderr, "[ALERT] Fatal errors found in configuration.\n");
		return 1;
	}
	setup_signals();
	if (global.mode == MODE_DAEMON)
		daemonize();
	global.pid = getpid();
	if (!pidfile)
		pidfile = global.pidfile;
	if (pidfile) {
		if (write_pidfile(pidfile, global.pid) < 0)
			return 1;
		pidfile_path = pidfile;
	}
	mworker_close_untaken();   /* -x: what the configuration no longer binds */
	if (global.mworker_child && mworker_child_ready() < 0) {
		fprintf(stderr, "[ALERT] cannot reach the master.\n");
		return 1;
	}
	/* -sf / -st: the old processes go once this one listens */
	for (int i = 0; i < nold_pids; i++)
		kill(old_pids[i], old_sig);
	thread_register_init(&stop_watch_hook);
	/* everything sluice holds outside connections is open now */
	fd_budget_start(global.maxsock - 2 * global.maxconn);
	startlog_end();
	threads_run();
	if (pidfile_path)
		unlink(pidfile_path);
	leak_check_then_die();
	return 0;
}
