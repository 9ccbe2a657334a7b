/* Lua fetches and converters through the sample engine, without streams:
 * loading (and its errors), results and their types, the bound on code
 * that cannot yield (an endless loop in a fetch ends in about 500 ms),
 * the memory limit, and yields refused in fetches. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/clock.h>
#include <pthread.h>
#include <sluice/expr/sample.h>
#include <sluice/expr/vars.h>
#include "t.h"

/* Run-time interning of variable names from several threads at once
 * (what Lua's txn:set_var does with names it builds): every name gets
 * one id, readers see complete entries. */
static _Atomic int intern_errors;

static void *intern_worker(void *arg)
{
	int base = (int)(intptr_t)arg;

	for (int i = 0; i < 200; i++) {
		char name[64];
		struct var_ref ref, again;

		/* half the names are shared by all workers */
		snprintf(name, sizeof(name), "txn.w%d_%d", (i % 2) ? base : 0, i);
		if (vars_intern_runtime(name, &ref) < 0 || vars_find_ref(name, &again) < 0 ||
		    again.id != ref.id || strcmp(vars_name(ref.id), name + 4) != 0)
			intern_errors++;
	}
	return NULL;
}

static void test_vars_runtime(void)
{
	pthread_t th[4];
	struct var_ref ref;

	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, intern_worker, (void *)(intptr_t)(i + 1));
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	CHECK(intern_errors == 0);
	CHECK(vars_find_ref("txn.w0_0", &ref) == 0);
	CHECK(vars_intern_runtime("bad", &ref) < 0);
	/* the run-time budget: 500 names were added above; 1024 at most */
	for (int i = 0; i < 600; i++) {
		char name[64];

		snprintf(name, sizeof(name), "sess.extra_%d", i);
		vars_intern_runtime(name, &ref);
	}
	CHECK(vars_intern_runtime("sess.one_too_many", &ref) < 0);
	CHECK(vars_intern_runtime("txn.w0_0", &ref) == 0);   /* known: fine */
}

static const char script[] =
	"core.register_fetches('sum', function(txn, a, b) return tonumber(a) + tonumber(b) end)\n"
	"core.register_fetches('greet', function(txn, who) return 'hello ' .. who end)\n"
	"core.register_fetches('nothing', function(txn) return nil end)\n"
	"core.register_fetches('spin', function(txn) while true do end end)\n"
	"core.register_fetches('hog', function(txn)\n"
	"  local t = {} for i = 1, 1e7 do t[i] = i end return #t end)\n"
	"core.register_fetches('nap', function(txn) core.msleep(10) return 'woke' end)\n"
	"core.register_converters('up', function(s, suffix) return s:upper() .. (suffix or '') end)\n";

/* Parses <text> as a configuration file (stderr silenced). */
static int parse_cfg(const char *text)
{
	char path[] = "/tmp/test_lua_cfg_XXXXXX";
	int fd = mkstemp(path), saved = dup(2), null = open("/dev/null", 1), errors;

	if (fd < 0 || write(fd, text, strlen(text)) < 0)
		return -1;
	close(fd);
	fflush(stderr);
	dup2(null, 2);
	errors = cfg_parse_path(path);
	if (!errors)
		errors += cfg_postparse();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(null);
	unlink(path);
	return errors;
}

/* Evaluates <expr> as text into <out>; 1 with a value, 0 without. */
static int eval_text(const char *text, char *out, size_t outsz)
{
	char err[256];
	struct sample_expr *e = sample_expr_parse(text, NULL, err, sizeof(err));
	struct smp_ctx ctx;
	struct sample smp;
	int ok;

	if (!e) {
		snprintf(out, outsz, "parse error: %.200s", err);
		return 0;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.final = 1;
	memset(&smp, 0, sizeof(smp));
	ok = sample_expr_eval_as(e, &ctx, SMP_T_STR, &smp);
	if (ok)
		smp_to_text(&smp, out, outsz);
	else
		out[0] = 0;
	sample_expr_free(e);
	return ok;
}

int main(void)
{
	char path[] = "/tmp/test_lua_XXXXXX";
	char cfg[512], out[256];
	int fd = mkstemp(path);
	uint64_t t0;

	CHECK(fd >= 0 && write(fd, script, strlen(script)) == (ssize_t)strlen(script));
	close(fd);

	/* a script that fails to load is a configuration error */
	CHECK(parse_cfg("global\n  lua-load /nonexistent/x.lua\n") > 0);

	snprintf(cfg, sizeof(cfg), "global\n  lua-load %s\n  tune.lua.maxmem 16\n", path);
	CHECK(parse_cfg(cfg) == 0);

	CHECK(eval_text("lua.sum(2,3)", out, sizeof(out)) == 1);
	CHECK_STR(out, "5");
	CHECK(eval_text("lua.greet(world)", out, sizeof(out)) == 1);
	CHECK_STR(out, "hello world");
	/* nil is the boolean false, as in HAProxy: a value all the same */
	CHECK(eval_text("lua.nothing", out, sizeof(out)) == 1);
	CHECK_STR(out, "0");
	CHECK(eval_text("str(abc),lua.up", out, sizeof(out)) == 1);
	CHECK_STR(out, "ABC");
	CHECK(eval_text("str(abc),lua.up(!)", out, sizeof(out)) == 1);
	CHECK_STR(out, "ABC!");
	CHECK(eval_text("lua.greet(x),lua.up", out, sizeof(out)) == 1);
	CHECK_STR(out, "HELLO X");

	/* an endless loop in a fetch (which cannot yield) ends in ~500 ms,
	 * well before its 4 s timeout and the watchdog */
	t0 = clock_mono_ms();
	CHECK(eval_text("lua.spin", out, sizeof(out)) == 0);
	CHECK(clock_mono_ms() - t0 < 1500);

	/* past tune.lua.maxmem: a memory error, no value; the state goes on */
	CHECK(eval_text("lua.hog", out, sizeof(out)) == 0);
	CHECK(eval_text("lua.sum(1,1)", out, sizeof(out)) == 1);
	CHECK_STR(out, "2");

	/* fetches cannot yield */
	CHECK(eval_text("lua.nap", out, sizeof(out)) == 0);

	unlink(path);
	test_vars_runtime();
	return t_done("test_lua");
}
