/* http-request auth [realm <realm>]: answer 401 with a Basic challenge
 * (HAProxy 2.6 manual, 4.2 "http-request auth"). The page is the proxy's
 * 401 error page; the stream adds the WWW-Authenticate header once it
 * knows the realm (the proxy's name when none is given, "HAProxy
 * Statistics" in `stats http-request` rules).
 */
#include <stdlib.h>
#include <string.h>
#include <sluice/core/errmsg.h>
#include <sluice/http/act.h>
#include "act_int.h"

/* referenced by the registry module: see its anchor list */
const int http_act_auth_anchor;

static int parse_auth(struct act_rule *, struct proxy *, char **, int, char *, size_t);
static enum act_verdict exec_auth(const struct act_rule *, struct act_env *);

static const struct act_kw auth_kws[] = {
	{ "auth", ACT_F_HTTP_REQ, parse_auth, exec_auth, free },
	{ NULL }
};
ACT_REGISTER(auth_kws)

static int parse_auth(struct act_rule *r, struct proxy *px, char **args, int nargs,
                      char *err, size_t errlen)
{
	if (nargs == 0)
		return 0;
	if (strcmp(args[0], "realm") != 0 || nargs > 2)
		return errmsg_set(err, errlen, "expects 'realm' for 'auth' or 'if', 'unless' "
		                  "followed by a condition but found '%s'.",
		                  strcmp(args[0], "realm") ? args[0] : args[2]);
	if (nargs < 2)
		return errmsg_set(err, errlen, "missing realm value.");
	r->arg = strdup(args[1]);
	if (!r->arg)
		return errmsg_set(err, errlen, "out of memory");
	return 0;
}

static enum act_verdict exec_auth(const struct act_rule *r, struct act_env *env)
{
	env->status = 401;
	env->auth = 1;
	env->auth_realm = r->arg;
	return ACT_V_DENY;
}
