/* Health checks: settings, results and the rise/fall health counter.
 *
 * src/proxy/check.c runs the checks (one task per checked server, on one
 * thread), src/proxy/check_http.c speaks HTTP for `option httpchk`, and
 * src/proxy/srv_state.c turns results into server state changes. The
 * health arithmetic and the status table are pure (tests/unit/test_check.c).
 */
#ifndef SLUICE_PROXY_CHECK_H
#define SLUICE_PROXY_CHECK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct server;
struct proxy;

/* Results of a check, numbered as HAProxy numbers them: `show servers
 * state` prints the number (srv_check_status). */
enum chk_status {
	CHK_ST_UNKNOWN = 0,
	CHK_ST_INI,          /* not checked yet */
	CHK_ST_START,
	CHK_ST_CHECKED,
	CHK_ST_HANA,
	CHK_ST_SOCKERR,      /* socket error */
	CHK_ST_L4OK,
	CHK_ST_L4TOUT,
	CHK_ST_L4CON,
	CHK_ST_L6OK,
	CHK_ST_L6TOUT,
	CHK_ST_L6RSP,
	CHK_ST_L7TOUT,
	CHK_ST_L7RSP,
	CHK_ST_L57DATA,      /* from here on, the check read an HTTP status code */
	CHK_ST_L7OK,
	CHK_ST_L7OKC,
	CHK_ST_L7STS,
	CHK_ST_COUNT
};

/* What a status means for the health counter (HAProxy's CHK_RES_*:
 * `show servers state` prints it as srv_check_result). */
enum chk_result {
	CHK_RES_UNKNOWN = 0,
	CHK_RES_NEUTRAL,
	CHK_RES_FAILED,
	CHK_RES_PASSED,
	CHK_RES_CONDPASS,
};

/* "L4OK", "Layer4 check passed", CHK_RES_PASSED... ("UNK"/"Unknown" for
 * values out of range). */
const char *chk_status_info(int status);
const char *chk_status_desc(int status);
int chk_status_result(int status);

/* The health counter, as HAProxy keeps it: 0 .. rise + fall - 1, the server
 * is up from <rise> on. A success while up, or the <rise>th one in a row
 * while down, makes it full (rise + fall - 1); a failure while up takes one
 * off, and the one that makes it drop below <rise> makes it 0. So a server
 * at full health goes down after <fall> failures in a row, and up after
 * <rise> successes in a row. A server starts at <rise>: up, but one failure
 * from down ("UP 1/3"), until its first check says more. */
struct chk_health {
	int health;
	int rise;
	int fall;
};

static inline void chk_health_init(struct chk_health *h, int rise, int fall)
{
	h->rise = rise;
	h->fall = fall;
	h->health = rise;
}

static inline int chk_health_up(const struct chk_health *h)
{
	return h->health >= h->rise;
}

/* Full health: up and not in transition ("UP", not "UP 2/3"). */
static inline int chk_health_full(const struct chk_health *h)
{
	return h->health >= h->rise + h->fall - 1;
}

/* Applies a result (enum chk_result). Returns 1 if the health changed. */
int chk_health_apply(struct chk_health *h, int result);

/* "UP", "UP 1/3", "DOWN", "DOWN 1/2", "DRAIN", "DRAIN 2/3", "NOLB",
 * "NOLB 2/3", "MAINT", "no check": the status column of `show stat` for a
 * server in admin state <admin> (enum srv_admin) and operational state <op>
 * (enum srv_op) whose checks (if <checked>) say <h>. */
void chk_status_column(char *buf, size_t len, int admin, int checked, int op,
                       const struct chk_health *h);

#define CHK_DESC_LEN 128     /* the info text of a result, NUL included */

#define CHK_AGENT_SEND_MAX  1024   /* `agent-send` */

/* A server's check settings: `check`, `inter`... on its line or on
 * `default-server`. Read-only after parsing. */
struct check_conf {
	int enabled;             /* `check` (`no-check` clears it) */
	int inter;               /* ms between checks of a server at full health */
	int fastinter;           /* ms while in transition; 0: inter */
	int downinter;           /* ms while fully down; 0: inter */
	int rise, fall;
	int port;                /* `port`; 0: the server's */
	int send_proxy;          /* `check-send-proxy` */
	int proto;               /* `check-proto`: CHK_PROTO_* */
	int off;                 /* an option sluice lacks (check-ssl) turns the
	                          * checks off: warned at parsing */
	int has_addr;            /* `addr` */
	struct sockaddr_storage addr;
	socklen_t addrlen;
	/* agent checks */
	int agent;               /* `agent-check` (`no-agent-check` clears it) */
	int agent_port;          /* `agent-port`; required by agent-check */
	int agent_inter;         /* `agent-inter`, ms */
	int agent_has_addr;      /* `agent-addr`; else the server's address */
	struct sockaddr_storage agent_addr;
	socklen_t agent_addrlen;
	char agent_send[CHK_AGENT_SEND_MAX];   /* `agent-send`, verbatim */
	size_t agent_send_len;
};

/* check-proto: the server's `proto` (unset), h1, h2, or none (TCP). */
enum { CHK_PROTO_UNSET = 0, CHK_PROTO_H1, CHK_PROTO_H2, CHK_PROTO_NONE };

#define CHK_DEF_INTER  2000
#define CHK_DEF_RISE   2
#define CHK_DEF_FALL   3

/* The last result of a server's check and its health. Written by the check
 * under its backend's state_lock (src/proxy/srv_state.c), read under it by
 * the CLI. */
struct check_state {
	struct chk_health h;
	int status;              /* enum chk_status */
	int code;                /* HTTP status, for CHK_ST_L57DATA and above */
	int duration_ms;         /* of the last check; -1: none yet */
	char desc[CHK_DESC_LEN]; /* "Connection refused", a reason phrase... */
};

/* Parses a check option of a server line at args[*i] (`check`, `inter`,
 * `rise`...), moving *i past its argument. Returns 1 if it was one, 0 if
 * not, -1 with a message in <err>. */
int check_srv_parse_opt(struct check_conf *c, char **args, int nargs, int *i,
                        char *err, size_t errlen);

/* The interval to wait after a check of <s>: inter, fastinter while the
 * health is in transition (or not checked yet), downinter while fully
 * down, as HAProxy's table says. Under or outside the state lock: it reads
 * the health once. */
int check_next_interval(const struct server *s, const struct check_state *st);

/* The interval of <s>'s agent checks. */
int check_agent_interval(const struct server *s);

/* Asks the agent check of <s> to run at once. Any thread. */
void check_agent_wake_now(struct server *s);

/* 1 while an agent check of <s> is in progress. */
int check_agent_in_progress(const struct server *s);

/* The next check of <s> at `fastinter` from now (or `inter`), unless it
 * comes sooner: on-error's "force fastinter". Any thread. */
void check_fastinter_now(struct server *s);

/* Asks the check of <s> to run at once (a server leaving maintenance is
 * checked straight away, as HAProxy does). Any thread. */
void check_wake_now(struct server *s);

/* 1 while a check of <s> is in progress (`show stat` marks its status
 * with "* "). */
int check_in_progress(const struct server *s);

/* The number of checks that run (after parsing): each holds a descriptor
 * while it runs, which maxsock counts (HAProxy does). */
int check_count(void);

/* The checks and agent of a server added at run time (add server): their
 * tasks on the calling thread, disabled until `enable health` / `enable
 * agent`, as HAProxy 2.6 adds them. Returns 0, or -1 with a message. */
int check_add_dynamic(struct server *s, char *err, size_t errlen);

/* Frees what check.c attached to <s> at post-parse (configuration free). */
void check_srv_free(struct server *s);

/* `show servers state`'s srv_check_state: HAProxy's check state bits
 * (configured, enabled, paused while in maintenance). */
int check_state_bits(const struct server *s);

#endif
