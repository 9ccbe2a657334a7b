/* Server states across reloads, as HAProxy 2.6 reads them: see
 * srv_statefile.h. The file is read once at start-up (a post-parse hook,
 * before any thread runs), each line bounded by its buffer; a corrupted
 * line makes the whole file ignored, with HAProxy's warning. Lines name
 * their backend and server: both are matched by name, as HAProxy does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/global.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_state.h>
#include <sluice/proxy/srv_statefile.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen
#define LINE_MAX_LEN  2048

static char *state_file;     /* server-state-file */
static char *state_base;     /* server-state-base */
static char *state_file_cfg; /* where server-state-file was set */
static int state_file_line;

/* referenced by proxy.c: see its anchor */
const int srv_statefile_anchor;

static int kw_state_global(KW_ARGS);
static int kw_load_state(KW_ARGS);
static int kw_state_file_name(KW_ARGS);

static const struct cfg_kw statefile_kws[] = {
	{ "server-state-file", NULL, CFG_SEC_GLOBAL, kw_state_global },
	{ "server-state-base", NULL, CFG_SEC_GLOBAL, kw_state_global },
	{ "load-server-state-from-file", NULL, CFG_SEC_BE, kw_load_state },
	{ "server-state-file-name", NULL, CFG_SEC_BE_ONLY, kw_state_file_name },
	{ NULL }
};
CFG_REGISTER(statefile_kws)

static int kw_state_global(KW_ARGS)
{
	char **dst = args[0][13] == 'f' ? &state_file : &state_base;

	if (nargs != 2)
		return errmsg_set(err, errlen, "'%s' expects one argument: a %s path", args[0],
		                  dst == &state_file ? "file" : "directory");
	if (*dst)
		return errmsg_set(err, errlen, "'%s' already specified. Continuing.", args[0]);
	*dst = strdup(args[1]);
	if (dst == &state_file) {
		free(state_file_cfg);
		state_file_cfg = strdup(ctx->file);
		state_file_line = ctx->line;
	}
	return *dst ? 0 : errmsg_set(err, errlen, "out of memory");
}

static int kw_load_state(KW_ARGS)
{
	struct proxy *px = ctx->px;

	if (nargs != 2 || (strcmp(args[1], "global") && strcmp(args[1], "local") &&
	                   strcmp(args[1], "none")))
		return errmsg_set(err, errlen, "'%s' expects 'global', 'local' or 'none'. Got '%s'",
		                  args[0], nargs > 1 ? args[1] : "");
	px->srv_state_load = args[1][0] == 'g' ? SRV_STATE_LOAD_GLOBAL :
	                     args[1][0] == 'l' ? SRV_STATE_LOAD_LOCAL : SRV_STATE_LOAD_NONE;
	return 0;
}

static int kw_state_file_name(KW_ARGS)
{
	struct proxy *px = ctx->px;

	if (nargs > 2)
		return errmsg_set(err, errlen, "'%s' expects at most one argument.", args[0]);
	free(px->srv_state_file_name);
	px->srv_state_file_name = NULL;
	if (nargs == 2 && strcmp(args[1], "use-backend-name") != 0 &&
	    !(px->srv_state_file_name = strdup(args[1])))
		return errmsg_set(err, errlen, "out of memory");
	return 0;
}

/* ---- a line ---- */

static int field_int(const char *f, int64_t *out)
{
	char *end;
	long long v;

	if (!f || !*f)
		return -1;
	errno = 0;
	v = strtoll(f, &end, 10);
	if (*end || errno)
		return -1;
	*out = v;
	return 0;
}

int srv_saved_parse(char *line, struct srv_saved *out)
{
	char *f[32];
	int n = 0;
	int64_t v[14];
	static const int num[] = { 0, 2, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };

	for (char *p = line; *p && n < 32;) {
		while (*p == ' ' || *p == '\t')
			*p++ = '\0';
		if (!*p || *p == '\n' || *p == '\r')
			break;
		f[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			p++;
		if (*p == '\n' || *p == '\r')
			*p = '\0';
	}
	/* version 1 has at least the check and agent states */
	if (n < 15)
		return -1;
	for (size_t i = 0; i < sizeof(num) / sizeof(num[0]); i++)
		if (field_int(f[num[i]], &v[i]) < 0 || v[i] < 0 || v[i] > INT32_MAX)
			return -1;
	out->be_id = (int)v[0];
	out->be_name = f[1];
	out->srv_id = (int)v[1];
	out->srv_name = f[3];
	out->op = (int)v[2];
	out->admin = (int)v[3];
	out->uweight = (int)v[4];
	out->iweight = (int)v[5];
	out->since_s = v[6];
	out->check_status = (int)v[7];
	out->check_result = (int)v[8];
	out->check_health = (int)v[9];
	out->check_state = (int)v[10];
	out->agent_state = (int)v[11];
	return out->op <= 3 ? 0 : -1;
}

/* ---- a file ---- */

/* Reads <path> for the backends that use it (<be> alone for a local file,
 * every backend loading the global one otherwise). Warns as HAProxy does
 * and applies nothing from a file it cannot read or that is corrupted. */
static void load_file(const char *path, struct proxy *only, const char *what)
{
	char line[LINE_MAX_LEN];
	struct srv_saved *saved = NULL;
	char **lines = NULL;
	int nsaved = 0, lineno = 0, ok = 1;
	FILE *f = fopen(path, "r");

	if (!f) {
		if (only)
			cfg_warning(only->conf_file, only->conf_line, "Proxy '%s': Can't open server "
			            "state file '%s': %s.", only->name, path, strerror(errno));
		else
			cfg_warning(state_file_cfg, state_file_line, "Can't open %s server state file "
			            "'%s': %s", what, path, strerror(errno));
		return;
	}
	if (!fgets(line, sizeof(line), f) || strcmp(line, "1\n") != 0) {
		cfg_warning(path, 1, "Can't get version of the %s server state file '%s'.", what,
		            path);
		fclose(f);
		return;
	}
	lineno = 1;
	while (fgets(line, sizeof(line), f)) {
		struct srv_saved *grown;
		char **lgrown, *copy;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		copy = strdup(line);
		grown = realloc(saved, sizeof(*saved) * (size_t)(nsaved + 1));
		lgrown = realloc(lines, sizeof(*lines) * (size_t)(nsaved + 1));
		if (grown)
			saved = grown;
		if (lgrown)
			lines = lgrown;
		if (!copy || !grown || !lgrown) {
			free(copy);
			ok = 0;
			cfg_warning(path, lineno, "out of memory reading the server state file '%s'.",
			            path);
			break;
		}
		lines[nsaved] = copy;
		if (srv_saved_parse(copy, &saved[nsaved]) < 0) {
			cfg_warning(path, lineno, "corrupted %s server state file '%s' at line %d.",
			            what, path, lineno);
			ok = 0;
			nsaved++;
			break;
		}
		saved[nsaved++].line = lineno;
	}
	fclose(f);
	for (int i = 0; ok && i < nsaved; i++) {
		struct proxy *be = only ? only : proxy_find(saved[i].be_name, PX_CAP_BE);
		struct server *s;

		if (!be || strcmp(be->name, saved[i].be_name) != 0 ||
		    (!only && be->srv_state_load != SRV_STATE_LOAD_GLOBAL))
			continue;
		s = server_find(be, saved[i].srv_name);
		if (s)
			srv_state_restore(s, &saved[i], path);
	}
	for (int i = 0; i < nsaved; i++)
		free(lines[i]);
	free(lines);
	free(saved);
}

/* <name> under server-state-base unless absolute. */
static char *state_path(const char *name)
{
	size_t len;
	char *p;

	if (name[0] == '/' || !state_base)
		return strdup(name);
	len = strlen(state_base) + strlen(name) + 2;
	p = malloc(len);
	if (p)
		snprintf(p, len, "%s%s%s", state_base,
		         state_base[strlen(state_base) - 1] == '/' ? "" : "/", name);
	return p;
}

static int statefile_postparse(void)
{
	struct list *pos, *tmp;
	int global_wanted = 0;

	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		if (!(px->cap & PX_CAP_BE) || px->srv_state_load != SRV_STATE_LOAD_GLOBAL)
			continue;
		if (!state_file)
			cfg_warning(px->conf_file, px->conf_line, "backend '%s' configured to load "
			            "server state file from global section 'server-state-file' "
			            "directive. Unfortunately, 'server-state-file' is not set!",
			            px->name);
		else
			global_wanted = 1;
	}
	/* the states apply to a process that runs, not to a check */
	if (global.mode == MODE_CHECK)
		return 0;
	if (global_wanted) {
		char *path = state_path(state_file);

		if (path)
			load_file(path, NULL, "global");
		free(path);
	}
	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);
		char *path;

		if (!(px->cap & PX_CAP_BE) || px->srv_state_load != SRV_STATE_LOAD_LOCAL)
			continue;
		path = state_path(px->srv_state_file_name ? px->srv_state_file_name : px->name);
		if (path)
			load_file(path, px, "local");
		free(path);
	}
	return 0;
}

/* after the checks are set up (30): the states replace their start */
static struct cfg_post_hook statefile_post = { .fn = statefile_postparse, .order = 60 };

__attribute__((constructor)) static void statefile_register(void)
{
	cfg_register_post(&statefile_post);
}
