/* Samples, sample fetches, converters and sample expressions (HAProxy 2.6
 * configuration manual, section 7.3).
 *
 * A sample is a typed value: boolean, signed 64-bit integer, IPv4 or IPv6
 * address, string, binary block, or HTTP method. A sample expression is a
 * fetch followed by converters, `fetch(args),conv1(args),conv2`, compiled
 * once at configuration time by sample_expr_parse() and evaluated per stream
 * by sample_expr_eval() against a caller-provided `struct smp_ctx`. The
 * engine never sees a stream or a connection: everything a fetch needs comes
 * from the context, either as plain fields (messages, variable stores, time)
 * or through the accessor functions of `struct smp_ops` (addresses, names,
 * backend and server figures).
 *
 * Each module declares its fetches and converters in one table near the top
 * of its file and registers it with SMP_REGISTER_FETCHES() /
 * SMP_REGISTER_CONVS(); the tables are read-only after start-up.
 *
 * Memory: a string or binary sample either points to memory it does not own
 * (`str.size == 0`: a message, a pattern, a constant; never write to it) or
 * to one of the calling thread's scratch buffers (smp_trash_get()). Each
 * thread has SMP_TRASH_COUNT of them, used in turn, so a result stays valid
 * until that many more buffers were taken by the same thread: consume or
 * copy a result before the next evaluation. No allocation on this path.
 *
 * Thread safety: parsing is for configuration time (one thread). Evaluation
 * of a compiled expression is read-only on the expression and may run on any
 * number of threads at once; per-thread state is the scratch buffers and the
 * random generator.
 */
#ifndef SLUICE_EXPR_SAMPLE_H
#define SLUICE_EXPR_SAMPLE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sluice/http/msg.h>

/* ------------------------------------------------------------------ types */

enum smp_type {
	SMP_T_ANY = 0,   /* declarations only: any type (var(), set-var) */
	SMP_T_BOOL,      /* data.sint: 0 or 1 */
	SMP_T_SINT,      /* data.sint */
	SMP_T_ADDR,      /* declarations only: IPV4 or IPV6 */
	SMP_T_IPV4,      /* data.ipv4 */
	SMP_T_IPV6,      /* data.ipv6 */
	SMP_T_STR,       /* data.str */
	SMP_T_BIN,       /* data.str */
	SMP_T_METH,      /* data.meth */
	SMP_TYPES
};

struct smp_str {
	char *ptr;
	size_t len;
	size_t size;     /* 0: read-only memory the sample does not own */
};

/* sample->flags */
#define SMP_F_NOT_LAST    0x01  /* more values follow: call the fetch again
                                 * with the same sample (iteration state in
                                 * sample->iter) */
#define SMP_F_MAY_CHANGE  0x02  /* result (or failure) may change once more
                                 * data arrive: an ACL reports "miss" */
#define SMP_F_CONST       0x04  /* data must not be written (implied by
                                 * str.size == 0) */

/* sample->opt: set by the caller before the fetch */
#define SMP_OPT_ITERATE   0x01  /* ACL use: report every value of a
                                 * multi-valued fetch (hdr(), cook()...) */
#define SMP_OPT_FINAL     0x02  /* no more data will come: never MAY_CHANGE */

struct sample {
	enum smp_type type;
	unsigned int flags;
	unsigned int opt;
	union {
		int64_t sint;
		struct in_addr ipv4;
		struct in6_addr ipv6;
		struct smp_str str;
		struct {
			enum http_meth meth;
			struct smp_str str;   /* the token, for HTTP_METH_OTHER */
		} meth;
	} data;
	union {                       /* a multi-valued fetch's position */
		void *p;
		int64_t i[4];
	} iter;
};

const char *smp_type_name(enum smp_type t);

/* Casts (the HAProxy cast table; "-" not castable):
 *
 *   from \ to  BOOL  SINT  IPV4  IPV6  STR   BIN   METH
 *   BOOL       =     0/1   -     -     "0/1" 8B BE -
 *   SINT       !=0   =     ipv4  ::ffff -    dec   8B BE -
 *   IPV4       -     u32   =     ::ffff dot  4B    -
 *   IPV6       -     -     mapped =    text  16B   -
 *   STR        int   int   parse parse =     =     method
 *   BIN        -     -     -     -     to NUL =    method
 *   METH       -     -     -     -     name  name  =
 *
 * STR to SINT/BOOL reads an optional sign and digits and stops at the first
 * other character ("12abc" is 12, "abc" is 0), saturating at the int64
 * limits. IPV6 to IPV4 works for ::ffff:a.b.c.d, ::a.b.c.d and 2002:AABB:CCDD::
 * only. BIN to STR stops at the first NUL byte.
 * smp_cast_ok() tells whether a cast exists (for configuration checks);
 * smp_cast() performs it, returning 0 if the value cannot be converted. */
int smp_cast_ok(enum smp_type from, enum smp_type to);
int smp_cast(struct sample *smp, enum smp_type to);

/* Makes a string/binary sample writable (copies it into a scratch buffer if
 * it is read-only), with room for at least <extra> more bytes. Returns 0 if
 * it does not fit. */
int smp_make_rw(struct sample *smp, size_t extra);

/* Sets a sample: helpers for fetches and converters. */
void smp_set_bool(struct sample *smp, int v);
void smp_set_sint(struct sample *smp, int64_t v);
void smp_set_const_str(struct sample *smp, enum smp_type t, const char *p, size_t len);

/* The calling thread's next scratch buffer (contents undefined), and its
 * size (global.bufsize, at least 1024). */
#define SMP_TRASH_COUNT 4
char *smp_trash_get(size_t *size);

/* Puts a scratch buffer into <smp> as an empty writable string of <t>. */
void smp_set_trash(struct sample *smp, enum smp_type t);

/* Thread-local pseudo-random numbers (xoshiro-style, seeded from
 * getrandom()): not for security. */
uint64_t smp_random64(void);

/* ------------------------------------------------------------------ args */

#define SMP_MAX_ARGS 6

enum smp_arg_type {
	ARGT_STOP = 0,   /* end of the specification */
	ARGT_SINT,       /* integer */
	ARGT_STR,        /* string (may be empty) */
	ARGT_BE,         /* backend name (resolved by the integrator) */
	ARGT_FE,         /* frontend name */
	ARGT_SRV,        /* [backend/]server */
	ARGT_TAB,        /* stick-table name */
	ARGT_IPV4,       /* IPv4 address */
	ARGT_MSK4,       /* IPv4 mask: dotted or CIDR length */
	ARGT_IPV6,       /* IPv6 address */
	ARGT_MSK6,       /* IPv6 mask: colon form or CIDR length */
	ARGT_VAR,        /* variable name "scope.name" */
};

/* A variable reference, resolved at parse time (see vars.h). */
enum var_scope {
	VAR_SCOPE_PROC = 0, VAR_SCOPE_SESS, VAR_SCOPE_TXN, VAR_SCOPE_REQ,
	VAR_SCOPE_RES, VAR_SCOPES
};
struct var_ref {
	enum var_scope scope;
	uint32_t id;               /* interned name, see vars_intern() */
};

struct smp_arg {
	enum smp_arg_type type;
	union {
		int64_t sint;
		struct { char *ptr; size_t len; } str;   /* NUL-terminated */
		struct in_addr ipv4;   /* IPV4, MSK4 */
		struct in6_addr ipv6;  /* IPV6, MSK6 */
		struct var_ref var;
	} data;
	char *text;                /* the argument as written (after unquoting) */
	void *resolved;            /* BE/FE/SRV/TAB: set by the integrator */
};

struct smp_args {
	int n;
	struct smp_arg a[SMP_MAX_ARGS];
	void *priv;                /* compiled data made by a keyword's check() */
	void (*free_priv)(void *priv);
	const void *kw_priv;       /* the keyword's own ->priv (set by the parser) */
};

/* Helpers for check() callbacks: turn a STR argument into a SINT or a VAR
 * ("numeric value or variable name" of add(), sub()...). */
int smp_arg_int_or_var(struct smp_arg *arg, char *err, size_t errlen);
/* Reads an argument that is either SINT or VAR. Returns 0 if the variable
 * is not set or cannot be made an integer. */
struct smp_ctx;
int smp_arg_get_sint(const struct smp_arg *arg, struct smp_ctx *ctx, int64_t *out);

/* ------------------------------------------------------------------ context */

/* What a fetch uses (fetch->use), and what a context offers (ctx->avail):
 * a fetch whose bits are not all available fails without being called. */
#define SMP_USE_INTRN   0x0001  /* internal state: always available */
#define SMP_USE_L4CLI   0x0002  /* client connection: addresses, ports */
#define SMP_USE_L5      0x0004  /* frontend, listener: known from the accept */
#define SMP_USE_BE      0x0008  /* a backend is chosen */
#define SMP_USE_SRV     0x0010  /* a server is chosen */
#define SMP_USE_TXN     0x0020  /* a transaction exists: captures, ids */
#define SMP_USE_L6REQ   0x0040  /* request buffer contents */
#define SMP_USE_HRQHV   0x0080  /* request headers parsed */
#define SMP_USE_HRQBO   0x0100  /* request body */
#define SMP_USE_HRSHV   0x0200  /* response headers parsed */
#define SMP_USE_HRSBO   0x0400  /* response body */
#define SMP_USE_HRQHP   0x0800  /* request method, kept for the whole txn */
#define SMP_USE_HRSHP   0x1000  /* response status, kept for the whole txn */
#define SMP_USE_HDRS    0x2000  /* the headers of the side the rule set works
                                 * on (hdr()): request or response */
#define SMP_USE_L5CLI   0x4000  /* the client connection's transport (TLS):
                                 * known once the session is established,
                                 * from tcp-request session on */
#define SMP_USE_L5SRV   0x8000  /* the server connection's transport (TLS):
                                 * known on the response side and in logs */
#define SMP_USE_ALL     0xffff

/* What each place may use (for smp_check_use() at configuration time),
 * as HAProxy 2.6 decides it. The frontend and listener are known from the
 * accept on; a transaction (and the request) from tcp-request content on.
 * A backend is known in a backend's request rules, not in a frontend's
 * (a listen section is both: add SMP_USE_BE there), nor when use_backend
 * or unique-id-format run. Response rules see the response, the backend
 * and the server, but not the request head: it was forwarded (only its
 * method is kept). A log line is written once both heads were forwarded:
 * only what the transaction keeps. The client connection's TLS session
 * exists from tcp-request session on (connection rules run before the
 * handshake); the server connection's only on the response side. */
#define SMP_AVAIL_TCP_CONN   (SMP_USE_INTRN | SMP_USE_L4CLI | SMP_USE_L5)
#define SMP_AVAIL_TCP_SESS   (SMP_AVAIL_TCP_CONN | SMP_USE_L5CLI)
#define SMP_AVAIL_TCP_CONT   (SMP_AVAIL_TCP_SESS | SMP_USE_TXN | SMP_USE_L6REQ | \
                              SMP_USE_HRQHV | SMP_USE_HRQBO | SMP_USE_HRQHP | SMP_USE_HDRS)
#define SMP_AVAIL_HTTP_REQ   SMP_AVAIL_TCP_CONT
#define SMP_AVAIL_SWITCH     SMP_AVAIL_TCP_CONT     /* use_backend, unique-id-format */
#define SMP_AVAIL_HTTP_RES   (SMP_AVAIL_TCP_SESS | SMP_USE_BE | SMP_USE_SRV | SMP_USE_TXN | \
                              SMP_USE_HRQHP | SMP_USE_HRSHV | SMP_USE_HRSBO | \
                              SMP_USE_HRSHP | SMP_USE_HDRS | SMP_USE_L5SRV)
#define SMP_AVAIL_LOG        (SMP_AVAIL_TCP_SESS | SMP_USE_BE | SMP_USE_SRV | SMP_USE_TXN | \
                              SMP_USE_HRQHP | SMP_USE_HRSHP | SMP_USE_L5SRV)

/* 0 if <use> (an expression's or a condition's) is within <avail>, else -1
 * with "... needs 'HTTP response headers' which is not available here" in
 * <err>, naming <what> (the fetch or ACL as written). */
int smp_check_use(unsigned int use, unsigned int avail, const char *what,
                  char *err, size_t errlen);

/* smp_ctx->dir: the side being evaluated (hdr() follows it) */
enum smp_dir { SMP_DIR_REQ = 0, SMP_DIR_RES = 1 };

enum smp_addr_kind { SMP_ADDR_CLI_SRC, SMP_ADDR_CLI_DST, SMP_ADDR_SRV_SRC,
                     SMP_ADDR_SRV_DST };
enum smp_name_kind { SMP_NAME_FE, SMP_NAME_BE, SMP_NAME_SRV, SMP_NAME_LISTENER,
                     SMP_NAME_FE_DEFBE };
enum smp_id_kind   { SMP_ID_FE, SMP_ID_BE, SMP_ID_SRV, SMP_ID_LISTENER };
enum smp_be_metric { SMP_BE_NBSRV, SMP_BE_CONN, SMP_BE_QUEUE, SMP_BE_AVG_QUEUE,
                     SMP_BE_CONNSLOTS, SMP_BE_CONN_FREE, SMP_BE_SESS_RATE };
enum smp_srv_metric { SMP_SRV_CONN, SMP_SRV_QUEUE, SMP_SRV_IS_UP, SMP_SRV_CONN_FREE,
                      SMP_SRV_WEIGHT, SMP_SRV_IWEIGHT, SMP_SRV_UWEIGHT,
                      SMP_SRV_SESS_RATE };
enum smp_fe_metric { SMP_FE_CONN, SMP_FE_REQ_RATE, SMP_FE_SESS_RATE };
/* Integer facts of the stream (fetch_stream.c) */
enum smp_stream_int {
	SMP_SI_DST_CONN,            /* connections on the listener that accepted it */
	SMP_SI_FE_CLIENT_TIMEOUT,   /* ms */
	SMP_SI_BE_SERVER_TIMEOUT,
	SMP_SI_BE_TUNNEL_TIMEOUT,
	SMP_SI_CUR_SERVER_TIMEOUT,  /* after set-timeout */
	SMP_SI_CUR_TUNNEL_TIMEOUT,
	SMP_SI_PRIO_CLASS,
	SMP_SI_PRIO_OFFSET,         /* ms */
	SMP_SI_FC_HTTP_MAJOR,       /* 1 or 2 */
	SMP_SI_BC_HTTP_MAJOR,
	SMP_SI_FC_ERR,              /* conn_err.h codes */
};
enum smp_conn_side  { SMP_CONN_FRONT, SMP_CONN_BACK };

struct ssl_st;                   /* OpenSSL's SSL */

/* Accessors the integrator provides (any may be NULL: the fetch fails).
 * Each returns 1 with a result, 0 when it has none. For backend and server
 * figures, <be>/<srv> is the argument as written (its ->text, and ->resolved
 * if the integrator resolved it at configuration time), or NULL for the
 * current backend/server of the stream. */
struct smp_ops {
	int (*addr)(const struct smp_ctx *ctx, enum smp_addr_kind which,
	            struct sockaddr_storage *out);
	int (*name)(const struct smp_ctx *ctx, enum smp_name_kind which,
	            const char **out);
	int (*id)(const struct smp_ctx *ctx, enum smp_id_kind which, int64_t *out);
	int (*be_metric)(const struct smp_ctx *ctx, const struct smp_arg *be,
	                 enum smp_be_metric m, int64_t *out);
	int (*srv_metric)(const struct smp_ctx *ctx, const struct smp_arg *be,
	                  const struct smp_arg *srv, enum smp_srv_metric m,
	                  int64_t *out);
	/* <fe>: the frontend argument as written, or NULL for the stream's */
	int (*fe_metric)(const struct smp_ctx *ctx, const struct smp_arg *fe,
	                 enum smp_fe_metric m, int64_t *out);
	/* unique-id: generated on first use (unique-id-format) and kept */
	int (*unique_id)(struct smp_ctx *ctx, struct ist *out);
	/* The TLS session of the client connection (FRONT) or of the server
	 * connection (BACK), once its handshake is complete; NULL when that
	 * connection is not under TLS, or there is none (yet, or any more).
	 * Only to read, on the calling thread, during the evaluation. */
	struct ssl_st *(*ssl)(const struct smp_ctx *ctx, enum smp_conn_side side);
	int (*stream_int)(const struct smp_ctx *ctx, enum smp_stream_int which, int64_t *out);
};

struct var_store;

/* What the caller (a stream, a health check, the CLI) gives the engine.
 * Zero it, then fill what exists. Pointers are borrowed for the time of
 * the evaluation. */
struct smp_ctx {
	const struct smp_ops *ops;
	void *owner;                 /* opaque, for the accessors */
	unsigned int avail;          /* SMP_USE_* available (0: all) */
	enum smp_dir dir;
	int final;                   /* no more data will come (SMP_OPT_FINAL):
	                              * set it for http-request/http-response
	                              * rules and at the end of an inspect
	                              * delay; leave it clear while a
	                              * tcp-request content rule may wait */
	int thread;                  /* calling thread number */

	struct http_msg *req;        /* parsed request head, or NULL */
	struct http_msg *res;        /* parsed response head, or NULL */
	struct ist req_body;         /* request body bytes available */
	int req_body_complete;       /* the whole request body is there */
	struct ist res_body;
	int res_body_complete;
	struct ist req_data;         /* raw request buffer contents, for the
	                              * layer-6 fetches (req.payload, RDP) */
	size_t req_len;              /* bytes in the request buffer (req.len);
	                              * req_data.len when req_data is set */
	int first_req;               /* first request of the connection */
	uint64_t txn_id;             /* txn.id: request counter */
	/* kept by the transaction once the heads are forwarded (response
	 * rules, logs): the request method (empty: none yet) and the status
	 * sent to the client (0: none yet) */
	struct ist txn_method;
	enum http_meth txn_meth;
	int txn_status;
	int64_t now_us;              /* wall clock, us since epoch (0: read it) */
	const char *res_comp_algo;   /* the response is compressed with this
	                              * algorithm (res.comp, res.comp_algo), or NULL */
	const char *res_cache_name;  /* the response comes from this cache
	                              * (res.cache_hit, res.cache_name), or NULL */

	/* variable stores: sess, txn, req, res (proc is process-wide) */
	struct var_store *vars[VAR_SCOPES];
};

/* ------------------------------------------------------------------ keywords */

typedef int (*smp_fn)(const struct smp_args *args, struct sample *smp,
                      struct smp_ctx *ctx);
/* Validates and compiles the arguments at configuration time (regexes,
 * variable names, map files); may set args->priv. Returns 0 or -1 with a
 * message. */
typedef int (*smp_check_fn)(struct smp_args *args, char *err, size_t errlen);

/* A fetch: <fn> fills <smp> and returns 1, or returns 0 when there is no
 * value (possibly with SMP_F_MAY_CHANGE). */
struct smp_fetch_kw {
	const char *kw;
	smp_fn fn;
	enum smp_arg_type args[SMP_MAX_ARGS];   /* ARGT_STOP-terminated */
	int min_args;                           /* mandatory ones */
	smp_check_fn check;
	enum smp_type out_type;
	unsigned int use;                       /* SMP_USE_* */
	const void *priv;                       /* for a function shared by keywords */
};

/* A converter: <fn> transforms <smp> in place (input already cast to
 * <in_type>) and returns 1, or 0 to make the whole expression fail. */
struct smp_conv_kw {
	const char *kw;
	smp_fn fn;
	enum smp_arg_type args[SMP_MAX_ARGS];
	int min_args;
	smp_check_fn check;
	enum smp_type in_type;
	enum smp_type out_type;
	const void *priv;                       /* for a function shared by keywords */
};

struct smp_fetch_table {
	struct smp_fetch_table *next;
	const struct smp_fetch_kw *kws;         /* kw == NULL terminates */
};
struct smp_conv_table {
	struct smp_conv_table *next;
	const struct smp_conv_kw *kws;
};

void smp_register_fetches(struct smp_fetch_table *t);
void smp_register_convs(struct smp_conv_table *t);

#define SMP_REGISTER_FETCHES(table) \
	static struct smp_fetch_table table##_reg = { NULL, table }; \
	__attribute__((constructor)) static void table##_register(void) \
	{ smp_register_fetches(&table##_reg); }

#define SMP_REGISTER_CONVS(table) \
	static struct smp_conv_table table##_reg = { NULL, table }; \
	__attribute__((constructor)) static void table##_register(void) \
	{ smp_register_convs(&table##_reg); }

const struct smp_fetch_kw *smp_find_fetch(const char *name, size_t len);
const struct smp_conv_kw *smp_find_conv(const char *name, size_t len);

/* ------------------------------------------------------------------ expressions */

struct smp_conv_step {
	const struct smp_conv_kw *kw;
	struct smp_args args;
};

/* Where an expression was written (configuration time): see
 * smp_cfg_origin_set(). <px> is the integrator's proxy, opaque here. */
struct smp_origin {
	const char *file;
	int line;
	void *px;
};

struct sample_expr {
	const struct smp_fetch_kw *fetch;
	struct smp_args fetch_args;
	int nconv;
	struct smp_conv_step *conv;
	enum smp_type out_type;      /* type of the last step */
	unsigned int use;            /* SMP_USE_* of the fetch */
	/* an expression whose fetch names a backend or a server waits in a
	 * list until smp_resolve_names() (configuration time only) */
	struct sample_expr *names_next, **names_pprev;
	struct smp_origin origin;    /* .file is a copy, owned */
};

/* Parses the expression that starts at <str> (one configuration word). It
 * stops at the end of the string, or, if <end> is not NULL, at the first
 * character that cannot continue the expression (a ']' in a log-format for
 * instance), stored in *end; with <end> NULL any trailing text is an error.
 *
 * Syntax: `fetch[(args)][,conv[(args)]]...`. Arguments are separated by
 * commas and end at ')'; a "double" or 'single' quoted part protects commas
 * and parentheses; outside single quotes a backslash escapes only a
 * backslash or a quote (\\ \" \'), any other backslash is kept with the
 * character after it (regex and "\1" references pass through) and does not
 * protect a comma or a parenthesis, as HAProxy 2.6 does; blanks are kept. Commas in a row count as one and a word may end with commas,
 * but "%[src,]" is "unknown converter ''". Arguments are checked against the keyword's specification and
 * the output type of each step must cast to the input type of the next.
 *
 * Returns the compiled expression, or NULL with a message in <err>
 * (unknown keyword, with a suggestion when one is close; missing or extra
 * arguments; an argument of the wrong type; a converter that cannot apply
 * to the previous type; keyword-specific errors such as a bad regex). */
struct sample_expr *sample_expr_parse(const char *str, const char **end,
                                      char *err, size_t errlen);

void sample_expr_free(struct sample_expr *expr);

/* Backend and server names in fetch arguments are checked once every
 * section was read (they may name a section defined further down), as in
 * HAProxy: the parser keeps each expression whose fetch has an ARGT_BE or
 * ARGT_SRV argument, with the origin last given to smp_cfg_origin_set();
 * the integrator resolves their arguments (smp_arg->resolved) with
 * smp_resolve_names(). An omitted optional backend argument is there as
 * an ARGT_BE argument with an empty text: it means the proxy the
 * expression belongs to (nbsrv in a backend counts that backend's
 * servers); left unresolved (no origin), the stream's backend of the
 * moment stands for it. An ARGT_SRV argument keeps its text as written,
 * "[backend/]server". Configuration time only, one thread. */
void smp_cfg_origin_set(const char *file, int line, void *px);
void smp_cfg_origin_get(struct smp_origin *o);
/* Calls <fn> on the fetch arguments of every expression kept so far (and
 * not freed since), then on the arguments of its converters that name a
 * stick table (<conv> set, <kw> the converter's name), then forgets them;
 * later expressions are not kept. Returns the sum of what <fn> returned
 * (an error count).
 *
 * Stick-table names (ARGT_TAB) are kept the same way, in fetches and in
 * converters; an omitted optional table argument is there as an ARGT_TAB
 * argument with an empty text. */
int smp_resolve_names(int (*fn)(struct smp_args *args, const char *kw, int conv,
                                const struct smp_origin *o, void *priv),
                      void *priv);

/* Evaluates <expr>: the fetch (with smp->opt as set by the caller) then the
 * converters. Returns 1 with the result in <smp>, or 0 (smp->flags may hold
 * SMP_F_MAY_CHANGE). For an iterating fetch (SMP_OPT_ITERATE), call again
 * with the same <smp> while it returns 1 with SMP_F_NOT_LAST set; on the
 * first call <smp> must be zeroed except ->opt. */
int sample_expr_eval(const struct sample_expr *expr, struct smp_ctx *ctx,
                     struct sample *smp);

/* The user and password of the request's Basic Authorization header,
 * decoded into <smp>'s trash (both point there). Returns 1, or 0 when there
 * are none (SMP_F_MAY_CHANGE set if the request is not parsed yet). */
int smp_http_basic_creds(struct smp_ctx *ctx, struct sample *smp, struct ist *user,
                         struct ist *pass);

/* Convenience: evaluates and casts to <type>. Returns 1 or 0. */
int sample_expr_eval_as(const struct sample_expr *expr, struct smp_ctx *ctx,
                        enum smp_type type, struct sample *smp);

/* Applies a converter keyword by name to a sample, with arguments as text
 * (for tests and the CLI). Returns 1, 0 (no result) or -1 (parse error). */
int smp_apply_convs(struct sample *smp, const char *convs, struct smp_ctx *ctx,
                    char *err, size_t errlen);

/* Renders a sample as text into <buf> (what log-format prints). */
size_t smp_to_text(const struct sample *smp, char *buf, size_t len);

/* Parsing helpers shared by the engine's modules. */
int smp_parse_ipv4_mask(const char *s, struct in_addr *mask);
/* The IPv4 address an IPv6 one holds (::ffff:a.b.c.d, ::a.b.c.d,
 * 2002:AABB:CCDD::), 1; 0 if none. */
int smp_ipv6_to_ipv4(const struct in6_addr *a6, struct in_addr *a4);
int smp_parse_ipv6_mask(const char *s, struct in6_addr *mask);
int smp_str_to_sint(const char *p, size_t len, int64_t *out);   /* strict */
/* The unit argument of date(), http_date()...: "s" 1, "ms" 1000, "us"
 * 1000000 into *unit; 0, or -1 with a message. */
int smp_parse_time_unit(const char *u, intptr_t *unit, char *err, size_t errlen);
/* Strict base64 (padding required) or base64url (<url>, padding optional)
 * decoding into <out>; the length, or -1 if invalid or too long. */
long smp_base64_decode(const char *in, size_t len, int url, unsigned char *out, size_t cap);
int smp_meth_from_str(const char *p, size_t len);               /* enum http_meth */
const char *smp_meth_name(enum http_meth m);

/* Appends <len> bytes to the string of <smp> if they fit in its buffer.
 * Returns 1, or 0 (nothing written) when there is no room. */
static inline int smp_str_append(struct sample *smp, const void *p, size_t len)
{
	struct smp_str *s = &smp->data.str;

	if (s->len + len > s->size)
		return 0;
	memcpy(s->ptr + s->len, p, len);
	s->len += len;
	return 1;
}

#endif
