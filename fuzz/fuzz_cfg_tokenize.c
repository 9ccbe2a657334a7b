/* libFuzzer target: the configuration tokenizer and the condition language.
 *
 * The input, NUL-terminated, goes through cfg_tokenize() (checking the
 * invariants of its output), then through cfg_cond_eval_str() as a -cc
 * expression, then line by line through the conditional-block machinery as
 * a configuration file would. A few environment variables are set so that
 * expansions, ${X[*]} splits and defined() have something to find.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cond.h>
#include <sluice/cfg/tokenize.h>

static struct cfg_tokens tok;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	setenv("FZ", "value", 1);
	setenv("FZ_EMPTY", "", 1);
	setenv("FZ_LIST", " a b\t\tc  ", 1);
	setenv("FZ_ONE", "1", 1);
	return 0;
}

static void check_tokens(int rc)
{
	const char *lo = tok.buf, *hi = tok.buf + sizeof(tok.buf);
	int i;

	if (rc != 0 && rc != -1)
		abort();
	if (rc < 0 && tok.nargs != 0)
		abort();
	if (tok.nargs < 0 || tok.nargs > CFG_MAX_ARGS || tok.args[tok.nargs] != NULL)
		abort();
	for (i = 0; i < tok.nargs; i++) {
		/* every word lies in buf and ends there */
		if (tok.args[i] < lo || tok.args[i] >= hi ||
		    !memchr(tok.args[i], '\0', (size_t)(hi - tok.args[i])))
			abort();
		if (i && tok.args[i] <= tok.args[i - 1])
			abort();
	}
}

/* Feeds each line of <text> to the block machinery, as parse.c does. */
static void run_blocks(char *text)
{
	struct cfg_cond_stack s;
	char err[256], *line, *next;

	cfg_cond_init(&s);
	for (line = text; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (cfg_tokenize(line, &tok, err, sizeof(err)) < 0 || !tok.nargs)
			continue;
		if (tok.args[0][0] == '.')
			cfg_cond_directive(&s, tok.args, tok.nargs, err, sizeof(err));
		if (s.depth < 0)
			abort();
		(void)cfg_cond_active(&s);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[128];
	char *str = malloc(size + 1);
	int rc;

	if (!str)
		return 0;
	memcpy(str, data, size);
	str[size] = '\0';

	rc = cfg_tokenize(str, &tok, err, sizeof(err));
	check_tokens(rc);
	if (rc < 0 && !memchr(err, '\0', sizeof(err)))
		abort();

	rc = cfg_cond_eval_str(str, err, sizeof(err));
	if (rc < -1 || rc > 1)
		abort();

	rc = cfg_version_cmp(str, "2.6");
	if (rc < -2 || rc > 1 || (rc != -2 && cfg_version_cmp("2.6", str) != -rc))
		abort();

	run_blocks(str);
	free(str);
	return 0;
}
