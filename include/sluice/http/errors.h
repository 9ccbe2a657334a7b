/* Responses sluice generates itself: its default error pages, and the ones
 * a configuration supplies with errorfile, errorloc/errorloc302/errorloc303,
 * http-error and errorfiles (http-errors sections).
 *
 * A struct http_reply is a complete HTTP/1 response built and validated at
 * configuration time, stored in canonical form (CRLF line ends, one
 * Content-Length) together with its parsed head, so that a mux can send the
 * bytes as they are or copy the head into a stream's message for
 * http-after-response rules. Replies are immutable once built.
 *
 * Ownership. Replies are reference counted, and the count only changes
 * while the configuration is parsed and checked (one thread) or at exit:
 * at run time they are read-only and shared by every thread without
 * locking. A proxy's table inherits its defaults section's replies by
 * taking references (http_errors_copy()), so a defaults section may be
 * released or reused once the proxies that follow it were set up. The
 * built-in pages are static and never counted.
 *
 * Errors are returned with a message naming the file (or the URL) and the
 * problem; the configuration parser prefixes file, line and keyword.
 */
#ifndef SLUICE_HTTP_ERRORS_H
#define SLUICE_HTTP_ERRORS_H

#include <stddef.h>
#include <sys/types.h>
#include <sluice/http/msg.h>

/* Statuses sluice may generate and a configuration may customise, as
 * HAProxy 2.6 lists them for errorfile, errorloc and http-error. */
#define HTTP_ERR_NCODES 17
extern const int http_err_codes[HTTP_ERR_NCODES];

/* Index of <status> in http_err_codes[], or -1 if it is not one of them. */
int http_err_slot(int status);

/* http_reply.flags */
#define HTTP_REPLY_F_EMPTY    0x01  /* empty errorfile (/dev/null): send nothing, close */
#define HTTP_REPLY_F_CLOSE    0x02  /* close the connection once sent (the body ends with
                                     * it, Connection: close, or an HTTP/1.0 reply
                                     * without keep-alive) */
#define HTTP_REPLY_F_DYNAMIC  0x04  /* fields or body come from formats: see
                                     * http_reply_render() */
#define HTTP_REPLY_F_BUILTIN  0x08  /* one of sluice's own pages: static, not counted */

/* Log-format hook for http-error lf-string / lf-file / hdr <fmt>: renders the
 * compiled format <fmt> for the stream context <ctx> into <out>. Returns the
 * length written, or -1 if <room> is too small. Provided by the log-format
 * layer when it can render HTTP samples. */
typedef ssize_t (*http_reply_fmt_fn)(const void *fmt, void *ctx, char *out, size_t room);

struct http_reply_dyn_hdr {
	struct ist name;
	const void *fmt;            /* passed to the reply's fmt_fn */
};

struct http_reply {
	int refcnt;                 /* configuration time only, see above */
	unsigned int flags;         /* HTTP_REPLY_F_* */
	int status;                 /* the status sent: an errorfile may differ from the
	                             * code it is configured for, as HAProxy allows */
	const char *raw;            /* the whole response (static replies); for dynamic
	                             * ones, the start line and fixed fields */
	size_t raw_len;
	size_t head_len;            /* bytes of the head in raw (static replies) */
	struct http_msg msg;        /* parsed head, spans into raw (static replies) */
	/* dynamic replies */
	http_reply_fmt_fn fmt_fn;
	const void *body_fmt;       /* NULL: empty body */
	int ndyn;
	const struct http_reply_dyn_hdr *dyn;
};

/* --- building replies (configuration time) ------------------------------ */

/* errorfile, from bytes already read: <name> names them in messages,
 * <max_size> is tune.bufsize. Empty <data> gives an EMPTY reply (HAProxy's
 * /dev/null idiom). Otherwise the bytes must be a complete HTTP/1.x
 * response: final status, a header section the strict parser accepts (bare
 * LF line ends tolerated and rewritten as CRLF), no Transfer-Encoding, and a
 * body matching Content-Length; without Content-Length the body ends with
 * the connection (Connection: close is added, HTTP_REPLY_F_CLOSE). */
struct http_reply *http_reply_parse(const char *data, size_t len, const char *name,
                                    size_t max_size, char *err, size_t errlen);

/* errorfile <code> <path>: reads <path> (at most <max_size> bytes) and
 * calls http_reply_parse(). */
struct http_reply *http_reply_load_file(const char *path, size_t max_size,
                                        char *err, size_t errlen);

/* errorloc/errorloc302 (<status> 302) and errorloc303 (303): an empty
 * redirect to <url>, the exact Location value. */
struct http_reply *http_reply_redirect(int status, const char *url, size_t max_size,
                                       char *err, size_t errlen);

/* http-error status <status> [content-type <ct>] [string <body>] [hdr <n> <v>]*:
 * a response with the canonical reason, Content-Length, Content-Type when
 * there is a body (then required) and the fields <hdrs>. */
struct http_reply *http_reply_build(int status, const char *content_type,
                                    const char *body, size_t body_len,
                                    const struct http_hdr *hdrs, int nhdrs,
                                    size_t max_size, char *err, size_t errlen);

/* http-error ... file <path>: the body read from <path>. */
struct http_reply *http_reply_build_file(int status, const char *content_type,
                                         const char *path, const struct http_hdr *hdrs,
                                         int nhdrs, size_t max_size, char *err,
                                         size_t errlen);

/* http-error ... lf-string <fmt> / hdr <name> <fmt>: the body and the
 * <dyn> fields are rendered per stream by <fn>. <body_fmt> and the formats
 * of <dyn> are borrowed (they live with the configuration); <dyn> is
 * copied. */
struct http_reply *http_reply_build_dynamic(int status, const char *content_type,
                                            http_reply_fmt_fn fn, const void *body_fmt,
                                            const struct http_reply_dyn_hdr *dyn, int ndyn,
                                            const struct http_hdr *hdrs, int nhdrs,
                                            char *err, size_t errlen);

void http_reply_ref(struct http_reply *r);
void http_reply_release(struct http_reply *r);

/* --- using replies (run time, any thread) -------------------------------- */

/* Writes the response into <out>: the stored bytes, or for a dynamic reply
 * the fixed part, the rendered fields, Content-Length and the rendered body
 * (<ctx> goes to the formats). Returns its length (0 for an EMPTY reply) or
 * -1 if it does not fit in <room>; a dynamic reply needs 40 bytes of room
 * beyond its length (the Content-Length line is written once the body is
 * known). */
ssize_t http_reply_render(const struct http_reply *r, void *ctx, char *out, size_t room);

/* sluice's own page for <status>, one of http_err_codes[]; NULL otherwise.
 * 400 and 408 carry Connection: close (the request stream cannot be
 * resumed), the others let the connection live on, as HAProxy's do. */
const struct http_reply *http_reply_builtin(int status);

/* --- per-proxy tables ----------------------------------------------------- */

struct http_errors_import;

/* The replies a proxy overrides, by slot of http_err_codes[]. Directives are
 * numbered in configuration order (<seq>) so that an errorfiles import,
 * resolved after every section was read (the http-errors section may come
 * later in the file), still overrides exactly the entries set before it. */
struct http_errors {
	struct http_reply *reply[HTTP_ERR_NCODES];   /* NULL: not customised */
	unsigned int seq[HTTP_ERR_NCODES];           /* directive that set the slot */
	unsigned int next_seq;
	struct http_errors_import *imports;          /* pending errorfiles, in order */
};

void http_errors_init(struct http_errors *t);
/* Drops the table's references and pending imports. */
void http_errors_deinit(struct http_errors *t);
/* Inheritance from a defaults section: <dst> (initialised, normally empty)
 * gets references on <src>'s replies and copies of its pending imports. */
int http_errors_copy(struct http_errors *dst, const struct http_errors *src,
                     char *err, size_t errlen);

/* errorfile/errorloc/http-error: <r> serves <code> (the table takes its own
 * reference). "status code 'N' not handled" unless <code> is in
 * http_err_codes[]. */
int http_errors_set(struct http_errors *t, int code, struct http_reply *r,
                    char *err, size_t errlen);
/* http-error status <code> default-errorfiles: back to the frontend's reply,
 * else the built-in one. */
int http_errors_reset(struct http_errors *t, int code, char *err, size_t errlen);
/* errorfiles <set> [<code>...]: recorded now, resolved by
 * http_errors_resolve(); <file>/<line> locate it in later messages. */
int http_errors_import(struct http_errors *t, const char *set, const int *codes,
                       int ncodes, const char *file, int line, char *err, size_t errlen);

/* Named sets: the http-errors sections, owned by the configuration. */
struct http_errors_set {
	struct http_errors_set *next;
	char *name;
	char *file;                 /* where the section starts */
	int line;
	struct http_errors errors;  /* errorfile lines of the section */
};

struct http_errors_sets {
	struct http_errors_set *head;
};

/* A new empty set; a name already used is an error naming the first one. */
struct http_errors_set *http_errors_set_new(struct http_errors_sets *sets, const char *name,
                                            const char *file, int line,
                                            char *err, size_t errlen);
struct http_errors_set *http_errors_set_find(const struct http_errors_sets *sets,
                                             const char *name);
void http_errors_sets_free(struct http_errors_sets *sets);

/* Warning reporter, such as cfg_warning(). */
typedef void (*http_errors_warn_fn)(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Applies the pending imports of <t> in order. An unknown set is an error;
 * a code the set does not define is a warning through <warn> (may be NULL),
 * as in HAProxy. */
int http_errors_resolve(struct http_errors *t, const struct http_errors_sets *sets,
                        http_errors_warn_fn warn, char *err, size_t errlen);

/* The reply for <status>: the backend's, else the frontend's, else the
 * built-in one; NULL if sluice has none for <status>. <be> and <fe> may be
 * NULL or the same table. */
const struct http_reply *http_errors_find(const struct http_errors *be,
                                          const struct http_errors *fe, int status);

#endif
