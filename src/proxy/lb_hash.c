/* Hash-based balancing: request keys, hash-type settings, and the
 * configuration of `balance uri|url_param|hdr()` (see lb_hash.h).
 *
 * Concurrency: the settings table grows only while the configuration is
 * parsed (one thread); its entries never move (they are allocated one by
 * one), so run-time readers on any thread use them without lock. Key
 * extraction is pure: it reads the request and the backend's settings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/cfg/cfg.h>
#include <sluice/expr/hash.h>
#include <sluice/http/msgedit.h>
#include <sluice/proxy/lb_hash.h>
#include <sluice/proxy/proxy.h>

static struct lb_hash_ent **ents;
static int nents;

/* ---- settings ---- */

struct lb_hash_ent *lb_hash_ent(const struct proxy *px, int create)
{
	struct lb_hash_ent **grown, *e;

	for (int i = 0; i < nents; i++)
		if (ents[i]->px == px)
			return ents[i];
	if (!create)
		return NULL;
	e = calloc(1, sizeof(*e));
	grown = realloc(ents, (size_t)(nents + 1) * sizeof(*ents));
	if (!e || !grown) {
		free(e);
		if (grown)
			ents = grown;
		return NULL;
	}
	ents = grown;
	e->px = px;
	ents[nents++] = e;
	return e;
}

void lb_hash_forget(const struct proxy *px)
{
	for (int i = 0; i < nents; i++) {
		if (ents[i]->px != px)
			continue;
		lb_chash_free(ents[i]->ring);
		free(ents[i]);
		ents[i] = ents[--nents];
		return;
	}
}

void lb_hash_free_all(void)
{
	while (nents)
		lb_hash_forget(ents[nents - 1]->px);
	free(ents);
	ents = NULL;
}

int lb_hash_conf_set(const struct proxy *px, enum lb_hash_fn fn, int avalanche)
{
	struct lb_hash_ent *e = lb_hash_ent(px, 1);

	if (!e)
		return -1;
	e->conf.fn = fn;
	e->conf.avalanche = avalanche;
	return 0;
}

int lb_hash_conf_inherit(const struct proxy *px, const struct proxy *def)
{
	const struct lb_hash_ent *d = lb_hash_ent(def, 0);

	if (!d)
		return 0;
	return lb_hash_conf_set(px, d->conf.fn, d->conf.avalanche);
}

void lb_hash_conf_get(const struct proxy *px, struct lb_hash_conf *out)
{
	const struct lb_hash_ent *e = lb_hash_ent(px, 0);

	if (e) {
		*out = e->conf;
		return;
	}
	out->fn = LB_HFN_SDBM;
	out->avalanche = 0;
}

uint32_t lb_hash_finish(const struct proxy *be, uint32_t h)
{
	struct lb_hash_conf c;

	lb_hash_conf_get(be, &c);
	return c.avalanche ? hash_avalanche(h) : h;
}

uint32_t lb_hash_bytes(const struct proxy *be, const void *p, size_t len)
{
	struct lb_hash_conf c;
	uint32_t h;

	lb_hash_conf_get(be, &c);
	switch (c.fn) {
	case LB_HFN_DJB2:  h = hash_djb2(p, len); break;
	case LB_HFN_WT6:   h = hash_wt6(p, len); break;
	case LB_HFN_CRC32: h = hash_crc32(p, len); break;
	default:           h = hash_sdbm(p, len); break;
	}
	return c.avalanche ? hash_avalanche(h) : h;
}

/* ---- request keys ---- */

/* balance uri: see lb_hash.h for the rules. */
static struct ist uri_key(const struct proxy *be, struct ist uri)
{
	const char *p = uri.ptr, *end;
	size_t len = uri.len;
	int slashes = 0;

	if (be->lb_uri_path_only) {
		struct ist path = http_uri_path(uri);

		/* from the path on, the query included: `whole` decides on it */
		p = path.ptr ? path.ptr : uri.ptr + uri.len;
		len = (size_t)(uri.ptr + uri.len - p);
	}
	if (be->lb_uri_len > 0 && len > (size_t)be->lb_uri_len)
		len = (size_t)be->lb_uri_len;
	for (end = p; end < p + len; end++) {
		if (*end == '/') {
			/* depth N keeps N levels: stop at the slash starting level N + 1 */
			if (be->lb_uri_depth > 0 && ++slashes == be->lb_uri_depth + 1)
				break;
		} else if (*end == '?' && !be->lb_uri_whole) {
			break;
		}
	}
	return (struct ist){ p, (size_t)(end - p) };
}

/* balance url_param: the value of the first "<name>=" of the query. */
static int url_param_key(const struct proxy *be, struct ist uri, struct ist *val)
{
	struct ist q = http_uri_query(uri);
	size_t nlen = be->lb_arg ? strlen(be->lb_arg) : 0;
	const char *p, *end;

	if (!q.ptr || !nlen)
		return 0;
	for (p = q.ptr, end = q.ptr + q.len; p < end; ) {
		const char *amp = memchr(p, '&', (size_t)(end - p));
		const char *seg_end = amp ? amp : end;

		if ((size_t)(seg_end - p) > nlen && p[nlen] == '=' && memcmp(p, be->lb_arg, nlen) == 0) {
			*val = (struct ist){ p + nlen + 1, (size_t)(seg_end - p - nlen - 1) };
			return 1;
		}
		if (!amp)
			break;
		p = amp + 1;
	}
	return 0;
}

/* use_domain_only: the label before the last dot ("www.example.com" ->
 * "example"); the whole value without a dot. As in HAProxy, a dot in the
 * first position does not count. */
static struct ist domain_only(struct ist v)
{
	const char *b = v.ptr, *q, *dot = NULL;

	for (q = v.ptr + v.len - 1; q > b; q--) {
		if (*q == '.') {
			dot = q;
			break;
		}
	}
	if (!dot)
		return v;
	for (q = dot; q > b && q[-1] != '.'; q--)
		;
	return (struct ist){ q, (size_t)(dot - q) };
}

/* balance hdr(<name>): the first value of the field, if not empty. */
static int hdr_key(const struct proxy *be, const struct http_msg *req, struct ist *val)
{
	struct ist v;

	if (!be->lb_arg)
		return 0;
	if (!http_hdr_occ(req, (struct ist){ be->lb_arg, strlen(be->lb_arg) }, 1, 1, &v) || !v.len)
		return 0;
	*val = be->lb_hdr_domain ? domain_only(v) : v;
	return 1;
}

int lb_hash_request(const struct proxy *be, const struct http_msg *req, uint32_t *key)
{
	struct ist k;

	switch (be->lb_algo) {
	case LB_URI:
		k = uri_key(be, req->uri);
		break;
	case LB_URL_PARAM:
		if (!url_param_key(be, req->uri, &k))
			return 0;
		break;
	case LB_HDR:
		if (!hdr_key(be, req, &k))
			return 0;
		break;
	default:
		return 0;
	}
	*key = lb_hash_bytes(be, k.ptr, k.len);
	return 1;
}

/* ---- configuration: balance uri|url_param|hdr() ---- */

/* A positive integer, as `len` and `depth` take. */
static int positive_int(const char *s, int *out)
{
	char *end;
	long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	v = strtol(s, &end, 10);
	if (*end || v <= 0 || v > 1000000000)
		return -1;
	*out = (int)v;
	return 0;
}

static int balance_uri(struct proxy *px, char **args, int nargs, char *err, size_t errlen)
{
	px->lb_uri_len = px->lb_uri_depth = px->lb_uri_whole = px->lb_uri_path_only = 0;
	for (int i = 2; i < nargs; i++) {
		if (strcmp(args[i], "whole") == 0) {
			px->lb_uri_whole = 1;
		} else if (strcmp(args[i], "path-only") == 0) {
			px->lb_uri_path_only = 1;
		} else if (strcmp(args[i], "len") == 0 || strcmp(args[i], "depth") == 0) {
			int *f = args[i][0] == 'l' ? &px->lb_uri_len : &px->lb_uri_depth;

			if (positive_int(i + 1 < nargs ? args[i + 1] : NULL, f) < 0) {
				snprintf(err, errlen, "uri : '%s' expects a positive integer (got '%s').",
				         args[i], i + 1 < nargs ? args[i + 1] : "");
				return -1;
			}
			i++;
		} else {
			snprintf(err, errlen, "uri only accepts parameters 'len', 'depth', 'path-only', "
			         "and 'whole' (got '%s').", args[i]);
			return -1;
		}
	}
	px->lb_algo = LB_URI;
	return 1;
}

static int balance_url_param(struct cfg_ctx *ctx, char **args, int nargs, char *err,
                             size_t errlen)
{
	struct proxy *px = ctx->px;
	int i = 3;

	if (nargs < 3 || !*args[2]) {
		snprintf(err, errlen, "url_param requires an URL parameter name.");
		return -1;
	}
	if (i < nargs && strcmp(args[i], "check_post") == 0) {
		/* the body is not searched: say so rather than ignore it */
		cfg_warning(ctx->file, ctx->line, "'balance url_param %s check_post': sluice does "
		            "not look for the parameter in request bodies yet, only in the "
		            "query string.", args[2]);
		i++;
		if (i < nargs && args[i][0] >= '0' && args[i][0] <= '9')
			i++;     /* <max_wait>: ignored by HAProxy too */
	}
	if (i < nargs) {
		snprintf(err, errlen, "url_param only accepts 'check_post' modifier (got '%s').",
		         args[i]);
		return -1;
	}
	free(px->lb_arg);
	px->lb_arg = strdup(args[2]);
	if (!px->lb_arg) {
		snprintf(err, errlen, "out of memory.");
		return -1;
	}
	px->lb_algo = LB_URL_PARAM;
	return 1;
}

static int balance_hdr(struct proxy *px, char **args, int nargs, char *err, size_t errlen)
{
	const char *name = args[1] + 4;
	size_t len = strlen(name);

	if (len < 2 || name[len - 1] != ')') {
		snprintf(err, errlen, "hdr requires an http header field name.");
		return -1;
	}
	if (nargs > 2 && (nargs > 3 || strcmp(args[2], "use_domain_only") != 0)) {
		snprintf(err, errlen, "%s only accepts 'use_domain_only' modifier (got '%s').",
		         args[1], args[nargs > 3 && strcmp(args[2], "use_domain_only") == 0 ? 3 : 2]);
		return -1;
	}
	free(px->lb_arg);
	px->lb_arg = strndup(name, len - 1);
	if (!px->lb_arg) {
		snprintf(err, errlen, "out of memory.");
		return -1;
	}
	px->lb_hdr_domain = nargs > 2;
	px->lb_algo = LB_HDR;
	return 1;
}

int lb_hash_cfg_balance(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen)
{
	if (strcmp(args[1], "uri") == 0)
		return balance_uri(ctx->px, args, nargs, err, errlen);
	if (strcmp(args[1], "url_param") == 0)
		return balance_url_param(ctx, args, nargs, err, errlen);
	if (strncmp(args[1], "hdr(", 4) == 0)
		return balance_hdr(ctx->px, args, nargs, err, errlen);
	if (strcmp(args[1], "hdr") == 0) {
		snprintf(err, errlen, "hdr requires an http header field name.");
		return -1;
	}
	return 0;
}
