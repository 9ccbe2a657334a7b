/* Unit tests of conditions and conditional blocks (src/cfg/cond.c). */
#include <stdlib.h>
#include <sluice/cfg/cond.h>
#include <sluice/cfg/tokenize.h>
#include <sluice/core/global.h>
#include "t.h"

static char err[512];

/* cfg_cond_eval_str() with a message on stderr when <want> is not met. */
static int eval_is(const char *expr, int want)
{
	int got = cfg_cond_eval_str(expr, err, sizeof(err));

	if (got != want)
		fprintf(stderr, "  [%s]: %d instead of %d (%s)\n", expr, got, want, err);
	return got == want;
}

#define TRUE(expr)  CHECK(eval_is(expr, 1))
#define FALSE(expr) CHECK(eval_is(expr, 0))

/* Non-zero if <expr> is refused with a message containing <part>. */
static int refused(const char *expr, const char *part)
{
	int got = cfg_cond_eval_str(expr, err, sizeof(err));

	if (got != -1 || !strstr(err, part)) {
		fprintf(stderr, "  [%s]: %d, message \"%s\" lacks \"%s\"\n", expr, got,
		        err, part);
		return 0;
	}
	return 1;
}

#define REFUSED(expr, part) CHECK(refused(expr, part))

static void test_integers(void)
{
	FALSE("");
	FALSE("   ");
	FALSE("0");
	FALSE("00");
	FALSE("-0");
	FALSE("0x0");
	TRUE("1");
	TRUE("42");
	TRUE("-1");
	TRUE("+1");
	TRUE("007");
	TRUE("0x10");
	TRUE("99999999999999999999999");   /* no overflow: only zero is false */
	TRUE(" 1 ");
	TRUE("\"1\"");                     /* quotes are gone after tokenizing */
	REFUSED("1abc", "unexpected character 'a' after the expression");
	REFUSED("1.5", "unexpected character '.'");
	REFUSED("1 2", "unexpected character '2'");
	REFUSED("-", "sign without a number");
	REFUSED("--1", "sign without a number");
	REFUSED("- 1", "sign without a number");
}

static void test_bare_words(void)
{
	/* no truthy strings: a bare word must be a predicate */
	REFUSED("yes", "unknown predicate 'yes'");
	REFUSED("abc", "unknown predicate 'abc' at column 1");
	REFUSED("true", "unknown predicate 'true'");
	REFUSED("DEFINED(HOME)", "unknown predicate 'DEFINED'");
	REFUSED("enabled(POLL)", "unknown predicate 'enabled'");   /* not in 2.6 */
	REFUSED("nope(1)", "unknown predicate 'nope'");
	REFUSED("1 && nope()", "unknown predicate 'nope' at column 6");
}

static void test_operators(void)
{
	TRUE("!0");
	FALSE("!1");
	FALSE("! 1");
	TRUE("!!1");
	TRUE("! ! 7");
	TRUE("1&&1");
	FALSE("1 && 0");
	FALSE("0 && 1");
	TRUE("0||1");
	FALSE("0 || 0");
	TRUE("1 || 0");
	/* && binds tighter than || */
	TRUE("1 || 0 && 0");
	TRUE("0 && 0 || 1");
	FALSE("0 && 1 || 0 && 1");
	TRUE("1 && 1 || 0 && 1");
	FALSE("(1 || 0) && 0");
	TRUE("0 && (0 || 1) || 1");
	TRUE("!(0)");
	FALSE("!(1 || 0)");
	FALSE("!(1||0)&&1");
	TRUE("((((1))))");
	TRUE("( ( 1 ) )");
	TRUE("1 && (0 || (1 && !(0 || 0)))");
	FALSE("1 && (0 || (1 && !(0 || 1)))");
	TRUE("!(!(!(0)))");
	/* every operand is parsed, even when its value does not matter */
	REFUSED("0 && nope()", "unknown predicate 'nope'");
	REFUSED("1 || streq(a)", "'streq' takes 2 arguments, got 1");
	REFUSED("1 ||", "missing term at the end");
	REFUSED("1 &&", "missing term");
	REFUSED("&& 1", "unexpected character '&' where a term was expected");
	REFUSED("1 & 1", "unexpected character '&' after the expression");
	REFUSED("1 | 0", "unexpected character '|'");
	REFUSED("1 &&& 1", "unexpected character '&' where a term");
	REFUSED("!", "missing term");
	REFUSED("()", "unexpected character ')' where a term");
	REFUSED("(1", "missing ')' at column 3");
	REFUSED("((1) && (0)", "missing ')'");
	REFUSED("1)", "unexpected character ')' after the expression");
	REFUSED("1(", "unexpected character '('");
	REFUSED("defined (HOME)", "unexpected character '('");
	REFUSED("defined(HOME)x", "unexpected character 'x'");
	REFUSED("@", "unexpected character '@'");
	REFUSED("1 \x01", "unexpected character '\\x01' after");
}

static void test_nesting_limit(void)
{
	char expr[512];
	int i, n = 0;

	for (i = 0; i < 60; i++)
		expr[n++] = '(';
	expr[n++] = '1';
	for (i = 0; i < 60; i++)
		expr[n++] = ')';
	expr[n] = '\0';
	TRUE(expr);
	n = 0;
	for (i = 0; i < 200; i++)
		expr[n++] = '!';
	expr[n++] = '1';
	expr[n] = '\0';
	REFUSED(expr, "nested too deeply");
	n = 0;
	for (i = 0; i < 200; i++)
		expr[n++] = '(';
	expr[n] = '\0';
	REFUSED(expr, "nested too deeply");
}

static void test_defined_feature(void)
{
	TRUE("defined(CT_SET)");
	TRUE("defined(CT_EMPTY)");          /* defined, even empty */
	FALSE("defined(CT_UNSET)");
	FALSE("defined()");
	FALSE("defined");
	FALSE("defined(CT_SET )");          /* blanks belong to the argument */
	TRUE("!defined(CT_UNSET) && defined(CT_SET)");
	REFUSED("defined(CT_SET,CT_SET)", "'defined' takes 1 argument, got more");

	CHECK(strstr(sluice_build_features, "+OPENSSL") != NULL);
	TRUE("feature(OPENSSL)");
	TRUE("feature(EPOLL) && feature(LUA)");
	FALSE("feature(openssl)");          /* case-sensitive */
	FALSE("feature(OPENSS)");
	FALSE("feature(NOPE)");
	FALSE("feature()");
	FALSE("feature");
	TRUE("!feature(NOPE)");
}

static void test_streq(void)
{
	TRUE("streq(a,a)");
	FALSE("streq(a,b)");
	FALSE("strneq(a,a)");
	TRUE("strneq(a,b)");
	TRUE("streq(,)");
	TRUE("streq(\"\",'')");
	FALSE("streq(a , a)");              /* "a " vs " a" */
	TRUE("streq(a b,a  b)");            /* words are joined with one space */
	TRUE("streq('a b',\"a b\")");       /* quotes only disappear at the top */
	REFUSED("'streq(\"a,b\",a\\,b)'", "got more");   /* \, is no escape */
	/* a second level of quotes protects commas and parentheses */
	TRUE("'streq(\"a,b\",\"a\"\",b\")'");
	TRUE("'streq(\"x)\",'\\''x)'\\'')'");
	TRUE("'streq(\"a b\",a\\ b)'");
	TRUE("'streq(a\\tb,\"a\tb\")'");
	TRUE("'streq(\"a\\\\b\",a\\\\b)'");
	TRUE("'streq(\"a\\\"b\",a\\\"b)'");
	TRUE("'streq(a\\qb,\"a\\qb\")'");   /* unknown escapes keep the backslash */
	TRUE("'streq(a(b,a(b)'");           /* '(' is not special in arguments */
	FALSE("'streq(a\\\\,b)'");          /* \\ then a comma: a\ vs b */
	TRUE("'streq('\\''\\n'\\'',\"\\\\n\")'");   /* single quotes: literal */
	TRUE("'streq(a\\nb\\r,'\"$CT_LFCR\"')'");   /* \n \r: LF, CR */
	FALSE("'streq(\\n,n)'");
	TRUE("streq(\"$CT_SET\",val)");     /* the top level expands */

	TRUE("streq(\"${CT_UNSET}\",)");
	TRUE("strneq(\"${CT_SET-x}\",x)");
	REFUSED("streq(a)", "'streq' takes 2 arguments, got 1");
	REFUSED("streq()", "got 1");
	REFUSED("streq", "got 1");
	REFUSED("strneq(a,b,c)", "'strneq' takes 2 arguments, got more");
	REFUSED("streq(a,b", "missing ')' after the arguments of 'streq'");
	REFUSED("'streq(a,\"b)'", "unterminated double quote in the arguments of 'streq'");
	REFUSED("\"streq(a,'b)\"", "unterminated single quote");
	REFUSED("streq(\"a,b", "unterminated double quote");   /* from the tokenizer */
	REFUSED("'streq((a),(a))'", "got 1");
}

static void test_versions(void)
{
	/* each entry is older than the next */
	static const char *const order[] = {
		"0", "1.9", "2", "2.0.1", "2.4-dev19", "2.4", "2.4.22",
		"2.5-dev0", "2.5-dev3", "2.5-dev12", "2.5-pre1", "2.5-rc1", "2.5-rc2",
		"2.5", "2.5-1", "2.5-12", "2.5.1", "2.5.1.1", "2.5.2", "2.5.10",
		"2.6-dev0", "2.6", "2.6.12", "2.6.12-1+deb12u4", "2.6.13-dev1", "2.6.13",
		"2.10", "3.0", "10.0", "4294967296",
	};
	static const char *const same[][2] = {
		{ "2.5", "2.5.0" }, { "2.5", "2.5.0.0" }, { "", "0" }, { "0", "0.0.0.0" },
		{ "2.6.12-1+deb12u4", "2.6.12-1" }, { "2.6-DEV1", "2.6-dev1" },
		{ "2.6-dev", "2.6-dev0" }, { "2.6+local", "2.6" },
		{ "2.9-dev5-1ab2c3", "2.9-dev5" }, { "2.4.22-f8e3218", "2.4.22" },
		{ "02.06", "2.6" }, { "2.6-rc", "2.6-rc0" },
	};
	static const char *const invalid[] = {
		"abc", "v2.6", "2.", ".5", "2..5", "2.5.1.2.3", "2.5x", "2.6-dev1x",
		"2.6-devil", " 2.6", "2.6 ", "-1", "2,6",
	};
	size_t i, j, n = sizeof(order) / sizeof(order[0]);
	int bad = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < n; j++) {
			int want = i < j ? -1 : i > j, got = cfg_version_cmp(order[i], order[j]);

			if (got != want) {
				fprintf(stderr, "  cmp(%s, %s) = %d, want %d\n", order[i], order[j],
				        got, want);
				bad++;
			}
		}
	}
	CHECK(bad == 0);
	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		CHECK(cfg_version_cmp(same[i][0], same[i][1]) == 0);
		CHECK(cfg_version_cmp(same[i][1], same[i][0]) == 0);
	}
	for (i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
		CHECK(cfg_version_cmp(invalid[i], "2.6") == -2);
		CHECK(cfg_version_cmp("2.6", invalid[i]) == -2);
	}

	/* against SLUICE_CFG_LEVEL */
	CHECK_STR(SLUICE_CFG_LEVEL, "2.6");
	TRUE("version_atleast(2.6)");
	TRUE("version_atleast(2.6.0)");
	TRUE("version_atleast(2.5)");
	TRUE("version_atleast(2.6-dev5)");
	TRUE("version_atleast(2.4-dev19)");
	TRUE("version_atleast(2)");
	FALSE("version_atleast(2.6.1)");
	FALSE("version_atleast(2.7-dev0)");
	FALSE("version_atleast(3)");
	TRUE("version_atleast()");           /* empty version: 0 */
	TRUE("version_atleast");
	FALSE("version_before(2.6)");
	FALSE("version_before(2.5.99)");
	TRUE("version_before(2.6.1)");
	TRUE("version_before(2.7-dev0)");
	FALSE("version_before()");
	TRUE("version_atleast(2.4) && version_before(2.7)");
	REFUSED("version_atleast(abc)", "invalid version 'abc' in version_atleast()");
	REFUSED("version_before(2.x)", "invalid version '2.x' in version_before()");
}

static void test_eval_words(void)
{
	char *w1[] = { "1", "&&", "0" };
	char *w2[] = { "streq(a", "b,a", "b)" };
	char *w3[] = { "(1", "||", "0)", "&&", "!0" };
	char *w4[] = { "nope" };

	CHECK(cfg_cond_eval(w1, 0, err, sizeof(err)) == 0);
	CHECK(cfg_cond_eval(w1, 1, err, sizeof(err)) == 1);
	CHECK(cfg_cond_eval(w1, 3, err, sizeof(err)) == 0);
	CHECK(cfg_cond_eval(w2, 3, err, sizeof(err)) == 1);
	CHECK(cfg_cond_eval(w3, 5, err, sizeof(err)) == 1);
	CHECK(cfg_cond_eval(w4, 1, err, sizeof(err)) == -1);
	CHECK(strstr(err, "'nope'") != NULL);
	/* a small buffer still gets a terminated, truncated message */
	memset(err, 'z', sizeof(err));
	CHECK(cfg_cond_eval(w4, 1, err, 8) == -1);
	CHECK(strlen(err) == 7);
	CHECK(cfg_cond_eval(w4, 1, NULL, 0) == -1);
	/* -cc strings: no comments there (as in HAProxy), tokenizer errors */
	REFUSED("1 # && 0", "unexpected character '#' after the expression");
	TRUE("streq(a#b,a#b)");
	REFUSED("\"1", "unterminated double quote");
	REFUSED("\"$\"", "invalid variable name");
}

/* ---- conditional blocks ------------------------------------------------- */

struct script {
	char active[256];       /* first word of each line parsed, space-separated */
	char msgs[256];         /* "code:text" of each message directive */
	char first_err[256];
	int errline;            /* 1-based line of the first error, 0 if none */
	int errors;
	int depth;              /* at the end */
};

/* Feeds <lines> (NULL-terminated) as parse.c does. */
static void run(const char *const *lines, struct script *sc)
{
	static struct cfg_tokens tok;
	struct cfg_cond_stack s;
	enum cfg_directive d;
	char msg[256];
	int i;

	memset(sc, 0, sizeof(*sc));
	cfg_cond_init(&s);
	for (i = 0; lines[i]; i++) {
		if (cfg_tokenize(lines[i], &tok, msg, sizeof(msg)) < 0 || !tok.nargs)
			continue;
		d = cfg_cond_directive(&s, tok.args, tok.nargs, msg, sizeof(msg));
		if (d == CFG_DIR_ERROR) {
			if (!sc->errors++) {
				sc->errline = i + 1;
				snprintf(sc->first_err, sizeof(sc->first_err), "%s", msg);
			}
			continue;
		}
		if (d == CFG_DIR_DIAG || d == CFG_DIR_NOTICE || d == CFG_DIR_WARNING) {
			snprintf(sc->msgs + strlen(sc->msgs), sizeof(sc->msgs) - strlen(sc->msgs),
			         "%s%d:%s", *sc->msgs ? " " : "", (int)d, msg);
			continue;
		}
		if (d == CFG_DIR_HANDLED || !cfg_cond_active(&s))
			continue;
		snprintf(sc->active + strlen(sc->active), sizeof(sc->active) - strlen(sc->active),
		         "%s%s", *sc->active ? " " : "", tok.args[0]);
	}
	sc->depth = s.depth;
}

#define SCRIPT(...) (const char *const[]){ __VA_ARGS__, NULL }

static int script_gives(const char *const *lines, const char *active)
{
	struct script sc;

	run(lines, &sc);
	if (sc.errors || sc.depth || strcmp(sc.active, active) != 0) {
		fprintf(stderr, "  script: active \"%s\" instead of \"%s\", %d error(s) (%s), "
		        "depth %d\n", sc.active, active, sc.errors, sc.first_err, sc.depth);
		return 0;
	}
	return 1;
}

static int script_fails(const char *const *lines, int line, const char *part)
{
	struct script sc;

	run(lines, &sc);
	if (sc.errline != line || !strstr(sc.first_err, part)) {
		fprintf(stderr, "  script: first error at line %d (%s), wanted line %d (%s)\n",
		        sc.errline, sc.first_err, line, part);
		return 0;
	}
	return 1;
}

static void test_blocks(void)
{
	CHECK(script_gives(SCRIPT("a", ".if 1", "b", ".endif", "c"), "a b c"));
	CHECK(script_gives(SCRIPT(".if 0", "a", ".endif", "b"), "b"));
	CHECK(script_gives(SCRIPT(".if 1", "a", ".else", "b", ".endif"), "a"));
	CHECK(script_gives(SCRIPT(".if 0", "a", ".else", "b", ".endif"), "b"));
	CHECK(script_gives(SCRIPT(".if 0", "a", ".elif 0", "b", ".elif 1", "c",
	                          ".elif 1", "d", ".else", "e", ".endif"), "c"));
	CHECK(script_gives(SCRIPT(".if 1", "a", ".elif 1", "b", ".else", "c", ".endif"), "a"));
	CHECK(script_gives(SCRIPT(".if 0", "a", ".elif 0", "b", ".else", "c", ".endif"), "c"));
	CHECK(script_gives(SCRIPT(".if", "a", ".elif", "b", ".endif"), ""));
	/* nesting */
	CHECK(script_gives(SCRIPT(".if 1", "a", ".if 0", "b", ".else", "c", ".endif", "d",
	                          ".endif", "e"), "a c d e"));
	CHECK(script_gives(SCRIPT(".if 0", ".if 1", "a", ".else", "b", ".endif", ".else",
	                          ".if 1", "c", ".endif", ".endif"), "c"));
	/* comments, indentation, environment */
	CHECK(script_gives(SCRIPT("  .if 1 # yes", "\ta", "\t.endif  # done"), "a"));
	CHECK(script_gives(SCRIPT(".if defined(CT_SET) && streq(\"$CT_SET\",val)", "a",
	                          ".endif"), "a"));
	/* inside an inactive block, conditions are not evaluated and other
	 * directives are ignored */
	CHECK(script_gives(SCRIPT(".if 0", ".if nope()", "a", ".endif", ".foo", ".alert x",
	                          ".notice \"n\"", ".endif", "b"), "b"));
	/* nor once a branch was taken */
	CHECK(script_gives(SCRIPT(".if 1", "a", ".elif nope()", "b", ".endif"), "a"));
	CHECK(script_fails(SCRIPT(".if 0", ".elif nope()", ".endif"), 2,
	                   "unknown predicate 'nope'"));
	CHECK(script_fails(SCRIPT(".if streq(a)", ".endif"), 1, "'streq' takes 2"));
}

static void test_block_errors(void)
{
	const char *deep[CFG_COND_MAXDEPTH * 2 + 8];
	struct script sc;
	int i;

	CHECK(script_fails(SCRIPT(".else"), 1, "'.else' without a matching '.if'"));
	CHECK(script_fails(SCRIPT(".elif 1"), 1, "'.elif' without a matching '.if'"));
	CHECK(script_fails(SCRIPT(".endif"), 1, "'.endif' without a matching '.if'"));
	CHECK(script_fails(SCRIPT(".if 1", ".endif", ".endif"), 3, "without a matching"));
	CHECK(script_fails(SCRIPT(".if 1", ".else", ".else", ".endif"), 3,
	                   "'.else' after '.else'"));
	CHECK(script_fails(SCRIPT(".if 1", ".else", ".elif 1", ".endif"), 3,
	                   "'.elif' after '.else'"));
	CHECK(script_fails(SCRIPT(".if 1", ".else x", ".endif"), 2,
	                   "unexpected argument 'x' after '.else'"));
	CHECK(script_fails(SCRIPT(".if 1", ".endif x"), 2,
	                   "unexpected argument 'x' after '.endif'"));
	/* structure errors count inside inactive blocks too */
	CHECK(script_fails(SCRIPT(".if 0", ".if 1", ".else", ".else", ".endif", ".endif"), 4,
	                   "'.else' after '.else'"));
	CHECK(script_fails(SCRIPT(".if 0", ".else x", ".endif"), 2, "unexpected argument"));
	CHECK(script_fails(SCRIPT(".foo"), 1, "unknown directive '.foo'"));
	CHECK(script_fails(SCRIPT("."), 1, "unknown directive '.'"));
	CHECK(script_fails(SCRIPT(".IF 1"), 1, "unknown directive '.IF'"));
	CHECK(script_fails(SCRIPT(".if 1", ".foo", ".endif"), 2, "unknown directive"));

	/* an unclosed .if is left to the caller */
	run(SCRIPT(".if 1", "a", ".if 0"), &sc);
	CHECK(sc.errors == 0 && sc.depth == 2);

	/* CFG_COND_MAXDEPTH levels are fine, one more is an error; the stack
	 * stays balanced so that the matching .endif lines close it */
	for (i = 0; i < CFG_COND_MAXDEPTH; i++)
		deep[i] = ".if 1";
	deep[i++] = "a";
	deep[i] = NULL;
	run(deep, &sc);
	CHECK(sc.errors == 0 && sc.depth == CFG_COND_MAXDEPTH);
	CHECK_STR(sc.active, "a");
	deep[CFG_COND_MAXDEPTH] = ".if 1";
	deep[CFG_COND_MAXDEPTH + 1] = "b";
	deep[CFG_COND_MAXDEPTH + 2] = ".elif 1";   /* levels past the limit: ignored */
	deep[CFG_COND_MAXDEPTH + 3] = ".else";
	deep[CFG_COND_MAXDEPTH + 4] = "c";
	for (i = CFG_COND_MAXDEPTH + 5; i < 2 * CFG_COND_MAXDEPTH + 6; i++)
		deep[i] = ".endif";                 /* MAXDEPTH + 1 of them */
	deep[i] = NULL;
	run(deep, &sc);
	CHECK(sc.errors == 1 && sc.errline == CFG_COND_MAXDEPTH + 1);
	CHECK(strstr(sc.first_err, "too many nested '.if' (max 99)") != NULL);
	CHECK(sc.depth == 0);
	CHECK_STR(sc.active, "");               /* the levels past the limit are inactive */
}

/* A nest that runs far past the limit is one error, not one per level; its
 * .endif lines still close it, and a later overflow is a new error. */
static void test_deep_nesting(void)
{
	enum { PAST = 69, LEVELS = CFG_COND_MAXDEPTH + PAST };
	static const char *deep[4 * LEVELS + 8];
	struct script sc;
	int i = 0;

	for (int round = 0; round < 2; round++) {
		for (int l = 0; l < LEVELS; l++)
			deep[i++] = ".if 1";
		deep[i++] = "a";
		for (int l = 0; l < LEVELS; l++)
			deep[i++] = ".endif";
		deep[i++] = "b";
	}
	deep[i] = NULL;
	run(deep, &sc);
	CHECK(sc.errors == 2 && sc.errline == CFG_COND_MAXDEPTH + 1);
	CHECK(strstr(sc.first_err, "too many nested '.if'") != NULL);
	CHECK(sc.depth == 0);
	CHECK_STR(sc.active, "b b");
}

static void test_messages(void)
{
	struct cfg_cond_stack s;
	struct script sc;
	char *w[3];

	run(SCRIPT(".diag \"d\"", ".notice \"n 1\"", ".warning w", ".notice",
	           ".notice \"\""), &sc);
	CHECK(sc.errors == 0);
	CHECK_STR(sc.msgs, "2:d 3:n 1 4:w 3: 3:");
	run(SCRIPT(".if 0", ".notice \"no\"", ".else", ".notice \"yes\"", ".endif"), &sc);
	CHECK_STR(sc.msgs, "3:yes");
	run(SCRIPT(".alert \"SSL support is mandatory\""), &sc);
	CHECK(sc.errors == 1);
	CHECK_STR(sc.first_err, "SSL support is mandatory");
	CHECK(script_fails(SCRIPT(".notice hello world"), 1,
	                   "unexpected argument 'world' after '.notice'"));
	CHECK(script_fails(SCRIPT(".warning a b"), 1, "quote the message"));

	/* return codes, and lines that are no directive */
	cfg_cond_init(&s);
	CHECK(cfg_cond_active(&s));
	w[0] = ".warning";
	w[1] = "careful";
	w[2] = NULL;
	CHECK(cfg_cond_directive(&s, w, 2, err, sizeof(err)) == CFG_DIR_WARNING);
	CHECK_STR(err, "careful");
	w[0] = ".alert";
	CHECK(cfg_cond_directive(&s, w, 2, err, sizeof(err)) == CFG_DIR_ERROR);
	CHECK_STR(err, "careful");
	w[0] = ".diag";
	CHECK(cfg_cond_directive(&s, w, 2, err, sizeof(err)) == CFG_DIR_DIAG);
	w[0] = ".notice";
	CHECK(cfg_cond_directive(&s, w, 2, err, sizeof(err)) == CFG_DIR_NOTICE);
	w[0] = "frontend";
	CHECK(cfg_cond_directive(&s, w, 2, err, sizeof(err)) == CFG_DIR_NONE);
	CHECK(cfg_cond_directive(&s, w, 0, err, sizeof(err)) == CFG_DIR_NONE);
	w[0] = ".if";
	w[1] = "0";
	CHECK(cfg_cond_directive(&s, w, 2, err, sizeof(err)) == CFG_DIR_HANDLED);
	CHECK(!cfg_cond_active(&s) && s.depth == 1);
	w[0] = ".notice";
	CHECK(cfg_cond_directive(&s, w, 2, err, sizeof(err)) == CFG_DIR_HANDLED);
	w[0] = ".else";
	CHECK(cfg_cond_directive(&s, w, 1, err, sizeof(err)) == CFG_DIR_HANDLED);
	CHECK(cfg_cond_active(&s));
	w[0] = ".endif";
	CHECK(cfg_cond_directive(&s, w, 1, err, sizeof(err)) == CFG_DIR_HANDLED);
	CHECK(cfg_cond_active(&s) && s.depth == 0);
}

/* The example of the manual's section 2.4, for every combination of A-D. */
static void test_manual_example(void)
{
	static const char *const lines[] = {
		".if \"${A}\"",
		"  .if \"${B}\"",
		"     .notice \"A=1, B=1\"",
		"  .elif \"${C}\"",
		"     .notice \"A=1, B=0, C=1\"",
		"  .elif \"${D}\"",
		"     .warning \"A=1, B=0, C=0, D=1\"",
		"  .else",
		"     .alert \"A=1, B=0, C=0, D=0\"",
		"  .endif",
		".else",
		"     .notice \"A=0\"",
		".endif",
		NULL
	};
	struct script sc;
	int bits, ok = 1;

	for (bits = 0; bits < 16; bits++) {
		char want[64];

		setenv("A", bits & 8 ? "1" : "0", 1);
		setenv("B", bits & 4 ? "1" : "0", 1);
		setenv("C", bits & 2 ? "1" : "0", 1);
		setenv("D", bits & 1 ? "1" : "0", 1);
		run(lines, &sc);
		if (!(bits & 8))
			snprintf(want, sizeof(want), "%d:A=0", CFG_DIR_NOTICE);
		else if (bits & 4)
			snprintf(want, sizeof(want), "%d:A=1, B=1", CFG_DIR_NOTICE);
		else if (bits & 2)
			snprintf(want, sizeof(want), "%d:A=1, B=0, C=1", CFG_DIR_NOTICE);
		else if (bits & 1)
			snprintf(want, sizeof(want), "%d:A=1, B=0, C=0, D=1", CFG_DIR_WARNING);
		else
			snprintf(want, sizeof(want), "%s", "");
		if (strcmp(sc.msgs, want) != 0 || sc.depth != 0 ||
		    sc.errors != (bits == 8) ||
		    (bits == 8 && strcmp(sc.first_err, "A=1, B=0, C=0, D=0") != 0)) {
			fprintf(stderr, "  example with bits %x: \"%s\", %d error(s)\n", bits,
			        sc.msgs, sc.errors);
			ok = 0;
		}
	}
	CHECK(ok);
	/* an empty variable is an empty, hence false, condition */
	setenv("A", "", 1);
	run(lines, &sc);
	CHECK_STR(sc.msgs, "3:A=0");
}

int main(void)
{
	setenv("CT_SET", "val", 1);
	setenv("CT_EMPTY", "", 1);
	setenv("CT_LFCR", "a\nb\r", 1);
	unsetenv("CT_UNSET");

	test_integers();
	test_bare_words();
	test_operators();
	test_nesting_limit();
	test_defined_feature();
	test_streq();
	test_versions();
	test_eval_words();
	test_blocks();
	test_block_errors();
	test_deep_nesting();
	test_messages();
	test_manual_example();
	return t_done("test_cond");
}
