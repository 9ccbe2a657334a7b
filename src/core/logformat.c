/* log-format strings: compiling "%ci:%cp [%t] ..." into nodes once, at
 * configuration time, and rendering them with the fields a stream knows.
 * This file holds the compiler, the render loop and the connection-level
 * variables; logformat_http.c the HTTP variables and %[sample].
 *
 * Spaces, as in HAProxy 2.6, are separators rather than text: a run of
 * spaces prints one space, and only when something other than a space was
 * printed since the previous one (so leading spaces vanish, and the space
 * after an empty %hr does not double the next one).
 *
 * Compiled expressions are read-only afterwards and may be rendered by any
 * thread at once. */
#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <sluice/core/global.h>
#include <sluice/core/log.h>
#include <sluice/core/logtext.h>
#include <sluice/expr/sample.h>
#include "logformat_int.h"

/* A string field: "-" when empty (M), quoted (Q), escaped (E). It ends at
 * <len> or at a NUL byte, whichever comes first. */
void lf_out_text_len(struct lf_out *o, const struct lf_node *n, const char *s, size_t len)
{
	if (n->options & LF_OPT_QUOTE)
		out_char(o, '"');
	if (s && len && *s) {
		for (const char *end = s + len; s < end && *s; s++) {
			if ((n->options & LF_OPT_ESCAPE) && (*s == '"' || *s == '\\' || *s == ']'))
				out_char(o, '\\');
			out_char(o, *s);
		}
	} else if ((n->options & (LF_OPT_QUOTE | LF_OPT_MANDATORY)) == LF_OPT_MANDATORY) {
		out_char(o, '-');
	}
	if (n->options & LF_OPT_QUOTE)
		out_char(o, '"');
}

void lf_out_text(struct lf_out *o, const struct lf_node *n, const char *s)
{
	lf_out_text_len(o, n, s, s ? strlen(s) : 0);
}

static void out_ip(struct lf_out *o, const struct lf_node *n, const struct sockaddr_storage *ss)
{
	char buf[INET6_ADDRSTRLEN];
	const unsigned char *b = NULL;
	int nb = 0;

	if (ss->ss_family == AF_INET) {
		b = (const unsigned char *)&((const struct sockaddr_in *)ss)->sin_addr;
		nb = 4;
	} else if (ss->ss_family == AF_INET6) {
		b = ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;
		nb = 16;
	}
	if (b && (n->options & LF_OPT_HEX)) {
		for (int i = 0; i < nb; i++)
			out_hex(o, b[i], 2);
	} else if (b && inet_ntop(ss->ss_family, b, buf, sizeof(buf))) {
		lf_out_text(o, n, buf);
	} else {
		lf_out_text(o, n, ss->ss_family == AF_UNIX ? "unix" : NULL);
	}
}

static void out_port(struct lf_out *o, const struct lf_node *n, const struct sockaddr_storage *ss,
                     const struct log_fields *f)
{
	unsigned int port;

	if (ss->ss_family == AF_INET)
		port = ntohs(((const struct sockaddr_in *)ss)->sin_port);
	else if (ss->ss_family == AF_INET6)
		port = ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	else if (ss->ss_family == AF_UNIX) {
		out_int(o, f->listener_id);     /* HAProxy prints the listener's id */
		return;
	} else {
		lf_out_text(o, n, NULL);
		return;
	}
	if (n->options & LF_OPT_HEX)
		out_hex(o, port, 4);
	else
		out_uint(o, port, 0);
}

/* A date (<us> since the epoch) in one of the forms of %t %T %Tl %Ts %ms,
 * also used for the request date of %tr %trg %trl. */
void lf_out_date(struct lf_out *o, const struct lf_node *n, int64_t us_since_epoch,
                 enum lf_date_form form)
{
	struct tm tm;
	time_t sec;
	int us, hex = n->options & LF_OPT_HEX;

	split_us(us_since_epoch, &sec, &us);
	if (form == LF_D_EPOCH) {
		if (hex)
			out_hex(o, (uint32_t)sec, 4);
		else
			out_int(o, sec);
		return;
	}
	if (form == LF_D_MS) {
		if (hex)
			out_hex(o, (unsigned int)(us / 1000), 2);
		else
			out_uint(o, (uint64_t)(us / 1000), 3);
		return;
	}
	if (form == LF_D_GMT)
		cached_gmtime(sec, &tm);
	else
		cached_localtime(sec, &tm);
	out_clf_date(o, &tm);
	if (form == LF_D_CLF_MS) {
		out_char(o, '.');
		out_uint(o, (uint64_t)(us / 1000), 3);
	} else {
		out_char(o, ' ');
		out_gmtoff(o, &tm, 0);          /* "+0000" for GMT */
	}
}

static void r_frontend_xprt(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	if (n->options & LF_OPT_QUOTE)
		out_char(o, '"');
	if (f->fe_name && *f->fe_name)
		out_str(o, f->fe_name);
	else if (!(n->options & LF_OPT_QUOTE) && !f->fe_ssl)
		out_char(o, '-');
	if (f->fe_ssl)
		out_char(o, '~');
	if (n->options & LF_OPT_QUOTE)
		out_char(o, '"');
}

/* Until a backend is chosen a stream's backend is its frontend (HAProxy). */
static void r_backend(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	lf_out_text(o, n, f->be_name ? f->be_name : f->fe_name);
}

static void r_server(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	lf_out_text(o, n, f->srv_name ? f->srv_name : "<NOSRV>");
}

static void r_hostname(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	lf_out_text(o, n, f->hostname ? f->hostname : global.node);
}

static void r_pid(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	int pid = f->pid ? f->pid : global.pid;

	if (n->options & LF_OPT_HEX)
		out_hex(o, (unsigned int)pid, 4);
	else
		out_int(o, pid);
}

/* The request counter: the 64-bit transaction id when the HTTP layer set
 * one, else the 32-bit counter. */
static void r_req_counter(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	uint64_t v = f->req_counter64 ? f->req_counter64 : f->req_counter;

	if (n->options & LF_OPT_HEX)
		out_hex(o, v, 4);
	else
		out_uint(o, v, 0);
}

static void r_term_state(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	out_char(o, f->term[0] ? f->term[0] : '-');
	out_char(o, f->term[0] && f->term[1] ? f->term[1] : '-');
}

static void r_retries(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	if (f->redispatched)
		out_char(o, '+');
	out_int(o, f->retries);
}

static int nonneg(int v)
{
	return v > 0 ? v : 0;
}

/* Td, the data transfer time. HTTP: what Tt leaves after the response
 * headers arrived, -1 without them. TCP: what it leaves after handshake,
 * queue and connect, -1 without a connection. */
static void r_Td(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	if (f->is_http) {
		if (f->Tr < 0)
			out_int(o, -1);
		else
			out_int(o, (int64_t)f->Tt - nonneg(f->Tq) - nonneg(f->Tw) - nonneg(f->Tc) -
			           f->Tr);
	} else if (f->Tc < 0 || f->Tw < 0) {
		out_int(o, -1);
	} else {
		out_int(o, (int64_t)f->Tt - nonneg(f->Th) - f->Tw - f->Tc);
	}
}

/* Tu: Tt without the idle time before the request (none in TCP). */
static void r_Tu(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	if (f->logasap)
		out_char(o, '+');
	out_int(o, (int64_t)f->Tt - (f->is_http ? nonneg(f->Ti) : 0));
}

#define LF_FIELD(name, kind, member, flags) \
	{ name, kind, offsetof(struct log_fields, member), flags, NULL }
#define LF_CUSTOM(name, fn)  { name, LF_K_CUSTOM, 0, 0, fn }
#define LF_DATE(name, form)  { name, LF_K_DATE, form, 0, NULL }

/* The variables HAProxy 2.6 knows (configuration manual, section 8.2.6)
 * that a TCP stream has too; the HTTP ones are in logformat_http.c. Names
 * are exact, case-sensitive. */
static const struct lf_var_def lf_vars[] = {
	{ "o", LF_K_OPTIONS, 0, 0, NULL },
	LF_FIELD("B",    LF_K_U64,  bytes_out,   LF_F_ASAP),
	LF_CUSTOM("H",   r_hostname),
	LF_FIELD("ID",   LF_K_TEXT, unique_id,   0),
	LF_DATE("T",     LF_D_GMT),
	LF_FIELD("Tc",   LF_K_INT,  Tc,          0),
	LF_CUSTOM("Td",  r_Td),
	LF_FIELD("Th",   LF_K_INT,  Th,          0),
	LF_DATE("Tl",    LF_D_LOCAL),
	LF_DATE("Ts",    LF_D_EPOCH),
	LF_FIELD("Tt",   LF_K_INT,  Tt,          LF_F_ASAP),
	LF_CUSTOM("Tu",  r_Tu),
	LF_FIELD("Tw",   LF_K_INT,  Tw,          0),
	LF_FIELD("U",    LF_K_U64,  bytes_in,    0),
	LF_FIELD("ac",   LF_K_INT,  actconn,     0),
	LF_CUSTOM("b",   r_backend),
	LF_FIELD("bc",   LF_K_INT,  beconn,      0),
	LF_FIELD("bi",   LF_K_IP,   be_src,      0),
	LF_FIELD("bp",   LF_K_PORT, be_src,      0),
	LF_FIELD("bq",   LF_K_INT,  be_queue,    0),
	LF_FIELD("ci",   LF_K_IP,   cli,         0),
	LF_FIELD("cp",   LF_K_PORT, cli,         0),
	LF_FIELD("f",    LF_K_TEXT, fe_name,     0),
	LF_FIELD("fc",   LF_K_INT,  feconn,      0),
	LF_FIELD("fi",   LF_K_IP,   fe,          0),
	LF_FIELD("fp",   LF_K_PORT, fe,          0),
	LF_CUSTOM("ft",  r_frontend_xprt),
	LF_FIELD("lc",   LF_K_UINT, log_count,   0),
	LF_DATE("ms",    LF_D_MS),
	LF_CUSTOM("pid", r_pid),
	LF_CUSTOM("rc",  r_retries),
	LF_CUSTOM("rt",  r_req_counter),
	LF_CUSTOM("s",   r_server),
	LF_FIELD("sc",   LF_K_INT,  srv_conn,    0),
	LF_FIELD("si",   LF_K_IP,   srv,         0),
	LF_FIELD("sp",   LF_K_PORT, srv,         0),
	LF_FIELD("sq",   LF_K_INT,  srv_queue,   0),
	LF_FIELD("sslc", LF_K_TEXT, ssl_cipher,  0),
	LF_FIELD("sslv", LF_K_TEXT, ssl_version, 0),
	LF_DATE("t",     LF_D_CLF_MS),
	LF_CUSTOM("ts",  r_term_state),
};

static const struct lf_var_def *lf_var_lookup(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(lf_vars) / sizeof(lf_vars[0]); i++)
		if (strlen(lf_vars[i].name) == len && memcmp(lf_vars[i].name, name, len) == 0)
			return &lf_vars[i];
	for (size_t i = 0; i < lf_http_nvars; i++)
		if (strlen(lf_http_vars[i].name) == len &&
		    memcmp(lf_http_vars[i].name, name, len) == 0)
			return &lf_http_vars[i];
	return NULL;
}

static void lf_render_var(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	const struct lf_var_def *v = n->var;
	const char *field = (const char *)f + v->off;

	if ((v->flags & LF_F_ASAP) && f->logasap)
		out_char(o, '+');
	switch (v->kind) {
	case LF_K_INT:
		out_int(o, *(const int *)field);
		break;
	case LF_K_UINT:
		if (n->options & LF_OPT_HEX)
			out_hex(o, *(const unsigned int *)field, 4);
		else
			out_uint(o, *(const unsigned int *)field, 0);
		break;
	case LF_K_U64:
		out_uint(o, *(const uint64_t *)field, 0);
		break;
	case LF_K_TEXT:
		lf_out_text(o, n, *(const char *const *)field);
		break;
	case LF_K_IP:
		out_ip(o, n, (const struct sockaddr_storage *)field);
		break;
	case LF_K_PORT:
		out_port(o, n, (const struct sockaddr_storage *)field, f);
		break;
	case LF_K_DATE:
		lf_out_date(o, n, f->accept_us, (enum lf_date_form)v->off);
		break;
	case LF_K_CUSTOM:
		v->render(o, n, f);
		break;
	default:
		break;
	}
}

/* "+Q,-X": each item adds or removes one flag; like HAProxy, items it does
 * not know are ignored. */
static unsigned int lf_apply_flags(unsigned int opts, const char *s, size_t len)
{
	static const struct { char name; unsigned int bit; } flags[] = {
		{ 'Q', LF_OPT_QUOTE }, { 'X', LF_OPT_HEX },
		{ 'E', LF_OPT_ESCAPE }, { 'M', LF_OPT_MANDATORY },
	};
	const char *end;

	if (!s)
		return opts;
	for (end = s + len; s < end; ) {
		const char *item_end = memchr(s, ',', (size_t)(end - s));

		if (!item_end)
			item_end = end;
		if (item_end - s == 2 && (s[0] == '+' || s[0] == '-')) {
			for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
				if (flags[i].name != s[1])
					continue;
				if (s[0] == '+')
					opts |= flags[i].bit;
				else
					opts &= ~flags[i].bit;
			}
		}
		s = item_end < end ? item_end + 1 : end;
	}
	return opts;
}

/* Compilation state: the nodes so far and the pending literal. */
struct lf_builder {
	struct lf_expr *e;
	int cap;
	char *lit;
	size_t lit_len, lit_cap;
};

static int lf_lit_add(struct lf_builder *b, const char *s, size_t n)
{
	if (b->lit_len + n + 1 > b->lit_cap) {
		size_t cap = (b->lit_cap ? b->lit_cap * 2 : 64) + n;
		char *p = realloc(b->lit, cap);

		if (!p)
			return -1;
		b->lit = p;
		b->lit_cap = cap;
	}
	memcpy(b->lit + b->lit_len, s, n);
	b->lit_len += n;
	return 0;
}

static struct lf_node *lf_node_add(struct lf_builder *b)
{
	struct lf_expr *e = b->e;

	if (e->count == b->cap) {
		int cap = b->cap ? b->cap * 2 : 8;
		struct lf_node *p = realloc(e->nodes, (size_t)cap * sizeof(*p));

		if (!p)
			return NULL;
		e->nodes = p;
		b->cap = cap;
	}
	memset(&e->nodes[e->count], 0, sizeof(e->nodes[0]));
	return &e->nodes[e->count++];
}

/* Turns the pending literal into a text node. */
static int lf_lit_flush(struct lf_builder *b)
{
	struct lf_node *n;

	if (!b->lit_len)
		return 0;
	n = lf_node_add(b);
	if (!n)
		return -1;
	n->type = LF_NODE_TEXT;
	n->text = malloc(b->lit_len + 1);
	if (!n->text) {
		b->e->count--;
		return -1;
	}
	memcpy(n->text, b->lit, b->lit_len);
	n->text[b->lit_len] = '\0';
	n->text_len = b->lit_len;
	b->lit_len = 0;
	return 0;
}

/* A run of spaces: one separator node, even across "%o" (prints nothing). */
static int lf_sep_add(struct lf_builder *b)
{
	struct lf_node *n;

	if (lf_lit_flush(b) < 0)
		return -1;
	if (b->e->count && b->e->nodes[b->e->count - 1].type == LF_NODE_SEP)
		return 0;
	n = lf_node_add(b);
	if (!n)
		return -1;
	n->type = LF_NODE_SEP;
	return 0;
}

/* "%[expr]" at <p> (on the '['), with <opts>. Returns the position after
 * the ']', or NULL with <err> set. */
static const char *lf_compile_sample(struct lf_builder *b, const char *p, unsigned int opts,
                                     char *err, size_t errlen)
{
	char why[200];
	const char *end = NULL;
	struct sample_expr *expr;
	struct lf_node *n;

	why[0] = '\0';
	expr = sample_expr_parse(p + 1, &end, why, sizeof(why));
	if (!expr) {
		errmsg_set(err, errlen, "failed to parse sample expression <%s> : %s", p + 1, why);
		return NULL;
	}
	if (*end != ']') {
		if (*end)
			errmsg_set(err, errlen, "expected ']' after '%.*s', but found '%c'",
			           (int)(end - p - 1), p + 1, *end);
		else
			errmsg_set(err, errlen, "missing ']' after '%s'", p + 1);
		sample_expr_free(expr);
		return NULL;
	}
	if (lf_lit_flush(b) < 0 || !(n = lf_node_add(b))) {
		sample_expr_free(expr);
		errmsg_set(err, errlen, "out of memory");
		return NULL;
	}
	n->type = LF_NODE_SAMPLE;
	n->options = opts;
	n->expr = expr;
	return end + 1;
}

/* "%{flags}" at <p> (on the '{'): the flags in <flags>/<flags_len>.
 * Returns the position after the '}', or NULL with <err> set. */
static const char *lf_compile_flags(const char *fmt, const char *p, const char **flags,
                                    size_t *flags_len, char *err, size_t errlen)
{
	const char *close = strchr(p + 1, '}');

	if (!close) {
		errmsg_set(err, errlen, "missing '}' after '%%{' at position %d in '%s'",
		           (int)(p - fmt), fmt);
		return NULL;
	}
	*flags = p + 1;
	*flags_len = (size_t)(close - *flags);
	p = close + 1;
	if (*p != '[' && !isalnum((unsigned char)*p)) {
		errmsg_set(err, errlen, "flags '%%{%.*s}' are not followed by a variable name",
		           (int)*flags_len, *flags);
		return NULL;
	}
	return p;
}

/* Parses one "%..." at <p> (just after the '%'). Returns the position after
 * it, or NULL with <err> set. */
static const char *lf_compile_var(struct lf_builder *b, const char *fmt, const char *p,
                                  unsigned int *defopts, char *err, size_t errlen)
{
	const char *flags = NULL, *name;
	size_t flags_len = 0;
	const struct lf_var_def *v;
	struct lf_node *n;

	if (*p == '\0') {
		errmsg_set(err, errlen, "truncated log-format: '%%' at the end (write '%%%%' for a '%%')");
		return NULL;
	}
	if (isdigit((unsigned char)*p) || *p == ' ' || *p == '\t') {
		errmsg_set(err, errlen, "unexpected '%c' after '%%' at position %d in '%s' "
		        "(write '%%%%' for a '%%')", *p, (int)(p - fmt), fmt);
		return NULL;
	}
	if (*p == '{') {
		p = lf_compile_flags(fmt, p, &flags, &flags_len, err, errlen);
		if (!p)
			return NULL;
	} else if (*p != '[' && !isalpha((unsigned char)*p)) {
		return p;       /* HAProxy drops a '%' followed by anything else */
	}
	if (*p == '[')
		return lf_compile_sample(b, p, lf_apply_flags(*defopts, flags, flags_len),
		                         err, errlen);
	for (name = p; isalnum((unsigned char)*p); p++)
		;
	v = lf_var_lookup(name, (size_t)(p - name));
	if (!v) {
		errmsg_set(err, errlen, "no such log-format variable '%%%.*s' (write '%%%%' for "
		        "a '%%')", (int)(p - name), name);
		return NULL;
	}
	if (v->kind == LF_K_OPTIONS) {
		*defopts = lf_apply_flags(*defopts, flags, flags_len);
		return p;
	}
	if (lf_lit_flush(b) < 0 || !(n = lf_node_add(b))) {
		errmsg_set(err, errlen, "out of memory");
		return NULL;
	}
	n->type = LF_NODE_VAR;
	n->var = v;
	n->options = lf_apply_flags(*defopts, flags, flags_len);
	return p;
}

int lf_compile(const char *fmt, struct lf_expr *out, char *err, size_t errlen)
{
	struct lf_builder b = { .e = out };
	unsigned int defopts = LF_OPT_MANDATORY;
	const char *p = fmt;

	out->nodes = NULL;
	out->count = 0;
	while (*p) {
		size_t n = strcspn(p, "% ");

		if (lf_lit_add(&b, p, n) < 0)
			goto oom;
		p += n;
		if (*p == ' ') {
			if (lf_sep_add(&b) < 0)
				goto oom;
			p++;
			continue;
		}
		if (!*p)
			break;
		p++;
		if (*p == '%') {
			if (lf_lit_add(&b, "%", 1) < 0)
				goto oom;
			p++;
			continue;
		}
		p = lf_compile_var(&b, fmt, p, &defopts, err, errlen);
		if (!p)
			goto fail;
	}
	if (lf_lit_flush(&b) < 0)
		goto oom;
	free(b.lit);
	return 0;
oom:
	errmsg_set(err, errlen, "out of memory");
fail:
	free(b.lit);
	lf_free(out);
	return -1;
}

void lf_free(struct lf_expr *e)
{
	if (!e)
		return;
	for (int i = 0; i < e->count; i++) {
		free(e->nodes[i].text);
		sample_expr_free(e->nodes[i].expr);
	}
	free(e->nodes);
	e->nodes = NULL;
	e->count = 0;
}

int lf_check_mode(const struct lf_expr *e, int http_mode, char *err, size_t errlen)
{
	if (http_mode)
		return 0;
	for (int i = 0; i < e->count; i++) {
		const struct lf_node *n = &e->nodes[i];

		if (n->type == LF_NODE_VAR && (n->var->flags & LF_F_HTTP_ONLY))
			return errmsg_set(err, errlen, "format variable '%s' is reserved for HTTP mode",
			                  n->var->name);
	}
	return 0;
}

int lf_check_use(const struct lf_expr *e, unsigned int avail, char *err, size_t errlen)
{
	for (int i = 0; i < e->count; i++) {
		const struct lf_node *n = &e->nodes[i];

		if (n->type == LF_NODE_SAMPLE &&
		    smp_check_use(n->expr->use, avail, n->expr->fetch->kw, err, errlen) < 0)
			return -1;
	}
	return 0;
}

size_t lf_render(const struct lf_expr *e, const struct log_fields *f,
                 char *out, size_t outsz)
{
	struct lf_out o = { out, out + (outsz ? outsz - 1 : 0) };
	int last_is_space = 1;          /* nothing printed yet: no leading space */

	if (!outsz)
		return 0;
	for (int i = 0; i < e->count; i++) {
		const struct lf_node *n = &e->nodes[i];
		const char *before = o.p;

		switch (n->type) {
		case LF_NODE_TEXT:
			out_mem(&o, n->text, n->text_len);
			last_is_space = 0;
			break;
		case LF_NODE_SEP:
			if (!last_is_space)
				out_char(&o, ' ');
			last_is_space = 1;
			break;
		case LF_NODE_VAR:
			lf_render_var(&o, n, f);
			if (!(n->var->flags & LF_F_MAY_SKIP) || o.p != before)
				last_is_space = 0;
			break;
		case LF_NODE_SAMPLE:
			lf_render_sample(&o, n, f);
			last_is_space = 0;
			break;
		}
	}
	*o.p = '\0';
	return (size_t)(o.p - out);
}
