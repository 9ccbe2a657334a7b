/* get var <name> / set var <name> [expr] <expression>: the process-wide
 * variables (proc.*) from the CLI.
 *
 * The proc store is shared and takes its own rwlock (vars.c): reads copy
 * the value out, sets replace it under the write lock, exactly as a rule
 * on any thread does. Names are interned at configuration time only (the
 * table is read-only once threads run), so the CLI may name a variable
 * the configuration uses somewhere, and no other (HAProxy 2.6 creates one
 * on the fly: sluice answers "Variable not found."). The expression is
 * evaluated without a stream: only fetches of internal state (int(),
 * str(), var(proc...) ...) are allowed, as in HAProxy.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sluice/core/sched.h>
#include <sluice/expr/sample.h>
#include <sluice/expr/vars.h>
#include <sluice/mgmt/cli.h>

static int cli_get_var(char **, int, struct cli_out *, int);
static int cli_set_var(char **, int, struct cli_out *, int);

static const struct cli_kw vars_kws[] = {
	{ { "get", "var" }, CLI_LEVEL_OPERATOR, cli_get_var,
	  "get var <name>                          : retrieve contents of a process-wide variable" },
	{ { "set", "var" }, CLI_LEVEL_OPERATOR, cli_set_var,
	  "set var <name> [expr] <expression>      : set a process-wide variable",
	  NULL, CLI_KW_EXPERIMENTAL },
	{ { NULL } }
};
CLI_REGISTER(vars_kws)

/* "proc.x: type=sint value=<5>", an informational message without its LF
 * (HAProxy 2.6's answer lacks the empty line). */
static int cli_get_var(char **args, int nargs, struct cli_out *out, int level)
{
	struct var_ref ref;
	struct sample smp;
	char addr[INET6_ADDRSTRLEN];

	if (nargs < 3) {
		cli_printf(out, "Missing process-wide variable identifier.\n");
		return -1;
	}
	memset(&smp, 0, sizeof(smp));
	if (vars_find_ref(args[2], &ref) < 0 || ref.scope != VAR_SCOPE_PROC ||
	    !vars_get(NULL, &ref, &smp)) {
		cli_printf(out, "Variable not found.\n");
		return -1;
	}
	cli_info(out, "%s: type=%s value=<", args[2], smp_type_name(smp.type));
	switch (smp.type) {
	case SMP_T_BOOL:
	case SMP_T_SINT:
		cli_printf(out, "%lld", (long long)smp.data.sint);
		break;
	case SMP_T_IPV4:
		cli_printf(out, "%s", inet_ntop(AF_INET, &smp.data.ipv4, addr, sizeof(addr)));
		break;
	case SMP_T_IPV6:
		cli_printf(out, "%s", inet_ntop(AF_INET6, &smp.data.ipv6, addr, sizeof(addr)));
		break;
	case SMP_T_STR:
	case SMP_T_BIN:
		cli_printf(out, "%.*s", (int)smp.data.str.len, smp.data.str.ptr);
		break;
	case SMP_T_METH:
		cli_printf(out, "%.*s", (int)smp.data.meth.str.len, smp.data.meth.str.ptr);
		break;
	default:
		break;
	}
	cli_printf(out, ">");
	return 0;
}

static int cli_set_var(char **args, int nargs, struct cli_out *out, int level)
{
	struct sample_expr *expr;
	struct smp_ctx ctx;
	struct sample smp;
	struct var_ref ref;
	const char *text;
	char err[256];
	int ret;

	if (nargs < 3) {
		cli_printf(out, "Missing process-wide variable identifier.\n");
		return -1;
	}
	if (strncmp(args[2], "proc.", 5) != 0) {
		cli_printf(out, "'set var': cannot set variable '%s', only scope 'proc' is "
		           "permitted here.", args[2]);
		return -1;
	}
	if (nargs < 4 || ((strcmp(args[3], "expr") == 0 || strcmp(args[3], "fmt") == 0) &&
	                  nargs < 5)) {
		cli_printf(out, "Missing either 'expr', 'fmt' or expression.\n");
		return -1;
	}
	if (strcmp(args[3], "fmt") == 0) {
		cli_printf(out, "'set var <name> fmt' is not supported by this version of "
		           "sluice: use 'expr'.\n");
		return -1;
	}
	text = strcmp(args[3], "expr") == 0 ? args[4] : args[3];
	if (vars_find_ref(args[2], &ref) < 0) {
		cli_printf(out, "Variable not found.\n");
		return -1;
	}
	expr = sample_expr_parse(text, NULL, err, sizeof(err));
	if (!expr) {
		cli_printf(out, "%s", err);
		return -1;
	}
	if (smp_check_use(expr->use, SMP_USE_INTRN, text, err, sizeof(err)) < 0) {
		sample_expr_free(expr);
		cli_printf(out, "%s", err);
		return -1;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.avail = SMP_USE_INTRN;
	ctx.final = 1;
	ctx.thread = th_ctx ? th_ctx->tid : 0;
	memset(&smp, 0, sizeof(smp));
	ret = sample_expr_eval(expr, &ctx, &smp);
	if (ret)
		ret = vars_set(&ctx, &ref, &smp, 0);
	sample_expr_free(expr);
	if (ret < 0) {
		cli_printf(out, "Out of memory.\n");
		return -1;
	}
	/* an expression that yields nothing leaves the variable as it was,
	 * silently, as HAProxy does */
	return 0;
}
