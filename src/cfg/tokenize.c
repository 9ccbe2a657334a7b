/* Configuration tokenizer: one line of HAProxy's configuration language into
 * words (HAProxy 2.6 configuration manual, sections 2.2 and 2.3; the rules
 * are summed up in include/sluice/cfg/tokenize.h).
 *
 * The line is read once, left to right, in one of three contexts: unquoted,
 * inside "double quotes" or inside 'single quotes'. Decoded bytes are
 * appended to the word in progress in out->buf. A word is closed by an
 * unquoted space or tab, by an unquoted '#' (comment) or by the end of the
 * line, and exists as soon as it holds a byte or a quote opened in it.
 *
 * Invariant of out->buf: `used` bytes are in use, and tok_putc() always
 * leaves room for the NUL of the word in progress, so closing a word that
 * holds bytes cannot overflow.
 *
 * No allocation, no global state: callable from any thread (getenv() aside).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/tokenize.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/hexdigit.h>

#define TOK_VARNAME_MAX 256    /* longest variable name looked up */

struct tok {
	struct cfg_tokens *out;
	const struct cfg_tok_where *where;
	const char *line;       /* start of the line, for columns in messages */
	const char *end;        /* end of the line, newline and CR excluded */
	size_t used;            /* bytes of out->buf in use */
	size_t word;            /* offset in out->buf of the word in progress */
	int open;               /* a word is in progress (maybe still empty) */
	int drop_if_empty;      /* the word so far is only an empty ${X[*]} */
	char *err;
	size_t errlen;
};

/* The pseudo-variables of section 2.3. */
enum tok_pseudo { PSEUDO_FILE, PSEUDO_LINE, PSEUDO_SECTION };

static const struct {
	const char *name;
	enum tok_pseudo which;
} tok_pseudo_vars[] = {
	{ ".FILE",    PSEUDO_FILE },
	{ ".LINE",    PSEUDO_LINE },
	{ ".SECTION", PSEUDO_SECTION },
};

__attribute__((format(printf, 2, 3)))
static int tok_fail(struct tok *t, const char *fmt, ...)
{
	va_list ap;

	if (t->err && t->errlen) {
		va_start(ap, fmt);
		vsnprintf(t->err, t->errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int tok_col(const struct tok *t, const char *p)
{
	return (int)(p - t->line) + 1;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int is_alpha_(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}


/* Starts a word if none is in progress: a quote makes a word even if empty. */
static void tok_mark(struct tok *t)
{
	if (!t->open) {
		t->word = t->used;
		t->open = 1;
	}
}

static int tok_putc(struct tok *t, char c)
{
	if (t->used + 1 >= CFG_TOKBUF_SIZE)
		return tok_fail(t, "line too long once expanded (more than %d bytes)",
		                CFG_TOKBUF_SIZE - 1);
	tok_mark(t);
	t->out->buf[t->used++] = c;
	t->drop_if_empty = 0;
	return 0;
}

static int tok_put(struct tok *t, const char *s, size_t n)
{
	while (n--)
		if (tok_putc(t, *s++) < 0)
			return -1;
	return 0;
}

/* Ends the word in progress, if any. */
static int tok_close(struct tok *t)
{
	if (!t->open)
		return 0;
	if (t->drop_if_empty && t->used == t->word) {
		/* "${X[*]}" with X empty is no word at all: the list of
		 * values it stands for is empty */
		t->open = 0;
		t->drop_if_empty = 0;
		return 0;
	}
	t->drop_if_empty = 0;
	if (t->out->nargs >= CFG_MAX_ARGS)
		return tok_fail(t, "too many words on the line (max %d)", CFG_MAX_ARGS);
	if (t->used >= CFG_TOKBUF_SIZE)   /* only empty words get here full */
		return tok_fail(t, "line too long once expanded (more than %d bytes)",
		                CFG_TOKBUF_SIZE - 1);
	t->out->buf[t->used++] = '\0';
	t->out->args[t->out->nargs++] = t->out->buf + t->word;
	t->open = 0;
	return 0;
}

/* Decodes the backslash sequence at <p> (outside single quotes). Returns the
 * number of input bytes consumed, or -1. */
static int tok_escape(struct tok *t, const char *p)
{
	int hi, lo;

	if (p + 1 >= t->end)   /* a backslash ending the line stands for itself */
		return tok_putc(t, '\\') < 0 ? -1 : 1;

	switch (p[1]) {
	case ' ': case '\t': case '#': case '\\': case '\'': case '"': case '$':
		return tok_putc(t, p[1]) < 0 ? -1 : 2;
	case 'n':
		return tok_putc(t, '\n') < 0 ? -1 : 2;
	case 'r':
		return tok_putc(t, '\r') < 0 ? -1 : 2;
	case 't':
		return tok_putc(t, '\t') < 0 ? -1 : 2;
	case 'x':
		hi = p + 2 < t->end ? hex_digit_value(p[2]) : -1;
		lo = p + 3 < t->end ? hex_digit_value(p[3]) : -1;
		if (hi < 0 || lo < 0)
			return tok_fail(t, "invalid '\\x' sequence at column %d: two hexadecimal "
			                "digits expected", tok_col(t, p));
		if (!hi && !lo)
			return tok_fail(t, "'\\x00' at column %d: a word cannot hold a NUL byte",
			                tok_col(t, p));
		return tok_putc(t, (char)(hi << 4 | lo)) < 0 ? -1 : 4;
	default:
		/* Not an escape for this level: both bytes go through, so that
		 * regexes and argument lists see their own backslashes. */
		if (tok_putc(t, '\\') < 0 || tok_putc(t, p[1]) < 0)
			return -1;
		return 2;
	}
}

/* Appends <val> as the value of a ${NAME[*]} variable: every run of blanks
 * ends the word in progress and starts a new one, still inside the quotes. */
static int tok_put_split(struct tok *t, const char *val, size_t len)
{
	size_t i;

	if (!len && (!t->open || t->used == t->word))
		t->drop_if_empty = 1;

	for (i = 0; i < len; i++) {
		if (!is_blank(val[i])) {
			if (tok_putc(t, val[i]) < 0)
				return -1;
			continue;
		}
		if (i && is_blank(val[i - 1]))
			continue;
		if (tok_close(t) < 0)
			return -1;
		tok_mark(t);
	}
	return 0;
}

/* Value of the pseudo-variable <name>/<len> into <buf>, or NULL with an error. */
static const char *tok_pseudo(struct tok *t, const char *name, size_t len,
                              char *buf, size_t size)
{
	size_t i;

	for (i = 0; i < sizeof(tok_pseudo_vars) / sizeof(tok_pseudo_vars[0]); i++) {
		if (strlen(tok_pseudo_vars[i].name) != len ||
		    memcmp(tok_pseudo_vars[i].name, name, len) != 0)
			continue;
		if (!t->where) {
			tok_fail(t, "pseudo-variable '%.*s' at column %d is only known in a "
			         "configuration file", (int)len, name, tok_col(t, name));
			return NULL;
		}
		switch (tok_pseudo_vars[i].which) {
		case PSEUDO_FILE:
			return t->where->file ? t->where->file : "";
		case PSEUDO_LINE:
			snprintf(buf, size, "%d", t->where->line);
			return buf;
		case PSEUDO_SECTION:
			return t->where->section ? t->where->section : "";
		}
	}
	tok_fail(t, "unknown pseudo-variable '%.*s' at column %d", (int)len, name,
	         tok_col(t, name));
	return NULL;
}

/* Expands the variable reference at <p> ('$', inside double quotes).
 * Returns the number of input bytes consumed, or -1. */
static int tok_variable(struct tok *t, const char *p)
{
	const char *q = p + 1, *name, *def = NULL, *val;
	char namebuf[TOK_VARNAME_MAX], linebuf[16], repr[8];
	size_t namelen, deflen = 0;
	int braces = 0, split = 0;

	if (q < t->end && *q == '{') {
		braces = 1;
		q++;
	}
	name = q;
	if (q < t->end && *q == '.')       /* pseudo-variable */
		q++;
	if (q >= t->end || !is_alpha_(*q))
		return tok_fail(t, "invalid variable name after '$' at column %d (a letter, "
		                "'_' or '{' must follow; write '\\$' for a dollar sign)",
		                tok_col(t, p));
	while (q < t->end && (is_alpha_(*q) || is_digit(*q)))
		q++;
	namelen = (size_t)(q - name);

	if (braces) {
		if (t->end - q >= 3 && memcmp(q, "[*]", 3) == 0) {
			split = 1;
			q += 3;
		} else if (q < t->end && *q == '-') {
			def = ++q;
			while (q < t->end && *q != '}')
				q++;
			deflen = (size_t)(q - def);
		}
		if (q >= t->end || !memchr(q, '}', (size_t)(t->end - q)))
			return tok_fail(t, "unterminated '${' at column %d", tok_col(t, p));
		if (*q != '}')
			return tok_fail(t, "unexpected character '%s' at column %d in '${...}' "
			                "(expected '}', '-default' or '[*]')",
			                errmsg_char(*q, repr), tok_col(t, q));
		q++;
	}

	if (*name == '.') {
		val = tok_pseudo(t, name, namelen, linebuf, sizeof(linebuf));
		if (!val)
			return -1;
	} else {
		if (namelen >= sizeof(namebuf))
			return tok_fail(t, "variable name at column %d is too long (max %d)",
			                tok_col(t, name), TOK_VARNAME_MAX - 1);
		memcpy(namebuf, name, namelen);
		namebuf[namelen] = '\0';
		val = getenv(namebuf);
	}

	if (!val && def) {
		if (tok_put(t, def, deflen) < 0)
			return -1;
	} else if (!val && split) {
		if (tok_put_split(t, "", 0) < 0)   /* unset: an empty list too */
			return -1;
	} else if (val) {
		if ((split ? tok_put_split(t, val, strlen(val))
		           : tok_put(t, val, strlen(val))) < 0)
			return -1;
	}
	return (int)(q - p);
}

/* The double-quoted string opening at <p>. Returns bytes consumed or -1. */
static int tok_dquote(struct tok *t, const char *p)
{
	const char *q = p + 1;
	int n;

	tok_mark(t);
	while (q < t->end && *q != '"') {
		if (*q == '\\')
			n = tok_escape(t, q);
		else if (*q == '$')
			n = tok_variable(t, q);
		else
			n = tok_putc(t, *q) < 0 ? -1 : 1;
		if (n < 0)
			return -1;
		q += n;
	}
	if (q >= t->end)
		return tok_fail(t, "unterminated double quote opened at column %d",
		                tok_col(t, p));
	return (int)(q + 1 - p);
}

/* The single-quoted string opening at <p>. Returns bytes consumed or -1. */
static int tok_squote(struct tok *t, const char *p)
{
	const char *q = memchr(p + 1, '\'', (size_t)(t->end - p - 1));

	if (!q)
		return tok_fail(t, "unterminated single quote opened at column %d",
		                tok_col(t, p));
	tok_mark(t);
	if (tok_put(t, p + 1, (size_t)(q - p - 1)) < 0)
		return -1;
	return (int)(q + 1 - p);
}

int cfg_tokenize_ex(const char *line, const struct cfg_tok_where *where,
                    unsigned int flags, struct cfg_tokens *out, char *err,
                    size_t errlen)
{
	struct tok t = { .out = out, .where = where, .line = line,
	                 .err = err, .errlen = errlen };
	size_t len = strlen(line);
	const char *p = line;
	int n;

	if (err && errlen)
		err[0] = '\0';
	out->nargs = 0;
	out->args[0] = NULL;

	if (len && line[len - 1] == '\n')
		len--;
	if (len && line[len - 1] == '\r')   /* CRLF files */
		len--;
	t.end = line + len;

	while (p < t.end) {
		switch (*p) {
		case ' ':
		case '\t':
			n = tok_close(&t) < 0 ? -1 : 1;
			break;
		case '#':
			if (flags & CFG_TOK_NO_COMMENT) {
				n = tok_putc(&t, *p) < 0 ? -1 : 1;
				break;
			}
			t.end = p;   /* comment up to the end of the line */
			n = 0;
			break;
		case '\\':
			n = tok_escape(&t, p);
			break;
		case '"':
			n = tok_dquote(&t, p);
			break;
		case '\'':
			n = tok_squote(&t, p);
			break;
		default:
			n = tok_putc(&t, *p) < 0 ? -1 : 1;
			break;
		}
		if (n < 0)
			goto fail;
		p += n;
	}
	if (tok_close(&t) < 0)
		goto fail;
	out->args[out->nargs] = NULL;
	return 0;

fail:
	out->nargs = 0;
	out->args[0] = NULL;
	return -1;
}

int cfg_tokenize(const char *line, struct cfg_tokens *out, char *err, size_t errlen)
{
	return cfg_tokenize_ex(line, NULL, 0, out, err, errlen);
}
