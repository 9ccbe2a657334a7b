/* Proxies: frontends, backends, listen sections and defaults. Settings are
 * written while parsing and read-only afterwards; runtime fields say what
 * protects them. */
#ifndef SLUICE_PROXY_PROXY_H
#define SLUICE_PROXY_PROXY_H

#include <stdatomic.h>
#include <stdint.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/list.h>
#include <sluice/core/lock.h>
#include <sluice/core/log.h>
#include <sluice/net/addr.h>
#include <sluice/proxy/counters.h>
#include <sluice/proxy/queue.h>

struct server;
struct listener;

enum px_mode { PX_MODE_TCP = 0, PX_MODE_HTTP };

#define PX_CAP_FE   0x01
#define PX_CAP_BE   0x02
#define PX_CAP_DEF  0x04

#define PX_O_REDISPATCH   0x0001
#define PX_O_TCPLOG       0x0002
#define PX_O_DONTLOGNULL  0x0004
#define PX_O_ALLBACKUPS   0x0008
#define PX_O_LOG_GLOBAL   0x0010   /* `log global` */
#define PX_O_HTTPLOG      0x0020

enum lb_algo {
	LB_ROUNDROBIN = 0,
	LB_STATIC_RR,
	LB_LEASTCONN,
	LB_FIRST,
	LB_SOURCE,
	LB_RANDOM,
};

struct bind_conf {
	struct list list;           /* in proxy->binds */
	struct proxy *fe;
	char *file;
	int line;
	char *addr_str;
	struct sl_addr addr;
	char *name;
	int backlog;
	int maxconn;                /* 0 = frontend's */
	int accept_proxy;
	int v4v6;                   /* IPv6 socket also accepts IPv4 */
	int v6only;                 /* IPv6 only (wins over v4v6) */
	uint64_t thread_mask;       /* bit i: thread i+1 may accept; 0 = all */
	struct listener *lst;
	/* stats socket binds: the CLI takes the connections */
	int is_cli;
	int cli_level;
	int mode_perm;              /* `mode 600` for unix sockets, -1 if unset */
};

struct use_backend_rule {
	struct list list;
	char *name;
	struct proxy *be;
	char *file;
	int line;
};

struct proxy {
	struct list list;           /* all proxies, in declaration order */
	char *name;
	int uuid;
	unsigned int cap;           /* PX_CAP_* */
	enum px_mode mode;
	char *conf_file;
	int conf_line;
	int disabled;

	/* settings inherited from a defaults section */
	int timeout_client, timeout_server, timeout_connect, timeout_queue;
	int timeout_tunnel, timeout_client_fin, timeout_server_fin;
	int retries;
	int redispatch_interval;    /* option redispatch <interval>, default -1 */
	unsigned int options;       /* PX_O_* */
	int maxconn;                /* frontend: max concurrent sessions */
	int fullconn;
	enum lb_algo lb_algo;
	int random_draws;
	struct list logs;           /* struct log_target */
	char *log_format;           /* NULL: built-in for the mode/options */
	struct lf_expr logfmt;
	struct server *defsrv;      /* default-server settings */

	/* frontend */
	struct list binds;          /* struct bind_conf */
	char *defbe_name;
	char *defbe_file;
	int defbe_line;
	struct proxy *defbe;
	struct list use_backends;   /* struct use_backend_rule */
	_Atomic int feconn;
	_Atomic int fe_maxconn_rt;  /* runtime: set maxconn frontend */
	struct counters fe_cnt;

	/* backend */
	struct server **srv;
	int nsrv;
	struct sl_lock lb_lock;     /* protects servers' lb_* fields (kind lb) */
	struct queue queue;         /* backend queue: any server may serve */
	_Atomic int beconn;
	struct counters be_cnt;
	struct time_avgs be_times;  /* qtime/ctime/ttime of its sessions (atomics) */
	uint32_t lb_rr_static_next; /* static-rr position (lb_lock) */
	struct server *lb_last;     /* leastconn tie rotation (lb_lock) */

	struct proxy *defaults;     /* the defaults it inherited */
};

extern struct list proxies;     /* every proxy, defaults excluded */

/* Called by the parser on a section line. Returns the proxy, or NULL with
 * a message in <err>. */
struct proxy *proxy_cfg_begin(struct cfg_ctx *ctx, enum cfg_section sec,
                              char **args, int nargs, char *err, size_t errlen);
void proxy_cfg_end(struct cfg_ctx *ctx);

/* Creates one bind_conf per comma-separated address of <addrs> into <out>
 * (for `bind` lines and `stats socket`), then parses the options of such a
 * line from args[first]. Both return 0 or -1 with a message. */
int bind_conf_create(struct proxy *fe, const char *addrs, const char *file, int line,
                     int is_cli, struct list *out, char *err, size_t errlen);
int bind_parse_options(struct bind_conf *bc, char **args, int nargs, int first,
                       char *err, size_t errlen);

struct proxy *proxy_find(const char *name, unsigned int cap);
struct server *server_find(const struct proxy *be, const char *name);

/* Current frontend limit (runtime value if set). */
int  proxy_fe_maxconn(const struct proxy *fe);
const char *proxy_mode_name(enum px_mode m);

#endif
