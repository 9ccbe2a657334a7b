/* The rules engine: the configuration keywords that declare rules
 * (http-request, http-response, http-after-response, tcp-request,
 * tcp-response, redirect, declare capture), the registry of action
 * keywords, and act_exec() which runs a rule list for a stream.
 *
 * The actions themselves live in act_http.c (header and start-line edits),
 * act_uri.c (normalize-uri), act_reply.c (deny, tarpit, return, redirect)
 * and act_misc.c (variables, captures, verdicts, stream settings).
 *
 * Everything but act_exec() runs at configuration time, single-threaded.
 * Rule lists are read-only afterwards; act_exec() runs on the stream's
 * owner thread and keeps its state in the caller's struct act_env.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/cfg/tokenize.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/log.h>
#include <sluice/expr/acl.h>
#include <sluice/expr/sample.h>
#include <sluice/http/act.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/stream.h>
#include "act_int.h"

/* The action modules register their tables from constructors and export
 * nothing else: referencing them here links them into every program that
 * parses rules, even from a static archive (the configuration fuzzer). */
extern const int http_act_http_anchor, http_act_misc_anchor, http_act_pat_anchor,
	http_act_reply_anchor, http_act_uri_anchor, http_act_auth_anchor;
__attribute__((used)) static const int *const act_anchors[] = {
	&http_act_http_anchor, &http_act_misc_anchor, &http_act_pat_anchor,
	&http_act_reply_anchor, &http_act_uri_anchor, &http_act_auth_anchor,
};

static int kw_http_rule(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_tcp_rule(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_inspect_delay(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_redirect(struct cfg_ctx *, char **, int, char *, size_t);
static int kw_declare_capture(struct cfg_ctx *, char **, int, char *, size_t);

static const struct cfg_kw act_cfg_kws[] = {
	{ "http-request",        NULL,            CFG_SEC_PROXY, kw_http_rule },
	{ "http-response",       NULL,            CFG_SEC_PROXY, kw_http_rule },
	{ "http-after-response", NULL,            CFG_SEC_PROXY, kw_http_rule },
	{ "tcp-request",  "connection",    CFG_SEC_FE, kw_tcp_rule, 0, CFG_KW_F_SIDE_FATAL },
	{ "tcp-request",  "session",       CFG_SEC_FE, kw_tcp_rule, 0, CFG_KW_F_SIDE_FATAL },
	{ "tcp-request",  "content",       CFG_SEC_PROXY, kw_tcp_rule },
	{ "tcp-request",  "inspect-delay", CFG_SEC_PROXY, kw_inspect_delay },
	{ "tcp-response", "content",       CFG_SEC_BE, kw_tcp_rule, 0, CFG_KW_F_SIDE_FATAL },
	{ "tcp-response", "inspect-delay", CFG_SEC_BE, kw_inspect_delay, 0, CFG_KW_F_SIDE_FATAL },
	{ "redirect",     NULL,            CFG_SEC_PROXY, kw_redirect },
	{ "declare",      "capture",       CFG_SEC_FE_ONLY, kw_declare_capture, 0,
	  CFG_KW_F_SIDE_FATAL },
	{ NULL }
};
CFG_REGISTER(act_cfg_kws)

static const char *const ruleset_names[ACT_RULESETS] = {
	[ACT_HTTP_REQ]     = "http-request",
	[ACT_HTTP_RES]     = "http-response",
	[ACT_HTTP_AFTER]   = "http-after-response",
	[ACT_TCP_REQ_CONN] = "tcp-request connection",
	[ACT_TCP_REQ_SESS] = "tcp-request session",
	[ACT_TCP_REQ_CONT] = "tcp-request content",
	[ACT_TCP_RES_CONT] = "tcp-response content",
};

/* ------------------------------------------------------------------------ */
/* Registries                                                                */
/* ------------------------------------------------------------------------ */

static struct act_kw_table *act_tables;
static struct act_service *act_services;

void act_register(struct act_kw_table *t)
{
	t->next = act_tables;
	act_tables = t;
}

void act_service_register(struct act_service *svc)
{
	svc->next = act_services;
	act_services = svc;
}

const struct act_service *act_service_find(const char *name)
{
	for (const struct act_service *s = act_services; s; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

/* "set-var(" matches "set-var(txn.x)"; other names match whole words. */
static int kw_matches(const struct act_kw *k, const char *word)
{
	size_t n = strlen(k->kw);

	if (n && k->kw[n - 1] == '(')
		return strncmp(word, k->kw, n) == 0;
	return strcmp(word, k->kw) == 0;
}

static const struct act_kw *kw_lookup(unsigned int sets, const char *word)
{
	for (struct act_kw_table *t = act_tables; t; t = t->next)
		for (const struct act_kw *k = t->kws; k->kw; k++)
			if ((k->sets & sets) && kw_matches(k, word))
				return k;
	return NULL;
}

const struct act_kw *act_kw_find(enum act_ruleset set, const char *word)
{
	return kw_lookup(1u << set, word);
}

struct list *act_rules_of(struct proxy *px, enum act_ruleset set)
{
	switch (set) {
	case ACT_HTTP_REQ:     return &px->http_req_rules;
	case ACT_HTTP_RES:     return &px->http_res_rules;
	case ACT_HTTP_AFTER:   return &px->http_after_rules;
	case ACT_TCP_REQ_CONN: return &px->tcp_req_conn_rules;
	case ACT_TCP_REQ_SESS: return &px->tcp_req_sess_rules;
	case ACT_TCP_REQ_CONT: return &px->tcp_req_cont_rules;
	case ACT_TCP_RES_CONT: return &px->tcp_res_cont_rules;
	default:               return NULL;
	}
}

const char *act_ruleset_name(enum act_ruleset set)
{
	return set < ACT_RULESETS ? ruleset_names[set] : "?";
}

/* ------------------------------------------------------------------------ */
/* Helpers for the action modules (act_int.h)                                */
/* ------------------------------------------------------------------------ */

/* Response rules see no request head: it was forwarded before the response
 * came (txn.h), as in HAProxy, which refuses req.hdr() there. The request
 * rules of a frontend run before a backend is chosen; those of a backend or
 * listen section know it, except on connection and session (HAProxy 2.6). */
unsigned int act_avail(const struct act_rule *r)
{
	unsigned int be = (r->flags & ACT_RULE_F_BE_SIDE) ? SMP_USE_BE : 0;

	switch (r->set) {
	case ACT_HTTP_REQ:     return SMP_AVAIL_HTTP_REQ | be;
	case ACT_HTTP_RES:
	case ACT_HTTP_AFTER:
	case ACT_TCP_RES_CONT: return SMP_AVAIL_HTTP_RES;
	case ACT_TCP_REQ_CONN: return SMP_AVAIL_TCP_CONN;
	case ACT_TCP_REQ_SESS: return SMP_AVAIL_TCP_SESS;
	case ACT_TCP_REQ_CONT: return SMP_AVAIL_TCP_CONT | be;
	default:               return SMP_USE_ALL;
	}
}

/* Without a stream (unit tests of a rule set) a format renders with no
 * stream fields at all. */
static size_t lf_render_default(struct stream *s, const struct lf_expr *e, char *out,
                                size_t room)
{
	struct log_fields f;

	if (s)
		return stream_lf_render(s, e, out, room);
	memset(&f, 0, sizeof(f));
	f.status = -1;
	f.Tq = f.TR = f.Ti = f.Tr = f.Ta = f.Th = f.Tw = f.Tc = f.Tt = -1;
	return lf_render(e, &f, out, room);
}

size_t (*act_lf_render)(struct stream *s, const struct lf_expr *e, char *out,
                        size_t room) = lf_render_default;

/* Checks each %[expr] of a format against the rule set's data, so that a
 * sample that can never work is named at configuration time (HAProxy: "may
 * not be reliably used here"). Syntax errors are left to lf_compile(). */
static int fmt_check_use(const char *text, const struct act_rule *r, char *err,
                         size_t errlen)
{
	unsigned int avail = act_avail(r);
	const char *p = text;

	while ((p = strchr(p, '%')) != NULL) {
		const char *end = NULL;
		struct sample_expr *x;
		char name[128];
		int rc;

		p++;
		if (*p == '%') {
			p++;
			continue;
		}
		if (*p == '{') {
			const char *close = strchr(p, '}');

			if (!close)
				return 0;
			p = close + 1;
		}
		if (*p != '[')
			continue;
		x = sample_expr_parse(p + 1, &end, NULL, 0);
		if (!x)
			return 0;
		snprintf(name, sizeof(name), "%.*s", (int)(end - p - 1), p + 1);
		rc = smp_check_use(x->use, avail, name, err, errlen);
		if (rc == 0 && (x->use & SMP_USE_L6REQ) && (r->flags & ACT_RULE_F_HTTP_PX))
			cfg_warning(r->file, r->line, "L6 sample fetch <%s> in an HTTP "
			            "log-format string does not see the request as received (HAProxy "
			            "warns that it is ignored).", name);
		sample_expr_free(x);
		if (rc < 0)
			return -1;
		p = end;
	}
	return 0;
}

/* What a %[sample] gives goes into a rule's value with its control
 * characters written as %XX (bytes below 0x20 but TAB, and DEL), as HAProxy
 * 2.6 does in HTTP formats: a url_dec'd CR LF cannot split a header or a
 * reply, and a NUL does not cut the value. '%', quotes, TAB and bytes from
 * 0x80 stay as they are. The log-format renderer prints a sample's string
 * up to its first NUL, so the escaping must happen before it: rule formats
 * are compiled with this internal converter appended to each %[expr]
 * (fmt_no_dash()). The leading '_' keeps it out of HAProxy's namespace. */
#define ACT_ESC_CONV "_rule_fmt_escape"

static int conv_rule_escape(const struct smp_args *, struct sample *, struct smp_ctx *);

static const struct smp_conv_kw act_convs[] = {
	{ ACT_ESC_CONV, conv_rule_escape, { 0 }, 0, NULL, SMP_T_STR, SMP_T_STR },
	{ NULL }
};
SMP_REGISTER_CONVS(act_convs)

static int esc_needed(unsigned char c)
{
	return (c < 0x20 && c != '\t') || c == 0x7f;
}

/* Cut where the scratch buffer ends, as a rendered format is. */
static int conv_rule_escape(const struct smp_args *args, struct sample *smp,
                            struct smp_ctx *ctx)
{
	static const char hex[] = "0123456789ABCDEF";
	struct smp_str in = smp->data.str;
	size_t i = 0, n = 0;
	char *out;

	while (i < in.len && !esc_needed((unsigned char)in.ptr[i]))
		i++;
	if (i == in.len)
		return 1;            /* nothing to escape: no copy */
	smp_set_trash(smp, SMP_T_STR);
	out = smp->data.str.ptr;
	for (i = 0; i < in.len; i++) {
		unsigned char c = (unsigned char)in.ptr[i];

		if (!esc_needed(c)) {
			if (n + 1 > smp->data.str.size)
				break;
			out[n++] = (char)c;
			continue;
		}
		if (n + 3 > smp->data.str.size)
			break;
		out[n++] = '%';
		out[n++] = hex[c >> 4];
		out[n++] = hex[c & 15];
	}
	smp->data.str.len = n;
	return 1;
}

/* Rules print nothing for a sample without value where log lines print
 * "-" (HAProxy compiles rule formats without LOG_OPT_MANDATORY): every
 * variable gets a leading "-M" flag, which the user's own flags follow and
 * may override. "%%" stays as it is. Each %[expr] also gets the escaping
 * converter above as its last step, unless <escape> is 0. */
/* After a '%' (and its flags being copied): when a "[expr]" follows the
 * flags, copies it whole (brackets nested, quotes respected) so that no
 * flag is inserted inside a sample expression, with ACT_ESC_CONV added
 * before its closing bracket if <escape>. Returns the last byte consumed. */
static const char *copy_sample_expr(const char *p, char *out, size_t *n, int escape)
{
	const char *q = p + 1;
	int depth = 0;
	char quote = 0;

	if (*p == '{') {
		/* the flags: copied up to the closing brace */
		while (*q && *q != '}')
			out[(*n)++] = *q++;
		if (!*q)
			return q - 1;
		out[(*n)++] = *q++;
	}
	if (*q != '[')
		return *p == '{' ? q - 1 : p;
	for (; *q; q++) {
		if (escape && !quote && *q == ']' && depth == 1) {
			memcpy(out + *n, "," ACT_ESC_CONV, sizeof(ACT_ESC_CONV));
			*n += sizeof(ACT_ESC_CONV);
		}
		out[(*n)++] = *q;
		if (quote) {
			if (*q == '\\' && q[1])
				out[(*n)++] = *++q;
			else if (*q == quote)
				quote = 0;
		} else if (*q == '"' || *q == '\'') {
			quote = *q;
		} else if (*q == '[') {
			depth++;
		} else if (*q == ']' && --depth == 0) {
			return q;
		}
	}
	return q - 1;
}

static char *fmt_no_dash(const char *text, int escape)
{
	size_t len = strlen(text), n = 0, pct = 0;
	const char *p;
	char *out;

	for (p = text; *p; p++)
		pct += *p == '%';
	/* at most "{-M}" and ",<converter>" per '%' */
	out = malloc(len + pct * (4 + sizeof(ACT_ESC_CONV)) + 1);
	if (!out)
		return NULL;
	for (p = text; *p; p++) {
		out[n++] = *p;
		if (*p != '%')
			continue;
		if (p[1] == '%') {
			out[n++] = *++p;
			continue;
		}
		if (p[1] == '{') {
			memcpy(out + n, "{-M,", 4);
			n += 4;
			p++;
		} else if (p[1]) {
			memcpy(out + n, "{-M}", 4);
			n += 4;
		}
		p = copy_sample_expr(p, out, &n, escape);
	}
	out[n] = '\0';
	return out;
}

int act_fmt_parse(struct act_fmt *f, const char *text, const struct act_rule *r,
                  char *err, size_t errlen)
{
	return act_fmt_parse_opt(f, text, r, 1, err, errlen);
}

int act_fmt_parse_opt(struct act_fmt *f, const char *text, const struct act_rule *r,
                      int escape, char *err, size_t errlen)
{
	char *full;
	int rc;

	memset(f, 0, sizeof(*f));
	f->text = strdup(text);
	if (!f->text)
		return errmsg_set(err, errlen, "out of memory");
	f->len = strlen(text);
	if (!strchr(text, '%'))
		return 0;
	if (fmt_check_use(text, r, err, errlen) < 0)
		goto fail;
	f->lf = calloc(1, sizeof(*f->lf));
	full = fmt_no_dash(text, escape);
	if (!f->lf || !full) {
		free(full);
		errmsg_set(err, errlen, "out of memory");
		goto fail;
	}
	/* the user's text first, so that a message quotes what was written */
	rc = lf_compile(text, f->lf, err, errlen);
	if (rc == 0) {
		lf_free(f->lf);
		rc = lf_compile(full, f->lf, err, errlen);
	}
	free(full);
	if (rc < 0)
		goto fail;
	return 0;
fail:
	act_fmt_free(f);
	return -1;
}

size_t act_fmt_render(const struct act_fmt *f, struct act_env *env, char *out, size_t room)
{
	size_t n;

	if (!room)
		return 0;
	if (f->lf)
		return act_lf_render(env->s, f->lf, out, room);
	n = f->len < room - 1 ? f->len : room - 1;
	memcpy(out, f->text, n);
	out[n] = '\0';
	return n;
}

void act_fmt_free(struct act_fmt *f)
{
	if (f->lf) {
		lf_free(f->lf);
		free(f->lf);
	}
	free(f->text);
	memset(f, 0, sizeof(*f));
}

struct sample_expr *act_expr_parse(const char *text, const struct act_rule *r,
                                   char *err, size_t errlen)
{
	struct sample_expr *x;

	if (!text || !*text) {
		errmsg_set(err, errlen, "missing fetch method");
		return NULL;
	}
	x = sample_expr_parse(text, NULL, err, errlen);
	if (x && smp_check_use(x->use, act_avail(r), text, err, errlen) < 0) {
		sample_expr_free(x);
		return NULL;
	}
	return x;
}

int act_expr_eval(const struct sample_expr *expr, struct act_env *env, int type,
                  struct sample *smp)
{
	memset(smp, 0, sizeof(*smp));
	smp->opt = SMP_OPT_FINAL;
	if (!env->smp)
		return 0;
	if (type == SMP_T_ANY)
		return sample_expr_eval(expr, env->smp, smp);
	return sample_expr_eval_as(expr, env->smp, (enum smp_type)type, smp);
}

enum act_verdict act_rewrite_failed(const struct act_env *env)
{
	return env->strict_off ? ACT_V_CONTINUE : ACT_V_ERROR;
}

int act_reply_put(struct act_env *env, const char *p, size_t len)
{
	struct buffer *b = env->reply;

	if (!b || buf_room(b) < len)
		return -1;
	memcpy(buf_tail(b), p, len);
	b->data += len;
	return 0;
}

int act_parse_time(const char *word, const char *what, int *ms, char *err, size_t errlen)
{
	char sub[256];

	if (!word || !*word)
		return errmsg_set(err, errlen, "missing argument for '%s'", what);
	if (cfg_parse_time_ms(word, ms, sub, sizeof(sub)) < 0)
		return errmsg_set(err, errlen, "'%s': %s", what, sub);
	return 0;
}

int act_err_nargs(char *err, size_t errlen, int want, const char *usage)
{
	return errmsg_set(err, errlen, "expects exactly %d argument%s %s", want,
	                  want == 1 ? "" : "s", usage);
}

/* ------------------------------------------------------------------------ */
/* Parsing one rule                                                          */
/* ------------------------------------------------------------------------ */

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[64], cur[64];

	if (la >= 63 || lb >= 63)
		return 64;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);

			cur[j] = del < ins ? del : ins;
			if (sub < cur[j])
				cur[j] = sub;
		}
		memcpy(prev, cur, (lb + 1) * sizeof(prev[0]));
	}
	return prev[lb];
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The valid actions of <set> in alphabetical order, as "a, b, c(*)", cut
 * with "..." to fit <room>. */
static void list_actions(enum act_ruleset set, char *out, size_t room)
{
	const char *names[128];
	size_t n = 0, pos = 0;

	for (struct act_kw_table *t = act_tables; t; t = t->next)
		for (const struct act_kw *k = t->kws; k->kw && n < 128; k++)
			if ((k->sets & (1u << set)) && !(k->flags & ACT_KW_F_UNSUPPORTED))
				names[n++] = k->kw;
	qsort(names, n, sizeof(names[0]), cmp_names);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(names[i]);
		int prefix = names[i][l - 1] == '(';
		int w = snprintf(out + pos, room - pos, "%s%s%s", i ? ", " : "", names[i],
		                 prefix ? "*)" : "");

		if (w < 0 || (size_t)w >= room - pos) {
			if (room > 4)
				strcpy(out + (pos < room - 4 ? pos : room - 4), "...");
			return;
		}
		pos += (size_t)w;
	}
}

/* "unknown action 'x' (did you mean 'y'?)", or "... 'x'; 'set' expects a,
 * b, c" when nothing is close, or that the action belongs to other rule
 * sets. */
static int unknown_action(enum act_ruleset set, const char *word, char *err, size_t errlen)
{
	const struct act_kw *best = NULL;
	size_t best_d = 4;
	int n;

	for (struct act_kw_table *t = act_tables; t; t = t->next)
		for (const struct act_kw *k = t->kws; k->kw; k++) {
			size_t d = edit_distance(word, k->kw);

			if ((k->sets & (1u << set)) && !(k->flags & ACT_KW_F_UNSUPPORTED) &&
			    d < best_d) {
				best = k;
				best_d = d;
			}
		}
	if (kw_lookup(~0u, word))
		return errmsg_set(err, errlen, "action '%s' is not allowed in '%s' rules", word,
		                  ruleset_names[set]);
	if (best && *word)
		return errmsg_set(err, errlen, "unknown action '%s' (did you mean '%s'?)", word,
		                  best->kw);
	if (*word)
		n = snprintf(err, errlen, "unknown action '%s'; '%s' expects ", word,
		             ruleset_names[set]);
	else
		n = snprintf(err, errlen, "missing action; '%s' expects ", ruleset_names[set]);
	if (n > 0 && (size_t)n < errlen)
		list_actions(set, err + n, errlen - (size_t)n);
	return -1;
}

/* SMP_USE_* bits of <use> the rule set never offers. */
static unsigned int use_missing(unsigned int use, unsigned int avail)
{
	return use & ~avail & ~SMP_USE_INTRN;
}

/* The first term of a condition whose data the rule set never has. Each
 * term is compiled alone to learn what it uses: a named ACL gives its name
 * (*anonymous 0), an anonymous one its keyword without arguments. Returns
 * 1 if one was found. */
static int cond_find_unusable(struct proxy *px, char **args, int nargs, unsigned int avail,
                              const char *file, int line, char *name, size_t room,
                              int *anonymous)
{
	for (int i = 1; i < nargs; i++) {
		char *sub[CFG_MAX_ARGS + 3], err[256];
		const char *w = args[i], *kw = w;
		struct acl_cond *c;
		int n = 0, bad;

		if (!strcmp(w, "or") || !strcmp(w, "||") || !strcmp(w, "!"))
			continue;
		sub[n++] = "if";
		*anonymous = !strcmp(w, "{") || !strcmp(w, "!{");
		if (*anonymous) {
			int j = i + 1;

			sub[n++] = "{";
			while (j < nargs && strcmp(args[j], "}") != 0 && n < CFG_MAX_ARGS)
				sub[n++] = args[j++];
			sub[n++] = "}";
			kw = i + 1 < nargs ? args[i + 1] : "";
			i = j;
		} else {
			if (*w == '!')
				w++;
			sub[n++] = (char *)w;
			kw = w;
		}
		c = acl_cond_parse(sub, n, px->acls, file, line, err, sizeof(err));
		if (!c)
			continue;
		bad = use_missing(acl_cond_use(c), avail) != 0;
		acl_cond_free(c);
		if (bad) {
			snprintf(name, room, "%.*s", (int)(*anonymous ? strcspn(kw, "(,") :
			                                   strlen(kw)), kw);
			return 1;
		}
	}
	return 0;
}

/* How HAProxy names the place a condition is checked at, for its warning:
 * "frontend http-response header rule". */
static void cond_place(const struct proxy *px, enum act_ruleset set, char *out, size_t room)
{
	static const char *const what[ACT_RULESETS] = {
		[ACT_HTTP_REQ] = "http-request header", [ACT_HTTP_RES] = "http-response header",
		[ACT_HTTP_AFTER] = "http-response header",
		[ACT_TCP_REQ_CONN] = "tcp-request connection",
		[ACT_TCP_REQ_SESS] = "tcp-request session",
		[ACT_TCP_REQ_CONT] = "tcp-request content",
		[ACT_TCP_RES_CONT] = "tcp-response content",
	};
	int response = set == ACT_HTTP_RES || set == ACT_HTTP_AFTER || set == ACT_TCP_RES_CONT;
	unsigned int first = response ? PX_CAP_BE : PX_CAP_FE;
	int fe = (px->cap & first) ? !response : response;

	snprintf(out, room, "%s %s rule", fe ? "frontend" : "backend", what[set]);
}

/* A condition on data the rule set never has is accepted with a warning,
 * as HAProxy does: such a fetch fails at run time (act_exec() restricts
 * the sample context to the rule set's data), so the ACL never matches. A
 * value (set-header %[res.hdr(x)] on requests) stays an error. */
static void cond_warn_unusable(struct proxy *px, const struct act_rule *r, char **args,
                               int nargs, unsigned int avail)
{
	char name[128], place[96], in[64] = "";
	int anonymous = 0;

	cond_place(px, r->set, place, sizeof(place));
	if (r->set >= ACT_TCP_REQ_CONN)
		snprintf(in, sizeof(in), " in '%s'", ruleset_names[r->set]);
	if (!cond_find_unusable(px, args, nargs, avail, r->file, r->line, name, sizeof(name),
	                        &anonymous))
		cfg_warning(r->file, r->line, "condition involves keywords which are incompatible "
		            "with '%s'", place);
	else if (anonymous)
		cfg_warning(r->file, r->line, "anonymous acl will never match%s because it uses "
		            "keyword '%s' which is incompatible with '%s'", in, name, place);
	else
		cfg_warning(r->file, r->line, "acl '%s' involves keywords which are incompatible "
		            "with '%s' (they never match there)", name, place);
}

static int rule_cond_parse(struct act_rule *r, struct proxy *px, char **args, int nargs,
                           char *err, size_t errlen)
{
	unsigned int avail = act_avail(r);

	r->cond = acl_cond_parse(args, nargs, px->acls, r->file, r->line, err, errlen);
	if (!r->cond)
		return -1;
	if (use_missing(acl_cond_use(r->cond), avail))
		cond_warn_unusable(px, r, args, nargs, avail);
	else if ((acl_cond_use(r->cond) & SMP_USE_L6REQ) && (r->flags & ACT_RULE_F_HTTP_PX))
		cfg_warning(r->file, r->line, "Proxy '%s': L6 sample fetches on an HTTP "
		            "proxy do not see the request as received (HAProxy warns that they "
		            "are ignored).", px->name ? px->name : "");
	return 0;
}

static void rule_free(struct act_rule *r)
{
	if (r->kw && r->kw->free && r->arg)
		r->kw->free(r->arg);
	acl_cond_free(r->cond);
	free(r->file);
	free(r);
}

/* Prefixes <err> with "action 'word': " (the parse functions only say what
 * is wrong with their arguments). */
static int action_error(const char *word, char *err, size_t errlen)
{
	char sub[512];

	snprintf(sub, sizeof(sub), "%s", err);
	return errmsg_set(err, errlen, "action '%s': %s", word, sub);
}

/* Legacy redirect rules stay after the http-request rules whatever the
 * order of the lines (HAProxy processes them last, and warns). */
static void rule_insert(struct proxy *px, struct act_rule *r, const char *file, int line)
{
	struct list *head = act_rules_of(px, r->set), *pos;

	if (r->set != ACT_HTTP_REQ || (r->flags & ACT_RULE_F_LEGACY)) {
		list_append(head, &r->list);
		return;
	}
	for (pos = head->next; pos != head; pos = pos->next)
		if (list_elem(pos, struct act_rule, list)->flags & ACT_RULE_F_LEGACY)
			break;
	if (pos != head)
		cfg_warning(file, line, "a 'http-request' rule placed after a 'redirect' rule "
		            "will still be processed before.");
	list_append(pos, &r->list);   /* before <pos> */
}

static int rule_parse_one(struct proxy *px, enum act_ruleset set, char **args, int nargs,
                          const char *file, int line, unsigned int flags, struct list *into,
                          char *err, size_t errlen);

/* The names of backends and servers the rule's expressions hold are
 * checked after parsing, against this line and proxy. */
static int rule_parse(struct proxy *px, enum act_ruleset set, char **args, int nargs,
                      const char *file, int line, unsigned int flags, struct list *into,
                      char *err, size_t errlen)
{
	struct smp_origin saved;
	int ret;

	smp_cfg_origin_get(&saved);
	smp_cfg_origin_set(file, line, px);
	ret = rule_parse_one(px, set, args, nargs, file, line, flags, into, err, errlen);
	smp_cfg_origin_set(saved.file, saved.line, saved.px);
	return ret;
}

static int rule_parse_one(struct proxy *px, enum act_ruleset set, char **args, int nargs,
                          const char *file, int line, unsigned int flags, struct list *into,
                          char *err, size_t errlen)
{
	const struct act_kw *kw;
	struct act_rule *r;
	int cond_at = 1;

	/* an empty word ends the arguments, as in HAProxy's parser: what
	 * follows, a condition too, is not read (HAProxy says nothing) */
	for (int i = 0; i < nargs; i++)
		if (!*args[i]) {
			if (i + 1 < nargs)
				cfg_warning(file, line, "empty argument: '%s' and what follows it are "
				            "ignored, as HAProxy does", args[i + 1]);
			nargs = i;
		}
	if (nargs < 1 || !*args[0])
		return unknown_action(set, "", err, errlen);
	kw = act_kw_find(set, args[0]);
	if (!kw)
		return unknown_action(set, args[0], err, errlen);
	while (cond_at < nargs && strcmp(args[cond_at], "if") && strcmp(args[cond_at], "unless"))
		cond_at++;
	r = calloc(1, sizeof(*r));
	if (!r || !(r->file = strdup(file ? file : ""))) {
		free(r);
		return errmsg_set(err, errlen, "out of memory");
	}
	list_init(&r->list);
	r->set = set;
	r->kw = kw;
	r->line = line;
	r->flags = flags;
	if (px->cap & PX_CAP_BE)
		r->flags |= ACT_RULE_F_BE_SIDE;
	if (px->mode == PX_MODE_HTTP)
		r->flags |= ACT_RULE_F_HTTP_PX;
	*err = '\0';
	if (kw->parse && kw->parse(r, px, args + 1, cond_at - 1, err, errlen) < 0) {
		rule_free(r);
		return action_error(args[0], err, errlen);
	}
	if (cond_at < nargs && rule_cond_parse(r, px, args + cond_at, nargs - cond_at,
	                                       err, errlen) < 0) {
		rule_free(r);
		return action_error(args[0], err, errlen);
	}
	if (into)
		list_append(into, &r->list);
	else
		rule_insert(px, r, file, line);
	return 0;
}

int act_rule_parse(struct proxy *px, enum act_ruleset set, char **args, int nargs,
                   const char *file, int line, char *err, size_t errlen)
{
	return rule_parse(px, set, args, nargs, file, line, 0, NULL, err, errlen);
}

int act_rule_parse_into(struct proxy *px, enum act_ruleset set, struct list *into,
                        char **args, int nargs, const char *file, int line, char *err,
                        size_t errlen)
{
	return rule_parse(px, set, args, nargs, file, line, 0, into, err, errlen);
}

/* ------------------------------------------------------------------------ */
/* Configuration keywords                                                    */
/* ------------------------------------------------------------------------ */

static int refuse_defaults(struct cfg_ctx *ctx, const char *kw, char *err, size_t errlen)
{
	if (ctx->section != CFG_SEC_DEFAULTS)
		return 0;
	return errmsg_set(err, errlen, "'%s' rules are not supported in a 'defaults' section "
	                  "(HAProxy only takes them from named defaults, which sluice does "
	                  "not implement): write them in the frontend, backend or listen "
	                  "section", kw);
}

/* HAProxy runs tcp-request content rules before http-request rules whatever
 * their order in the section, and says so. */
static void warn_order(struct cfg_ctx *ctx, enum act_ruleset set)
{
	if (set == ACT_TCP_REQ_CONT && !list_empty(&ctx->px->http_req_rules))
		cfg_warning(ctx->file, ctx->line, "a 'tcp-request' rule placed after an "
		            "'http-request' rule will still be processed before.");
}

static int kw_http_rule(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	enum act_ruleset set = !strcmp(args[0], "http-request") ? ACT_HTTP_REQ :
	                       !strcmp(args[0], "http-response") ? ACT_HTTP_RES : ACT_HTTP_AFTER;

	if (refuse_defaults(ctx, args[0], err, errlen) < 0)
		return -1;
	return act_rule_parse(ctx->px, set, args + 1, nargs - 1, ctx->file, ctx->line,
	                      err, errlen);
}

static int kw_tcp_rule(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	enum act_ruleset set;
	char what[64];

	if (!strcmp(args[0], "tcp-response"))
		set = ACT_TCP_RES_CONT;
	else if (!strcmp(args[1], "connection"))
		set = ACT_TCP_REQ_CONN;
	else if (!strcmp(args[1], "session"))
		set = ACT_TCP_REQ_SESS;
	else
		set = ACT_TCP_REQ_CONT;
	snprintf(what, sizeof(what), "%s %s", args[0], args[1]);
	if (refuse_defaults(ctx, what, err, errlen) < 0)
		return -1;
	warn_order(ctx, set);
	/* accepted so that configurations load, but said aloud: these rules
	 * are not run yet (doc/configuration.md, "Limits in this release") */
	if (set == ACT_TCP_RES_CONT)
		cfg_warning(ctx->file, ctx->line, "'tcp-response content' rules are not run by "
		            "this version of sluice: this rule has no effect.");
	else if (set == ACT_TCP_REQ_CONT && !(ctx->px->cap & PX_CAP_FE))
		cfg_warning(ctx->file, ctx->line, "a backend's 'tcp-request content' rules are not "
		            "run by this version of sluice: this rule has no effect.");
	return act_rule_parse(ctx->px, set, args + 2, nargs - 2, ctx->file, ctx->line,
	                      err, errlen);
}

static int kw_inspect_delay(struct cfg_ctx *ctx, char **args, int nargs, char *err,
                            size_t errlen)
{
	char what[64];
	int ms;

	snprintf(what, sizeof(what), "%s %s", args[0], args[1]);
	if (refuse_defaults(ctx, what, err, errlen) < 0)
		return -1;
	if (nargs < 3)
		return errmsg_set(err, errlen, "expects a delay (in milliseconds, or with a "
		                  "unit)");
	if (act_parse_time(args[2], "inspect-delay", &ms, err, errlen) < 0 ||
	    cfg_no_more_args(args, nargs, 3, err, errlen) < 0)
		return -1;
	if (!strcmp(args[0], "tcp-request"))
		ctx->px->tcp_inspect_delay = ms;
	else
		ctx->px->tcp_res_inspect_delay = ms;
	return 0;
}

/* The legacy `redirect` keyword is an http-request redirect rule. */
static int kw_redirect(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	if (ctx->section == CFG_SEC_DEFAULTS)
		return errmsg_set(err, errlen, "not allowed in a 'defaults' section");
	return rule_parse(ctx->px, ACT_HTTP_REQ, args, nargs, ctx->file, ctx->line,
	                  ACT_RULE_F_LEGACY, NULL, err, errlen);
}

/* declare capture request|response len <n>: a slot for "capture ... id". */
static int kw_declare_capture(struct cfg_ctx *ctx, char **args, int nargs, char *err,
                              size_t errlen)
{
	struct proxy *px = ctx->px;
	int req;
	long len;

	if (nargs < 3 || (strcmp(args[2], "request") && strcmp(args[2], "response")))
		return errmsg_set(err, errlen, "expects 'request' or 'response' then 'len' "
		                  "<length>");
	req = !strcmp(args[2], "request");
	if (nargs < 5 || strcmp(args[3], "len"))
		return errmsg_set(err, errlen, "expects 'len' <length> after '%s'", args[2]);
	if (cfg_parse_uint(args[4], 65535, &len, err, errlen) < 0 ||
	    cfg_no_more_args(args, nargs, 5, err, errlen) < 0)
		return -1;
	if (len < 1)
		return errmsg_set(err, errlen, "length must be > 0");
	if ((req ? px->nreq_cap : px->nres_cap) >= PX_MAX_CAPTURES)
		return errmsg_set(err, errlen, "too many captures (at most %d per direction)",
		                  PX_MAX_CAPTURES);
	/* an empty name never matches a header: the slot is for rules only */
	if (req)
		px->req_cap[px->nreq_cap++] = (struct px_capture){ strdup(""), (int)len };
	else
		px->res_cap[px->nres_cap++] = (struct px_capture){ strdup(""), (int)len };
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Run time                                                                  */
/* ------------------------------------------------------------------------ */

/* The fetches of a condition see only the data of the rule set: one the
 * configuration was warned about fails, and its ACL does not match. */
static enum acl_test_res rule_cond_eval(const struct act_rule *r, struct act_env *env)
{
	struct smp_ctx *ctx = env->smp;
	unsigned int saved;
	enum acl_test_res res;

	if (!ctx)
		return ACL_TEST_FAIL;
	saved = ctx->avail;
	ctx->avail = act_avail(r) & (saved ? saved : SMP_USE_ALL);
	if (!ctx->avail)
		ctx->avail = SMP_USE_INTRN;   /* 0 would mean "everything" */
	res = acl_cond_eval(r->cond, ctx);
	ctx->avail = saved;
	return res;
}

enum act_verdict act_exec(struct list *rules, struct act_env *env)
{
	struct list *pos = env->resume ? env->resume : rules->next;
	int busy = env->resume && env->rule_busy;

	if (!env->resume)
		env->strict_off = 0;
	env->rule_busy = 0;
	for (; pos != rules; pos = pos->next) {
		const struct act_rule *r = list_elem(pos, struct act_rule, list);
		enum act_verdict v;

		if (r->cond && !busy) {
			enum acl_test_res res = rule_cond_eval(r, env);

			if (res == ACL_TEST_MISS && !env->smp->final) {
				env->resume = pos;
				return ACT_V_YIELD;
			}
			if (res != ACL_TEST_PASS)
				continue;
		}
		busy = 0;
		v = r->kw->exec(r, env);
		if (v == ACT_V_CONTINUE)
			continue;
		env->resume = v == ACT_V_YIELD ? pos : NULL;
		return v;
	}
	env->resume = NULL;
	return ACT_V_CONTINUE;
}

void act_free_rules(struct list *rules)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, rules) {
		list_del_init(pos);
		rule_free(list_elem(pos, struct act_rule, list));
	}
}
