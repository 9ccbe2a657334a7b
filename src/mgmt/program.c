/* The `program` section: external commands that a master (master-worker
 * mode) starts next to its workers, lists in `show proc` and signals on
 * reload and stop (src/mgmt/master.c). A worker, or a process without a
 * master, parses the section and starts nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/global.h>
#include <sluice/mgmt/mworker.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

struct program *programs;
static struct program *cur;

static int program_begin(KW_ARGS);
static int kw_command(KW_ARGS);
static int kw_option(KW_ARGS);
static int kw_user_group(KW_ARGS);

static const struct cfg_kw program_kws[] = {
	{ "command", NULL,               CFG_SEC_PROGRAM, kw_command },
	{ "option",  "start-on-reload",  CFG_SEC_PROGRAM, kw_option, 1 },
	{ "user",    NULL,               CFG_SEC_PROGRAM, kw_user_group },
	{ "group",   NULL,               CFG_SEC_PROGRAM, kw_user_group },
	{ NULL }
};
CFG_REGISTER(program_kws)

static struct cfg_section_def program_section = {
	.name = "program", .sec = CFG_SEC_PROGRAM, .begin = program_begin,
};

static int program_begin(KW_ARGS)
{
	struct program *p, **tail;

	if (nargs != 2) {
		snprintf(err, errlen, "expects a name.");
		return -1;
	}
	for (p = programs; p; p = p->next) {
		if (!strcmp(p->name, args[1])) {
			snprintf(err, errlen, "program '%s' is already defined at %s:%d.", args[1],
			         p->file, p->line);
			return -1;
		}
	}
	p = calloc(1, sizeof(*p));
	if (!p || !(p->name = strdup(args[1])) || !(p->file = strdup(ctx->file))) {
		if (p)
			free(p->name);
		free(p);
		snprintf(err, errlen, "out of memory.");
		return -1;
	}
	p->line = ctx->line;
	p->start_on_reload = 1;
	for (tail = &programs; *tail; tail = &(*tail)->next)
		;
	*tail = p;
	cur = p;
	return 0;
}

static int kw_command(KW_ARGS)
{
	char **argv;

	if (nargs < 2) {
		snprintf(err, errlen, "expects a command and its arguments.");
		return -1;
	}
	if (cur->argv) {
		snprintf(err, errlen, "is already defined for program '%s'.", cur->name);
		return -1;
	}
	argv = calloc(nargs, sizeof(*argv));
	if (!argv) {
		snprintf(err, errlen, "out of memory.");
		return -1;
	}
	for (int i = 1; i < nargs; i++) {
		argv[i - 1] = strdup(args[i]);
		if (!argv[i - 1]) {
			for (int j = 0; j < i - 1; j++)
				free(argv[j]);
			free(argv);
			snprintf(err, errlen, "out of memory.");
			return -1;
		}
	}
	cur->argv = argv;
	return 0;
}

static int kw_option(KW_ARGS)
{
	if (cfg_no_more_args(args, nargs, 2, err, errlen) < 0)
		return -1;
	cur->start_on_reload = !ctx->negate;
	return 0;
}

static int kw_user_group(KW_ARGS)
{
	if (nargs != 2) {
		snprintf(err, errlen, "expects a name.");
		return -1;
	}
	cfg_warning(ctx->file, ctx->line, "'%s' is ignored by sluice: program '%s' runs as the "
	            "master does.", args[0], cur->name);
	return 0;
}

static int programs_check(void)
{
	int errors = 0;

	for (struct program *p = programs; p; p = p->next) {
		if (!p->argv) {
			cfg_alert(p->file, p->line, "program '%s' has no 'command'.", p->name);
			errors++;
		}
	}
	return errors;
}

static struct cfg_post_hook programs_post = { .fn = programs_check, .order = 5 };

__attribute__((constructor)) static void program_register(void)
{
	cfg_register_section(&program_section);
	cfg_register_post(&programs_post);
}
