/* Process-wide settings and counters: the one `global` structure.
 *
 * Settings are written only while the configuration is parsed (single thread,
 * before any worker starts) and are read-only afterwards, except the fields
 * marked "atomic" or "runtime" which the CLI or the workers may change.
 */
#ifndef SLUICE_CORE_GLOBAL_H
#define SLUICE_CORE_GLOBAL_H

#include <stdatomic.h>
#include <stdint.h>
#include <sluice/core/freq.h>
#include <sluice/core/list.h>

#define SLUICE_VERSION      "0.1.0"
#define SLUICE_CFG_LEVEL    "2.6"     /* HAProxy configuration-language level */
#define MAX_THREADS         64

enum run_mode {
	MODE_FOREGROUND = 0,
	MODE_DAEMON,
	MODE_CHECK,             /* -c: parse and exit */
};

struct global {
	/* settings (config time) */
	int nbthread;
	int maxconn;            /* hard maxconn: configured or derived (fd_budget.c) */
	/* descriptor limits (src/core/fd_budget.c), final once start-up is over */
	long fd_hard_limit;     /* fd-hard-limit, 0 = none */
	long rlimit_nofile;     /* ulimit-n: configured (0 = derived), then the
	                         * soft RLIMIT_NOFILE in force */
	int maxsock;            /* descriptors the configuration may need */
	int strict_limits;      /* strict-limits: refuse to start when the limit
	                         * cannot be set (default on) */
	int stats_maxconn;      /* stats maxconn: CLI connections at once */
	int pool_low_ratio;     /* tune.pool-low-fd-ratio (percent of maxsock) */
	int pool_high_ratio;    /* tune.pool-high-fd-ratio */
	int pool_low_count;     /* the same, in descriptors */
	int pool_high_count;
	int daemon;
	char *pidfile;
	int bufsize;            /* tune.bufsize */
	int maxrewrite;         /* tune.maxrewrite (global_tune.c) */
	int http_maxhdr;        /* tune.http.maxhdr */
	int http_cookielen;     /* tune.http.cookielen */
	int http_logurilen;     /* tune.http.logurilen */
	int noreuseport;        /* noreuseport: one listening socket for all threads */
	int maxconnrate;        /* maxconnrate: connections accepted per second, 0: any */
	int maxsessrate;        /* maxsessrate */
	int pp2_never_send_local;  /* checks send PROXY v2 with their addresses,
	                        * not LOCAL (pp2-never-send-local) */
	int zero_warning;       /* zero-warning, -dW: a warning is fatal */
	int no_memory_trimming; /* no-memory-trimming: never malloc_trim() */
	int maxpollevents;      /* tune.maxpollevents */
	int runqueue_depth;     /* tune.runqueue-depth */
	int maxaccept;          /* tune.maxaccept */
	int stats_timeout_ms;   /* stats timeout */
	int spread_checks;      /* spread-checks: +/- percent of noise on check intervals */
	int wdt_disabled;       /* no watchdog */
	int debug;              /* -d */
	int quiet;              /* -q */
	int diag;               /* -dD: diagnostic messages (.diag) */
	enum run_mode mode;
	struct list logs;       /* struct log_target, from `log` lines */
	char *node;             /* node name (hostname by default) */
	char *desc;             /* `description` (show info), or NULL */
	int hard_stop_after;    /* ms a soft stop may last, 0: no limit */
	int grace_ms;           /* `grace`: ms between the stop signal and the soft stop */
	char *log_tag;          /* `log-tag`: the syslog tag, NULL: "sluice" */
	char *log_send_hostname; /* `log-send-hostname`: the syslog header's host, or NULL */
	int rcvbuf_cli, sndbuf_cli;   /* tune.rcvbuf|sndbuf.client, 0: the kernel's */
	int rcvbuf_srv, sndbuf_srv;   /* tune.rcvbuf|sndbuf.server */
	char *localpeer;        /* this instance's peer name (-L, `localpeer`; the
	                         * hostname by default), for peers sections: stored,
	                         * nothing uses it yet */
	int comp_maxlevel;      /* tune.comp.maxlevel: zlib level (1..9) */
	int comp_maxrate;       /* maxcomprate (kB/s, 0: none) */
	int comp_maxcpu;        /* maxcompcpuusage (percent): accepted, not enforced */
	int localpeer_cmdline;  /* -L given: `localpeer` is ignored, as HAProxy */
	/* master-worker (src/mgmt/master.c, src/mgmt/mworker.c) */
	int master_worker;      /* -W or `master-worker`: a master supervises workers */
	int mworker_no_exit_on_failure; /* `master-worker no-exit-on-failure` */
	int mworker_max_reloads; /* `mworker-max-reloads`, -1: no limit */
	int mworker_child;      /* this process is a worker started by a master */
	int systemd_notify;     /* -Ws: sd_notify the master's states */

	/* runtime */
	_Atomic int maxconn_rt; /* effective maxconn; `set maxconn global` */
	_Atomic int actconn;    /* current client connections, all frontends */
	_Atomic int cli_conns;  /* current CLI connections (stats maxconn) */
	_Atomic int fd_used;    /* descriptors held now (fd_budget.h) */
	_Atomic uint64_t cum_conns;
	struct freq_ctr conn_rate;      /* connections accepted per second (show info) */
	_Atomic uint32_t conn_rate_max;
	_Atomic uint64_t cum_sess;
	_Atomic uint64_t cum_req;      /* HTTP requests (show info CumReq) */
	_Atomic uint64_t dropped_logs;
	_Atomic int stopping;   /* soft stop in progress */
	_Atomic uint64_t stop_ms; /* when it began (monotonic ms, the threads' clock) */
	struct freq_ctr comp_rate;      /* bytes given to compressors per second
	                                 * (maxcomprate, src/http/comp.c) */
	_Atomic int hard_stop;  /* leave the loops now */
	uint64_t start_ms;      /* monotonic ms at start */
	int64_t start_wall;     /* time(NULL) at start */
	int pid;
};

extern struct global global;

/* Build features, as "+NAME" words (the same list `-vv` prints and the
 * `feature()` condition looks into). */
extern const char sluice_build_features[];

int build_has_feature(const char *name);

#endif
