/* Logging: targets (`log` lines), syslog framing, and log-format strings.
 *
 * Sending never blocks the event loop: datagrams go out with MSG_DONTWAIT
 * and are dropped (counted in global.dropped_logs) when a socket buffer is
 * full; stdout/stderr targets are written with non-blocking writes.
 * Targets are read-only after configuration, so any thread may send.
 */
#ifndef SLUICE_CORE_LOG_H
#define SLUICE_CORE_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sluice/core/list.h>

enum log_format {
	LOG_FORMAT_RFC3164 = 0,   /* default */
	LOG_FORMAT_RFC5424,
	LOG_FORMAT_RAW,           /* message only */
	LOG_FORMAT_SHORT,         /* <PRI>message */
	LOG_FORMAT_TIMED,         /* <PRI>TIMESTAMP message */
	LOG_FORMAT_ISO,           /* ISO timestamp message */
	LOG_FORMAT_PRIORITY,      /* <PRI>message (alias of short in 2.6) */
};

enum log_target_kind {
	LOG_T_UDP = 0,            /* AF_INET / AF_INET6 datagram */
	LOG_T_UNIX,               /* AF_UNIX datagram (e.g. /dev/log) */
	LOG_T_FD,                 /* stdout / stderr / fd@N */
};

struct log_target {
	struct list list;
	enum log_target_kind kind;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int fd;                   /* socket or descriptor, -1 until opened */
	int facility;             /* 0..23 */
	int level;                /* max level sent (0 emerg .. 7 debug) */
	int minlevel;             /* levels below are raised to this */
	enum log_format format;
	int maxlen;               /* `len N`, default 1024 */
	char *conf_file;          /* where it was declared */
	int conf_line;
};

/* Syslog level names "emerg".."debug" <-> 0..7, facility names <-> 0..23. */
int log_level_from_name(const char *name);
int log_facility_from_name(const char *name);

/* Parses the words after `log` (args[0] is the address, e.g.
 * "127.0.0.1:514", "ipv6@[::1]:514", "/dev/log", "stdout", "stderr",
 * "fd@1", optionally followed by `len N`, `format F`, then FACILITY
 * [LEVEL [MINLEVEL]]). `log global` is handled by the caller. Returns a new
 * target, or NULL with a message in <err>. */
struct log_target *log_target_parse(char **args, int nargs, char *err, size_t errlen);

/* Opens the target's socket. Returns 0, or -1 with a message. */
int log_target_open(struct log_target *t, char *err, size_t errlen);
void log_target_free(struct log_target *t);

/* Sends <msg> (no trailing newline) at <level> to every target of the list
 * <targets> whose level allows it, each with its own framing. <tag> is the
 * program name ("sluice" by default), <pid> the process id. */
void log_send(struct list *targets, int level, const char *tag, int pid,
              const char *msg, size_t len);

/* ---- log-format ---- */

/* What a stream knows when it logs. Timers are in ms, -1 when that phase
 * did not happen (HAProxy prints -1). Addresses have ss_family 0 if unset. */
struct log_fields {
	struct sockaddr_storage cli;      /* %ci %cp */
	struct sockaddr_storage fe;       /* %fi %fp: frontend (dst) address */
	struct sockaddr_storage be_src;   /* %bi %bp: our side of server conn */
	struct sockaddr_storage srv;      /* %si %sp */
	const char *fe_name;              /* %f %ft */
	const char *be_name;              /* %b */
	const char *srv_name;             /* %s ("<NOSRV>" when none) */
	int64_t accept_us;                /* wall clock at accept, µs since epoch */
	int Tw;                           /* time waiting in queues */
	int Tc;                           /* time to connect to the server */
	int Tt;                           /* total session time */
	uint64_t bytes_in;                /* %U: bytes from client */
	uint64_t bytes_out;               /* %B: bytes to client */
	char term[3];                     /* %ts: two chars + NUL, e.g. "--", "CD" */
	int actconn, feconn, beconn, srv_conn; /* %ac %fc %bc %sc */
	int retries;                      /* %rc */
	int redispatched;                 /* %rc gets a '+' prefix */
	int srv_queue, be_queue;          /* %sq %bq */
	int pid;                          /* %pid */
	int thread;                       /* %tid? (not printed by default) */
};

struct lf_node;                       /* compiled element, log.c private */

struct lf_expr {
	struct lf_node *nodes;
	int count;
};

/* HAProxy's `option tcplog` format. */
#define LF_TCPLOG_FORMAT \
	"%ci:%cp [%t] %ft %b/%s %Tw/%Tc/%Tt %B %ts %ac/%fc/%bc/%sc/%rc %sq/%bq"

/* Compiles a log-format string. Unknown variables and bad syntax are errors
 * (message in <err>). Returns 0 or -1. */
int lf_compile(const char *fmt, struct lf_expr *out, char *err, size_t errlen);
void lf_free(struct lf_expr *e);

/* Renders <e> with <f> into <out> (always NUL-terminated, truncated to fit).
 * Returns the length written. */
size_t lf_render(const struct lf_expr *e, const struct log_fields *f,
                 char *out, size_t outsz);

#endif
