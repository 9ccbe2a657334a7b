/* Health checks: the `check` family of server options, `spread-checks`,
 * and the checks themselves, run as tasks on the thread schedulers.
 *
 * Threads and ownership
 * ---------------------
 * - Each checked server has one check (struct srv_check), allocated after
 *   parsing, and numbered in configuration order. Check n lives on thread
 *   n % nbthread: that thread's init hook creates its task, and from then
 *   on only that thread touches the check's task, connection, buffers and
 *   dates. Other threads only read `running` (show stat's "* ") and set
 *   `wake_now` before waking the task (a server leaving maintenance).
 * - A check's result goes to srv_check_done() (srv_state.c), which records
 *   it under the backend's state_lock and changes the server's state;
 *   balancers read that state without lock.
 * - A check is a task like a stream's: a non-blocking connect through the
 *   connection layer, registered in its thread's poller, woken by I/O or by
 *   its timer. Each run does a bounded amount of work: a connect, one send
 *   of a request smaller than a buffer, at most CHK_READS_PER_RUN reads of
 *   a buffer-sized reply, then it yields. Between two checks a check holds
 *   no descriptor and no buffer, so 1000 checked servers cost 1000 idle
 *   tasks in the timer heaps.
 * - First checks are spread: check n starts n/N of the smallest first
 *   interval after the start (N checks), so the first round never comes at
 *   once. Then each check starts an interval after the previous start
 *   (missed dates skipped), with the `spread-checks` noise.
 *
 * Timeouts, as HAProxy 2.6's manual says: without `timeout check`, the
 * whole check (connect and reply) is bounded by `inter`; with it, the
 * connect by min(`timeout connect`, `inter`), then the rest by `timeout
 * check`.
 */
#include <errno.h>
#include <stdio.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/clock.h>
#include <sluice/core/global.h>
#include <sluice/core/sched.h>
#include <sluice/core/thread.h>
#include <sluice/net/addr.h>
#include <sluice/net/conn.h>
#include <sluice/net/proxy_proto.h>
#include <sluice/net/ssl_conf.h>
#include <sluice/net/tls.h>
#include <sluice/proxy/check.h>
#include <sluice/proxy/check_agent.h>
#include <sluice/proxy/check_h2.h>
#include <sluice/proxy/check_http.h>
#include <sluice/proxy/check_tcp.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/queue.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_dyn.h>
#include <sluice/proxy/srv_state.h>

#define CHK_READS_PER_RUN  4

enum chk_phase {
	CHK_IDLE = 0,        /* waiting for the next check */
	CHK_CONNECTING,
	CHK_SENDING,         /* PROXY header, request */
	CHK_READING,         /* the reply */
	CHK_TCP,             /* tcp-check steps (check_tcp.c) */
};

struct srv_check {
	struct server *srv;
	int idx;                       /* among the checks, in configuration order */
	int first_ms;                  /* delay of the first check after the start */
	struct sockaddr_storage dst;   /* where it connects */
	socklen_t dstlen;
	int send_proxy;                /* 0, 1 or 2: PROXY header version */
	const struct hchk_rules *http; /* NULL: a layer-4 check */
	const struct tchk_rules *tcp;  /* tcp-check steps, or NULL */
	_Atomic(struct task *) task;   /* set by its thread's init hook */
	_Atomic int running;           /* a check is in progress (display) */
	_Atomic int wake_now;          /* run at once (another thread asks) */
	_Atomic uint64_t wake_at;      /* run by then (another thread asks), 0: no */
	/* owner thread only */
	enum chk_phase phase;
	uint64_t next_ms;              /* date of the next check */
	uint64_t start_ms;
	uint64_t conn_deadline;        /* the connect must be done by then */
	uint64_t deadline;             /* the whole check must be */
	struct conn c;
	struct buffer tx, rx;
	struct hchk_reply reply;
	int use_h2;                    /* an HTTP check of a `proto h2` server */
	int use_ssl;                   /* over TLS (check-ssl, or the server's ssl) */
	int h2_now;                    /* this run speaks HTTP/2 (use_h2, or ALPN) */
	struct chk_h2 *h2;             /* its HTTP/2 session during a check */
	struct buffer raw;             /* HTTP/2: the server's bytes, before the
	                                * session turns the reply into rx */
	int is_agent;                  /* an agent check (agent-check) */
	int tid;                       /* the thread that runs it */
	int step;                      /* tcp-check: the step running */
	int step_sent;                 /* its send step's bytes are in tx */
};

static int kw_spread_checks(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_max_spread_checks(struct cfg_ctx *, char **, int, char *, size_t);

/* max-spread-checks: the first checks spread over at most this (ms, 0: no bound) */
static int max_spread_ms;

static const struct cfg_kw check_kws[] = {
	{ "spread-checks", NULL, CFG_SEC_GLOBAL, kw_spread_checks },
	{ "max-spread-checks", NULL, CFG_SEC_GLOBAL, kw_max_spread_checks },
	{ NULL }
};
CFG_REGISTER(check_kws)

/* ---- statuses and health (pure) ---- */

static const struct {
	const char *info, *desc;
	int result;
} chk_statuses[CHK_ST_COUNT] = {
	[CHK_ST_UNKNOWN] = { "UNK", "Unknown", CHK_RES_UNKNOWN },
	[CHK_ST_INI]     = { "INI", "Initializing", CHK_RES_UNKNOWN },
	[CHK_ST_START]   = { "", "", CHK_RES_UNKNOWN },
	[CHK_ST_CHECKED] = { "CHECKED", "No status change", CHK_RES_NEUTRAL },
	[CHK_ST_HANA]    = { "HANA", "Health analyze", CHK_RES_FAILED },
	[CHK_ST_SOCKERR] = { "SOCKERR", "Socket error", CHK_RES_FAILED },
	[CHK_ST_L4OK]    = { "L4OK", "Layer4 check passed", CHK_RES_PASSED },
	[CHK_ST_L4TOUT]  = { "L4TOUT", "Layer4 timeout", CHK_RES_FAILED },
	[CHK_ST_L4CON]   = { "L4CON", "Layer4 connection problem", CHK_RES_FAILED },
	[CHK_ST_L6OK]    = { "L6OK", "Layer6 check passed", CHK_RES_PASSED },
	[CHK_ST_L6TOUT]  = { "L6TOUT", "Layer6 timeout", CHK_RES_FAILED },
	[CHK_ST_L6RSP]   = { "L6RSP", "Layer6 invalid response", CHK_RES_FAILED },
	[CHK_ST_L7TOUT]  = { "L7TOUT", "Layer7 timeout", CHK_RES_FAILED },
	[CHK_ST_L7RSP]   = { "L7RSP", "Layer7 invalid response", CHK_RES_FAILED },
	[CHK_ST_L57DATA] = { "", "", CHK_RES_UNKNOWN },
	[CHK_ST_L7OK]    = { "L7OK", "Layer7 check passed", CHK_RES_PASSED },
	[CHK_ST_L7OKC]   = { "L7OKC", "Layer7 check conditionally passed", CHK_RES_CONDPASS },
	[CHK_ST_L7STS]   = { "L7STS", "Layer7 wrong status", CHK_RES_FAILED },
};

const char *chk_status_info(int status)
{
	if (status < 0 || status >= CHK_ST_COUNT || !*chk_statuses[status].info)
		return chk_statuses[CHK_ST_UNKNOWN].info;
	return chk_statuses[status].info;
}

const char *chk_status_desc(int status)
{
	if (status < 0 || status >= CHK_ST_COUNT || !*chk_statuses[status].desc)
		return chk_statuses[CHK_ST_UNKNOWN].desc;
	return chk_statuses[status].desc;
}

int chk_status_result(int status)
{
	return status < 0 || status >= CHK_ST_COUNT ? CHK_RES_UNKNOWN : chk_statuses[status].result;
}

int chk_health_apply(struct chk_health *h, int result)
{
	int full = h->rise + h->fall - 1;

	switch (result) {
	case CHK_RES_FAILED:
		if (h->health <= 0)
			return 0;
		h->health--;
		if (h->health < h->rise)
			h->health = 0;
		return 1;
	case CHK_RES_PASSED:
	case CHK_RES_CONDPASS:
		if (h->health >= full)
			return 0;
		h->health++;
		if (h->health >= h->rise)
			h->health = full;
		return 1;
	default:
		return 0;
	}
}

void chk_status_column(char *buf, size_t len, int admin, int checked, int op,
                       const struct chk_health *h)
{
	if (admin == SRV_ADMIN_MAINT) {
		snprintf(buf, len, "MAINT");
	} else if (op == SRV_OP_NOLB) {
		/* soft-stopped by a 404: drain does not show over it */
		if (chk_health_full(h))
			snprintf(buf, len, "NOLB");
		else
			snprintf(buf, len, "NOLB %d/%d", h->health - h->rise + 1, h->fall);
	} else if (op == SRV_OP_DOWN) {
		/* a stopped server in transition counts its successes */
		if (checked && h->health > 0)
			snprintf(buf, len, "DOWN %d/%d", h->health, h->rise);
		else
			snprintf(buf, len, "DOWN");
	} else if (checked && !chk_health_full(h)) {
		snprintf(buf, len, "%s %d/%d", admin == SRV_ADMIN_DRAIN ? "DRAIN" : "UP",
		         h->health - h->rise + 1, h->fall);
	} else {
		snprintf(buf, len, "%s", admin == SRV_ADMIN_DRAIN ? "DRAIN" : checked ? "UP" :
		         "no check");
	}
}

/* ---- configuration ---- */

static int parse_time_opt(const char *o, const char *v, int *out, char *err, size_t errlen)
{
	int ms;

	if (cfg_parse_time_ms(v, &ms, err, errlen) < 0)
		return -1;
	if (ms <= 0) {
		snprintf(err, errlen, "'%s' has to be > 0.", o);
		return -1;
	}
	*out = ms;
	return 0;
}

/* agent-port, agent-inter, agent-addr, agent-send (HAProxy's messages). */
static int agent_parse_opt(struct check_conf *c, char **args, int nargs, int *i,
                           char *err, size_t errlen)
{
	const char *o = args[*i], *v;
	static const char *const what[] = { "a port number", "a delay", "an address", "a string" };
	static const char *const names[] = { "agent-port", "agent-inter", "agent-addr",
	                                     "agent-send" };
	int k;
	long n;

	for (k = 0; k < 4 && strcmp(o, names[k]); k++)
		;
	if (k == 4)
		return 0;
	if (*i + 1 >= nargs) {
		snprintf(err, errlen, "'%s' expects %s as argument..", o, what[k]);
		return -1;
	}
	v = args[++*i];
	switch (k) {
	case 0:
		if (cfg_parse_uint(v, 65535, &n, err, errlen) < 0)
			return -1;
		c->agent_port = (int)n;
		return 1;
	case 1: {
		int ms;

		if (cfg_parse_time_ms(v, &ms, err, errlen) < 0)
			return -1;
		if (ms <= 0) {
			snprintf(err, errlen, "invalid value %s for argument '%s'.", v, o);
			return -1;
		}
		c->agent_inter = ms;
		return 1;
	}
	case 2: {
		struct sl_addr a;
		char sub[128];

		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&a.ss;

		/* no port here: a bare IPv6 address is one, colons and all */
		memset(&a, 0, sizeof(a));
		if (inet_pton(AF_INET6, v, &s6->sin6_addr) == 1) {
			s6->sin6_family = AF_INET6;
			a.len = sizeof(*s6);
		} else if (addr_parse(v, &a, ADDR_O_PORT_OPTIONAL | ADDR_O_NO_FD | ADDR_O_NO_UNIX,
		                      sub, sizeof(sub)) < 0 || addr_port(&a.ss)) {
			snprintf(err, errlen, "parsing agent-addr failed. Check if '%s' is correct "
			         "address..", v);
			return -1;
		}
		c->agent_has_addr = 1;
		c->agent_addr = a.ss;
		c->agent_addrlen = a.len;
		return 1;
	}
	default:
		n = (long)strlen(v);
		if (n >= CHK_AGENT_SEND_MAX) {
			snprintf(err, errlen, "'agent-send' : the string is longer than %d bytes.",
			         CHK_AGENT_SEND_MAX - 1);
			return -1;
		}
		memcpy(c->agent_send, v, (size_t)n);
		c->agent_send_len = (size_t)n;
		return 1;
	}
}

int check_srv_parse_opt(struct check_conf *c, char **args, int nargs, int *i,
                        char *err, size_t errlen)
{
	const char *o = args[*i], *v;
	long n;

	if (!strcmp(o, "check") || !strcmp(o, "no-check")) {
		c->enabled = o[0] == 'c';
		return 1;
	}
	if (!strcmp(o, "check-send-proxy")) {
		c->send_proxy = 1;
		return 1;
	}
	if (!strcmp(o, "check-proto")) {
		static const char *const names[] = { "h1", "h2", "none", "fcgi" };

		if (*i + 1 >= nargs) {
			snprintf(err, errlen, "'check-proto' : missing value.");
			return -1;
		}
		v = args[++*i];
		for (n = 0; n < 4 && strcmp(v, names[n]); n++)
			;
		if (n == 4) {
			snprintf(err, errlen, "'check-proto' :  unknown MUX protocol '%s'.", v);
			return -1;
		}
		if (n == 3) {
			snprintf(err, errlen, "'check-proto fcgi' : FastCGI is not supported by "
			         "this version of sluice.");
			return -1;
		}
		c->proto = CHK_PROTO_H1 + (int)n;
		return 1;
	}
	if (!strcmp(o, "agent-check") || !strcmp(o, "no-agent-check")) {
		c->agent = o[0] == 'a';
		return 1;
	}
	if (!strncmp(o, "agent-", 6))
		return agent_parse_opt(c, args, nargs, i, err, errlen);
	if (strcmp(o, "inter") && strcmp(o, "fastinter") && strcmp(o, "downinter") &&
	    strcmp(o, "rise") && strcmp(o, "fall") && strcmp(o, "port") && strcmp(o, "addr"))
		return 0;
	if (*i + 1 >= nargs) {
		/* HAProxy's words */
		if (!strcmp(o, "addr"))
			snprintf(err, errlen, "'addr' expects <ipv4|ipv6> as argument.");
		else if (strstr(o, "inter"))
			snprintf(err, errlen, "'%s' expects a delay as argument.", o);
		else
			snprintf(err, errlen, "'%s' expects an integer argument.", o);
		return -1;
	}
	v = args[++*i];
	if (!strcmp(o, "inter"))
		return parse_time_opt(o, v, &c->inter, err, errlen) < 0 ? -1 : 1;
	if (!strcmp(o, "fastinter"))
		return parse_time_opt(o, v, &c->fastinter, err, errlen) < 0 ? -1 : 1;
	if (!strcmp(o, "downinter"))
		return parse_time_opt(o, v, &c->downinter, err, errlen) < 0 ? -1 : 1;
	if (!strcmp(o, "addr")) {
		struct sl_addr a;

		if (addr_parse(v, &a, ADDR_O_PORT_OPTIONAL | ADDR_O_NO_FD | ADDR_O_NO_UNIX, err,
		               errlen) < 0)
			return -1;
		c->has_addr = 1;
		c->addr = a.ss;
		c->addrlen = a.len;
		return 1;
	}
	if (cfg_parse_uint(v, !strcmp(o, "port") ? 65535 : 1000000, &n, err, errlen) < 0 ||
	    n <= 0) {
		if (strcmp(o, "port") != 0 || n <= 0)
			snprintf(err, errlen, "'%s' has to be > 0.", o);
		return -1;
	}
	if (!strcmp(o, "rise"))
		c->rise = (int)n;
	else if (!strcmp(o, "fall"))
		c->fall = (int)n;
	else
		c->port = (int)n;
	return 1;
}

/* spread-checks <0..50> */
static int kw_spread_checks(struct cfg_ctx *ctx, char **args, int nargs, char *err,
                            size_t errlen)
{
	long v;

	if (nargs != 2) {
		snprintf(err, errlen, "'%s' expects an integer argument (0..50).", args[0]);
		return -1;
	}
	if (cfg_parse_uint(args[1], 50, &v, err, errlen) < 0)
		return -1;
	global.spread_checks = (int)v;
	return 0;
}

static int kw_max_spread_checks(struct cfg_ctx *ctx, char **args, int nargs, char *err,
                                size_t errlen)
{
	if (nargs != 2) {
		snprintf(err, errlen, "'%s' expects an integer argument.", args[0]);
		return -1;
	}
	return cfg_parse_time_ms(args[1], &max_spread_ms, err, errlen);
}

int check_next_interval(const struct server *s, const struct check_state *st)
{
	const struct check_conf *c = &s->chk;

	if (chk_health_full(&st->h))
		return c->inter;
	if (st->h.health == 0 && atomic_load(&((struct server *)s)->op_state) == SRV_OP_DOWN)
		return c->downinter ? c->downinter : c->inter;
	return c->fastinter ? c->fastinter : c->inter;
}

int check_agent_interval(const struct server *s)
{
	return s->chk.agent_inter ? s->chk.agent_inter : CHK_DEF_INTER;
}

/* The interval of the check or agent <c>. */
static int check_inter(const struct srv_check *c)
{
	return c->is_agent ? check_agent_interval(c->srv) : c->srv->chk.inter;
}

/* ---- display helpers ---- */

int check_in_progress(const struct server *s)
{
	return s->check && atomic_load(&s->check->running);
}

int check_state_bits(const struct server *s)
{
	/* HAProxy's CHK_ST_CONFIGURED | CHK_ST_ENABLED, CHK_ST_PAUSED in
	 * maintenance, CHK_ST_INPROGRESS while a check runs */
	if (!s->check)
		return 0;
	if (atomic_load(&((struct server *)s)->chk_disabled))   /* not CHK_ST_ENABLED */
		return 0x02 | (atomic_load(&s->check->running) ? 0x01 : 0);
	return 0x06 | (atomic_load(&((struct server *)s)->admin) == SRV_ADMIN_MAINT ? 0x08 : 0) |
	       (atomic_load(&s->check->running) ? 0x01 : 0);
}

int check_agent_in_progress(const struct server *s)
{
	return s->agent && atomic_load(&s->agent->running);
}

void check_agent_wake_now(struct server *s)
{
	struct task *t;

	if (!s->agent)
		return;
	atomic_store(&s->agent->wake_now, 1);
	t = atomic_load(&s->agent->task);
	if (t)
		task_wakeup(t, TASK_WOKEN_MSG);
}

void check_fastinter_now(struct server *s)
{
	struct task *t;
	int fi = s->chk.fastinter ? s->chk.fastinter : s->chk.inter;

	if (!s->check)
		return;
	atomic_store(&s->check->wake_at, clock_mono_ms() + (uint64_t)fi);
	t = atomic_load(&s->check->task);
	if (t)
		task_wakeup(t, TASK_WOKEN_MSG);
}

void check_wake_now(struct server *s)
{
	struct task *t;

	if (!s->check)
		return;
	atomic_store(&s->check->wake_now, 1);
	t = atomic_load(&s->check->task);
	if (t)
		task_wakeup(t, TASK_WOKEN_MSG);
}

/* ---- one check ---- */

static uint64_t check_rand(void)
{
	static __thread uint64_t x;

	if (!x)
		x = 0x2545f4914f6cdd1dull ^ (uint64_t)(uintptr_t)&x ^ clock_mono_ns();
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

/* The date of the next check after one that started at <start>: an
 * interval later, skipping the dates already past, with spread-checks'
 * noise (HAProxy's: up to +/- spread-checks percent of the interval). */
static uint64_t next_date(struct srv_check *c, uint64_t start, uint64_t now)
{
	struct check_state st;
	int inter;
	uint64_t next;

	if (c->is_agent) {
		inter = check_agent_interval(c->srv);
	} else {
		srv_check_snapshot(c->srv, &st);
		inter = check_next_interval(c->srv, &st);
	}
	next = start + (uint64_t)inter;
	while (next <= now)
		next += (uint64_t)inter;
	if (global.spread_checks > 0) {
		int rv = inter * global.spread_checks / 100;

		if (rv > 0) {
			int64_t noise = (int64_t)(check_rand() % (uint64_t)(2 * rv + 1)) - rv;

			next = (int64_t)next + noise > (int64_t)now ? (uint64_t)((int64_t)next + noise) :
			       now + 1;
		}
	}
	return next;
}

static void check_release(struct srv_check *c)
{
	conn_close_rst(&c->c);
	if (c->tx.area)
		buf_release(&c->tx);
	if (c->rx.area)
		buf_release(&c->rx);
	if (c->raw.area)
		buf_release(&c->raw);
	chk_h2_free(c->h2);
	c->h2 = NULL;
}

/* The end of a check or agent check; <r>, an agent's reply, or NULL. */
static void check_conclude_reply(struct srv_check *c, int status, int code, const char *desc,
                                 const struct agent_reply *r)
{
	uint64_t now = th_ctx->now_ms;
	struct task *t = atomic_load(&c->task);

	check_release(c);
	c->phase = CHK_IDLE;
	atomic_store(&c->running, 0);
	if (c->is_agent)
		srv_agent_done(c->srv, status, code, desc, (int)(now - c->start_ms), r);
	else
		srv_check_done(c->srv, status, code, desc, (int)(now - c->start_ms));
	c->next_ms = next_date(c, c->start_ms, now);
	task_set_expire(t, c->next_ms);
}

static void check_conclude(struct srv_check *c, int status, int code, const char *desc)
{
	check_conclude_reply(c, status, code, desc, NULL);
}

static void check_conclude_errno(struct srv_check *c, int status, int err)
{
	check_conclude(c, status, 0, err ? strerror(err) : NULL);
}

/* http-check send-state: the request with HAProxy's X-Haproxy-Server-State
 * header at the end of its head ("UP 2/3; address=...; port=...;
 * name=be/srv; node=...; weight=3/8; scur=0/4; qcur=0"), in a new heap
 * block (*len its length), or NULL. */
static char *check_with_state(struct srv_check *c, size_t *len)
{
	const struct hchk_rules *r = c->http;
	struct server *s = c->srv;
	struct proxy *be = s->be;
	const char *end = strstr(r->req, "\r\n\r\n"), *node = global.node;
	struct check_state st;
	char hdr[512], host[64], word[32], hn[128] = "";
	int op = atomic_load(&s->op_state), tw = 0, tcur = 0, n;
	size_t at;
	char *out;

	if (!end)
		return NULL;
	at = (size_t)(end - r->req) + 2;
	srv_check_snapshot(s, &st);
	if (op == SRV_OP_DOWN)
		snprintf(word, sizeof(word), st.h.health > 0 ? "DOWN %d/%d" : "DOWN", st.h.health,
		         st.h.rise);
	else if (chk_health_full(&st.h))
		snprintf(word, sizeof(word), "%s", op == SRV_OP_NOLB ? "NOLB" : "UP");
	else
		snprintf(word, sizeof(word), "%s %d/%d", op == SRV_OP_NOLB ? "NOLB" : "UP",
		         st.h.health - st.h.rise + 1, st.h.fall);
	for (int i = 0; i < be->nsrv; i++) {
		tw += srv_lb_weight(be->srv[i]);
		tcur += atomic_load(&be->srv[i]->served);
	}
	if (!node || !*node) {
		gethostname(hn, sizeof(hn) - 1);
		node = hn;
	}
	n = snprintf(hdr, sizeof(hdr), "x-haproxy-server-state: %s; address=%s; port=%d; "
	             "name=%s/%s; node=%s; weight=%d/%d; scur=%d/%d; qcur=%d", word,
	             addr_host_str(&s->addr.ss, host, sizeof(host)), addr_port(&s->addr.ss),
	             be->name, s->name, node, srv_lb_weight(s), tw, atomic_load(&s->served), tcur,
	             atomic_load(&s->queue.len));
	if (n > 0 && (size_t)n < sizeof(hdr) - 32 && srv_throttle(s) < 100)
		n += snprintf(hdr + n, sizeof(hdr) - (size_t)n, "; throttle=%d%%", srv_throttle(s));
	if (n < 0 || (size_t)n >= sizeof(hdr) - 2)
		return NULL;
	memcpy(hdr + n, "\r\n", 2);
	n += 2;
	out = malloc(r->req_len + (size_t)n);
	if (!out)
		return NULL;
	memcpy(out, r->req, at);
	memcpy(out + at, hdr, (size_t)n);
	memcpy(out + at + n, r->req + at, r->req_len - at);
	*len = r->req_len + (size_t)n;
	return out;
}

/* The PROXY header of a check in <out>: its own addresses in v1, LOCAL
 * in v2 (its addresses too with pp2-never-send-local), as HAProxy sends
 * them. Returns its length. */
static size_t check_pp_header(struct srv_check *c, char *out, size_t room)
{
	if (c->send_proxy == 1)
		return pp_build_v1(out, room, conn_src(&c->c), &c->dst);
	if (global.pp2_never_send_local)
		return pp_build_v2((uint8_t *)out, room, conn_src(&c->c), &c->dst);
	return pp_build_v2((uint8_t *)out, room, NULL, NULL);
}

/* The bytes a check sends once connected: the PROXY header (its own
 * addresses in v1, LOCAL in v2, as HAProxy sends them), then the HTTP
 * request. Returns 0 or -1. */
static int check_prepare_tx(struct srv_check *c)
{
	const struct hchk_rules *r = c->http;
	size_t len = 0;

	if (c->is_agent) {
		const struct check_conf *cc = &c->srv->chk;

		if (!cc->agent_send_len)
			return 0;
		if (!c->tx.area && buf_alloc(&c->tx) < 0)
			return -1;
		len = cc->agent_send_len < c->tx.size ? cc->agent_send_len : c->tx.size;
		memcpy(c->tx.area, cc->agent_send, len);
		c->tx.data = len;
		return 0;
	}
	if (!c->send_proxy && !(r && r->req))
		return 0;
	if (!c->tx.area && buf_alloc(&c->tx) < 0)
		return -1;
	/* over TLS, the PROXY header went in clear before the handshake */
	if (c->send_proxy && !c->use_ssl)
		len = check_pp_header(c, c->tx.area, c->tx.size);
	c->tx.data = len;
	if (r && r->req && c->h2_now) {
		/* the preface, our SETTINGS and the request as one stream */
		size_t req_len = r->req_len;
		char *with = c->srv->be->chk_send_state ? check_with_state(c, &req_len) : NULL;

		if (c->srv->be->chk_send_state && !with)
			return -1;
		c->h2 = chk_h2_new(with ? with : r->req, req_len, &c->tx);
		free(with);
		return c->h2 ? 0 : -1;
	}
	if (r && r->req) {
		const char *req = r->req;
		size_t req_len = r->req_len;
		char *with = NULL;

		if (c->srv->be->chk_send_state && !(req = with = check_with_state(c, &req_len)))
			return -1;
		if (req_len > buf_room(&c->tx)) {
			free(with);
			return -1;
		}
		memcpy(buf_tail(&c->tx), req, req_len);
		c->tx.data += req_len;
		free(with);
	}
	return 0;
}

/* HTTP/2: reads the server's bytes and lets the session turn the reply
 * into HTTP/1 text in c->rx (what it must answer is sent at once, or not
 * at all: a check does not wait on its own acknowledgements). Returns like
 * conn_recv() for the loop of check_read(): > 0 progress, 0 the reply
 * ended (its END_STREAM stands for the close), < 0 nothing more now. */
static ssize_t check_recv_h2(struct srv_check *c)
{
	ssize_t n;
	int failed = 0, done;

	if (!c->raw.area && buf_alloc(&c->raw) < 0)
		return -1;
	n = conn_recv(&c->c, &c->raw);
	if (n == 0)
		return 0;
	if (n < 0)
		return -1;
	if (!c->tx.area && buf_alloc(&c->tx) < 0)
		return -1;
	done = chk_h2_input(c->h2, buf_head(&c->raw), c->raw.data, &c->rx, &c->tx, &failed);
	c->raw.head = c->raw.data = 0;
	if (c->tx.data)
		conn_send(&c->c, &c->tx);
	return done ? 0 : n;
}

/* Puts the check's connection under TLS with the server's context: the
 * PROXY header first in clear, `check-sni` (no SNI without it: the
 * server's `sni` is an expression over a request), `check-alpn` or the
 * server's `alpn`. The request is prepared once the handshake tells
 * which protocol was chosen (check_connected()). Returns 0 or -1. */
static int check_tls_start(struct srv_check *c)
{
	struct ssl_srv_conf *sc = c->srv->ssl;
	SSL_CTX *ctx = atomic_load(&sc->ctx);   /* a commit may replace it */
	char pp[PP_V1_MAX + 16];   /* v1, or a v2 LOCAL header */
	size_t pplen = c->send_proxy ? check_pp_header(c, pp, sizeof(pp)) : 0;
	const char *sni = sc->check_sni;

	if (!ctx || tls_conn_connect(&c->c, ctx, sni, NULL, pp, pplen) < 0)
		return -1;
	if (sc->check_alpn &&
	    SSL_set_alpn_protos(c->c.ssl, sc->check_alpn, (unsigned int)sc->check_alpn_len))
		return -1;
	return ssl_srv_prepare(c->srv, c->c.ssl, sni);
}

/* HAProxy's words for a failed handshake of a check: a certificate for
 * another name than the SNI sent or than verifyhost, or any other
 * failure. */
static const char *check_tls_failure(const struct srv_check *c)
{
	if (SSL_get_verify_result(c->c.ssl) != X509_V_ERR_HOSTNAME_MISMATCH)
		return "SSL handshake failure";
	return c->srv->ssl->check_sni ?
	       "Server presented an SSL certificate different from the expected one" :
	       "Server presented an SSL certificate different from the configured one";
}

static void check_start(struct srv_check *c, uint64_t now)
{
	struct proxy *be = c->srv->be;
	int inter = check_inter(c), tc = be->timeout_connect;

	c->start_ms = now;
	atomic_store(&c->running, 1);
	if (c->is_agent)
		srv_agent_started(c->srv);
	else
		srv_check_started(c->srv);
	conn_init(&c->c, atomic_load(&c->task));
	if (conn_connect_opts(&c->c, &c->dst, c->dstlen, &c->srv->so) < 0) {
		int e = errno;

		check_conclude_errno(c, e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM ?
		                     CHK_ST_SOCKERR : CHK_ST_L4CON, e);
		return;
	}
	c->h2_now = c->use_h2;
	if (c->use_ssl ? check_tls_start(c) < 0 : check_prepare_tx(c) < 0) {
		check_conclude_errno(c, CHK_ST_SOCKERR, ENOMEM);
		return;
	}
	if (be->timeout_check) {
		c->conn_deadline = now + (uint64_t)(tc > 0 && tc < inter ? tc : inter);
		c->deadline = 0;   /* set once connected */
	} else {
		c->conn_deadline = c->deadline = now + (uint64_t)inter;
	}
	c->phase = CHK_CONNECTING;
	task_set_expire(atomic_load(&c->task), c->conn_deadline);
}

/* Connected: the reply is bounded by `timeout check` from now when it is
 * set. Returns 1 when the check is over (layer 4). */
static int check_connected(struct srv_check *c, uint64_t now)
{
	if (!c->deadline)
		c->deadline = now + (uint64_t)c->srv->be->timeout_check;
	if (c->use_ssl) {
		const unsigned char *proto;
		unsigned int len;

		/* HTTP/2 if the server chose it by ALPN (HAProxy 2.6 would
		 * still speak HTTP/1 there: see doc/architecture.md) */
		SSL_get0_alpn_selected(c->c.ssl, &proto, &len);
		if (c->http && c->srv->chk.proto != CHK_PROTO_H1 && len == 2 && !memcmp(proto, "h2", 2))
			c->h2_now = 1;
		if (check_prepare_tx(c) < 0) {
			check_conclude_errno(c, CHK_ST_SOCKERR, ENOMEM);
			return 1;
		}
		if (!c->tx.data && !c->http && !c->tcp) {
			check_conclude(c, CHK_ST_L6OK, 0, NULL);
			return 1;
		}
	}
	if (!c->tx.data && !c->http && !c->tcp && !c->is_agent) {
		check_conclude(c, CHK_ST_L4OK, 0, NULL);
		return 1;
	}
	c->phase = CHK_SENDING;
	return 0;
}

/* Returns 1 when the check is over or must wait, 0 to go on reading. */
static int check_send(struct srv_check *c, uint64_t now)
{
	while (c->tx.data) {
		if (conn_send(&c->c, &c->tx) >= 0)
			continue;
		if (c->c.flags & CONN_F_ERROR) {
			check_conclude_errno(c, CHK_ST_SOCKERR, c->c.err);
			return 1;
		}
		if (now >= c->deadline) {
			check_conclude(c, c->http ? CHK_ST_L7TOUT : CHK_ST_L4TOUT, 0, NULL);
			return 1;
		}
		task_set_expire(atomic_load(&c->task), c->deadline);
		return 1;
	}
	if (c->tx.area)
		buf_release(&c->tx);
	if (c->tcp) {
		c->phase = CHK_TCP;
		c->step = 0;
		c->step_sent = 0;
		return 0;
	}
	if (c->is_agent) {
		if (buf_alloc(&c->rx) < 0) {
			check_conclude_errno(c, CHK_ST_SOCKERR, ENOMEM);
			return 1;
		}
		c->phase = CHK_READING;
		return 0;
	}
	if (!c->http) {
		/* a PROXY header alone: the connection was the check */
		check_conclude(c, c->use_ssl ? CHK_ST_L6OK : CHK_ST_L4OK, 0, NULL);
		return 1;
	}
	if (buf_alloc(&c->rx) < 0) {
		check_conclude_errno(c, CHK_ST_SOCKERR, ENOMEM);
		return 1;
	}
	hchk_reply_init(&c->reply);
	/* "a stopped server will stay stopped even if it replies 404s"
	 * (HAProxy's manual): for a DOWN one, the rules judge the 404 */
	c->reply.stop_on_404 = (c->srv->be->options & PX_O_DISABLE404) &&
	                       atomic_load(&c->srv->op_state) != SRV_OP_DOWN;
	c->phase = CHK_READING;
	return 0;
}

/* An agent's reply: its first line, or what came before the close or
 * filled the buffer. Returns 1 when the check is over. */
static int agent_read_eval(struct srv_check *c, int eof)
{
	struct agent_reply r;
	int full = c->rx.data >= c->rx.size;

	if (!eof && !full && !agent_reply_complete(c->rx.area, c->rx.data))
		return 0;
	if (agent_reply_parse(c->rx.area, c->rx.data, &r) < 0) {
		check_conclude(c, CHK_ST_L7RSP, 0, "TCPCHK got an empty response at step 2");
		return 1;
	}
	if (r.op == AGENT_OP_UP)
		check_conclude_reply(c, CHK_ST_L7OK, 0, r.info, &r);
	else if (r.op == AGENT_OP_DOWN)
		check_conclude_reply(c, CHK_ST_L7STS, 0, r.info, &r);
	else
		check_conclude_reply(c, CHK_ST_CHECKED, 0, r.error, &r);
	return 1;
}

static void check_read(struct srv_check *c, uint64_t now)
{
	struct hchk_verdict v;
	int eof = 0, err = 0, reads = 0;
	struct task *t = atomic_load(&c->task);

	while (reads < CHK_READS_PER_RUN && (c->c.flags & CONN_F_RD_READY) &&
	       c->rx.data < c->rx.size) {
		ssize_t n = c->h2 ? check_recv_h2(c) : conn_recv(&c->c, &c->rx);

		reads++;
		if (n == 0) {
			eof = 1;
			break;
		}
		if (n < 0) {
			err = (c->c.flags & CONN_F_ERROR) ? c->c.err : 0;
			break;
		}
	}
	if (c->is_agent) {
		if (agent_read_eval(c, eof || err))
			return;
	/* what arrived may decide before an error that followed it */
	} else if (c->rx.data || eof || c->rx.data >= c->rx.size) {
		if (hchk_reply_eval(c->http, &c->reply, c->rx.area, &c->rx.data, c->rx.size,
		                    eof && !err, &v)) {
			check_conclude(c, v.status, v.code, v.desc);
			return;
		}
	}
	if (err) {
		check_conclude_errno(c, CHK_ST_SOCKERR, err);
		return;
	}
	if (eof) {
		/* the evaluation above saw the end: it was conclusive */
		check_conclude(c, CHK_ST_L7RSP, 0, NULL);
		return;
	}
	if (now >= c->deadline) {
		check_conclude(c, CHK_ST_L7TOUT, 0, NULL);
		return;
	}
	if (reads == CHK_READS_PER_RUN && (c->c.flags & CONN_F_RD_READY))
		task_wakeup(t, TASK_WOKEN_OTHER);   /* more to read: after the others */
	task_set_expire(t, c->deadline);
}

/* ---- tcp-check steps ---- */

#define TCP_STEPS_PER_RUN 16

static void tcp_conclude(struct srv_check *c, const struct hchk_verdict *v)
{
	check_conclude(c, v->status, v->code, v->desc[0] ? v->desc : NULL);
}

/* Waits for I/O or the deadline; concludes at the deadline. Returns 1. */
static int tcp_wait(struct srv_check *c, uint64_t now)
{
	if (now >= c->deadline) {
		const struct tchk_step *st = &c->tcp->steps[c->step];
		struct hchk_verdict v = { 0 };

		v.status = st->act == TCHK_EXPECT ? st->tout_status : CHK_ST_L7TOUT;
		tchk_timeout_desc(c->tcp, c->step, v.desc, sizeof(v.desc));
		tcp_conclude(c, &v);
		return 1;
	}
	task_set_expire(atomic_load(&c->task), c->deadline);
	return 1;
}

/* A send step: its bytes go out; what the server said before is dropped,
 * so that the next expect reads the answer to this. Returns 0 when sent,
 * 1 when the check waits or is over. */
static int tcp_send(struct srv_check *c, const struct tchk_step *st, uint64_t now)
{
	if (!c->step_sent) {
		if (!c->tx.area && buf_alloc(&c->tx) < 0) {
			check_conclude_errno(c, CHK_ST_SOCKERR, ENOMEM);
			return 1;
		}
		if (st->len > buf_room(&c->tx)) {
			check_conclude(c, CHK_ST_SOCKERR, 0, "tcp-check send: data larger than a buffer");
			return 1;
		}
		memcpy(buf_tail(&c->tx), st->data, st->len);
		c->tx.data += st->len;
		c->step_sent = 1;
		if (c->rx.area)
			c->rx.head = c->rx.data = 0;
	}
	while (c->tx.data) {
		if (conn_send(&c->c, &c->tx) >= 0)
			continue;
		if (c->c.flags & CONN_F_ERROR) {
			check_conclude_errno(c, CHK_ST_SOCKERR, c->c.err);
			return 1;
		}
		return tcp_wait(c, now);
	}
	c->step_sent = 0;
	return 0;
}

/* An expect step: reads (a bounded number of times) and judges. Returns
 * 0 when the step passed, 1 when the check waits or is over. */
static int tcp_expect(struct srv_check *c, const struct tchk_step *st, uint64_t now)
{
	struct hchk_verdict v;
	int eof = 0, err = 0, reads = 0, rc;

	if (!c->rx.area && buf_alloc(&c->rx) < 0) {
		check_conclude_errno(c, CHK_ST_SOCKERR, ENOMEM);
		return 1;
	}
	buf_realign(&c->rx);
	while (reads < CHK_READS_PER_RUN && (c->c.flags & CONN_F_RD_READY) &&
	       c->rx.data < c->rx.size) {
		ssize_t n = conn_recv(&c->c, &c->rx);

		reads++;
		if (n == 0) {
			eof = 1;
			break;
		}
		if (n < 0) {
			err = (c->c.flags & CONN_F_ERROR) ? c->c.err : 0;
			break;
		}
	}
	rc = tchk_expect_eval(st, tchk_step_number(c->tcp, c->step), c->rx.area, c->rx.data,
	                      eof || err || c->rx.data >= c->rx.size, &v);
	if (rc > 0)
		return 0;
	if (rc < 0) {
		tcp_conclude(c, &v);
		return 1;
	}
	if (reads == CHK_READS_PER_RUN && (c->c.flags & CONN_F_RD_READY))
		task_wakeup(atomic_load(&c->task), TASK_WOKEN_OTHER);
	return tcp_wait(c, now);
}

static void tcp_progress(struct srv_check *c, uint64_t now)
{
	const struct tchk_rules *r = c->tcp;

	for (int budget = TCP_STEPS_PER_RUN; budget > 0; budget--) {
		const struct tchk_step *st;

		if (c->step >= r->nsteps) {
			struct hchk_verdict v;

			tchk_success(r, c->rx.area, c->rx.area ? c->rx.data : 0, &v);
			tcp_conclude(c, &v);
			return;
		}
		st = &r->steps[c->step];
		if ((st->act == TCHK_SEND && tcp_send(c, st, now)) ||
		    (st->act == TCHK_EXPECT && tcp_expect(c, st, now)))
			return;
		c->step++;   /* done, or a connect: only the first one runs */
	}
	task_wakeup(atomic_load(&c->task), TASK_WOKEN_OTHER);   /* more steps: later */
}

static void check_progress(struct srv_check *c, uint64_t now)
{
	int st, hs;

	switch (c->phase) {
	case CHK_CONNECTING:
		st = conn_connect_status(&c->c);
		/* connected, then the TLS handshake: layer 6 */
		hs = c->c.ssl && (c->c.flags & CONN_F_CONNECTED);
		if (st == EINPROGRESS) {
			if (now >= c->conn_deadline)
				check_conclude(c, hs ? CHK_ST_L6TOUT : CHK_ST_L4TOUT, 0, NULL);
			else
				task_set_expire(atomic_load(&c->task), c->conn_deadline);
			return;
		}
		if (st && hs) {
			check_conclude(c, CHK_ST_L6RSP, 0, check_tls_failure(c));
			return;
		}
		if (st) {
			check_conclude_errno(c, CHK_ST_L4CON, st);
			return;
		}
		if (check_connected(c, now))
			return;
		/* fall through */
	case CHK_SENDING:
		if (check_send(c, now))
			return;
		if (c->phase == CHK_TCP) {
			tcp_progress(c, now);
			return;
		}
		/* fall through */
	case CHK_READING:
		check_read(c, now);
		return;
	case CHK_TCP:
		tcp_progress(c, now);
		return;
	default:
		return;
	}
}

static struct task *check_task(struct task *t, void *ctx, unsigned int state)
{
	struct srv_check *c = ctx;
	uint64_t now = th_ctx->now_ms;

	/* its server was deleted (del server): it stops, and keeps nothing */
	if (atomic_load(&c->srv->deleted)) {
		if (c->phase != CHK_IDLE) {
			check_release(c);
			c->phase = CHK_IDLE;
			atomic_store(&c->running, 0);
		}
		task_set_expire(t, 0);
		return t;
	}
	if (c->phase != CHK_IDLE) {
		check_progress(c, now);
		return t;
	}
	/* slowstart: the server's limit grew since the last check, its
	 * queue may go on (HAProxy updates it at every check too) */
	if (!c->is_agent && c->srv->slowstart && srv_throttle(c->srv) < 100)
		queue_kick(c->srv);
	if (atomic_exchange(&c->wake_now, 0))
		c->next_ms = now;
	if (atomic_load(&c->wake_at)) {
		uint64_t at = atomic_exchange(&c->wake_at, 0);

		if (at && at < c->next_ms)
			c->next_ms = at;
	}
	if (now < c->next_ms) {
		task_set_expire(t, c->next_ms);
		return t;
	}
	if (c->is_agent ? atomic_load(&c->srv->agent_disabled) :
	    atomic_load(&c->srv->admin) == SRV_ADMIN_MAINT || atomic_load(&c->srv->chk_disabled)) {
		/* paused while in maintenance or disabled; leaving it wakes
		 * us, enabling it lets the next interval run it */
		c->next_ms = now + (uint64_t)check_inter(c);
		task_set_expire(t, c->next_ms);
		return t;
	}
	check_start(c, now);
	return t;
}

/* ---- after parsing: one check per checked server ---- */

static int nb_checks;

/* Where the checks of <s> connect, and with which options; 0, -1 when its
 * checks cannot run (warned), -2 on a configuration error (reported). */
static int check_target(struct server *s, struct srv_check *c)
{
	const struct check_conf *cc = &s->chk;
	int tport = tchk_connect_port(c->tcp);
	int port = tport ? tport : cc->port ? cc->port : addr_port(&s->addr.ss);

	c->dst = cc->has_addr ? cc->addr : s->addr.ss;
	c->dstlen = cc->has_addr ? cc->addrlen : s->addr.len;
	if (c->dst.ss_family == AF_INET)
		((struct sockaddr_in *)&c->dst)->sin_port = htons((uint16_t)port);
	else if (c->dst.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&c->dst)->sin6_port = htons((uint16_t)port);
	if ((c->dst.ss_family == AF_INET || c->dst.ss_family == AF_INET6) && !port) {
		cfg_alert(s->conf_file, s->conf_line, "backend '%s': server '%s' has neither "
		          "service port nor check port nor tcp_check rule 'connect' with port "
		          "information.", s->be->name, s->name);
		return -2;
	}
	/* the server's own encapsulation, unless checked elsewhere (HAProxy) */
	if (!cc->port && !cc->has_addr && !tport) {
		c->use_ssl = s->ssl && s->ssl->enabled;
		c->send_proxy = s->send_proxy;
	}
	if (s->ssl && s->ssl->check_ssl)
		c->use_ssl = s->ssl->check_ssl > 0;
	if (cc->send_proxy || (c->tcp && c->tcp->nsteps && c->tcp->steps[0].act == TCHK_CONNECT &&
	                       c->tcp->steps[0].send_proxy))
		c->send_proxy = s->send_proxy ? s->send_proxy : 1;
	return 0;
}

/* The agent check of <s>, if it has one: at its agent-addr or address,
 * on its agent-port. Returns the number of errors (reported). */
static int agent_setup(struct server *s)
{
	const struct check_conf *cc = &s->chk;
	struct srv_check *c;

	if (!cc->agent || s->agent)
		return 0;
	if (!cc->agent_port) {
		cfg_alert(s->conf_file, s->conf_line, "backend '%s': server %s does not have agent "
		          "port. Agent check has been disabled.", s->be->name, s->name);
		return 1;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		cfg_alert(s->conf_file, s->conf_line, "out of memory.");
		return 1;
	}
	c->srv = s;
	c->is_agent = 1;
	c->dst = cc->agent_has_addr ? cc->agent_addr : s->addr.ss;
	c->dstlen = cc->agent_has_addr ? cc->agent_addrlen : s->addr.len;
	if (c->dst.ss_family == AF_INET)
		((struct sockaddr_in *)&c->dst)->sin_port = htons((uint16_t)cc->agent_port);
	else if (c->dst.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&c->dst)->sin6_port = htons((uint16_t)cc->agent_port);
	c->idx = nb_checks++;
	c->tid = -1;
	c->c.ph.fd = -1;
	s->agent = c;
	return 0;
}

static int check_setup_backend(struct proxy *be)
{
	const struct hchk_rules *http = NULL;
	const struct tchk_rules *tcp = NULL;
	int errors = 0;
	char err[256];

	srv_state_init(be);
	be->state_lock.name = be->name;
	if ((be->options & PX_O_HTTPCHK) && be->hchk) {
		if (hchk_prepare(be->hchk, (size_t)global.bufsize, err, sizeof(err)) < 0) {
			cfg_alert(be->conf_file, be->conf_line, "backend '%s': %s", be->name, err);
			return 1;
		}
		http = be->hchk;
	}
	if ((be->options & PX_O_TCPCHK) && be->tchk && be->tchk->nsteps)
		tcp = be->tchk;
	for (int i = 0; i < be->nsrv; i++) {
		struct server *s = be->srv[i];
		struct srv_check *c;
		int rc;

		if (!s->chk.enabled || s->chk.off || s->check)
			continue;
		c = calloc(1, sizeof(*c));
		if (!c) {
			cfg_alert(s->conf_file, s->conf_line, "out of memory.");
			errors++;
			continue;
		}
		/* HTTP checks need h1 or h2, the others none (HAProxy 2.6) */
		if (s->chk.proto != CHK_PROTO_UNSET &&
		    (http != NULL) != (s->chk.proto != CHK_PROTO_NONE)) {
			cfg_alert(s->conf_file, s->conf_line, "backend '%s': server '%s' uses an incompatible "
			          "MUX protocol for the selected check type", be->name, s->name);
			free(c);
			errors++;
			continue;
		}
		c->tcp = tcp;
		rc = check_target(s, c);
		if (rc < 0) {
			free(c);
			errors += rc == -2;
			continue;
		}
		c->srv = s;
		c->http = http;
		/* as HAProxy 2.6: the server's protocol unless check-proto */
		c->use_h2 = http && (s->chk.proto == CHK_PROTO_H2 ||
		                     (s->chk.proto == CHK_PROTO_UNSET && s->proto == SRV_PROTO_H2));
		c->idx = nb_checks++;
		c->tid = -1;   /* idx % nbthread, once the threads are known */
		c->c.ph.fd = -1;
		s->check = c;
	}
	for (int i = 0; i < be->nsrv; i++)
		errors += agent_setup(be->srv[i]);
	return errors;
}

/* The smallest first interval spreads the first checks: each comes
 * within its own first interval, none two at the same date. */
static void check_spread_first(void)
{
	struct list *pos, *tmp;
	int min_inter = 0;

	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		for (int i = 0; (px->cap & PX_CAP_BE) && i < px->nsrv; i++) {
			struct server *s = px->srv[i];
			int inter = s->chk.fastinter ? s->chk.fastinter : s->chk.inter;

			if (s->check && (!min_inter || inter < min_inter))
				min_inter = inter;
			inter = check_agent_interval(s);
			if (s->agent && (!min_inter || inter < min_inter))
				min_inter = inter;
		}
	}
	if (max_spread_ms && min_inter > max_spread_ms)
		min_inter = max_spread_ms;
	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		for (int i = 0; (px->cap & PX_CAP_BE) && i < px->nsrv; i++) {
			struct srv_check *cs[2] = { px->srv[i]->check, px->srv[i]->agent };

			for (int k = 0; k < 2; k++)
				if (cs[k])
					cs[k]->first_ms = (int)((int64_t)min_inter * cs[k]->idx / nb_checks);
		}
	}
}

/* `track [<backend>/]<server>` of <s> (in <px>): the server it names, which
 * must have a check or an agent, or track one itself. Returns the errors
 * (reported as HAProxy words them). */
static int track_resolve(struct proxy *px, struct server *s)
{
	const char *name = s->track_name, *slash = strchr(name, '/');
	struct proxy *be = px;
	struct server *t;

	if (slash) {
		char bname[256];

		snprintf(bname, sizeof(bname), "%.*s", (int)(slash - name), name);
		be = proxy_find(bname, PX_CAP_BE);
		name = slash + 1;
		if (!be) {
			cfg_alert(s->conf_file, s->conf_line, "'server %s/%s' : unable to find required "
			          "proxy '%s' for tracking.", px->name, s->name, bname);
			return 1;
		}
	}
	t = server_find(be, name);
	if (!t) {
		cfg_alert(s->conf_file, s->conf_line, "'server %s/%s' : unable to find required "
		          "server '%s' for tracking.", px->name, s->name, name);
		return 1;
	}
	if (s->chk.enabled) {
		cfg_alert(s->conf_file, s->conf_line, "'server %s/%s' : unable to enable checks and "
		          "tracking at the same time!", px->name, s->name);
		return 1;
	}
	if (!t->chk.enabled && !t->chk.agent && !t->track_name) {
		cfg_alert(s->conf_file, s->conf_line, "'server %s/%s' : unable to use %s/%s for "
		          "tracking as it does not have any check nor agent enabled.", px->name,
		          s->name, be->name, t->name);
		return 1;
	}
	s->track = t;
	s->track_next = t->trackers;
	t->trackers = s;
	return 0;
}

/* After every track is resolved: no loop (a chain longer than the servers
 * there are is one), and each tracking server starts in the admin state
 * its tracked server is in. */
static int track_check_loops(int nservers)
{
	struct list *pos, *tmp;
	int errors = 0;

	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		for (int i = 0; (px->cap & PX_CAP_BE) && i < px->nsrv; i++) {
			struct server *s = px->srv[i], *t = s->track;
			int n = 0;

			while (t && n <= nservers) {
				t = t->track;
				n++;
			}
			if (t) {
				cfg_alert(s->conf_file, s->conf_line, "'server %s/%s' : unable to track "
				          "%s/%s: the servers track each other in a loop.", px->name,
				          s->name, s->track->be->name, s->track->name);
				errors++;
			}
		}
	}
	return errors;
}

static int check_postparse(void)
{
	struct list *pos, *tmp;
	int errors = 0, nservers = 0;

	nb_checks = 0;
	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		if (px->cap & PX_CAP_BE)
			errors += check_setup_backend(px);
	}
	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		for (int i = 0; (px->cap & PX_CAP_BE) && i < px->nsrv; i++) {
			nservers++;
			if (px->srv[i]->track_name)
				errors += track_resolve(px, px->srv[i]);
		}
	}
	if (!errors)
		errors += track_check_loops(nservers);
	if (!errors)
		srv_track_init();
	if (nb_checks)
		check_spread_first();
	return errors;
}

static struct cfg_post_hook check_post = { .fn = check_postparse, .order = 30 };

int check_count(void)
{
	return nb_checks;
}

void check_srv_free(struct server *s)
{
	free(s->check);
	s->check = NULL;
	free(s->agent);
	s->agent = NULL;
}

/* ---- per thread: the tasks of the checks it owns ---- */

/* The thread that runs <c>: the one it was added on, or for those of the
 * configuration, spread by their number. */
static int check_tid(const struct srv_check *c)
{
	return c->tid >= 0 ? c->tid : c->idx % global.nbthread;
}

/* Calls <fn> for each check thread <tid> owns, until one returns < 0. */
static int for_thread_checks(int tid, int (*fn)(struct srv_check *c, int tid))
{
	struct list *pos, *tmp;

	/* deleted servers keep their (stopped) checks until exit */
	for (struct server *s = srv_dyn_graveyard(); s; s = s->grave_next) {
		struct srv_check *cs[2] = { s->check, s->agent };

		for (int k = 0; k < 2; k++)
			if (cs[k] && check_tid(cs[k]) == tid && atomic_load(&cs[k]->task) &&
			    fn(cs[k], tid) < 0)
				return -1;
	}

	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		for (int i = 0; (px->cap & PX_CAP_BE) && i < px->nsrv; i++) {
			struct srv_check *cs[2] = { px->srv[i]->check, px->srv[i]->agent };

			for (int k = 0; k < 2; k++)
				if (cs[k] && check_tid(cs[k]) == tid && fn(cs[k], tid) < 0)
					return -1;
		}
	}
	return 0;
}

static int check_task_start(struct srv_check *c, int tid)
{
	uint64_t now = th_ctx->now_ms ? th_ctx->now_ms : clock_mono_ms();
	struct task *t = task_new(check_task, c, tid, TC_NORMAL, "check");

	if (!t)
		return -1;
	c->phase = CHK_IDLE;
	c->next_ms = now + (uint64_t)c->first_ms;
	atomic_store(&c->task, t);
	task_set_expire(t, c->next_ms);
	return 0;
}

static int check_task_end(struct srv_check *c, int tid)
{
	struct task *t;

	check_release(c);
	t = atomic_exchange(&c->task, NULL);
	if (t)
		task_destroy(t);
	return 0;
}

static int check_thread_init(int tid)
{
	return for_thread_checks(tid, check_task_start);
}

static void check_thread_deinit(int tid)
{
	for_thread_checks(tid, check_task_end);
}

static struct thread_init_hook check_hook = {
	.fn = check_thread_init,
	.deinit = check_thread_deinit,
};

__attribute__((constructor)) static void check_register(void)
{
	cfg_register_post(&check_post);
	thread_register_init(&check_hook);
}

/* ---- servers added at run time ---- */

/* Starts the task of a check of a server added at run time, on the
 * calling thread (its owner from now on). */
static int check_start_dynamic(struct srv_check *c, char *err, size_t errlen)
{
	struct task *t;

	c->tid = th_ctx->tid;
	c->c.ph.fd = -1;
	t = task_new(check_task, c, c->tid, TC_NORMAL, "check");
	if (!t) {
		snprintf(err, errlen, "out of memory.");
		return -1;
	}
	c->phase = CHK_IDLE;
	c->next_ms = th_ctx->now_ms + (uint64_t)check_inter(c);
	atomic_store(&c->task, t);
	task_set_expire(t, c->next_ms);
	return 0;
}

int check_add_dynamic(struct server *s, char *err, size_t errlen)
{
	struct proxy *be = s->be;
	struct srv_check *c;

	if (s->chk.enabled) {
		c = calloc(1, sizeof(*c));
		if (!c) {
			snprintf(err, errlen, "out of memory.");
			return -1;
		}
		c->tcp = (be->options & PX_O_TCPCHK) && be->tchk && be->tchk->nsteps ? be->tchk : NULL;
		if (check_target(s, c) < 0) {
			free(c);
			snprintf(err, errlen, "the server's checks cannot run (see the log).");
			return -1;
		}
		c->srv = s;
		c->http = (be->options & PX_O_HTTPCHK) && be->hchk ? be->hchk : NULL;
		c->use_h2 = c->http && (s->chk.proto == CHK_PROTO_H2 ||
		                        (s->chk.proto == CHK_PROTO_UNSET && s->proto == SRV_PROTO_H2));
		s->check = c;
		/* as HAProxy: configured, enabled by `enable health` */
		atomic_store(&s->chk_disabled, 1);
		if (check_start_dynamic(c, err, errlen) < 0)
			return -1;
	}
	if (s->chk.agent) {
		if (agent_setup(s))
			return snprintf(err, errlen, "server %s does not have agent port. Agent check "
			                "has been disabled.", s->name), -1;
		atomic_store(&s->agent_disabled, 1);
		if (check_start_dynamic(s->agent, err, errlen) < 0)
			return -1;
	}
	return 0;
}
