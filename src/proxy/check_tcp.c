/* TCP health checks: `option tcp-check` with its `tcp-check` rules, and the
 * protocol checks built from the same steps (`option redis-check`,
 * `smtpchk`, `mysql-check`, `pgsql-check`, `ldap-check`, `ssl-hello-chk`),
 * as HAProxy 2.6 defines them.
 *
 * Configuration time (one thread): a proxy inherits its defaults section's
 * rules until it writes a `tcp-check` rule or an `option` of its own, which
 * starts a set of its own (as for http-check). The kind of check is the
 * last `option httpchk|tcp-check|...-check` line: PX_O_HTTPCHK or
 * PX_O_TCPCHK.
 *
 * Run time: the rules are read-only; src/proxy/check.c runs them on the
 * check's thread. tchk_expect_eval() is pure: the bytes received since the
 * last send, whether more may come, and the step decide.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/expr/regex.h>
#include <sluice/proxy/check_http.h>
#include <sluice/proxy/check_tcp.h>
#include <sluice/proxy/proxy.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

static int kw_tcp_check(KW_ARGS);
static int kw_option_check(KW_ARGS);

static const struct cfg_kw tchk_kws[] = {
	{ "tcp-check", NULL,            CFG_SEC_BE, kw_tcp_check },
	{ "option",    "tcp-check",     CFG_SEC_BE, kw_option_check, 1 },
	{ "option",    "redis-check",   CFG_SEC_BE, kw_option_check, 1 },
	{ "option",    "smtpchk",       CFG_SEC_BE, kw_option_check, 1 },
	{ "option",    "mysql-check",   CFG_SEC_BE, kw_option_check, 1 },
	{ "option",    "pgsql-check",   CFG_SEC_BE, kw_option_check, 1 },
	{ "option",    "ldap-check",    CFG_SEC_BE, kw_option_check, 1 },
	{ "option",    "ssl-hello-chk", CFG_SEC_BE, kw_option_check, 1 },
	{ NULL }
};
CFG_REGISTER(tchk_kws)

/* ---- rules ---- */

void tchk_step_free(struct tchk_step *st)
{
	free(st->comment);
	free(st->data);
	free(st->pattern);
	free(st->bin);
	free(st->on_error);
	free(st->on_success);
	if (st->re)
		regex_free(st->re);
	memset(st, 0, sizeof(*st));
}

static void rules_free(struct tchk_rules *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->nsteps; i++)
		tchk_step_free(&r->steps[i]);
	free(r->steps);
	free(r);
}

void tchk_free(struct proxy *px)
{
	if (px->tchk_owned)
		rules_free(px->tchk);
	px->tchk = NULL;
	px->tchk_owned = 0;
}

void tchk_inherit(struct proxy *px, const struct proxy *def)
{
	tchk_free(px);
	px->tchk = def->tchk;   /* the defaults section outlives its proxies */
}

/* The proxy's own rules, empty when it had its defaults' (or none). */
static struct tchk_rules *rules_own(struct proxy *px, int reset)
{
	struct tchk_rules *r;

	if (px->tchk_owned && !reset)
		return px->tchk;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	tchk_free(px);
	px->tchk = r;
	px->tchk_owned = 1;
	return r;
}

static struct tchk_step *step_add(struct tchk_rules *r)
{
	struct tchk_step *s = realloc(r->steps, sizeof(*s) * (size_t)(r->nsteps + 1));

	if (!s)
		return NULL;
	r->steps = s;
	s = &r->steps[r->nsteps++];
	memset(s, 0, sizeof(*s));
	s->min_recv = -1;
	return s;
}

int tchk_connect_port(const struct tchk_rules *r)
{
	for (int i = 0; r && i < r->nsteps; i++)
		if (r->steps[i].act == TCHK_CONNECT)
			return r->steps[i].port;
	return 0;
}

int tchk_step_number(const struct tchk_rules *r, int i)
{
	/* as HAProxy counts: every rule written, comments included */
	return i + 1;
}

/* ---- parsing ---- */

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int hex_decode(const char *hex, char **out, size_t *len, char *err, size_t errlen)
{
	size_t n = strlen(hex);
	char *b;

	if (!n || n % 2)
		return errmsg_set(err, errlen, "'%s' is not a valid hexadecimal string (an even "
		                  "number of digits is expected).", hex);
	b = malloc(n / 2);
	if (!b)
		return errmsg_set(err, errlen, "out of memory");
	for (size_t i = 0; i < n; i += 2) {
		int h = hexval(hex[i]), l = hexval(hex[i + 1]);

		if (h < 0 || l < 0) {
			free(b);
			return errmsg_set(err, errlen, "'%s' invalid binary string (an hex digit is "
			                  "expected).", hex);
		}
		b[i / 2] = (char)(h << 4 | l);
	}
	*out = b;
	*len = n / 2;
	return 0;
}

static int status_by_name(const char *s)
{
	static const struct { const char *name; int st; } tab[] = {
		{ "L7OK", CHK_ST_L7OK }, { "L7OKC", CHK_ST_L7OKC }, { "L7RSP", CHK_ST_L7RSP },
		{ "L7STS", CHK_ST_L7STS }, { "L7TOUT", CHK_ST_L7TOUT }, { "L6OK", CHK_ST_L6OK },
		{ "L6RSP", CHK_ST_L6RSP }, { "L6TOUT", CHK_ST_L6TOUT }, { "L4OK", CHK_ST_L4OK },
		{ "L4CON", CHK_ST_L4CON }, { "L4TOUT", CHK_ST_L4TOUT },
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (!strcmp(s, tab[i].name))
			return tab[i].st;
	return -1;
}

static int set_msg(char **dst, enum tchk_msg *kind, const char *v, char *err, size_t errlen)
{
	free(*dst);
	*dst = strdup(v);
	if (!*dst)
		return errmsg_set(err, errlen, "out of memory");
	*kind = TCHK_MSG_TEXT;
	return 0;
}

/* The options of an expect line, then [!] <match> <pattern>. */
int tchk_parse_expect(char **args, int nargs, struct tchk_step *st, char *err, size_t errlen)
{
	static const char *const names[] = { "string", "rstring", "binary", "rbinary" };
	char sub[256];
	int i = 0, m = -1;

	st->act = TCHK_EXPECT;
	st->min_recv = -1;
	st->err_status = CHK_ST_L7RSP;
	st->ok_status = CHK_ST_L7OK;
	st->tout_status = CHK_ST_L7TOUT;
	const char *pat = NULL;

	/* options come before or after "[!] <match> <pattern>", as in HAProxy */
	for (; i < nargs; i++) {
		const char *w = args[i];
		const char *v = i + 1 < nargs ? args[i + 1] : NULL;
		int *stp = !strcmp(w, "error-status") ? &st->err_status :
		           !strcmp(w, "ok-status") ? &st->ok_status :
		           !strcmp(w, "tout-status") ? &st->tout_status : NULL;
		int k;

		if (!strcmp(w, "!")) {
			st->negate = 1;
			continue;
		}
		for (k = 0; k < 4 && strcmp(w, names[k]); k++)
			;
		if (k < 4) {
			if (m >= 0)
				return errmsg_set(err, errlen, "only one pattern expected ('%s' found "
				                  "after '%s').", w, names[m]);
			if (!v || !*v)
				return errmsg_set(err, errlen, "'%s' expects a <pattern> as argument.", w);
			m = k;
			pat = v;
			i++;
			continue;
		}
		if (!v)
			return errmsg_set(err, errlen, "'%s' expects a value.", w);
		if (!strcmp(w, "min-recv")) {
			char *end;
			long n = strtol(v, &end, 10);

			if (!*v || *end || n < -1 || n > 0x7fffffff)
				return errmsg_set(err, errlen, "'min-recv' expects an integer, not '%s'.", v);
			st->min_recv = (int)n;
		} else if (stp) {
			/* each option takes the statuses of its outcome, as HAProxy */
			static const char *const allowed[] = {
				"L4CON L6RSP L7RSP L7STS", "L7OK L7OKC L6OK L4OK", "L7TOUT L6TOUT L4TOUT" };
			static const char *const texts[] = {
				"'L4CON', 'L6RSP', 'L7RSP' or 'L7STS'", "'L7OK', 'L7OKC', 'L6OK' or 'L4OK'",
				"'L7TOUT', 'L6TOUT' or 'L4TOUT'" };
			int which = stp == &st->err_status ? 0 : stp == &st->ok_status ? 1 : 2;
			char padded[16];

			snprintf(padded, sizeof(padded), "%s", v);
			if ((*stp = status_by_name(v)) < 0 || strchr(v, ' ') ||
			    !strstr(allowed[which], padded))
				return errmsg_set(err, errlen, "'%s' only supports %s status (got '%s').", w,
				                  texts[which], v);
		} else if (!strcmp(w, "on-error")) {
			if (set_msg(&st->on_error, &st->on_error_kind, v, err, errlen) < 0)
				return -1;
		} else if (!strcmp(w, "on-success")) {
			if (set_msg(&st->on_success, &st->on_success_kind, v, err, errlen) < 0)
				return -1;
		} else if (!strcmp(w, "comment")) {
			free(st->comment);
			if (!(st->comment = strdup(v)))
				return errmsg_set(err, errlen, "out of memory");
		} else if (!strcmp(w, "status-code")) {
			/* the code of an L7STS: sluice takes the reply's leading digits */
		} else
			return errmsg_set(err, errlen, "'expect' only supports 'min-recv', "
			                  "'error-status', 'ok-status', 'tout-status', 'on-success', "
			                  "'on-error', 'status-code', 'comment', '!' and a match among "
			                  "'string', 'rstring', 'binary' and 'rbinary', not '%s'.", w);
		i++;
	}
	if (m < 0)
		return errmsg_set(err, errlen, "expects at least a matching pattern as arguments "
		                  "('string', 'rstring', 'binary' or 'rbinary').");
	st->match = (enum tchk_match)m;
	if (!(st->pattern = strdup(pat)))
		return errmsg_set(err, errlen, "out of memory");
	switch (st->match) {
	case TCHK_M_STRING:
		st->bin_len = strlen(st->pattern);
		if (!(st->bin = strdup(st->pattern)))
			return errmsg_set(err, errlen, "out of memory");
		break;
	case TCHK_M_BINARY:
		if (hex_decode(st->pattern, &st->bin, &st->bin_len, err, errlen) < 0)
			return -1;
		break;
	default:
		st->re = regex_compile(st->pattern, 0, sub, sizeof(sub));
		if (!st->re)
			return errmsg_set(err, errlen, "failed to compile regex '%s': %s", st->pattern,
			                  sub);
	}
	return 0;
}

/* "comment <text>" at the end of connect/send lines. */
static int trailing_comment(char **args, int nargs, int *n, struct tchk_step *st, char *err,
                            size_t errlen)
{
	if (*n >= 2 && !strcmp(args[*n - 2], "comment")) {
		if (!(st->comment = strdup(args[*n - 1])))
			return errmsg_set(err, errlen, "out of memory");
		*n -= 2;
	}
	return 0;
}

static int parse_connect(char **args, int nargs, struct tchk_step *st, char *err, size_t errlen)
{
	st->act = TCHK_CONNECT;
	if (trailing_comment(args, nargs, &nargs, st, err, errlen) < 0)
		return -1;
	for (int i = 0; i < nargs; i++) {
		if (!strcmp(args[i], "port") && i + 1 < nargs) {
			char *end;
			long p = strtol(args[++i], &end, 10);

			if (*end || p < 1 || p > 65535)
				return errmsg_set(err, errlen, "expects a valid TCP port (from range 1 to "
				                  "65535) or a sample expression, got %s.", args[i]);
			st->port = (int)p;
		} else if (!strcmp(args[i], "send-proxy"))
			st->send_proxy = 1;
		else if (!strcmp(args[i], "default") || !strcmp(args[i], "linger"))
			continue;
		else
			return errmsg_set(err, errlen, "'connect' option '%s' is not supported by sluice "
			                  "(it takes 'default', 'port', 'send-proxy', 'linger' and "
			                  "'comment').", args[i]);
	}
	return 0;
}

static int parse_send(const char *kind, char **args, int nargs, struct tchk_step *st,
                      char *err, size_t errlen)
{
	st->act = TCHK_SEND;
	if (trailing_comment(args, nargs, &nargs, st, err, errlen) < 0)
		return -1;
	if (nargs < 1)
		return errmsg_set(err, errlen, "'%s' expects a %s as argument.", kind,
		                  strcmp(kind, "send") ? "binary string" : "string");
	if (nargs > 1)
		return errmsg_set(err, errlen, "'%s' takes one argument, found '%s' after it.", kind,
		                  args[1]);
	if (!strcmp(kind, "send-binary"))
		return hex_decode(args[0], &st->data, &st->len, err, errlen);
	st->len = strlen(args[0]);
	if (!(st->data = strdup(args[0])))
		return errmsg_set(err, errlen, "out of memory");
	return 0;
}

/* the text of a `tcp-check comment` line, for the next rule (parsing) */
static char *next_comment;

static int kw_tcp_check(KW_ARGS)
{
	struct tchk_rules *r;
	struct tchk_step *st, tmp;
	const char *what = nargs > 1 ? args[1] : "";
	int rc;

	memset(&tmp, 0, sizeof(tmp));
	tmp.min_recv = -1;
	if (!strcmp(what, "comment")) {
		/* a step of its own (HAProxy counts it), which names the next one */
		if (nargs < 3 || !*args[2])
			return errmsg_set(err, errlen, "'comment' expects a string as argument.");
		tmp.act = TCHK_COMMENT;
		if (!(tmp.comment = strdup(args[2])))
			return errmsg_set(err, errlen, "out of memory");
		free(next_comment);
		next_comment = strdup(args[2]);
		rc = 0;
	} else
	if (!strcmp(what, "connect"))
		rc = parse_connect(args + 2, nargs - 2, &tmp, err, errlen);
	else if (!strcmp(what, "send") || !strcmp(what, "send-binary"))
		rc = parse_send(what, args + 2, nargs - 2, &tmp, err, errlen);
	else if (!strcmp(what, "expect"))
		rc = tchk_parse_expect(args + 2, nargs - 2, &tmp, err, errlen);
	else if (!strcmp(what, "send-lf") || !strcmp(what, "send-binary-lf") ||
	         !strncmp(what, "set-var", 7) || !strncmp(what, "unset-var", 9))
		return errmsg_set(err, errlen, "'%s' is not supported by sluice yet (connect, send, "
		                  "send-binary, expect and comment are).", what);
	else
		return errmsg_set(err, errlen, "'tcp-check' only supports 'comment', 'connect', "
		                  "'send', 'send-binary', 'expect', 'send-lf', 'send-binary-lf', "
		                  "'set-var' and 'unset-var', but got '%s'.", what);
	if (rc < 0) {
		tchk_step_free(&tmp);
		return -1;
	}
	r = rules_own(ctx->px, ctx->px->tchk_owned && ctx->px->tchk->builtin);
	st = r ? step_add(r) : NULL;
	if (!st) {
		tchk_step_free(&tmp);
		return errmsg_set(err, errlen, "out of memory");
	}
	if (tmp.act == TCHK_CONNECT && r->nsteps > 1)
		cfg_warning(ctx->file, ctx->line, "sluice runs a 'tcp-check connect' only as the first "
		            "rule: later ones are ignored.");
	if (tmp.act != TCHK_COMMENT && !tmp.comment) {
		tmp.comment = next_comment;
		next_comment = NULL;
	}
	*st = tmp;
	return 0;
}

/* ---- the protocol checks ---- */

static int add_send(struct tchk_rules *r, const char *data, size_t len)
{
	struct tchk_step *st = step_add(r);

	if (!st || !(st->data = malloc(len ? len : 1)))
		return -1;
	st->act = TCHK_SEND;
	memcpy(st->data, data, len);
	st->len = len;
	return 0;
}

/* An expect step from words, with the messages of a protocol check. */
static int add_expect(struct tchk_rules *r, const char *words, enum tchk_msg on_error,
                      const char *err_text, enum tchk_msg on_success, const char *ok_text)
{
	char buf[512], *args[16], err[256];
	int n = 0;
	struct tchk_step *st = step_add(r);

	if (!st)
		return -1;
	snprintf(buf, sizeof(buf), "%s", words);
	for (char *t = strtok(buf, " "); t && n < 16; t = strtok(NULL, " "))
		args[n++] = t;
	if (tchk_parse_expect(args, n, st, err, sizeof(err)) < 0)
		return -1;
	st->on_error_kind = on_error;
	st->on_success_kind = on_success;
	if ((err_text && !(st->on_error = strdup(err_text))) ||
	    (ok_text && !(st->on_success = strdup(ok_text))))
		return -1;
	return 0;
}

/* A TLS ClientHello (TLS 1.2 offered in a TLS 1.0 record), with common
 * suites: any TLS server answers with a handshake or an alert record. */
static const unsigned char ssl_hello[] = {
	0x16, 0x03, 0x01, 0x00, 0x3d,             /* handshake record, 61 bytes */
	0x01, 0x00, 0x00, 0x39,                   /* ClientHello, 57 bytes */
	0x03, 0x03,                               /* TLS 1.2 */
	0x73, 0x6c, 0x75, 0x69, 0x63, 0x65, 0x2d, 0x63, 0x68, 0x65, 0x63, 0x6b, 0x2d, 0x72,
	0x61, 0x6e, 0x64, 0x6f, 0x6d, 0x2d, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37,
	0x38, 0x39, 0x61, 0x62,                   /* random (32 bytes) */
	0x00,                                     /* no session id */
	0x00, 0x10,                               /* 8 cipher suites */
	0xc0, 0x2f, 0xc0, 0x30, 0xc0, 0x2b, 0xc0, 0x2c, 0x00, 0x9c, 0x00, 0x9d, 0x00, 0x2f,
	0x00, 0x35,
	0x01, 0x00,                               /* null compression */
};

static int build_mysql(struct tchk_rules *r, char **args, int nargs, char *err, size_t errlen)
{
	const char *user = NULL;
	int post41 = 0;

	for (int i = 2; i < nargs; i++) {
		if (!strcmp(args[i], "user") && i + 1 < nargs)
			user = args[++i];
		else if (!strcmp(args[i], "post-41"))
			post41 = 1;
		else
			return errmsg_set(err, errlen, "only supports optional values: 'user' and "
			                  "'post-41'.");
	}
	if (add_expect(r, "min-recv 5 rbinary .", TCHK_MSG_DEFAULT, NULL, TCHK_MSG_DEFAULT, NULL))
		return -1;
	r->steps[r->nsteps - 1].match = TCHK_M_RBINARY;
	r->steps[r->nsteps - 1].custom = 'm';   /* the greeting, see mysql_eval() */
	if (user) {
		/* a login without password: a client authentication packet */
		char pkt[128];
		size_t ulen = strlen(user), n;

		if (ulen > 64)
			return errmsg_set(err, errlen, "'user' name is too long (64 characters at most).");
		n = 4;
		if (post41) {
			memcpy(pkt + n, "\x00\xa2\x00\x00\x00\x00\x00\x01\x08", 9);   /* flags, max, charset */
			n += 9;
			memset(pkt + n, 0, 23);
			n += 23;
		} else {
			memcpy(pkt + n, "\x00\x80\x00\x00\x00", 5);                   /* flags, max packet */
			n += 5;
		}
		memcpy(pkt + n, user, ulen + 1);
		n += ulen + 1;
		if (!post41)
			pkt[n++] = 0;
		pkt[0] = (char)(n - 4);
		pkt[1] = pkt[2] = 0;
		pkt[3] = 1;                                                          /* sequence */
		if (add_send(r, pkt, n) ||
		    add_expect(r, "min-recv 5 rbinary .", TCHK_MSG_DEFAULT, NULL, TCHK_MSG_DEFAULT, NULL))
			return -1;
		r->steps[r->nsteps - 1].custom = 'M';   /* the login's answer */
	}
	return 0;
}

static int build_pgsql(struct tchk_rules *r, char **args, int nargs, char *err, size_t errlen)
{
	char pkt[160];
	size_t ulen, n = 0;

	if (nargs < 4 || strcmp(args[2], "user") || !*args[3])
		return errmsg_set(err, errlen, "'option pgsql-check' expects 'user <username>' as "
		                  "argument.");
	ulen = strlen(args[3]);
	if (ulen > 64)
		return errmsg_set(err, errlen, "'user' name is too long (64 characters at most).");
	n = 8;
	memcpy(pkt + 4, "\x00\x03\x00\x00", 4);                          /* protocol 3.0 */
	memcpy(pkt + n, "user", 5);
	n += 5;
	memcpy(pkt + n, args[3], ulen + 1);
	n += ulen + 1;
	pkt[n++] = 0;
	pkt[0] = (char)(n >> 24);
	pkt[1] = (char)(n >> 16);
	pkt[2] = (char)(n >> 8);
	pkt[3] = (char)n;
	if (add_send(r, pkt, n))
		return -1;
	/* an error message ('E') fails with its text; AuthenticationOk passes */
	if (add_expect(r, "min-recv 5 ! rstring ^E", TCHK_MSG_PG_FIELD, NULL,
	               TCHK_MSG_DEFAULT, NULL) ||
	    add_expect(r, "min-recv 9 error-status L7STS rbinary ^520000000800000000",
	               TCHK_MSG_TEXT, "PostgreSQL unknown error", TCHK_MSG_TEXT,
	               "PostgreSQL server is ok"))
		return -1;
	return 0;
}

static int build_builtin(struct tchk_rules *r, const char *opt, char **args, int nargs,
                         char *err, size_t errlen)
{
	r->builtin = 1;
	if (!strcmp(opt, "tcp-check")) {
		r->builtin = 0;
		return 0;
	}
	if (!strcmp(opt, "redis-check")) {
		static const char ping[] = "*1\r\n$4\r\nPING\r\n";

		return add_send(r, ping, sizeof(ping) - 1) ||
		       add_expect(r, "error-status L7STS string +PONG\r\n", TCHK_MSG_FIRST_LINE, NULL,
		                  TCHK_MSG_TEXT, "Redis server is ok") ? -1 : 0;
	}
	if (!strcmp(opt, "smtpchk")) {
		char cmd[300];

		/* the greeting, HELO (or EHLO) and QUIT, each answered by a 2xx:
		 * what HAProxy 2.6 does, so that servers log a clean session */
		if (nargs > 3 && (!strcmp(args[2], "HELO") || !strcmp(args[2], "EHLO")))
			snprintf(cmd, sizeof(cmd), "%s %s\r\n", args[2], args[3]);
		else
			snprintf(cmd, sizeof(cmd), "HELO localhost\r\n");
		for (int k = 0; k < 3; k++) {
			if (k == 1 && add_send(r, cmd, strlen(cmd)))
				return -1;
			if (k == 2 && add_send(r, "QUIT\r\n", 6))
				return -1;
			if (add_expect(r, "min-recv 4 error-status L7STS rstring ^[0-9]{3}[\\x20\r-]",
			               TCHK_MSG_FIRST_LINE, NULL, TCHK_MSG_DEFAULT, NULL) ||
			    add_expect(r, "min-recv 4 error-status L7STS rstring ^2[0-9]{2}[-\\x20\r]",
			               TCHK_MSG_LINE_REST, NULL, TCHK_MSG_LINE_REST, NULL))
				return -1;
		}
		return 0;
	}
	if (!strcmp(opt, "ssl-hello-chk"))
		return add_send(r, (const char *)ssl_hello, sizeof(ssl_hello)) ||
		       add_expect(r, "min-recv 5 ok-status L6OK error-status L6RSP tout-status L6TOUT "
		                  "rbinary ^1[56]", TCHK_MSG_NONE, NULL, TCHK_MSG_NONE, NULL) ? -1 : 0;
	if (!strcmp(opt, "ldap-check")) {
		static const char bind[] = "\x30\x0c\x02\x01\x01\x60\x07\x02\x01\x03\x04\x00\x80\x00";

		if (add_send(r, bind, sizeof(bind) - 1) ||
		    add_expect(r, "min-recv 14 rbinary ^30", TCHK_MSG_TEXT, "Not LDAPv3 protocol",
		               TCHK_MSG_DEFAULT, NULL) ||
		    add_expect(r, "rbinary .", TCHK_MSG_DEFAULT, NULL, TCHK_MSG_DEFAULT, NULL))
			return -1;
		r->steps[r->nsteps - 1].custom = 'l';   /* the bind result, ldap_eval() */
		return 0;
	}
	if (!strcmp(opt, "mysql-check"))
		return build_mysql(r, args, nargs, err, errlen);
	return build_pgsql(r, args, nargs, err, errlen);
}

static int kw_option_check(KW_ARGS)
{
	struct proxy *px = ctx->px;
	struct tchk_rules *r;

	if (ctx->negate) {
		px->options &= ~PX_O_TCPCHK;
		return 0;
	}
	if (strcmp(args[1], "tcp-check") && strcmp(args[1], "smtpchk") &&
	    strcmp(args[1], "mysql-check") && strcmp(args[1], "pgsql-check") && nargs > 2)
		return errmsg_set(err, errlen, "'option %s' cannot handle unexpected argument '%s'.",
		                  args[1], args[2]);
	px->options &= ~PX_O_HTTPCHK;
	px->options |= PX_O_TCPCHK;
	if (!strcmp(args[1], "tcp-check")) {
		/* the rules written so far (or the defaults') stay */
		if (px->tchk && px->tchk->builtin)
			return rules_own(px, 1) ? 0 : errmsg_set(err, errlen, "out of memory");
		return 0;
	}
	r = rules_own(px, 1);
	if (!r)
		return errmsg_set(err, errlen, "out of memory");
	if (build_builtin(r, args[1], args, nargs, err, errlen) < 0)
		return *err ? -1 : errmsg_set(err, errlen, "out of memory");
	return 0;
}

/* ---- evaluation ---- */

static void put_desc(struct hchk_verdict *v, const char *fmt, const char *a, int step,
                     const char *comment)
{
	int n = snprintf(v->desc, sizeof(v->desc), fmt, a, step);

	if (comment && n >= 0 && (size_t)n < sizeof(v->desc))
		snprintf(v->desc + n, sizeof(v->desc) - (size_t)n, " comment: %s", comment);
}

/* The reply's first line, without its end of line. */
static void first_line(const char *buf, size_t len, size_t skip, char *out, size_t room)
{
	size_t n = 0;

	for (size_t i = skip; i < len && buf[i] != '\r' && buf[i] != '\n' && n + 1 < room; i++)
		out[n++] = buf[i] >= 0x20 && buf[i] < 0x7f ? buf[i] : '.';
	out[n] = '\0';
}

static int leading_code(const char *buf, size_t len)
{
	int code = 0;

	for (size_t i = 0; i < len && i < 3 && buf[i] >= '0' && buf[i] <= '9'; i++)
		code = code * 10 + (buf[i] - '0');
	return code;
}

static int regex_on(const struct tchk_step *st, const char *buf, size_t len)
{
	char tmp[4096];
	size_t n = 0;

	if (st->match == TCHK_M_RSTRING) {
		/* the received bytes as a string: up to the first NUL */
		const char *nul = memchr(buf, 0, len);

		return regex_match(st->re, buf, nul ? (size_t)(nul - buf) : len);
	}
	/* rbinary: the regex runs on the bytes in hexadecimal, upper case */
	for (size_t i = 0; i < len && n + 2 < sizeof(tmp); i++) {
		static const char hex[] = "0123456789ABCDEF";

		tmp[n++] = hex[(unsigned char)buf[i] >> 4];
		tmp[n++] = hex[(unsigned char)buf[i] & 15];
	}
	return regex_match(st->re, tmp, n);
}

/* mysql-check: the server's greeting (protocol 10), or its error packet. */
static int mysql_eval(const struct tchk_step *st, int login, const char *buf, size_t len,
                      int last, struct hchk_verdict *v)
{
	size_t plen;

	if (len < 5)
		return last ? (snprintf(v->desc, sizeof(v->desc), "TCPCHK got an empty response"),
		               v->status = CHK_ST_L7RSP, -1) : 0;
	plen = (size_t)(unsigned char)buf[0] | (size_t)(unsigned char)buf[1] << 8 |
	       (size_t)(unsigned char)buf[2] << 16;
	if (len < plen + 4) {
		if (!last)
			return 0;
		v->status = CHK_ST_L7RSP;   /* a truncated packet */
		return -1;
	}
	if ((unsigned char)buf[4] == 0xff) {
		/* an error packet: code, then the message */
		size_t skip = 7;   /* after the code: "#<SQL state>" and the message */

		v->status = CHK_ST_L7STS;
		first_line(buf, len < plen + 4 ? len : plen + 4, skip, v->desc, sizeof(v->desc));
		v->code = len > 6 ? (unsigned char)buf[5] | (unsigned char)buf[6] << 8 : 0;
		return -1;
	}
	if (!login && buf[4] != 0x0a) {
		v->status = CHK_ST_L7RSP;
		snprintf(v->desc, sizeof(v->desc), "Not a MySQL server");
		return -1;
	}
	if (login && buf[4] != 0x00) {
		v->status = CHK_ST_L7RSP;
		snprintf(v->desc, sizeof(v->desc), "Not a MySQL server");
		return -1;
	}
	return 1;
}

/* ldap-check: the bind response's result code, 0 for success. */
static int ldap_eval(const char *buf, size_t len, int last, struct hchk_verdict *v)
{
	size_t i = 1, msglen;

	if (len < 2) {
		if (!last)
			return 0;
		v->status = CHK_ST_L7RSP;
		snprintf(v->desc, sizeof(v->desc), "Not LDAPv3 protocol");
		return -1;
	}
	/* the message length: short form, or long form with up to 4 bytes */
	if ((unsigned char)buf[i] & 0x80) {
		size_t nb = (unsigned char)buf[i] & 0x7f;

		if (nb > 4 || len < i + 1 + nb)
			return last || nb > 4 ? (v->status = CHK_ST_L7RSP,
			        snprintf(v->desc, sizeof(v->desc), "Not LDAPv3 protocol"), -1) : 0;
		msglen = 0;
		for (size_t k = 0; k < nb; k++)
			msglen = msglen << 8 | (unsigned char)buf[i + 1 + k];
		i += 1 + nb;
	} else
		msglen = (unsigned char)buf[i++];
	/* messageID (02 01 xx), bindResponse (61 len), resultCode (0a 01 rc) */
	if (len < i + 10) {
		if (!last && len < i + msglen)
			return 0;
		v->status = CHK_ST_L7RSP;
		snprintf(v->desc, sizeof(v->desc), "Not LDAPv3 protocol");
		return -1;
	}
	if (buf[i] != 0x02 || buf[i + 3] != 0x61 || buf[i + 5] != 0x0a || buf[i + 6] != 0x01) {
		v->status = CHK_ST_L7RSP;
		snprintf(v->desc, sizeof(v->desc), "Not LDAPv3 protocol");
		return -1;
	}
	if (buf[i + 7] != 0) {
		v->status = CHK_ST_L7STS;
		v->code = (unsigned char)buf[i + 7];
		snprintf(v->desc, sizeof(v->desc), "See RFC: http://tools.ietf.org/html/rfc4511"
		         "#section-4.1.9");
		return -1;
	}
	return 1;
}

int tchk_expect_eval(const struct tchk_step *st, int stepno, const char *buf, size_t len,
                     int last, struct hchk_verdict *v)
{
	static const char *const what[] = { NULL, "(regex)", "(binary)", "(rbinary)" };
	int match;

	memset(v, 0, sizeof(*v));
	if (st->custom == 'm' || st->custom == 'M')
		return mysql_eval(st, st->custom == 'M', buf, len, last, v);
	if (st->custom == 'l')
		return ldap_eval(buf, len, last, v);
	if (!last && st->min_recv >= 0 && len < (size_t)st->min_recv)
		return 0;
	if (last && !len) {
		v->status = st->err_status;
		put_desc(v, "TCPCHK got an empty response at step %.0s%d", "", stepno, st->comment);
		return -1;
	}
	if (st->match == TCHK_M_STRING || st->match == TCHK_M_BINARY)
		match = st->bin_len <= len && memmem(buf, len, st->bin, st->bin_len) != NULL;
	else
		match = regex_on(st, buf, len);
	/* no match yet may still become one, unless min-recv made it final */
	if (!match && !last && st->min_recv < 0)
		return 0;
	if (match != st->negate)
		return 1;
	v->status = st->err_status;
	if (v->status == CHK_ST_L7STS)
		v->code = leading_code(buf, len);
	if (st->on_error_kind == TCHK_MSG_TEXT)
		snprintf(v->desc, sizeof(v->desc), "%s", st->on_error);
	else if (st->on_error_kind == TCHK_MSG_FIRST_LINE)
		first_line(buf, len, 0, v->desc, sizeof(v->desc));
	else if (st->on_error_kind == TCHK_MSG_LINE_REST)
		first_line(buf, len, len > 4 ? 4 : len, v->desc, sizeof(v->desc));
	else if (st->on_error_kind == TCHK_MSG_PG_FIELD) {
		const char *f = len > 6 ? buf + 6 : NULL;
		const char *nul = f ? memchr(f, 0, len - 6) : NULL;

		snprintf(v->desc, sizeof(v->desc), "%.*s", nul ? (int)(nul - f) : 0, f ? f : "");
	} else if (st->on_error_kind == TCHK_MSG_NONE)
		v->desc[0] = '\0';
	else if (st->match == TCHK_M_STRING)
		put_desc(v, match ? "TCPCHK matched unwanted content '%s' at step %d" :
		         "TCPCHK did not match content '%s' at step %d", st->pattern, stepno,
		         st->comment);
	else
		put_desc(v, match ? "TCPCHK matched unwanted content %s at step %d" :
		         "TCPCHK did not match content %s at step %d", what[st->match], stepno,
		         st->comment);
	return -1;
}

void tchk_success(const struct tchk_rules *r, const char *buf, size_t len,
                  struct hchk_verdict *v)
{
	const struct tchk_step *last = NULL;

	memset(v, 0, sizeof(*v));
	for (int i = 0; r && i < r->nsteps; i++)
		if (r->steps[i].act == TCHK_SEND || r->steps[i].act == TCHK_EXPECT)
			last = &r->steps[i];
	if (!last) {
		v->status = CHK_ST_L4OK;
		return;
	}
	v->status = last->act == TCHK_EXPECT ? last->ok_status : CHK_ST_L7OK;
	if (last->act == TCHK_EXPECT && last->on_success_kind == TCHK_MSG_TEXT)
		snprintf(v->desc, sizeof(v->desc), "%s", last->on_success);
	else if (last->act == TCHK_EXPECT && last->on_success_kind == TCHK_MSG_LINE_REST) {
		first_line(buf, len, len > 4 ? 4 : len, v->desc, sizeof(v->desc));
		v->code = leading_code(buf, len);
	} else if (last->act == TCHK_EXPECT && (last->custom || last->on_success_kind ==
	                                        TCHK_MSG_NONE))
		v->desc[0] = '\0';
	else
		snprintf(v->desc, sizeof(v->desc), "(tcp-check)");
}

void tchk_timeout_desc(const struct tchk_rules *r, int i, char *out, size_t len)
{
	static const char *const names[] = { "string", "rstring", "binary", "rbinary" };
	const struct tchk_step *st = &r->steps[i];

	if (st->act == TCHK_EXPECT && st->pattern && !st->custom)
		snprintf(out, len, " at step %d of tcp-check (expect %s '%s')",
		         tchk_step_number(r, i), names[st->match], st->pattern);
	else
		snprintf(out, len, " at step %d of tcp-check", tchk_step_number(r, i));
}

/* A `tcp-check comment` that no rule followed names nothing. */
static int tchk_postparse(void)
{
	free(next_comment);
	next_comment = NULL;
	return 0;
}

static struct cfg_post_hook tchk_post = { .fn = tchk_postparse, .order = 29 };

__attribute__((constructor)) static void tchk_register(void)
{
	cfg_register_post(&tchk_post);
}
