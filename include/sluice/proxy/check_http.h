/* HTTP health checks (src/proxy/check_http.c): `option httpchk`, the
 * `http-check send|expect` rules, the request a check sends, and the
 * verdict on the reply. The reply evaluation is pure and bounded: it reads
 * only the bytes it is given, decodes a chunked body in place, and never
 * needs more than the check's buffer (fuzz/fuzz_check_http.c). */
#ifndef SLUICE_PROXY_CHECK_HTTP_H
#define SLUICE_PROXY_CHECK_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <sluice/http/h1.h>
#include <sluice/proxy/check.h>

struct proxy;
struct regex;

enum hchk_match {
	HCHK_M_STATUS = 0,       /* status <codes>: "200,201,300-310" */
	HCHK_M_RSTATUS,          /* rstatus <regex> on the 3 digits */
	HCHK_M_STRING,           /* string <text> in the body */
	HCHK_M_RSTRING,          /* rstring <regex> on the body */
};

struct hchk_range {
	int lo, hi;
};

/* One `http-check expect [!] <match> <pattern>`. */
struct hchk_expect {
	enum hchk_match match;
	int negate;
	struct hchk_range *ranges;   /* status */
	int nranges;
	char *str;                   /* string */
	size_t len;
	struct regex *re;            /* rstatus, rstring */
};

struct hchk_hdr {
	char *name;                  /* as written; sent in lower case */
	char *value;
};

/* A proxy's HTTP check: the request line of `option httpchk`, one
 * `http-check send` merged over it, and the expect rules. As in HAProxy
 * 2.6, a proxy inherits its defaults section's rules until it has a rule
 * or an `option httpchk` of its own; from then on it has only its own (a
 * defaults' request line does not survive an `http-check expect` written
 * in the backend: without a send rule, nothing is sent). */
struct hchk_rules {
	int has_send;                /* option httpchk or http-check send seen */
	char *meth, *uri, *ver;      /* option httpchk's, NULL: not given */
	struct hchk_hdr *legacy;     /* headers hidden after the version (deprecated) */
	int nlegacy;
	int has_send_rule;           /* an `http-check send` (one at most) */
	char *s_meth, *s_uri, *s_ver, *s_body;
	struct hchk_hdr *hdrs;       /* its `hdr <name> <value>` */
	int nhdrs;
	struct hchk_expect *expects; /* none: 2xx and 3xx pass */
	int nexpects;
	/* rendered after parsing (hchk_prepare()) */
	char *req;                   /* NULL: nothing to send */
	size_t req_len;
	int req_meth;                /* enum http_meth of the request, for the
	                              * reply's body rules (HEAD) */
	int needs_body;              /* an expect reads the body */
};

/* The keywords' rules (config time): a proxy's own copy-on-write set, and
 * what a proxy inherits. */
void hchk_inherit(struct proxy *px, const struct proxy *def);
void hchk_free(struct proxy *px);

/* Parses the words after `http-check expect` (args[0] is the first of
 * them) into <e>. Returns 0, or -1 with HAProxy's wording in <err>. */
int hchk_parse_expect(char **args, int nargs, struct hchk_expect *e, char *err, size_t errlen);
void hchk_expect_free(struct hchk_expect *e);

/* Renders the request of <r> (post-parse). Returns 0, or -1 with <err>
 * when it cannot fit in a buffer of <bufsize> bytes. */
int hchk_prepare(struct hchk_rules *r, size_t bufsize, char *err, size_t errlen);

/* The state of one reply being read; hchk_reply_init() before each check. */
struct hchk_reply {
	int head_done;
	size_t scan;                 /* bytes looked at for the end of the head */
	int status;                  /* the status code */
	char reason[CHK_DESC_LEN];   /* the reason phrase */
	unsigned int flags;          /* HTTP_F_* of the head */
	uint64_t clen;               /* Content-Length */
	size_t head_len;
	struct h1_chunk chunk;       /* chunked body decoder */
	size_t body_len;             /* decoded body after the head */
	int body_done;               /* the body is complete */
	int body_error;              /* bad chunked framing */
	int next;                    /* the first expect rule not passed yet */
	size_t searched;             /* body bytes a string rule looked at */
	size_t regex_at;             /* body length at the last regex run */
	int stop_on_404;             /* a 404 soft-stops the server (L7OKC): set by
	                              * the caller for `http-check disable-on-404`
	                              * on a server not DOWN; 0 by default */
};

void hchk_reply_init(struct hchk_reply *st);

/* The verdict of a check. */
struct hchk_verdict {
	int status;                  /* enum chk_status */
	int code;
	char desc[CHK_DESC_LEN];
};

/* Evaluates the reply read so far, buf[0..*len), against <r>. With
 * st->stop_on_404, a 404 gives L7OKC before any rule. A chunked
 * body is decoded in place (the framing removed), so *len may shrink;
 * bytes past the end of the message are dropped. <cap> is the buffer's
 * size: a full buffer is conclusive, as is <eof> (the server closed).
 * Returns 1 with <v> filled when the verdict is known, 0 when more bytes
 * may change it. Over the calls of one reply, the work is linear in its
 * length (a regex runs each time the body doubled, and at its end). */
int hchk_reply_eval(const struct hchk_rules *r, struct hchk_reply *st, char *buf, size_t *len,
                    size_t cap, int eof, struct hchk_verdict *v);

#endif
