/* Unit tests of the configuration tokenizer (src/cfg/tokenize.c). */
#include <stdarg.h>
#include <stdlib.h>
#include <sluice/cfg/tokenize.h>
#include "t.h"

static struct cfg_tokens tok;
static char err[256];

/* Non-zero if <line> tokenizes into exactly the NULL-terminated <want>;
 * prints what it got otherwise. */
static int words_are(const char *line, const char *const *want)
{
	int i, n = 0;

	while (want[n])
		n++;
	if (cfg_tokenize(line, &tok, err, sizeof(err)) != 0) {
		fprintf(stderr, "  [%s]: unexpected error: %s\n", line, err);
		return 0;
	}
	if (tok.nargs != n || tok.args[n] != NULL)
		goto bad;
	for (i = 0; i < n; i++)
		if (strcmp(tok.args[i], want[i]) != 0)
			goto bad;
	return 1;
bad:
	fprintf(stderr, "  [%s]: got %d word(s):", line, tok.nargs);
	for (i = 0; i < tok.nargs; i++)
		fprintf(stderr, " <%s>", tok.args[i]);
	fprintf(stderr, "\n");
	return 0;
}

#define WORDS(line, ...) CHECK(words_are(line, (const char *const[]){ __VA_ARGS__, NULL }))
#define NO_WORDS(line) CHECK(words_are(line, (const char *const[]){ NULL }))

/* Non-zero if <line> is refused with a message containing <part>. */
static int fails_with(const char *line, const char *part)
{
	tok.nargs = 99;
	if (cfg_tokenize(line, &tok, err, sizeof(err)) != -1) {
		fprintf(stderr, "  [%s]: accepted, %d word(s)\n", line, tok.nargs);
		return 0;
	}
	if (tok.nargs != 0 || tok.args[0] != NULL || !strstr(err, part)) {
		fprintf(stderr, "  [%s]: message \"%s\" lacks \"%s\"\n", line, err, part);
		return 0;
	}
	return 1;
}

#define FAILS(line, part) CHECK(fails_with(line, part))

static void test_words_and_comments(void)
{
	NO_WORDS("");
	NO_WORDS("   \t  ");
	NO_WORDS("# only a comment");
	NO_WORDS("   # indented comment");
	WORDS("a", "a");
	WORDS("a b\tc", "a", "b", "c");
	WORDS("  \tlead and trail \t ", "lead", "and", "trail");
	WORDS("a    b", "a", "b");
	WORDS("a # b c", "a");
	WORDS("a#b c", "a");                     /* '#' starts a comment mid-word */
	WORDS("a\\#b", "a#b");
	WORDS("\"a#b\" 'c#d'", "a#b", "c#d");
	WORDS("bind :80\tssl  crt /x.pem", "bind", ":80", "ssl", "crt", "/x.pem");
	/* other control characters are not separators */
	WORDS("a\vb\fc", "a\vb\fc");
}

static void test_quotes(void)
{
	WORDS("\"a b\"", "a b");
	WORDS("\"a\tb\"", "a\tb");
	WORDS("\"it's\"", "it's");
	WORDS("'say \"hi\"'", "say \"hi\"");
	WORDS("'a\\tb $HOME \\x41 \\'", "a\\tb $HOME \\x41 \\");
	WORDS("a\"b c\"d", "ab cd");
	WORDS("'a'\"b\"c\\ d", "abc d");
	WORDS("\"a\"b\"c\"", "abc");
	WORDS("\"\"", "");
	WORDS("''", "");
	WORDS("\"\" x", "", "x");
	WORDS("a \"\" ''", "a", "", "");
	WORDS("\"\"\"\"", "");                    /* two empty strings glued */
	WORDS("x\"\"y", "xy");
	FAILS("\"abc", "unterminated double quote opened at column 1");
	FAILS("ab 'cd", "unterminated single quote opened at column 4");
	FAILS("\"a\\\"", "unterminated double quote");   /* \" does not close */
	FAILS("'a", "single quote");
}

/* The five equivalent lines of the manual's section 2.2 example. */
static void test_manual_equivalences(void)
{
	const char *lines[] = {
		"log-format %{+Q}o\\ %t\\ %s\\ %{-Q}r",
		"log-format \"%{+Q}o %t %s %{-Q}r\"",
		"log-format '%{+Q}o %t %s %{-Q}r'",
		"log-format \"%{+Q}o %t\"' %s %{-Q}r'",
		"log-format \"%{+Q}o %t\"' %s'\\ %{-Q}r",
	};
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		WORDS(lines[i], "log-format", "%{+Q}o %t %s %{-Q}r");
	WORDS("http-request set-path %[path,regsub(\\\"(foo|bar)\\\",blah,g)]",
	      "http-request", "set-path", "%[path,regsub(\"(foo|bar)\",blah,g)]");
	WORDS("http-request set-path '%[path,regsub(\"^/(here)(/|$)\",\"my/\\1\",g)]'",
	      "http-request", "set-path", "%[path,regsub(\"^/(here)(/|$)\",\"my/\\1\",g)]");
}

static void test_escapes(void)
{
	WORDS("a\\ b", "a b");
	WORDS("a\\\tb", "a\tb");
	WORDS("\\#", "#");
	WORDS("\\\\", "\\");
	WORDS("\\'", "'");
	WORDS("\\\"", "\"");
	WORDS("\\$", "$");
	WORDS("\\r\\n\\t", "\r\n\t");
	WORDS("\\x41\\x4a\\x4A", "AJJ");
	WORDS("a\\x20b", "a b");                  /* an escaped space is no separator */
	WORDS("\\xff", "\xff");
	/* same escapes inside double quotes */
	WORDS("\"\\ \\#\\\\\\'\\\"\\$\\r\\n\\t\\x41\"", " #\\'\"$\r\n\tA");
	/* not escapes: the backslash stays, for regexes and argument lists */
	WORDS("^/static\\.(css|js)$", "^/static\\.(css|js)$");
	WORDS("\\1 a\\,b \\q", "\\1", "a\\,b", "\\q");
	WORDS("\"\\1\\q\"", "\\1\\q");
	/* a backslash ending the line stands for itself */
	WORDS("a\\", "a\\");
	WORDS("\\", "\\");
	WORDS("a \\", "a", "\\");
	FAILS("\\x", "invalid '\\x' sequence at column 1");
	FAILS("\\x4", "invalid '\\x'");
	FAILS("ab \\x4g", "column 4");
	FAILS("\\xzz", "hexadecimal");
	FAILS("\"a\\x4\"", "invalid '\\x'");
	FAILS("a\\x00b", "NUL");
}

static void test_variables(void)
{
	/* outside double quotes a dollar is a plain character */
	WORDS("$TV ${TV} ${TV3[*]}", "$TV", "${TV}", "${TV3[*]}");
	WORDS("'$TV'", "$TV");
	WORDS("\"$TV\" \"${TV}\"", "val", "val");
	WORDS("\"${TV}x\" \"x${TV}\"", "valx", "xval");
	WORDS("\"$TVx\"", "");                    /* the name is TVx, undefined */
	WORDS("\"$TV.b\" \"$TV-b\" \"$TV[*]\"", "val.b", "val-b", "val[*]");
	WORDS("\"$_T1\" \"${_T1}\"", "u", "u");
	WORDS("\"\\$TV\"", "$TV");
	WORDS("\"${TV}}\"", "val}");
	/* undefined and empty */
	WORDS("\"${TNOPE}\"", "");
	WORDS("x\"${TNOPE}\"y", "xy");
	WORDS("\"${TEMPTY}\" z", "", "z");
	/* a default replaces unset variables only */
	WORDS("\"${TNOPE-def}\"", "def");
	WORDS("\"${TEMPTY-def}\"", "");
	WORDS("\"${TV-def}\"", "val");
	WORDS("\"${TNOPE-a b}\"", "a b");
	WORDS("\"${TNOPE-}\"", "");
	WORDS("\"${TNOPE-$x}\"", "$x");            /* the default is literal */
	WORDS("\"${TNOPE-127.0.0.1}:514\"", "127.0.0.1:514");
	/* values are not interpreted again */
	WORDS("\"${TQ}\"", "a \"b\" 'c' \\x41 # d");
	WORDS("\"${TV3}\"", "a b  c");
	/* ${NAME[*]}: each run of blanks acts as '" "' */
	WORDS("\"${TV3[*]}\"", "a", "b", "c");
	WORDS("x \"<${TV3[*]}>\" y", "x", "<a", "b", "c>", "y");
	WORDS("\"${TTAB[*]}\"", "p", "q");
	WORDS("\"${TLEAD[*]}\"", "", "lead");
	WORDS("\"${TTRAIL[*]}\"", "trail", "");
	/* empty or unset: an empty list, so no word (sluice; HAProxy's
	 * tokenizer leaves an empty word, which its keyword parsers then take
	 * for the end of the line: the result a user sees is the same) */
	NO_WORDS("\"${TEMPTY[*]}\"");
	WORDS("\"${TNOPE[*]}\" z", "z");
	WORDS("\"${TV[*]}\"", "val");
	FAILS("\"$\"", "invalid variable name after '$' at column 2");
	FAILS("\"a$\"", "invalid variable name");
	FAILS("\"$1\"", "invalid variable name");
	FAILS("\"${}\"", "invalid variable name");
	FAILS("\"${1A}\"", "invalid variable name");
	FAILS("\"$ x\"", "invalid variable name");
	FAILS("\"${TV\"", "unterminated '${' at column 2");
	FAILS("\"${TV", "unterminated '${'");
	FAILS("\"${TNOPE-def\"", "unterminated '${'");
	FAILS("\"${TV x}\"", "unexpected character ' ' at column 6");
	FAILS("\"${TV[*]x}\"", "unexpected character 'x'");
	FAILS("\"${TV[*}\"", "unexpected character '['");
}

static void test_long_name(void)
{
	char line[400];

	line[0] = '"';
	line[1] = '$';
	memset(line + 2, 'A', 300);
	strcpy(line + 302, "\"");
	FAILS(line, "too long");
}

static void test_location_and_flags(void)
{
	struct cfg_tok_where where = { .file = "/etc/sluice.cfg", .line = 42,
	                               .section = "frontend fe" };

	FAILS("\"${.LINE}\"", "only known in a configuration file");
	CHECK(cfg_tokenize_ex("x \"${.FILE}:${.LINE}\" \"$.SECTION\"", &where, 0, &tok,
	                      err, sizeof(err)) == 0);
	CHECK(tok.nargs == 3);
	CHECK_STR(tok.args[1], "/etc/sluice.cfg:42");
	CHECK_STR(tok.args[2], "frontend fe");
	where.section = NULL;
	CHECK(cfg_tokenize_ex("\"[${.SECTION}]\"", &where, 0, &tok, err, sizeof(err)) == 0);
	CHECK_STR(tok.args[0], "[]");
	CHECK(cfg_tokenize_ex("\"${.FOO}\"", &where, 0, &tok, err, sizeof(err)) == -1);
	CHECK(strstr(err, "unknown pseudo-variable '.FOO'") != NULL);
	CHECK(cfg_tokenize_ex("\"${.}\"", &where, 0, &tok, err, sizeof(err)) == -1);
	/* without comments (for -cc) */
	CHECK(cfg_tokenize_ex("a#b # c", NULL, CFG_TOK_NO_COMMENT, &tok, err,
	                      sizeof(err)) == 0);
	CHECK(tok.nargs == 3);
	CHECK_STR(tok.args[0], "a#b");
	CHECK_STR(tok.args[1], "#");
	CHECK_STR(tok.args[2], "c");
	/* plain variables still work with a location */
	CHECK(cfg_tokenize_ex("\"$TV\"", &where, 0, &tok, err, sizeof(err)) == 0);
	CHECK_STR(tok.args[0], "val");
}

static void test_line_ends(void)
{
	WORDS("a b\r", "a", "b");
	WORDS("a b\n", "a", "b");
	WORDS("a b\r\n", "a", "b");
	WORDS("\"x\"\r", "x");
	WORDS("a\\\r", "a\\");                    /* the CR is dropped first */
	WORDS("a\rb", "a\rb");                   /* a CR inside the line is a byte */
	FAILS("\"a\r", "unterminated double quote");
	NO_WORDS("\r\n");
}

static void test_limits(void)
{
	static char line[3 * CFG_TOKBUF_SIZE];
	char *p = line;
	int i;

	/* CFG_MAX_ARGS words fit, one more does not */
	for (i = 0; i < CFG_MAX_ARGS; i++)
		p += sprintf(p, "w%d ", i);
	CHECK(cfg_tokenize(line, &tok, err, sizeof(err)) == 0);
	CHECK(tok.nargs == CFG_MAX_ARGS && tok.args[CFG_MAX_ARGS] == NULL);
	CHECK_STR(tok.args[CFG_MAX_ARGS - 1], "w63");
	strcpy(p, "extra");
	FAILS(line, "too many words");
	/* also when the words come from empty strings or a [*] expansion */
	p = line;
	for (i = 0; i <= CFG_MAX_ARGS; i++)
		p += sprintf(p, "\"\" ");
	FAILS(line, "(max 64)");
	p = line;
	for (i = 0; i < 22; i++)
		p += sprintf(p, "\"${TV3[*]}\" ");
	FAILS(line, "too many words");

	/* a word of CFG_TOKBUF_SIZE - 1 bytes fits with its NUL, one more does not */
	memset(line, 'x', CFG_TOKBUF_SIZE - 1);
	line[CFG_TOKBUF_SIZE - 1] = '\0';
	CHECK(cfg_tokenize(line, &tok, err, sizeof(err)) == 0);
	CHECK(tok.nargs == 1 && strlen(tok.args[0]) == CFG_TOKBUF_SIZE - 1);
	line[CFG_TOKBUF_SIZE - 1] = 'x';
	line[CFG_TOKBUF_SIZE] = '\0';
	FAILS(line, "line too long");
	/* all words count with their NUL */
	memset(line, 'x', CFG_TOKBUF_SIZE - 2);
	strcpy(line + CFG_TOKBUF_SIZE - 2, " y");
	FAILS(line, "line too long");
	memset(line, 'x', CFG_TOKBUF_SIZE - 3);
	strcpy(line + CFG_TOKBUF_SIZE - 3, " y");
	CHECK(cfg_tokenize(line, &tok, err, sizeof(err)) == 0 && tok.nargs == 2);
	/* an empty word needs a byte too */
	memset(line, 'x', CFG_TOKBUF_SIZE - 1);
	strcpy(line + CFG_TOKBUF_SIZE - 1, " \"\"");
	FAILS(line, "line too long");
	memset(line, 'x', CFG_TOKBUF_SIZE - 2);
	strcpy(line + CFG_TOKBUF_SIZE - 2, " \"\"");
	CHECK(cfg_tokenize(line, &tok, err, sizeof(err)) == 0 && tok.nargs == 2);
	/* an expansion overflowing the buffer */
	p = line;
	for (i = 0; i < 40; i++)
		p += sprintf(p, "\"${TBIG}\"");
	FAILS(line, "line too long once expanded");
	/* a long line that only holds a comment after the words is fine */
	memset(line, ' ', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	line[0] = 'a';
	line[2] = '#';
	WORDS(line, "a");
}

int main(void)
{
	static char big[1024];

	memset(big, 'B', sizeof(big) - 1);
	setenv("TV", "val", 1);
	setenv("_T1", "u", 1);
	setenv("TEMPTY", "", 1);
	setenv("TV3", "a b  c", 1);
	setenv("TTAB", "p\t \tq", 1);
	setenv("TLEAD", " lead", 1);
	setenv("TTRAIL", "trail ", 1);
	setenv("TQ", "a \"b\" 'c' \\x41 # d", 1);
	setenv("TBIG", big, 1);
	unsetenv("TNOPE");
	unsetenv("TVx");

	test_words_and_comments();
	test_quotes();
	test_manual_equivalences();
	test_escapes();
	test_variables();
	test_long_name();
	test_location_and_flags();
	test_line_ends();
	test_limits();
	/* an empty "${X[*]}" stands for an empty list of words */
	{
		static struct cfg_tokens tk;
		char e[256];

		setenv("SLUICE_T_EMPTY", "", 1);
		CHECK(cfg_tokenize("server s 1.2.3.4:80 \"${SLUICE_T_EMPTY[*]}\"", &tk, e, sizeof(e)) == 0);
		CHECK(tk.nargs == 3);
		CHECK(cfg_tokenize("a x\"${SLUICE_T_EMPTY[*]}\"y", &tk, e, sizeof(e)) == 0);
		CHECK(tk.nargs == 2 && strcmp(tk.args[1], "xy") == 0);
		CHECK(cfg_tokenize("a \"${SLUICE_T_EMPTY}\"", &tk, e, sizeof(e)) == 0);
		CHECK(tk.nargs == 2 && tk.args[1][0] == '\0');   /* plain: an empty word */
	}
	return t_done("test_tokenize");
}
