/* TCP health checks (src/proxy/check_tcp.c): `option tcp-check` and its
 * `tcp-check connect|send|send-binary|expect|comment` rules, and the
 * protocol checks HAProxy builds from them (`option redis-check`,
 * `smtpchk`, `mysql-check`, `pgsql-check`, `ldap-check`, `ssl-hello-chk`).
 *
 * A check runs the steps in order on one connection (src/proxy/check.c
 * drives the I/O); the evaluation of an expect step is pure and bounded
 * (fuzz/fuzz_check_tcp.c): it reads only the bytes it is given.
 */
#ifndef SLUICE_PROXY_CHECK_TCP_H
#define SLUICE_PROXY_CHECK_TCP_H

#include <stddef.h>
#include <sluice/proxy/check.h>

struct proxy;
struct regex;
struct hchk_verdict;

enum tchk_act {
	TCHK_CONNECT = 0,
	TCHK_SEND,                   /* send, send-binary */
	TCHK_EXPECT,
	TCHK_COMMENT,                /* a step that does nothing: names the next */
};

enum tchk_match {
	TCHK_M_STRING = 0,
	TCHK_M_RSTRING,
	TCHK_M_BINARY,
	TCHK_M_RBINARY,
};

/* What a step's on-error / on-success message is. */
enum tchk_msg {
	TCHK_MSG_DEFAULT = 0,        /* HAProxy's own wording */
	TCHK_MSG_TEXT,               /* the text written */
	TCHK_MSG_FIRST_LINE,         /* the reply's first line (protocol checks) */
	TCHK_MSG_LINE_REST,          /* the reply's first line after its 4th byte,
	                              * its leading digits as the status code */
	TCHK_MSG_NONE,               /* no message */
	TCHK_MSG_PG_FIELD,           /* a PostgreSQL error's first field */
};

struct tchk_step {
	enum tchk_act act;
	char *comment;
	/* connect */
	int port;                    /* 0: the server's check port */
	int send_proxy;
	/* send: the bytes (decoded for send-binary) */
	char *data;
	size_t len;
	/* expect */
	enum tchk_match match;
	int negate;
	int min_recv;                /* -1: none */
	char *pattern;               /* as written (regexes, messages) */
	char *bin;                   /* string/binary: the bytes to find */
	size_t bin_len;
	struct regex *re;            /* rstring, rbinary */
	int err_status;              /* enum chk_status on failure */
	int ok_status;               /* on success of the last step */
	int tout_status;
	char custom;                 /* a protocol's own reading: 'm' MySQL greeting,
	                              * 'M' MySQL login, 'l' LDAP bind; 0: none */
	enum tchk_msg on_error_kind, on_success_kind;
	char *on_error, *on_success;
};

struct tchk_rules {
	struct tchk_step *steps;
	int nsteps;
	int builtin;                 /* made by an `option xxx-check` line */
};

/* Rules of a proxy: inherited from defaults until it writes its own. */
void tchk_inherit(struct proxy *px, const struct proxy *def);
void tchk_free(struct proxy *px);

/* The port of the first connect step (0: none), for the check's target. */
int tchk_connect_port(const struct tchk_rules *r);

/* Evaluates expect step <st> (numbered <stepno> as HAProxy counts them:
 * the connection is step 1) on the bytes received since the last send,
 * buf[0..len). <last> says no more bytes will come (the server closed, or
 * the buffer is full). Returns 1 passed, 0 more bytes needed, -1 failed
 * with <v> filled (status, description). */
int tchk_expect_eval(const struct tchk_step *st, int stepno, const char *buf, size_t len,
                     int last, struct hchk_verdict *v);

/* The verdict once every step passed: L7OK with the last expect's
 * on-success message (or "(tcp-check)"), or L4OK when nothing was sent
 * or expected. */
void tchk_success(const struct tchk_rules *r, const char *buf, size_t len,
                  struct hchk_verdict *v);

/* The description of a timeout during step <stepno> (0-based index i). */
void tchk_timeout_desc(const struct tchk_rules *r, int i, char *out, size_t len);

/* Step number of index <i>, as HAProxy counts them: every rule written,
 * comments included. */
int tchk_step_number(const struct tchk_rules *r, int i);

/* Parses the words of a `tcp-check expect` line after "expect" into <st>
 * (for the fuzzer and the configuration). 0, or -1 with <err>. */
int tchk_parse_expect(char **args, int nargs, struct tchk_step *st, char *err, size_t errlen);
void tchk_step_free(struct tchk_step *st);

#endif
