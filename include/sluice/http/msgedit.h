/* Editing the internal HTTP message model (DESIGN: "rules read and edit
 * that model and never see wire syntax").
 *
 * A struct http_edit is bound to one struct http_msg for the life of that
 * message. It owns nothing: the caller hands it a memory block (the arena)
 * where every string created by an edit is stored, and the capacity of the
 * message's header array. Edits never touch the input buffer the parser's
 * spans point into, so the head is still parsed once and the original bytes
 * stay valid for logging.
 *
 * Invariants kept by every operation:
 * - a deleted field keeps its slot, marked by an empty name (a parsed name is
 *   never empty); readers skip it with http_hdr_is_deleted(). Slots only
 *   move when an addition finds the array full and some are marked: then
 *   the live fields are packed in order (http_edit_compact());
 * - values carry no leading/trailing OWS, as the parser leaves them;
 * - names are tokens and values hold no NUL, CR or LF (no edit can inject a
 *   field or split a message);
 * - every operation is O(fields + bytes of the values it touches).
 *
 * Errors are negative: HTTP_EDIT_ENOROOM when the arena or the header
 * array is full (HAProxy answers 500 when a rewrite fails, unless
 * "strict-mode off"), HTTP_EDIT_EINVAL for a forbidden byte, or a callback's
 * own negative code passed through. An operation on a single field is all
 * or nothing; one on several occurrences stops at the first failure with
 * the earlier occurrences already changed, which only matters when the
 * caller ignores the failure (strict-mode off), as HAProxy does too.
 *
 * Concurrency: none. A message and its edit context belong to the stream
 * that owns them.
 */
#ifndef SLUICE_HTTP_MSGEDIT_H
#define SLUICE_HTTP_MSGEDIT_H

#include <stddef.h>
#include <sluice/http/msg.h>

/* Sizing advice for callers (see doc in msg.c). The arena plays the part of
 * HAProxy's tune.maxrewrite reserve, 1024 bytes by default; the header array
 * needs room for the fields rules add beyond tune.http.maxhdr. */
#define HTTP_EDIT_ARENA_DEFAULT  1024
#define HTTP_EDIT_EXTRA_HDRS     32

#define HTTP_EDIT_ENOROOM   (-1)
#define HTTP_EDIT_EINVAL    (-2)

/* http_edit.flags: what the edits changed, for the caller to react */
#define HTTP_EDIT_F_START_LINE  0x01   /* method, URI, status or reason */
#define HTTP_EDIT_F_HEADERS     0x02   /* any field */
#define HTTP_EDIT_F_FRAMING     0x04   /* a Content-Length or Transfer-Encoding field was
                                        * added, changed or removed: the header list, not
                                        * msg->content_length, now says what is sent, and
                                        * the body framing decided at parse time may no
                                        * longer match it. HTTP_F_CL_MERGED is cleared. */

struct http_edit {
	struct http_msg *msg;
	char *arena;          /* caller's block, holds every string edits create */
	size_t arena_size;
	size_t arena_used;
	int hdrs_cap;         /* usable entries of msg->hdrs (>= msg->nhdrs) */
	int ndeleted;         /* marked entries among msg->hdrs[0 .. nhdrs) */
	unsigned int flags;   /* HTTP_EDIT_F_* */
};

/* How http_hdr_del() compares names; all but HTTP_MATCH_CB ignore case. */
enum http_match {
	HTTP_MATCH_STR = 0,   /* whole name */
	HTTP_MATCH_BEG,       /* prefix */
	HTTP_MATCH_END,       /* suffix */
	HTTP_MATCH_SUB,       /* substring */
	HTTP_MATCH_CB,        /* caller's matcher (regex, "-m reg") */
};

/* Name matcher for HTTP_MATCH_CB: 1 match, 0 no match, < 0 error. */
typedef int (*http_name_match_fn)(void *arg, struct ist name);

/* Value rewriter (regex substitution): given <in>, returns 1 with the new
 * value in *out, 0 to leave <in> as it is, < 0 on error. Build *out with
 * http_edit_alloc() on <e> (then it is used in place), or point anywhere
 * valid until the call returns (then it is copied into the arena). Other
 * arena space the rewriter takes is given back. */
typedef int (*http_rewrite_fn)(void *arg, struct http_edit *e, struct ist in, struct ist *out);

static inline int http_hdr_is_deleted(const struct http_hdr *h)
{
	return h->name.len == 0;
}

/* Binds <e> to <msg> (already parsed or built). <arena>/<arena_size> may be
 * NULL/0: then only deletions work. <hdrs_cap> is the number of entries of
 * msg->hdrs the caller allocated; values below msg->nhdrs are raised to it. */
void http_edit_init(struct http_edit *e, struct http_msg *msg, void *arena,
                    size_t arena_size, int hdrs_cap);

/* Arena: <len> bytes, or NULL when full (or without arena). No alignment
 * (strings only). */
char *http_edit_alloc(struct http_edit *e, size_t len);
/* Copies <in> into the arena. Returns 0 or HTTP_EDIT_ENOROOM. */
int http_edit_dup(struct http_edit *e, struct ist in, struct ist *out);
/* Packs the live fields in order; indexes held by the caller become stale. */
void http_edit_compact(struct http_edit *e);

/* --- lookups (read only, also usable without an edit context) --------- */

/* Case-insensitive equality of field names. */
int http_name_eq(struct ist a, struct ist b);

/* Index of the first live field named <name> at or after <from>, or -1. */
int http_hdr_find(const struct http_msg *msg, struct ist name, int from);

/* Walks the values of the fields named <name> (every field if name.ptr is
 * NULL), in order. With <split>, each comma-separated element is one value,
 * as HAProxy's hdr() sees them: commas inside a quoted-string do not split
 * (a backslash escapes the next byte there, an unclosed quote runs to the
 * end of the field), elements are trimmed of OWS, empty ones count ("a,,b"
 * is three values, an empty field one). Without <split>, each field is one
 * value (fhdr()). */
struct http_hdr_iter {
	int idx;              /* field of the last value returned */
	const char *next;     /* split mode: start of the next element in that
	                       * field, NULL when the field is exhausted */
};

void http_hdr_iter_init(struct http_hdr_iter *it);
/* 1 with the next value in *val (and it->idx its field), 0 at the end. */
int http_hdr_next(const struct http_msg *msg, struct ist name, int split,
                  struct http_hdr_iter *it, struct ist *val);

/* Number of values (hdr_cnt()) or fields (fhdr_cnt()) named <name>, of all
 * fields if name.ptr is NULL. */
int http_hdr_count(const struct http_msg *msg, struct ist name, int split);

/* Occurrence <occ> of the values named <name>: 1 is the first, -1 the last,
 * -2 the one before; 0 means the last, as HAProxy's hdr(name,0) does.
 * Returns 1 with *val set, 0 if there is no such occurrence. */
int http_hdr_occ(const struct http_msg *msg, struct ist name, int occ, int split,
                 struct ist *val);

/* Path of a request-target: after the scheme and authority of an
 * absolute-form, up to '?'; an empty span (pointing where a path would go)
 * for "*", authority-form, or an absolute-form without path. */
struct ist http_uri_path(struct ist uri);
/* Query after the first '?', without it; ptr NULL when there is no '?'. */
struct ist http_uri_query(struct ist uri);

/* Default reason phrase of <status>: HAProxy 2.6's (its set-status,
 * return and http-error replies use them; a few differ from RFC 9110's
 * wording, e.g. 302 "Moved Temporarily", 504 "Gateway Time-out"), and for
 * a code it does not name, the name of its class ("Success", "Client
 * Error"...). */
const char *http_status_reason(int status);

/* --- field edits --------------------------------------------------------- */

/* add-header: appends "name: value" after the last field. */
int http_hdr_add(struct http_edit *e, struct ist name, struct ist value);

/* set-header: removes every field named <name>, then appends one, as
 * HAProxy does (the new field comes last). Checks the room first: on error
 * nothing changed. */
int http_hdr_set(struct http_edit *e, struct ist name, struct ist value);

/* Marks field <idx> deleted. Returns 0, or HTTP_EDIT_EINVAL for a bad index. */
int http_hdr_del_idx(struct http_edit *e, int idx);

/* del-header [-m str|beg|end|sub|reg]: deletes every field whose name
 * matches; <cb>/<arg> serve HTTP_MATCH_CB. Returns the number deleted or an
 * error from <cb>. */
int http_hdr_del(struct http_edit *e, struct ist name, enum http_match mode,
                 http_name_match_fn cb, void *arg);

/* RFC 9110 section 7.6.1 at ingress: deletes the fields named by the
 * Connection options (but Content-Length, Transfer-Encoding, Host and
 * Connection itself, and Upgrade when <keep_upgrade>), so that rules run on
 * what will be forwarded and a field they add is not removed later because
 * a peer named it. The options stay for the serialiser to filter. Returns
 * the number of fields deleted. O(fields x options). */
int http_hdr_del_conn_named(struct http_edit *e, int keep_upgrade);

/* Replaces the whole value of field <idx>, keeping its place. */
int http_hdr_replace_idx(struct http_edit *e, int idx, struct ist value);

/* replace-header: offers the full value of every field named <name> to
 * <cb>; a field whose value <cb> rewrites keeps its place. Returns the number
 * of fields changed, or an error. */
int http_hdr_replace_header(struct http_edit *e, struct ist name, http_rewrite_fn cb,
                            void *arg);

/* replace-value: offers each comma-separated element (split as for hdr(),
 * trimmed) of every field named <name> to <cb>. A rewritten element takes
 * the place of its whole segment between commas, surrounding OWS included;
 * elements left alone keep their bytes (HAProxy's behaviour: "a , b" with
 * "a" rewritten to "A" gives "A, b"). Returns the number of fields changed,
 * or an error. */
int http_hdr_replace_value(struct http_edit *e, struct ist name, http_rewrite_fn cb,
                           void *arg);

/* --- start line ---------------------------------------------------------- */

/* set-method: a token; msg->meth follows. */
int http_set_method(struct http_edit *e, struct ist method);
/* set-uri: the whole request-target (no SP, CTL or DEL, not empty). */
int http_set_uri(struct http_edit *e, struct ist uri);
/* set-path: replaces the path, keeping scheme, authority and query; a
 * target without path ("*", authority-form) becomes <path>. */
int http_set_path(struct http_edit *e, struct ist path);
/* set-pathq: replaces path and query (the '?' too), keeping scheme and
 * authority. */
int http_set_pathq(struct http_edit *e, struct ist pathq);
/* set-query: replaces what follows the first '?'; adds "?query" when there
 * was none and <query> is not empty; never removes the '?'. */
int http_set_query(struct http_edit *e, struct ist query);
/* set-status: 100 to 999 as HAProxy accepts; an empty or NULL reason takes
 * the canonical one. */
int http_set_status(struct http_edit *e, int status, struct ist reason);

#endif
