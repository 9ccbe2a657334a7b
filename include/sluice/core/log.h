/* Logging: targets (`log` lines), syslog framing, and log-format strings.
 *
 * Sending never blocks the event loop: datagrams go out with MSG_DONTWAIT
 * and are dropped (counted in global.dropped_logs) when a socket buffer is
 * full; stdout/stderr/fd@N targets are written without blocking too (see
 * log_target_open()). Targets are read-only after configuration, except the
 * `sample` counter which is atomic, so any thread may send.
 *
 * What goes on the wire, per `format` (HAProxy 2.6), each line ending in LF
 * and cut to the target's `len` (LF included):
 *   local (default) <PRI>Mmm dd hh:mm:ss TAG[PID]: MSG
 *   rfc3164         <PRI>Mmm dd hh:mm:ss HOST TAG[PID]: MSG
 *                   (HOST = log-send-hostname, else "localhost")
 *   rfc5424         <PRI>1 ISOTIME HOST TAG PID - - MSG   (HOST "-" if unset)
 *   priority        <PRI>MSG
 *   short           <LEVEL>MSG                (facility not sent)
 *   timed           <LEVEL>ISOTIME MSG
 *   iso             ISOTIME MSG
 *   raw             MSG
 * When no format is given and a hostname is configured (log-send-hostname),
 * the default becomes rfc3164, as in HAProxy. Times are the local time at
 * sending; ISOTIME is 2026-11-22T04:25:00.123456+00:00.
 */
#ifndef SLUICE_CORE_LOG_H
#define SLUICE_CORE_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sluice/core/list.h>

struct smp_ctx;

enum log_format {
	LOG_FORMAT_DEFAULT = 0,   /* none given: local, or rfc3164 with a hostname */
	LOG_FORMAT_LOCAL,         /* rfc3164 without the HOSTNAME field */
	LOG_FORMAT_RFC3164,
	LOG_FORMAT_RFC5424,
	LOG_FORMAT_PRIORITY,      /* <PRI>message */
	LOG_FORMAT_SHORT,         /* <LEVEL>message */
	LOG_FORMAT_TIMED,         /* <LEVEL>ISO-TIMESTAMP message */
	LOG_FORMAT_ISO,           /* ISO-TIMESTAMP message */
	LOG_FORMAT_RAW,           /* message only */
};

enum log_target_kind {
	LOG_T_UDP = 0,            /* AF_INET / AF_INET6 datagram */
	LOG_T_UNIX,               /* AF_UNIX datagram (e.g. /dev/log, abns@) */
	LOG_T_FD,                 /* stdout / stderr / fd@N */
};

/* `sample <ranges>:<size>`: logs are numbered 1..size, cyclically; only those
 * whose number falls in a range are sent to this target. */
struct log_sample_range {
	unsigned int low, high;   /* inclusive, 1-based, low <= high */
};

struct log_sample {
	struct log_sample_range *ranges; /* sorted, non-overlapping */
	int nranges;
	unsigned int size;        /* period, >= the highest bound */
	_Atomic unsigned int seen; /* logs offered so far: the only run-time write */
};

struct log_target {
	struct list list;
	enum log_target_kind kind;
	struct sockaddr_storage addr;  /* LOG_T_UDP / LOG_T_UNIX destination */
	socklen_t addrlen;
	int fd;                   /* socket or descriptor, -1 until opened */
	int fd_num;               /* LOG_T_FD: the descriptor named (1, 2, N) */
	int fd_owned;             /* fd was opened by log_target_open() */
	int fd_is_sock;           /* LOG_T_FD on a socket: send(MSG_DONTWAIT) */
	int facility;             /* 0..23 */
	int level;                /* max level sent (0 emerg .. 7 debug) */
	int minlevel;             /* levels below are raised to this */
	enum log_format format;
	int maxlen;               /* `len N`, default 1024, LF included */
	struct log_sample *sample; /* NULL: every log */
	char *addr_text;          /* the address as written, for messages */
	char *conf_file;          /* where it was declared (set by the caller) */
	int conf_line;
};

/* Syslog level names "emerg".."debug" <-> 0..7, facility names <-> 0..23,
 * format names. Unknown names give -1; bad numbers give NULL. */
int log_level_from_name(const char *name);
int log_facility_from_name(const char *name);
int log_format_from_name(const char *name);
const char *log_level_name(int level);
const char *log_facility_name(int facility);

/* Parses the words after `log` (args[0] is the address: "127.0.0.1:514",
 * "127.0.0.1" (port 514), "[::1]:514", "ipv6@::1:514", "udp@", "udp4@",
 * "udp6@", "ip@", "ipv4@", "dgram+" prefixes, "/dev/log", "unix@path",
 * "uxdg@path", "abns@name", "stdout", "stderr", "fd@N", a host name resolved
 * now), then `len N`, `format F` and `sample R:S` in any order, then
 * FACILITY [LEVEL [MINLEVEL]]. `log global` and `no log` are the caller's.
 * Returns a new target (fd not opened), or NULL with a message in <err>. */
struct log_target *log_target_parse(char **args, int nargs, char *err, size_t errlen);

/* Opens the target's socket, or prepares its descriptor. Returns 0, or -1
 * with a message. Calling it on an opened target does nothing. */
int log_target_open(struct log_target *t, char *err, size_t errlen);
void log_target_free(struct log_target *t);

/* A deep copy of <src> (strings and sample ranges duplicated, its own sample
 * counter, not opened), e.g. for what a proxy inherits from `defaults`.
 * A plain struct copy would share, then free twice, the owned pointers. */
struct log_target *log_target_clone(const struct log_target *src);

/* The syslog header fields that do not come from the target. */
struct log_header {
	const char *tag;          /* program name; NULL: "sluice" */
	int pid;                  /* <= 0: not sent */
	const char *hostname;     /* `log-send-hostname`, NULL when not set */
	int64_t now_us;           /* wall clock, µs since epoch; 0: now */
};

/* Sends <msg> (trailing LF/NUL stripped) at <level> to every target of
 * <targets> whose level allows it, each with its own framing, without a
 * hostname. <tag> is the program name ("sluice" if NULL), <pid> the process
 * id. */
void log_send(struct list *targets, int level, const char *tag, int pid,
              const char *msg, size_t len);

/* Same, with every header field given. */
void log_send_hdr(struct list *targets, int level, const struct log_header *hdr,
                  const char *msg, size_t len);

/* The exact bytes log_send_hdr() would send to <t> for a message at <level>
 * (already filtered, before minlevel), into <out> (NUL-terminated, cut to
 * fit). Returns the frame length. */
size_t log_frame(const struct log_target *t, int level, const struct log_header *hdr,
                 const char *msg, size_t len, char *out, size_t outsz);

/* ---- log-format ---- */

/* What a stream knows when it logs. Timers are in ms, -1 when that phase
 * did not happen (HAProxy prints -1). Addresses have ss_family 0 if unset
 * (printed "-"); unix sockets print "unix" and their listener id as port. */
struct log_fields {
	struct sockaddr_storage cli;      /* %ci %cp */
	struct sockaddr_storage fe;       /* %fi %fp: frontend (dst) address */
	struct sockaddr_storage be_src;   /* %bi %bp: our side of server conn */
	struct sockaddr_storage srv;      /* %si %sp */
	const char *fe_name;              /* %f %ft */
	const char *be_name;              /* %b; NULL: the frontend (no backend yet) */
	const char *srv_name;             /* %s ("<NOSRV>" when NULL) */
	const char *hostname;             /* %H; NULL: global.node */
	const char *unique_id;            /* %ID */
	const char *ssl_version;          /* %sslv, NULL without TLS */
	const char *ssl_cipher;           /* %sslc */
	int fe_ssl;                       /* %ft gets a '~' suffix */
	int listener_id;                  /* %cp %fp on unix sockets */
	int logasap;                      /* option logasap: '+' before %Tt %Tu %B */
	int64_t accept_us;                /* wall clock at accept, µs since epoch */
	int Th;                           /* handshake time (PROXY, TLS) */
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
	unsigned int req_counter;         /* %rt: request/session number */
	unsigned int log_count;           /* %lc: frontend log counter */
	int pid;                          /* %pid; 0: global.pid */
	int thread;                       /* (not printed by HAProxy 2.6) */
	/* HTTP mode (is_http 0: the HTTP variables print as HAProxy prints
	 * them for a TCP stream) */
	int is_http;
	int status;                       /* %ST, -1 if none */
	const char *req_line;             /* %r %HM %HU %HP %HQ %HV: the request line as
	                                   * received (<= 1024 bytes), NULL: "<BADREQ>" */
	size_t req_line_len;              /* its length (it ends at a NUL byte too) */
	int Tq, TR, Ti, Tr, Ta;           /* %Tq %TR %Ti %Tr %Ta, -1 unset. %tr %trg %trl:
	                                   * accept_us + Th + Ti (accept_us if Ti < 0);
	                                   * %Tu: Tt - Ti; %Td: Tt - Tq - Tw - Tc - Tr */
	const char *const *req_caps;      /* %hr %hrl: captured request header values */
	int nreq_caps;                    /* (an entry may be NULL: not present) */
	const char *const *res_caps;      /* %hs %hsl */
	int nres_caps;
	char cookie_term[3];              /* %tsc chars 3-4, "--" by default */
	const char *cookie_cli, *cookie_srv;  /* %CC %CS (NULL: "-") */
	uint64_t req_counter64;           /* txn id, for %rt when >= 2^32 */
	struct smp_ctx *smp;              /* %[expr] evaluated against it (NULL: "-") */
};

struct lf_node;                       /* compiled element, logformat.c private */

struct lf_expr {
	struct lf_node *nodes;
	int count;
};

/* HAProxy 2.6's built-in formats, exactly: `option tcplog`, `option
 * httplog`, `option httplog clf` and `option httpslog` (the last one needs
 * the fetches fc_err, ssl_fc_err, ssl_c_err, ssl_c_ca_err,
 * ssl_fc_is_resumed and ssl_fc_sni to compile). */
#define LF_TCPLOG_FORMAT \
	"%ci:%cp [%t] %ft %b/%s %Tw/%Tc/%Tt %B %ts %ac/%fc/%bc/%sc/%rc %sq/%bq"
#define LF_HTTPLOG_FORMAT \
	"%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC %CS %tsc " \
	"%ac/%fc/%bc/%sc/%rc %sq/%bq %hr %hs %{+Q}r"
#define LF_HTTPLOG_CLF_FORMAT \
	"%{+Q}o %{-Q}ci - - [%trg] %r %ST %B \"\" \"\" %cp %ms %ft %b %s %TR %Tw %Tc " \
	"%Tr %Ta %tsc %ac %fc %bc %sc %rc %sq %bq %CC %CS %hrl %hsl"
#define LF_HTTPSLOG_FORMAT \
	LF_HTTPLOG_FORMAT " %[fc_err]/%[ssl_fc_err,hex]/%[ssl_c_err]/%[ssl_c_ca_err]/" \
	"%[ssl_fc_is_resumed] %[ssl_fc_sni]/%sslv/%sslc"

/* Compiles a log-format string: literal text, "%%", %var, %{flags}var and
 * %[sample expression] (flags: +Q/-Q quote, +X/-X hex, +E/-E escape, +M/-M
 * "-" for empty, "%o" sets them for the variables after it). A run of
 * spaces is a separator: it prints one space, and only after something
 * that is not a space. Unknown variables, bad sample expressions and bad
 * syntax are errors (message in <err>). Returns 0, or -1 with <out> left
 * empty. */
int lf_compile(const char *fmt, struct lf_expr *out, char *err, size_t errlen);
void lf_free(struct lf_expr *e);

/* HAProxy refuses, in a proxy that is not in HTTP mode, the variables that
 * only an HTTP transaction has (%r %HM %HP %HPO %HQ %HU %HV %CC %CS %Tq %TR
 * %Ti %Tr %Ta %tr %trg %trl). With <http_mode> 0, returns -1 and "format
 * variable 'r' is reserved for HTTP mode" if <e> has one; else 0. */
int lf_check_mode(const struct lf_expr *e, int http_mode, char *err, size_t errlen);
/* 0 if every %[expr] of <e> uses only what <avail> (SMP_USE_*) offers, else
 * -1 with HAProxy's "may not be reliably used here" reason in <err>. */
int lf_check_use(const struct lf_expr *e, unsigned int avail, char *err, size_t errlen);

/* Renders <e> with <f> into <out> (always NUL-terminated, truncated to fit).
 * Returns the length written. No allocation; %[sample] results live in the
 * calling thread's sample scratch buffers, evaluated against f->smp (whose
 * `final` the caller sets: logging happens at the end). */
size_t lf_render(const struct lf_expr *e, const struct log_fields *f,
                 char *out, size_t outsz);

#endif
