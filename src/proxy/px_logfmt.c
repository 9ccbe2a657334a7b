/* error-log-format: see px_logfmt.h. The format is compiled once every
 * section is read, in the frontend's context, as log-format is; the
 * handshake error log (stream.c) renders it instead of its built-in line.
 */
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/log.h>
#include <sluice/expr/sample.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/px_logfmt.h>

static int set_format(struct proxy *px, const char *fmt, const char *file, int line)
{
	px_error_log_format_free(px);
	px->error_log_format = strdup(fmt);
	px->error_log_format_file = strdup(file);
	px->error_log_format_line = line;
	if (!px->error_log_format || !px->error_log_format_file) {
		px_error_log_format_free(px);
		return -1;
	}
	return 0;
}

static int kw_error_log_format(struct cfg_ctx *ctx, char **args, int nargs, char *err,
                               size_t errlen)
{
	if (nargs != 2)
		return errmsg_set(err, errlen, "expects exactly one argument.");
	if (set_format(ctx->px, args[1], ctx->file, ctx->line) < 0)
		return errmsg_set(err, errlen, "out of memory.");
	return 0;
}

void px_error_log_format_inherit(struct proxy *px, const struct proxy *def)
{
	if (def->error_log_format)
		set_format(px, def->error_log_format, def->error_log_format_file,
		           def->error_log_format_line);
}

void px_error_log_format_free(struct proxy *px)
{
	free(px->error_log_format);
	free(px->error_log_format_file);
	px->error_log_format = px->error_log_format_file = NULL;
	if (px->error_logfmt) {
		lf_free(px->error_logfmt);
		free(px->error_logfmt);
		px->error_logfmt = NULL;
	}
}

/* Only frontends log connection errors. */
static int error_log_format_postparse(void)
{
	struct list *pos, *tmp;
	int errors = 0;
	char err[512];

	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		if (!(px->cap & PX_CAP_FE) || !px->error_log_format || px->error_logfmt)
			continue;
		px->error_logfmt = calloc(1, sizeof(*px->error_logfmt));
		smp_cfg_origin_set(px->error_log_format_file, px->error_log_format_line, px);
		if (!px->error_logfmt ||
		    lf_compile(px->error_log_format, px->error_logfmt, err, sizeof(err)) < 0 ||
		    lf_check_use(px->error_logfmt, SMP_AVAIL_LOG, err, sizeof(err)) < 0) {
			cfg_alert(px->error_log_format_file, px->error_log_format_line,
			          "error-log-format of '%s': %s", px->name,
			          px->error_logfmt ? err : "out of memory");
			errors++;
		}
	}
	return errors;
}

static struct cfg_post_hook logfmt_post = { .fn = error_log_format_postparse, .order = 34 };

static const struct cfg_kw logfmt_kws[] = {
	{ "error-log-format", NULL, CFG_SEC_FE, kw_error_log_format },
	{ NULL }
};
CFG_REGISTER(logfmt_kws)

__attribute__((constructor)) static void px_logfmt_register(void)
{
	cfg_register_post(&logfmt_post);
}
