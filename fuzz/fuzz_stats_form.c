/* libFuzzer target: the admin form of the HTTP stats page
 * (stats_form_walk() in src/mgmt/stats_page.c), which reads a client's
 * POST body.
 *
 * The backend and server lookups are stand-ins: a backend "be" (also
 * "#7") with servers "s1" and "s2". Checked on every input, beyond the
 * sanitizers' own checks (the body is a heap block of its exact size):
 * - the status is one of DONE, PART, NONE, ERRP;
 * - a server is only acted on with a known action and a resolved backend,
 *   and its name is a NUL-terminated string shorter than the value buffer;
 * - DONE means every named server existed, NONE that no server was named.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/mgmt/stats_page.h>

static int be_token;

struct tally {
	int named, found;
};

static void *find_backend(void *ctx, const char *name)
{
	return !strcmp(name, "be") || !strcmp(name, "#7") ? &be_token : NULL;
}

static int apply(void *ctx, void *be, int action, const char *name)
{
	struct tally *t = ctx;
	int found = !strcmp(name, "s1") || !strcmp(name, "s2");

	assert(be == &be_token);
	assert(action >= 0 && action < STATS_ACT_COUNT);
	assert(strlen(name) < 256);
	t->named++;
	t->found += found;
	return found;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct stats_form_ops ops = { find_backend, apply };
	struct tally t = { 0 };
	char *body = malloc(size ? size : 1);
	const char *st;

	if (!body)
		return 0;
	memcpy(body, data, size);
	st = stats_form_walk(body, size, &ops, &t);
	assert(!strcmp(st, "DONE") || !strcmp(st, "PART") || !strcmp(st, "NONE") ||
	       !strcmp(st, "ERRP"));
	if (!strcmp(st, "DONE"))
		assert(t.named > 0 && t.found == t.named);
	if (!strcmp(st, "NONE"))
		assert(t.named == 0);
	free(body);
	return 0;
}
