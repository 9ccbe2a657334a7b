/* `resolvers` sections: see resolvers.h. Their keywords are checked with
 * HAProxy 2.6's words; the section is then kept by name only, for the
 * servers that refer to it, and each section is warned about once: sluice
 * resolves names at start-up and not again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/errmsg.h>
#include <sluice/net/addr.h>
#include <sluice/net/resolvers.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>

#define KW_ARGS struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen

struct resolvers {
	struct resolvers *next;
	char *name;
};

static struct resolvers *sections;

static int resolvers_begin(KW_ARGS);
static int kw_nameserver(KW_ARGS);
static int kw_hold(KW_ARGS);
static int kw_timeout(KW_ARGS);
static int kw_number(KW_ARGS);
static int kw_resolv_conf(KW_ARGS);

static const struct cfg_kw resolvers_kws[] = {
	{ "nameserver", NULL, CFG_SEC_RESOLVERS, kw_nameserver },
	{ "hold", NULL, CFG_SEC_RESOLVERS, kw_hold },
	{ "timeout", NULL, CFG_SEC_RESOLVERS, kw_timeout },
	{ "resolve_retries", NULL, CFG_SEC_RESOLVERS, kw_number },
	{ "accepted_payload_size", NULL, CFG_SEC_RESOLVERS, kw_number },
	{ "resolution_pool_size", NULL, CFG_SEC_RESOLVERS, kw_number },
	{ "parse-resolv-conf", NULL, CFG_SEC_RESOLVERS, kw_resolv_conf },
	{ NULL }
};
CFG_REGISTER(resolvers_kws)

static struct cfg_section_def resolvers_section = {
	.name = "resolvers", .sec = CFG_SEC_RESOLVERS, .begin = resolvers_begin,
};

int resolvers_exist(const char *name)
{
	for (struct resolvers *r = sections; r; r = r->next)
		if (!strcmp(r->name, name))
			return 1;
	return 0;
}

static int resolvers_begin(KW_ARGS)
{
	struct resolvers *r;

	if (nargs < 2)
		return errmsg_set(err, errlen, "missing name for resolvers section.");
	if (resolvers_exist(args[1]))
		return errmsg_set(err, errlen, "resolvers section '%s' has the same name as "
		                  "another resolvers section declared before.", args[1]);
	r = calloc(1, sizeof(*r));
	if (!r || !(r->name = strdup(args[1]))) {
		free(r);
		return errmsg_set(err, errlen, "out of memory.");
	}
	r->next = sections;
	sections = r;
	cfg_warning(ctx->file, ctx->line, "resolvers '%s': sluice resolves server names once, "
	            "at start-up, with the system's resolver; it does not query these name "
	            "servers at run time.", args[1]);
	return 0;
}

static int kw_nameserver(KW_ARGS)
{
	struct sl_addr a;
	const char *addr = nargs > 2 ? args[2] : NULL;
	char sub[256];

	if (nargs < 3)
		return errmsg_set(err, errlen, "'%s' expects <name> and <addr>[:<port>] as "
		                  "arguments.", args[0]);
	if (!strncmp(addr, "udp@", 4) || !strncmp(addr, "tcp@", 4))
		addr += 4;
	if (addr_parse(addr, &a, ADDR_O_PORT_OPTIONAL | ADDR_O_NO_FD | ADDR_O_NO_UNIX |
	               ADDR_O_NUMERIC, sub, sizeof(sub)) < 0)
		return errmsg_set(err, errlen, "'%s %s' : %s", args[0], args[1], sub);
	return 0;
}

static int kw_hold(KW_ARGS)
{
	static const char *const ev[] = { "nx", "other", "refused", "timeout", "valid",
	                                  "obsolete", NULL };
	int k, ms;

	for (k = 0; nargs > 1 && ev[k] && strcmp(ev[k], args[1]); k++)
		;
	if (nargs < 2 || !ev[k])
		return errmsg_set(err, errlen, "'hold' unknown <event>: '%s', expects either 'nx', "
		                  "'timeout', 'valid', 'obsolete' or 'other'.",
		                  nargs > 1 ? args[1] : "");
	if (nargs != 3 || cfg_parse_time_ms(args[2], &ms, err, errlen) < 0)
		return errmsg_set(err, errlen, "'hold %s' expects <time> as argument.", args[1]);
	return 0;
}

static int kw_timeout(KW_ARGS)
{
	int ms;

	if (nargs != 3 || (strcmp(args[1], "retry") && strcmp(args[1], "resolve")) ||
	    cfg_parse_time_ms(args[2], &ms, err, errlen) < 0)
		return errmsg_set(err, errlen, "'timeout' expects 'retry' or 'resolve' and <time> "
		                  "as arguments got '%s'.", nargs > 1 ? args[1] : "");
	return 0;
}

static int kw_number(KW_ARGS)
{
	long v;

	if (!strcmp(args[0], "accepted_payload_size") &&
	    (nargs != 2 || cfg_parse_uint(args[1], 65535, &v, err, errlen) < 0 || v < 12))
		return errmsg_set(err, errlen, "'%s' must be between 12 and 65535 inclusive "
		                  "(was %s).", args[0], nargs > 1 ? args[1] : "");
	if (nargs != 2 || cfg_parse_uint(args[1], 1000000, &v, err, errlen) < 0)
		return errmsg_set(err, errlen, "'%s' expects <nb> as argument.", args[0]);
	return 0;
}

static int kw_resolv_conf(KW_ARGS)
{
	if (nargs > 1)
		return errmsg_set(err, errlen, "'%s' cannot handle unexpected argument '%s'.",
		                  args[0], args[1]);
	return 0;
}

void resolvers_free_all(void)
{
	while (sections) {
		struct resolvers *r = sections;

		sections = r->next;
		free(r->name);
		free(r);
	}
}

/* Servers that name a section refer to one that exists (HAProxy's words). */
static int resolvers_postparse(void)
{
	struct list *pos, *tmp;
	int errors = 0;

	list_for_each_safe(pos, tmp, &proxies) {
		struct proxy *px = list_elem(pos, struct proxy, list);

		for (int i = 0; (px->cap & PX_CAP_BE) && i < px->nsrv; i++) {
			struct server *s = px->srv[i];

			if (!s->resolvers_name || resolvers_exist(s->resolvers_name))
				continue;
			cfg_alert(s->conf_file, s->conf_line, "backend '%s', server '%s': unable "
			          "to find required resolvers '%s'", px->name, s->name,
			          s->resolvers_name);
			errors++;
		}
	}
	return errors;
}

static struct cfg_post_hook resolvers_post = { .fn = resolvers_postparse, .order = 32 };

__attribute__((constructor)) static void resolvers_register(void)
{
	cfg_register_post(&resolvers_post);
	cfg_register_section(&resolvers_section);
}
