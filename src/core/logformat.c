/* log-format strings: compiling "%ci:%cp [%t] ..." into nodes once, at
 * configuration time, and rendering them with the fields a stream knows.
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

/* ---- log-format ---- */

/* Node options, set by %{+F,-F}var flags or for all later variables by %o. */
#define LF_OPT_QUOTE      0x01   /* Q: "string" */
#define LF_OPT_HEX        0x02   /* X: hexadecimal IPs, ports, %Ts %ms %pid %rt %lc */
#define LF_OPT_ESCAPE     0x04   /* E: backslash before '"', '\' and ']' */
#define LF_OPT_MANDATORY  0x08   /* M: an empty string prints "-" (on by default) */

enum lf_node_type {
	LF_NODE_TEXT,           /* literal text */
	LF_NODE_VAR,            /* %var */
	/* LF_NODE_SAMPLE: %[fetch,conv...], comes with sample expressions */
};

struct lf_var_def;

struct lf_node {
	enum lf_node_type type;
	unsigned int options;          /* LF_OPT_* */
	const struct lf_var_def *var;  /* LF_NODE_VAR */
	char *text;                    /* LF_NODE_TEXT, NUL-terminated */
	size_t text_len;
	void *expr;                    /* LF_NODE_SAMPLE: the compiled expression */
};

enum lf_kind {
	LF_K_OPTIONS,           /* %o: flags for the variables after it */
	LF_K_INT,               /* int field */
	LF_K_UINT,              /* unsigned int field, +X prints %04X */
	LF_K_U64,               /* uint64_t field */
	LF_K_TEXT,              /* const char * field */
	LF_K_IP,                /* struct sockaddr_storage field, the address */
	LF_K_PORT,              /* struct sockaddr_storage field, the port */
	LF_K_DATE,              /* the accept date, ->off is its enum lf_date_form */
	LF_K_CUSTOM,            /* rendered by ->render */
	LF_K_HTTP,              /* needs the HTTP layer: not supported yet */
};

#define LF_F_ASAP  0x01         /* '+' prefix under option logasap */

typedef void (*lf_render_fn)(struct lf_out *o, const struct lf_node *n,
                             const struct log_fields *f);

struct lf_var_def {
	const char *name;
	enum lf_kind kind;
	size_t off;             /* the field in struct log_fields, or LF_D_* */
	unsigned int flags;     /* LF_F_* */
	lf_render_fn render;    /* LF_K_CUSTOM */
};

/* A string field: "-" when empty (M), quoted (Q), escaped (E). */
static void out_text(struct lf_out *o, const struct lf_node *n, const char *s)
{
	if (n->options & LF_OPT_QUOTE)
		out_char(o, '"');
	if (s && *s) {
		for (; *s; s++) {
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
		out_text(o, n, buf);
	} else {
		out_text(o, n, ss->ss_family == AF_UNIX ? "unix" : NULL);
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
		out_text(o, n, NULL);
		return;
	}
	if (n->options & LF_OPT_HEX)
		out_hex(o, port, 4);
	else
		out_uint(o, port, 0);
}

/* The accept date, in one of the forms of %t %T %Tl %Ts %ms (<form>). */
enum lf_date_form { LF_D_CLF_MS, LF_D_GMT, LF_D_LOCAL, LF_D_EPOCH, LF_D_MS };

static void out_accept_date(struct lf_out *o, const struct lf_node *n,
                            const struct log_fields *f, enum lf_date_form form)
{
	struct tm tm;
	time_t sec;
	int us, hex = n->options & LF_OPT_HEX;

	split_us(f->accept_us, &sec, &us);
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
	out_text(o, n, f->be_name ? f->be_name : f->fe_name);
}

static void r_server(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	out_text(o, n, f->srv_name ? f->srv_name : "<NOSRV>");
}

static void r_hostname(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	out_text(o, n, f->hostname ? f->hostname : global.node);
}

static void r_pid(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	int pid = f->pid ? f->pid : global.pid;

	if (n->options & LF_OPT_HEX)
		out_hex(o, (unsigned int)pid, 4);
	else
		out_int(o, pid);
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

/* Td: data transfer time, what Tt leaves after handshake, queue, connect. */
static void r_Td(struct lf_out *o, const struct lf_node *n, const struct log_fields *f)
{
	if (f->Tc < 0 || f->Tw < 0)
		out_int(o, -1);
	else
		out_int(o, (int64_t)f->Tt - (f->Th > 0 ? f->Th : 0) - f->Tw - f->Tc);
}

#define LF_FIELD(name, kind, member, flags) \
	{ name, kind, offsetof(struct log_fields, member), flags, NULL }
#define LF_CUSTOM(name, fn)  { name, LF_K_CUSTOM, 0, 0, fn }
#define LF_DATE(name, form)  { name, LF_K_DATE, form, 0, NULL }
#define LF_HTTP(name)        { name, LF_K_HTTP, 0, 0, NULL }

/* Every variable HAProxy 2.6 knows (section 8.2.4). The LF_HTTP ones need
 * the HTTP layer: turn each into a field or a custom renderer when it is
 * there. Names are exact, case-sensitive. */
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
	LF_FIELD("Tu",   LF_K_INT,  Tt,          LF_F_ASAP), /* Tt - Ti, no Ti in TCP */
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
	LF_FIELD("rt",   LF_K_UINT, req_counter, 0),
	LF_CUSTOM("s",   r_server),
	LF_FIELD("sc",   LF_K_INT,  srv_conn,    0),
	LF_FIELD("si",   LF_K_IP,   srv,         0),
	LF_FIELD("sp",   LF_K_PORT, srv,         0),
	LF_FIELD("sq",   LF_K_INT,  srv_queue,   0),
	LF_FIELD("sslc", LF_K_TEXT, ssl_cipher,  0),
	LF_FIELD("sslv", LF_K_TEXT, ssl_version, 0),
	LF_DATE("t",     LF_D_CLF_MS),
	LF_CUSTOM("ts",  r_term_state),
	/* HTTP: captures, request line, status, HTTP timers and dates */
	LF_HTTP("CC"), LF_HTTP("CS"), LF_HTTP("HM"), LF_HTTP("HP"), LF_HTTP("HPO"),
	LF_HTTP("HQ"), LF_HTTP("HU"), LF_HTTP("HV"), LF_HTTP("ST"), LF_HTTP("Ta"),
	LF_HTTP("Ti"), LF_HTTP("Tq"), LF_HTTP("TR"), LF_HTTP("Tr"), LF_HTTP("hr"),
	LF_HTTP("hrl"), LF_HTTP("hs"), LF_HTTP("hsl"), LF_HTTP("r"), LF_HTTP("tr"),
	LF_HTTP("trg"), LF_HTTP("trl"), LF_HTTP("tsc"),
};

static const struct lf_var_def *lf_var_lookup(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(lf_vars) / sizeof(lf_vars[0]); i++)
		if (strlen(lf_vars[i].name) == len && memcmp(lf_vars[i].name, name, len) == 0)
			return &lf_vars[i];
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
		out_text(o, n, *(const char *const *)field);
		break;
	case LF_K_IP:
		out_ip(o, n, (const struct sockaddr_storage *)field);
		break;
	case LF_K_PORT:
		out_port(o, n, (const struct sockaddr_storage *)field, f);
		break;
	case LF_K_DATE:
		out_accept_date(o, n, f, (enum lf_date_form)v->off);
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
		const char *close = strchr(p + 1, '}');

		if (!close) {
			errmsg_set(err, errlen, "missing '}' after '%%{' at position %d in '%s'",
			        (int)(p - fmt), fmt);
			return NULL;
		}
		flags = p + 1;
		flags_len = (size_t)(close - flags);
		p = close + 1;
		if (*p != '[' && !isalnum((unsigned char)*p)) {
			errmsg_set(err, errlen, "flags '%%{%.*s}' are not followed by a variable name",
			        (int)flags_len, flags);
			return NULL;
		}
	} else if (*p != '[' && !isalpha((unsigned char)*p)) {
		return p;       /* HAProxy drops a '%' followed by anything else */
	}
	if (*p == '[') {
		errmsg_set(err, errlen, "sample expressions ('%%[...]') in log-format are not "
		        "supported yet");
		return NULL;
	}
	for (name = p; isalnum((unsigned char)*p); p++)
		;
	v = lf_var_lookup(name, (size_t)(p - name));
	if (!v) {
		errmsg_set(err, errlen, "no such log-format variable '%%%.*s' (write '%%%%' for "
		        "a '%%')", (int)(p - name), name);
		return NULL;
	}
	if (v->kind == LF_K_HTTP) {
		errmsg_set(err, errlen, "log-format variable '%%%s' needs HTTP logging, which is "
		        "not supported yet", v->name);
		return NULL;
	}
	if (v->kind == LF_K_OPTIONS) {
		*defopts = lf_apply_flags(*defopts, flags, flags_len);
		return p;
	}
	if (lf_lit_flush(b) < 0 || !(n = lf_node_add(b)))
		goto oom;
	n->type = LF_NODE_VAR;
	n->var = v;
	n->options = lf_apply_flags(*defopts, flags, flags_len);
	return p;
oom:
	errmsg_set(err, errlen, "out of memory");
	return NULL;
}

int lf_compile(const char *fmt, struct lf_expr *out, char *err, size_t errlen)
{
	struct lf_builder b = { .e = out };
	unsigned int defopts = LF_OPT_MANDATORY;
	const char *p = fmt;

	out->nodes = NULL;
	out->count = 0;
	while (*p) {
		const char *pct = strchr(p, '%');
		size_t n = pct ? (size_t)(pct - p) : strlen(p);

		if (lf_lit_add(&b, p, n) < 0)
			goto oom;
		p += n;
		if (!pct)
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
	for (int i = 0; i < e->count; i++)
		free(e->nodes[i].text);
	free(e->nodes);
	e->nodes = NULL;
	e->count = 0;
}

size_t lf_render(const struct lf_expr *e, const struct log_fields *f,
                 char *out, size_t outsz)
{
	struct lf_out o = { out, out + (outsz ? outsz - 1 : 0) };

	if (!outsz)
		return 0;
	for (int i = 0; i < e->count; i++) {
		const struct lf_node *n = &e->nodes[i];

		if (n->type == LF_NODE_TEXT)
			out_mem(&o, n->text, n->text_len);
		else
			lf_render_var(&o, n, f);
	}
	*o.p = '\0';
	return (size_t)(o.p - out);
}
