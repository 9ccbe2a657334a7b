/* The `stick-table` keyword of frontends, backends and listen sections
 * (HAProxy 2.6 manual, section 4.2), with HAProxy's messages for bad
 * arguments. stktable_parse_args() is a pure function of the words of the
 * line (fuzz/fuzz_stktable_cfg.c drives it); the keyword handler creates
 * the table. Configuration time only, one thread.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/cfg/cfg_free.h>
#include <sluice/core/errmsg.h>
#include <sluice/expr/sample.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/stktable.h>

static int kw_stick_table(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen);

static const struct cfg_kw stktable_kws[] = {
	{ "stick-table", NULL, CFG_SEC_FE_ONLY | CFG_SEC_BE_ONLY, kw_stick_table },
	{ NULL }
};
CFG_REGISTER(stktable_kws)

/* HAProxy's parse_size_err(): digits and an optional k, m or g suffix
 * (powers of 1024), at most 2^32-1. On error, *bad is the character at
 * fault. */
static int parse_size32(const char *s, uint64_t *out, char *bad)
{
	uint64_t v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9') {
		*bad = *p;
		return -1;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > UINT32_MAX) {
			*bad = *p;
			return -1;
		}
	}
	if (*p) {
		int shift = *p == 'k' || *p == 'K' ? 10 : *p == 'm' || *p == 'M' ? 20 :
		            *p == 'g' || *p == 'G' ? 30 : -1;

		if (shift < 0 || p[1]) {
			*bad = shift < 0 ? *p : p[1];
			return -1;
		}
		v <<= shift;
		if (v > UINT32_MAX) {
			*bad = *p;
			return -1;
		}
	}
	*out = v;
	return 0;
}

/* A time with HAProxy's units (default ms). -1 with *bad at fault, -2 on
 * overflow (over 2^31-1 ms). */
static int parse_time_ms(const char *s, size_t len, uint64_t *out, char *bad)
{
	uint64_t v = 0, mult = 1, div = 1;
	size_t i = 0;

	if (!len || s[0] < '0' || s[0] > '9') {
		*bad = len ? s[0] : 0;
		return -1;
	}
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > UINT32_MAX * 1000ull)
			return -2;
	}
	if (i < len) {
		const char *u = s + i;
		size_t ul = len - i;

		if (ul == 2 && !memcmp(u, "us", 2))
			div = 1000;
		else if (ul == 2 && !memcmp(u, "ms", 2))
			mult = 1;
		else if (ul == 1 && *u == 's')
			mult = 1000;
		else if (ul == 1 && *u == 'm')
			mult = 60000;
		else if (ul == 1 && *u == 'h')
			mult = 3600000;
		else if (ul == 1 && *u == 'd')
			mult = 86400000;
		else {
			*bad = *u;
			return -1;
		}
	}
	v = v * mult / div;
	if (v > INT32_MAX)
		return -2;
	*out = v;
	return 0;
}

/* gpc(<n>), gpt(<n>), gpc_rate(<n>,<period>). 0 (stored, or a warning
 * for a repeated one), -1 with a message. */
static int parse_array_item(const char *item, size_t nlen, int dt, struct stkt_conf *c,
                            char *err, size_t errlen)
{
	const char *par = item + nlen, *close, *comma;
	long n;

	if (*par != '(')
		return errmsg_set(err, errlen, "missing argument to store option '%.*s'.",
		                  (int)nlen, item);
	close = strchr(par, ')');
	if (!close)
		return errmsg_set(err, errlen, "missing closing parenthesis after store option "
		                  "'%.*s'.", (int)nlen, item);
	n = atol(par + 1);
	if (n < 1 || n > STKT_MAX_ELEMS)
		return errmsg_set(err, errlen, "array size is out of allowed range (1-%d) for store "
		                  "option '%.*s'.", STKT_MAX_ELEMS, (int)nlen, item);
	comma = memchr(par, ',', (size_t)(close - par));
	if (stkt_dt_defs[dt].kind == STKT_K_FRQ) {
		uint64_t ms;
		char bad;

		if (!comma)
			return errmsg_set(err, errlen, "missing argument to store option '%.*s'.",
			                  (int)nlen, item);
		if (parse_time_ms(comma + 1, (size_t)(close - comma - 1), &ms, &bad) < 0)
			return errmsg_set(err, errlen, "error when processing store option '%.*s'.",
			                  (int)nlen, item);
		if (!c->stored[dt])
			c->period[dt] = (uint32_t)ms;
	}
	if (c->stored[dt]) {
		snprintf(c->warn, sizeof(c->warn), "store option '%.*s' already enabled, ignored.",
		         (int)nlen, item);
		return 1;
	}
	c->nbelem[dt] = (uint32_t)n;
	return 0;
}

/* The arrays replace the legacy data types: both in a table is an error. */
static int check_overrides(const struct stkt_conf *c, char *err, size_t errlen)
{
	if (c->stored[STKT_DT_GPC] && (c->stored[STKT_DT_GPC0] || c->stored[STKT_DT_GPC1]))
		return errmsg_set(err, errlen, "simultaneous usage of 'gpc' and 'gpc[0/1]' in a same "
		                  "table is not permitted as 'gpc' overrides 'gpc[0/1]'.");
	if (c->stored[STKT_DT_GPC_RATE] &&
	    (c->stored[STKT_DT_GPC0_RATE] || c->stored[STKT_DT_GPC1_RATE]))
		return errmsg_set(err, errlen, "simultaneous usage of 'gpc_rate' and "
		                  "'gpc[0/1]_rate' in a same table is not permitted as 'gpc_rate' "
		                  "overrides 'gpc[0/1]_rate'.");
	if (c->stored[STKT_DT_GPT] && c->stored[STKT_DT_GPT0])
		return errmsg_set(err, errlen, "simultaneous usage of 'gpt' and 'gpt0' in a same "
		                  "table is not permitted as 'gpt' overrides 'gpt0'.");
	return 0;
}

/* One item of a store list: "name" or "name(period)". */
static int parse_store_item(const char *item, struct stkt_conf *c, char *err, size_t errlen)
{
	const char *par = strchr(item, '(');
	size_t nlen = par ? (size_t)(par - item) : strlen(item);
	int dt = stkt_dt_lookup(item, nlen);

	if (dt < 0)
		return errmsg_set(err, errlen, "unknown store option '%.*s'.", (int)nlen, item);
	if (stkt_dt_defs[dt].array) {
		int rc = parse_array_item(item, nlen, dt, c, err, errlen);

		if (rc)
			return rc < 0 ? -1 : 0;
	} else if (stkt_dt_defs[dt].kind == STKT_K_FRQ) {
		const char *close;
		uint64_t ms;
		char bad;

		if (!par)
			return errmsg_set(err, errlen, "missing argument to store option '%.*s'.",
			                  (int)nlen, item);
		close = strchr(par, ')');
		if (!close)
			return errmsg_set(err, errlen, "missing closing parenthesis after store "
			                  "option '%.*s'.", (int)nlen, item);
		if (parse_time_ms(par + 1, (size_t)(close - par - 1), &ms, &bad) < 0)
			return errmsg_set(err, errlen, "error when processing store option '%.*s'.",
			                  (int)nlen, item);
		if (c->stored[dt]) {
			snprintf(c->warn, sizeof(c->warn), "store option '%.*s' already enabled, "
			         "ignored.", (int)nlen, item);
			return 0;
		}
		c->period[dt] = (uint32_t)ms;
	} else if (par) {
		return errmsg_set(err, errlen, "unexpected argument to store option '%.*s'.",
		                  (int)nlen, item);
	} else if (c->stored[dt]) {
		snprintf(c->warn, sizeof(c->warn), "store option '%.*s' already enabled, ignored.",
		         (int)nlen, item);
		return 0;
	}
	c->stored[dt] = 1;
	return check_overrides(c, err, errlen);
}

/* A comma-separated list; a trailing comma ends it, an empty item
 * elsewhere is an unknown option, as in HAProxy. */
static int parse_store_list(const char *list, struct stkt_conf *c, char *err, size_t errlen)
{
	char item[128];
	const char *p = list;

	while (*p) {
		const char *comma = p;
		size_t n;
		int depth = 0;

		/* a comma inside parentheses belongs to the item (gpc_rate(2,10s)) */
		for (; *comma && (*comma != ',' || depth); comma++)
			depth += *comma == '(' ? 1 : *comma == ')' && depth ? -1 : 0;
		if (!*comma)
			comma = NULL;
		n = comma ? (size_t)(comma - p) : strlen(p);

		if (n >= sizeof(item))
			return errmsg_set(err, errlen, "unknown store option '%.*s'.", (int)n, p);
		memcpy(item, p, n);
		item[n] = 0;
		if (parse_store_item(item, c, err, errlen) < 0)
			return -1;
		if (!comma)
			break;
		p = comma + 1;
	}
	return 0;
}

static int parse_type(char **args, int nargs, int *i, struct stkt_conf *c, char *err,
                      size_t errlen)
{
	const char *w = *i + 1 < nargs ? args[*i + 1] : "";

	(*i)++;
	c->key_size = 0;
	if (!strcmp(w, "ip")) {
		c->type = STKT_T_IP;
		c->key_size = 4;
	} else if (!strcmp(w, "ipv6")) {
		c->type = STKT_T_IPV6;
		c->key_size = 16;
	} else if (!strcmp(w, "integer")) {
		c->type = STKT_T_INTEGER;
		c->key_size = 4;
	} else if (!strcmp(w, "string") || !strcmp(w, "binary")) {
		c->type = *w == 's' ? STKT_T_STRING : STKT_T_BINARY;
		c->key_size = STKT_DEF_KEYLEN;
		if (*i + 1 < nargs && !strcmp(args[*i + 1], "len")) {
			long len;

			*i += 2;
			w = *i < nargs ? args[*i] : "";
			/* HAProxy reads the length with atol() */
			len = atol(w);
			if (len <= 0 || len > 65535)
				return errmsg_set(err, errlen, "unknown type '%s'.", w);
			c->key_size = (uint32_t)len;
		}
	} else {
		return errmsg_set(err, errlen, "unknown type '%s'.", w);
	}
	return 0;
}

int stktable_parse_args(char **args, int nargs, struct stkt_conf *c, char *err, size_t errlen)
{
	int have_type = 0;

	memset(c, 0, sizeof(*c));
	for (int i = 0; i < nargs; i++) {
		const char *w = args[i];
		const char *next = i + 1 < nargs ? args[i + 1] : NULL;
		uint64_t v;
		char bad = 0;
		int rc;

		if (!strcmp(w, "size")) {
			if (!next || !*next)
				return errmsg_set(err, errlen, "missing argument after 'size'.");
			if (parse_size32(next, &v, &bad) < 0)
				return errmsg_set(err, errlen, "unexpected character '%c' in argument of "
				                  "'size'.", bad);
			c->size = (long)v;
			i++;
		} else if (!strcmp(w, "expire")) {
			if (!next || !*next)
				return errmsg_set(err, errlen, "missing argument after 'expire'.");
			rc = parse_time_ms(next, strlen(next), &v, &bad);
			if (rc == -2)
				return errmsg_set(err, errlen, "timer overflow in argument <%s> to <expire>, "
				                  "maximum value is 2147483647 ms (~24.8 days).", next);
			if (rc < 0)
				return errmsg_set(err, errlen, "unexpected character '%c' in argument of "
				                  "'expire'.", bad);
			c->expire_ms = (int)v;
			i++;
		} else if (!strcmp(w, "nopurge")) {
			c->nopurge = 1;
		} else if (!strcmp(w, "type")) {
			if (parse_type(args, nargs, &i, c, err, errlen) < 0)
				return -1;
			have_type = 1;
		} else if (!strcmp(w, "store")) {
			i++;
			if (next && parse_store_list(next, c, err, errlen) < 0)
				return -1;
		} else if (!strcmp(w, "peers")) {
			if (!next || !*next)
				return errmsg_set(err, errlen, "missing argument after 'peers'.");
			snprintf(c->peers, sizeof(c->peers), "%s", next);
			i++;
		} else if (!strcmp(w, "srvkey")) {
			if (!next || (strcmp(next, "name") && strcmp(next, "addr")))
				return errmsg_set(err, errlen, "'srvkey' expects 'name' or 'addr'.");
			/* server_key holds the server's name (the default) */
			if (!strcmp(next, "addr"))
				return errmsg_set(err, errlen, "'srvkey addr' is not supported by sluice "
				                  "yet (server_key holds the server's name).");
			i++;
		} else {
			return errmsg_set(err, errlen, "unknown argument '%s'.", w);
		}
	}
	if (!c->size)
		return errmsg_set(err, errlen, "missing size.");
	if (!have_type)
		return errmsg_set(err, errlen, "missing type.");
	return 0;
}

static int kw_stick_table(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	struct stkt_conf c;
	struct stktable *t;
	char msg[400];

	if (stktable_parse_args(args + 1, nargs - 1, &c, msg, sizeof(msg)) < 0)
		return errmsg_set(err, errlen, "%s", msg);
	if (c.warn[0])
		cfg_warning(ctx->file, ctx->line, "stick-table: %s", c.warn);
	t = stktable_find(ctx->px->name);
	if (t) {
		struct proxy *other = t->px;

		return errmsg_set(err, errlen, "stick-table name '%s' conflicts with table declared "
		                  "in %s '%s' at %s:%d.", ctx->px->name,
		                  other && (other->cap & PX_CAP_FE) && (other->cap & PX_CAP_BE) ?
		                  "listen" : other && (other->cap & PX_CAP_FE) ? "frontend" :
		                  "backend", t->name, t->file, t->line);
	}
	t = stktable_new(ctx->px->name, ctx->file, ctx->line, ctx->px, &c);
	if (!t)
		return errmsg_set(err, errlen, "out of memory.");
	return 0;
}

/* The sc_* fetches take an optional table: without it, the tracked entry's
 * own table is read. */
static int is_sc_fetch(const char *kw)
{
	return !strncmp(kw, "sc_", 3) || (!strncmp(kw, "sc", 2) && kw[2] >= '0' &&
	                                  kw[2] <= '2' && kw[3] == '_');
}

int stktable_resolve_arg(struct smp_arg *a, int i, const char *kw, int conv,
                         const struct smp_origin *o)
{
	struct proxy *px = o->px;
	const char *name = a->text && *a->text ? a->text : NULL;

	if (!name) {
		if (is_sc_fetch(kw) && !conv)
			return 0;
		if (!px)
			return 0;   /* no origin (unit tests): found at run time, never */
		name = px->name;
	}
	a->resolved = stktable_find(name);
	if (a->resolved)
		return 0;
	cfg_alert(o->file, o->line, "unable to find table '%s' referenced in arg %d of %s "
	          "keyword '%s'%s%s%s.", name, i + 1, conv ? "conversion" : "sample fetch", kw,
	          px ? " in proxy '" : "", px ? px->name : "", px ? "'" : "");
	return 1;
}
