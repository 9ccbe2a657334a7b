/* Conditions of `.if`/`.elif` lines and of `-cc`, and the nesting of
 * conditional blocks (HAProxy 2.6 configuration manual, section 2.4; the
 * language is summed up in include/sluice/cfg/cond.h).
 *
 * The expression is parsed by recursive descent and evaluated as it is
 * parsed, every operand included: HAProxy reports a syntax error even in an
 * operand whose value does not matter, and so do we. Predicates have no side
 * effect, so evaluating them all changes nothing else.
 *
 * Only used while the configuration is read (one thread); no global state.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sluice/cfg/cond.h>
#include <sluice/core/errmsg.h>
#include <sluice/cfg/tokenize.h>
#include <sluice/core/global.h>

#define COND_MAX_NESTING 64     /* '(' and '!' levels in one expression */

struct cond_parser {
	const char *expr;       /* the whole expression, for messages */
	const char *p;
	char *scratch;          /* decoded predicate arguments */
	size_t scratch_size;
	int nesting;
	char *err;
	size_t errlen;
};

static int pred_defined(char **args, struct cond_parser *cp);
static int pred_feature(char **args, struct cond_parser *cp);
static int pred_streq(char **args, struct cond_parser *cp);
static int pred_strneq(char **args, struct cond_parser *cp);
static int pred_version_atleast(char **args, struct cond_parser *cp);
static int pred_version_before(char **args, struct cond_parser *cp);

/* The predicates of section 2.4. HAProxy 2.6 documents no other one (and
 * its -cc refuses `enabled()`), so none is offered. */
static const struct cond_predicate {
	const char *name;
	int nargs;
	int (*eval)(char **args, struct cond_parser *cp);   /* 1, 0 or -1 */
} cond_predicates[] = {
	{ "defined",         1, pred_defined },
	{ "feature",         1, pred_feature },
	{ "streq",           2, pred_streq },
	{ "strneq",          2, pred_strneq },
	{ "version_atleast", 1, pred_version_atleast },
	{ "version_before",  1, pred_version_before },
};

#define COND_PRED_MAXARGS 2     /* the largest nargs above */

static enum cfg_directive dir_if(struct cfg_cond_stack *s, char **args, int nargs,
                                 char *err, size_t errlen);
static enum cfg_directive dir_elif(struct cfg_cond_stack *s, char **args, int nargs,
                                   char *err, size_t errlen);
static enum cfg_directive dir_else(struct cfg_cond_stack *s, char **args, int nargs,
                                   char *err, size_t errlen);
static enum cfg_directive dir_endif(struct cfg_cond_stack *s, char **args, int nargs,
                                    char *err, size_t errlen);

/* The dot-directives. Block directives (handler set) act on nesting even
 * inside inactive blocks; message directives (handler NULL) return their
 * text with <code>, and only in active blocks. */
static const struct cond_directive {
	const char *name;
	enum cfg_directive (*handle)(struct cfg_cond_stack *s, char **args, int nargs,
	                             char *err, size_t errlen);
	enum cfg_directive code;
} cond_directives[] = {
	{ ".if",      dir_if,    CFG_DIR_HANDLED },
	{ ".elif",    dir_elif,  CFG_DIR_HANDLED },
	{ ".else",    dir_else,  CFG_DIR_HANDLED },
	{ ".endif",   dir_endif, CFG_DIR_HANDLED },
	{ ".diag",    NULL,      CFG_DIR_DIAG },
	{ ".notice",  NULL,      CFG_DIR_NOTICE },
	{ ".warning", NULL,      CFG_DIR_WARNING },
	{ ".alert",   NULL,      CFG_DIR_ERROR },
};

/* Per-level state bits of struct cfg_cond_stack. A level opened inside an
 * inactive block starts TAKEN and never becomes ACTIVE. */
#define COND_ACTIVE   0x01      /* the lines of the current branch are parsed */
#define COND_TAKEN    0x02      /* no later branch of this level may be taken */
#define COND_ELSE     0x04      /* .else seen */


/* ---- versions ---------------------------------------------------------- */

enum ver_stage { VER_DEV, VER_PRE, VER_RC, VER_RELEASE };

struct version {
	unsigned int num[4];
	enum ver_stage stage;
	unsigned int stage_num;
	unsigned int commits;
};

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static unsigned int parse_uint(const char **s)
{
	unsigned int v = 0;

	for (; is_digit(**s); (*s)++)
		v = v > (~0U - 9) / 10 ? ~0U : v * 10 + (unsigned int)(**s - '0');
	return v;
}

static int version_parse(const char *s, struct version *v)
{
	static const struct { const char *tag; enum ver_stage stage; } stages[] = {
		{ "dev", VER_DEV }, { "pre", VER_PRE }, { "rc", VER_RC },
	};
	size_t i, n;

	memset(v, 0, sizeof(*v));
	v->stage = VER_RELEASE;
	if (!*s)
		return 0;   /* every component missing: 0 */
	for (i = 0; ; i++) {
		if (!is_digit(*s))
			return -1;
		v->num[i] = parse_uint(&s);
		if (*s != '.')
			break;
		if (i == 3)
			return -1;
		s++;
	}
	if (*s == '-') {
		for (i = 0; i < sizeof(stages) / sizeof(stages[0]); i++) {
			n = strlen(stages[i].tag);
			if (strncasecmp(s + 1, stages[i].tag, n) == 0) {
				v->stage = stages[i].stage;
				s += 1 + n;
				v->stage_num = parse_uint(&s);
				break;
			}
		}
	}
	if (*s == '-' && is_digit(s[1])) {
		const char *tag = s;

		s++;
		v->commits = parse_uint(&s);
		if (*s != '\0' && *s != '+' && *s != '-') {
			/* digits then letters: a commit hash (-1ab2c3), not a count */
			v->commits = 0;
			s = tag;
		}
	}
	/* local suffixes (+deb12u4, -g1234abc) do not take part in the order */
	return (*s == '\0' || *s == '+' || *s == '-') ? 0 : -1;
}

static int cmp_uint(unsigned int a, unsigned int b)
{
	return a < b ? -1 : a > b;
}

int cfg_version_cmp(const char *a, const char *b)
{
	struct version va, vb;
	int i, c;

	if (version_parse(a, &va) < 0 || version_parse(b, &vb) < 0)
		return -2;
	for (i = 0; i < 4; i++)
		if ((c = cmp_uint(va.num[i], vb.num[i])) != 0)
			return c;
	if ((c = cmp_uint(va.stage, vb.stage)) != 0)
		return c;
	if ((c = cmp_uint(va.stage_num, vb.stage_num)) != 0)
		return c;
	return cmp_uint(va.commits, vb.commits);
}

/* ---- predicates -------------------------------------------------------- */

static int pred_defined(char **args, struct cond_parser *cp)
{
	return getenv(args[0]) != NULL;
}

/* An empty name is no feature (HAProxy 2.6 answers true there, which its
 * manual does not support). */
static int pred_feature(char **args, struct cond_parser *cp)
{
	return build_has_feature(args[0]);
}

static int pred_streq(char **args, struct cond_parser *cp)
{
	return strcmp(args[0], args[1]) == 0;
}

static int pred_strneq(char **args, struct cond_parser *cp)
{
	return strcmp(args[0], args[1]) != 0;
}

/* Compares SLUICE_CFG_LEVEL with args[0]; -2 (with a message) if invalid.
 * HAProxy 2.6 takes garbage for 0; a typo deserves an error instead. */
static int cmp_level(const char *pred, char **args, struct cond_parser *cp)
{
	int c = cfg_version_cmp(SLUICE_CFG_LEVEL, args[0]);

	if (c == -2)
		errmsg_set(cp->err, cp->errlen, "invalid version '%s' in %s() in condition '%s'",
		     args[0], pred, cp->expr);
	return c;
}

static int pred_version_atleast(char **args, struct cond_parser *cp)
{
	int c = cmp_level("version_atleast", args, cp);

	return c == -2 ? -1 : c >= 0;
}

static int pred_version_before(char **args, struct cond_parser *cp)
{
	int c = cmp_level("version_before", args, cp);

	return c == -2 ? -1 : c < 0;
}

/* ---- expression parser ------------------------------------------------- */

__attribute__((format(printf, 2, 3)))
static int cp_fail(struct cond_parser *cp, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return errmsg_set(cp->err, cp->errlen, "%s at column %d of condition '%s'", what,
	            (int)(cp->p - cp->expr) + 1, cp->expr);
}


static void cp_skip_blanks(struct cond_parser *cp)
{
	while (*cp->p == ' ' || *cp->p == '\t')
		cp->p++;
}

static int is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       is_digit(c);
}

static int hex_digit(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* [+-] then decimal digits, or 0x and hex digits: true when not zero. */
static int cp_number(struct cond_parser *cp)
{
	const char *start = cp->p;
	int nonzero = 0;

	if (*cp->p == '+' || *cp->p == '-')
		cp->p++;
	if (cp->p[0] == '0' && (cp->p[1] == 'x' || cp->p[1] == 'X') && hex_digit(cp->p[2])) {
		for (cp->p += 2; hex_digit(*cp->p); cp->p++)
			nonzero |= *cp->p != '0';
		return nonzero;
	}
	if (!is_digit(*cp->p)) {
		cp->p = start;
		return cp_fail(cp, "sign without a number");
	}
	for (; is_digit(*cp->p); cp->p++)
		nonzero |= *cp->p != '0';
	return nonzero;
}

/* Appends one decoded byte to the arguments being read. The scratch area is
 * as long as the expression, and an argument never decodes longer than its
 * source text: the check only guards that reasoning. */
static int cp_put(struct cond_parser *cp, size_t *used, char c)
{
	if (*used + 1 >= cp->scratch_size)
		return cp_fail(cp, "arguments too long");
	cp->scratch[(*used)++] = c;
	return 0;
}

/* Decodes the backslash sequence at <p> inside an argument: the same escapes
 * as the tokenizer's but \#, \$ and \xHH (section 2.2); any other
 * backslash is kept. Returns the byte and sets *len to the bytes read. */
static char arg_escape(const char *p, int *len)
{
	*len = 2;
	switch (p[1]) {
	case ' ': case '\\': case '\'': case '"':
		return p[1];
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 't':
		return '\t';
	default:
		*len = 1;
		return '\\';
	}
}

/* Reads the quoted string opening at cp->p into the argument. */
static int cp_quoted(struct cond_parser *cp, const struct cond_predicate *pred,
                     size_t *used)
{
	const char *open = cp->p;
	char quote = *cp->p++, c;
	int len = 1;

	while (*cp->p && *cp->p != quote) {
		c = *cp->p;
		if (c == '\\' && quote == '"')
			c = arg_escape(cp->p, &len);
		else
			len = 1;
		if (cp_put(cp, used, c) < 0)
			return -1;
		cp->p += len;
	}
	if (!*cp->p) {
		cp->p = open;
		return cp_fail(cp, "unterminated %s quote in the arguments of '%s'",
		               quote == '"' ? "double" : "single", pred->name);
	}
	cp->p++;
	return 0;
}

/* Decodes the argument list after '(' into <argv> (pointers into scratch).
 * Returns the number of arguments, or -1. */
static int cp_args(struct cond_parser *cp, const struct cond_predicate *pred,
                   char **argv)
{
	size_t used = 0;
	int argc = 0, len;
	char c;

	argv[argc++] = cp->scratch;
	for (;;) {
		switch (*cp->p) {
		case '\0':
			return cp_fail(cp, "missing ')' after the arguments of '%s'", pred->name);
		case ')':
			cp->p++;
			cp->scratch[used] = '\0';
			return argc;
		case ',':
			if (argc == pred->nargs)
				return cp_fail(cp, "'%s' takes %d argument%s, got more", pred->name,
				               pred->nargs, pred->nargs > 1 ? "s" : "");
			cp->p++;
			if (cp_put(cp, &used, '\0') < 0)
				return -1;
			argv[argc++] = cp->scratch + used;
			break;
		case '"':
		case '\'':
			if (cp_quoted(cp, pred, &used) < 0)
				return -1;
			break;
		default:
			c = *cp->p;
			len = 1;
			if (c == '\\')
				c = arg_escape(cp->p, &len);
			if (cp_put(cp, &used, c) < 0)
				return -1;
			cp->p += len;
			break;
		}
	}
}

static int cp_predicate(struct cond_parser *cp)
{
	const struct cond_predicate *pred = NULL;
	char *argv[COND_PRED_MAXARGS];
	const char *name = cp->p;
	size_t len, i;
	int argc = 1;

	while (is_name_char(*cp->p))
		cp->p++;
	len = (size_t)(cp->p - name);
	for (i = 0; i < sizeof(cond_predicates) / sizeof(cond_predicates[0]); i++) {
		if (strlen(cond_predicates[i].name) == len &&
		    memcmp(cond_predicates[i].name, name, len) == 0) {
			pred = &cond_predicates[i];
			break;
		}
	}
	if (!pred) {
		cp->p = name;
		return cp_fail(cp, "unknown predicate '%.*s'", (int)len, name);
	}
	if (*cp->p == '(') {
		cp->p++;
		argc = cp_args(cp, pred, argv);
		if (argc < 0)
			return -1;
	} else {
		/* no parentheses: one empty argument, as with "()" */
		cp->scratch[0] = '\0';
		argv[0] = cp->scratch;
	}
	if (argc < pred->nargs)
		return cp_fail(cp, "'%s' takes %d arguments, got %d", pred->name,
		               pred->nargs, argc);
	return pred->eval(argv, cp);
}

static int cp_or(struct cond_parser *cp);

static int cp_term(struct cond_parser *cp)
{
	char repr[8];
	int v;

	cp_skip_blanks(cp);
	if (++cp->nesting > COND_MAX_NESTING)
		return cp_fail(cp, "expression nested too deeply (max %d levels)",
		               COND_MAX_NESTING);
	switch (*cp->p) {
	case '!':
		cp->p++;
		v = cp_term(cp);
		v = v < 0 ? -1 : !v;
		break;
	case '(':
		cp->p++;
		v = cp_or(cp);
		if (v < 0)
			break;
		cp_skip_blanks(cp);
		if (*cp->p != ')')
			v = cp_fail(cp, "missing ')'");
		else
			cp->p++;
		break;
	case '\0':
		v = cp_fail(cp, "missing term at the end");
		break;
	default:
		if (is_digit(*cp->p) || *cp->p == '+' || *cp->p == '-')
			v = cp_number(cp);
		else if (is_name_char(*cp->p))
			v = cp_predicate(cp);
		else
			v = cp_fail(cp, "unexpected character '%s' where a term was expected",
			            errmsg_char(*cp->p, repr));
		break;
	}
	cp->nesting--;
	return v;
}

static int cp_and(struct cond_parser *cp)
{
	int v = cp_term(cp), w;

	while (v >= 0) {
		cp_skip_blanks(cp);
		if (cp->p[0] != '&' || cp->p[1] != '&')
			break;
		cp->p += 2;
		w = cp_term(cp);
		v = w < 0 ? -1 : v && w;
	}
	return v;
}

static int cp_or(struct cond_parser *cp)
{
	int v = cp_and(cp), w;

	while (v >= 0) {
		cp_skip_blanks(cp);
		if (cp->p[0] != '|' || cp->p[1] != '|')
			break;
		cp->p += 2;
		w = cp_and(cp);
		v = w < 0 ? -1 : v || w;
	}
	return v;
}

static int cond_eval_expr(const char *expr, char *scratch, size_t scratch_size,
                          char *err, size_t errlen)
{
	struct cond_parser cp = {
		.expr = expr, .p = expr, .scratch = scratch,
		.scratch_size = scratch_size, .err = err, .errlen = errlen,
	};
	char repr[8];
	int v;

	cp_skip_blanks(&cp);
	if (!*cp.p)
		return 0;   /* an empty condition is false */
	v = cp_or(&cp);
	if (v < 0)
		return -1;
	cp_skip_blanks(&cp);
	if (*cp.p)
		return cp_fail(&cp, "unexpected character '%s' after the expression",
		               errmsg_char(*cp.p, repr));
	return v;
}

int cfg_cond_eval(char **args, int nargs, char *err, size_t errlen)
{
	size_t len = 0, pos = 0;
	char *expr;
	int i, v;

	if (err && errlen)
		err[0] = '\0';
	for (i = 0; i < nargs; i++)
		len += strlen(args[i]) + 1;
	/* the joined words, then as much room for the decoded arguments: an
	 * argument never decodes longer than its source text */
	expr = malloc(2 * len + 2);
	if (!expr)
		return errmsg_set(err, errlen, "out of memory while evaluating a condition");
	for (i = 0; i < nargs; i++) {
		if (i)
			expr[pos++] = ' ';
		memcpy(expr + pos, args[i], strlen(args[i]));
		pos += strlen(args[i]);
	}
	expr[pos] = '\0';
	v = cond_eval_expr(expr, expr + pos + 1, len + 1, err, errlen);
	free(expr);
	return v;
}

int cfg_cond_eval_str(const char *expr, char *err, size_t errlen)
{
	struct cfg_tokens *tok = malloc(sizeof(*tok));
	int v;

	if (!tok)
		return errmsg_set(err, errlen, "out of memory while evaluating a condition");
	/* as HAProxy does for -cc, '#' starts no comment there */
	v = cfg_tokenize_ex(expr, NULL, CFG_TOK_NO_COMMENT, tok, err, errlen);
	if (v == 0)
		v = cfg_cond_eval(tok->args, tok->nargs, err, errlen);
	free(tok);
	return v;
}

/* ---- conditional blocks ------------------------------------------------ */

__attribute__((format(printf, 3, 4)))
static enum cfg_directive dir_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return CFG_DIR_ERROR;
}

void cfg_cond_init(struct cfg_cond_stack *s)
{
	memset(s, 0, sizeof(*s));
}

/* Levels past CFG_COND_MAXDEPTH (after the error) are counted but have no
 * state: they are inactive and only wait for their .endif. */
int cfg_cond_active(const struct cfg_cond_stack *s)
{
	if (s->depth <= 0)
		return 1;
	if (s->depth > CFG_COND_MAXDEPTH)
		return 0;
	return s->state[s->depth - 1] & COND_ACTIVE;
}

static enum cfg_directive dir_if(struct cfg_cond_stack *s, char **args, int nargs,
                                 char *err, size_t errlen)
{
	int v = 0;

	if (s->depth >= CFG_COND_MAXDEPTH) {
		/* the level that crosses the limit is the error; deeper ones
		 * are only counted, or a runaway nest gets one alert a line */
		if (s->depth++ > CFG_COND_MAXDEPTH)
			return CFG_DIR_HANDLED;
		return dir_fail(err, errlen, "too many nested '.if' (max %d)", CFG_COND_MAXDEPTH);
	}
	if (!cfg_cond_active(s)) {
		s->state[s->depth++] = COND_TAKEN;
		return CFG_DIR_HANDLED;
	}
	v = cfg_cond_eval(args + 1, nargs - 1, err, errlen);
	s->state[s->depth++] = v > 0 ? COND_ACTIVE | COND_TAKEN : v < 0 ? COND_TAKEN : 0;
	return v < 0 ? CFG_DIR_ERROR : CFG_DIR_HANDLED;
}

static enum cfg_directive dir_elif(struct cfg_cond_stack *s, char **args, int nargs,
                                   char *err, size_t errlen)
{
	unsigned char *st;
	int v;

	if (s->depth <= 0)
		return dir_fail(err, errlen, "'.elif' without a matching '.if'");
	if (s->depth > CFG_COND_MAXDEPTH)
		return CFG_DIR_HANDLED;
	st = &s->state[s->depth - 1];
	if (*st & COND_ELSE)
		return dir_fail(err, errlen, "'.elif' after '.else'");
	if (*st & COND_TAKEN) {
		*st &= ~COND_ACTIVE;
		return CFG_DIR_HANDLED;
	}
	v = cfg_cond_eval(args + 1, nargs - 1, err, errlen);
	*st = v > 0 ? COND_ACTIVE | COND_TAKEN : v < 0 ? COND_TAKEN : 0;
	return v < 0 ? CFG_DIR_ERROR : CFG_DIR_HANDLED;
}

static enum cfg_directive dir_else(struct cfg_cond_stack *s, char **args, int nargs,
                                   char *err, size_t errlen)
{
	unsigned char *st;

	if (s->depth <= 0)
		return dir_fail(err, errlen, "'.else' without a matching '.if'");
	if (nargs > 1)
		return dir_fail(err, errlen, "unexpected argument '%s' after '.else'", args[1]);
	if (s->depth > CFG_COND_MAXDEPTH)
		return CFG_DIR_HANDLED;
	st = &s->state[s->depth - 1];
	if (*st & COND_ELSE)
		return dir_fail(err, errlen, "'.else' after '.else'");
	*st = (*st & COND_TAKEN) ? COND_TAKEN | COND_ELSE
	                         : COND_ACTIVE | COND_TAKEN | COND_ELSE;
	return CFG_DIR_HANDLED;
}

static enum cfg_directive dir_endif(struct cfg_cond_stack *s, char **args, int nargs,
                                    char *err, size_t errlen)
{
	if (s->depth <= 0)
		return dir_fail(err, errlen, "'.endif' without a matching '.if'");
	if (nargs > 1)
		return dir_fail(err, errlen, "unexpected argument '%s' after '.endif'", args[1]);
	s->depth--;
	return CFG_DIR_HANDLED;
}

enum cfg_directive cfg_cond_directive(struct cfg_cond_stack *s, char **args,
                                      int nargs, char *err, size_t errlen)
{
	const struct cond_directive *dir = NULL;
	size_t i;

	if (nargs <= 0 || args[0][0] != '.')
		return CFG_DIR_NONE;
	if (err && errlen)
		err[0] = '\0';
	for (i = 0; i < sizeof(cond_directives) / sizeof(cond_directives[0]); i++) {
		if (strcmp(cond_directives[i].name, args[0]) == 0) {
			dir = &cond_directives[i];
			break;
		}
	}
	if (dir && dir->handle)
		return dir->handle(s, args, nargs, err, errlen);
	if (!cfg_cond_active(s))
		return CFG_DIR_HANDLED;
	if (!dir)
		return dir_fail(err, errlen, "unknown directive '%s'", args[0]);
	if (nargs > 2)
		return dir_fail(err, errlen, "unexpected argument '%s' after '%s' (quote the "
		            "message if it contains spaces)", args[2], args[0]);
	if (err && errlen)
		snprintf(err, errlen, "%s", nargs > 1 ? args[1] : "");
	return dir->code;
}
