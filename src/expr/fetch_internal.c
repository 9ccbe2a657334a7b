/* Sample fetches that do not read HTTP messages: constants, internal state,
 * environment, time and randomness, connection addresses (layer 4), proxy
 * and server names and figures, and the raw request buffer (layer 6).
 * Manual sections 7.3.2, 7.3.3, 7.3.5.
 *
 * Everything about streams, proxies and servers comes through the context's
 * accessors (struct smp_ops); without an accessor the fetch fails.
 * No shared state.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <sluice/core/errmsg.h>
#include <sluice/core/global.h>
#include <sluice/expr/sample.h>
#include <sluice/net/conn_err.h>
#include <sluice/core/hexdigit.h>

const int expr_fetch_internal_anchor;

#define F(name) static int smp_fetch_##name(const struct smp_args *args, \
	struct sample *smp, struct smp_ctx *ctx)

F(str); F(int); F(bool); F(ipv4); F(ipv6); F(bin); F(meth);
F(true); F(false); F(env); F(date); F(rand); F(uuid); F(thread); F(proc);
F(stopping); F(hostname); F(wait_end); F(src); F(dst); F(src_port);
F(dst_port); F(fe_name); F(be_name); F(srv_name); F(so_name); F(fe_id);
F(be_id); F(srv_id); F(so_id); F(nbsrv); F(be_conn); F(queue); F(avg_queue);
F(connslots); F(srv_conn); F(srv_queue); F(srv_is_up); F(unique_id);
F(txn_id); F(fc_err); F(fc_err_str); F(req_len); F(payload); F(rdp_cookie); F(rdp_cookie_cnt);
#undef F

static int check_bool(struct smp_args *args, char *err, size_t errlen);
static int check_bin(struct smp_args *args, char *err, size_t errlen);
static int check_meth(struct smp_args *args, char *err, size_t errlen);
static int check_date(struct smp_args *args, char *err, size_t errlen);
static int check_uuid(struct smp_args *args, char *err, size_t errlen);
static int check_srv(struct smp_args *args, char *err, size_t errlen);
static int check_payload(struct smp_args *args, char *err, size_t errlen);

static const struct smp_fetch_kw internal_fetches[] = {
	/* constants and internal state (7.3.2) */
	{ "always_false", smp_fetch_false, { 0 }, 0, NULL, SMP_T_BOOL, SMP_USE_INTRN },
	{ "always_true",  smp_fetch_true,  { 0 }, 0, NULL, SMP_T_BOOL, SMP_USE_INTRN },
	{ "str",   smp_fetch_str,   { ARGT_STR }, 1, NULL, SMP_T_STR, SMP_USE_INTRN },
	{ "int",   smp_fetch_int,   { ARGT_SINT }, 1, NULL, SMP_T_SINT, SMP_USE_INTRN },
	{ "bool",  smp_fetch_bool,  { ARGT_STR }, 1, check_bool, SMP_T_BOOL, SMP_USE_INTRN },
	{ "ipv4",  smp_fetch_ipv4,  { ARGT_IPV4 }, 1, NULL, SMP_T_IPV4, SMP_USE_INTRN },
	{ "ipv6",  smp_fetch_ipv6,  { ARGT_IPV6 }, 1, NULL, SMP_T_IPV6, SMP_USE_INTRN },
	{ "bin",   smp_fetch_bin,   { ARGT_STR }, 1, check_bin, SMP_T_BIN, SMP_USE_INTRN },
	{ "meth",  smp_fetch_meth,  { ARGT_STR }, 1, check_meth, SMP_T_METH, SMP_USE_INTRN },
	{ "env",   smp_fetch_env,   { ARGT_STR }, 1, NULL, SMP_T_STR, SMP_USE_INTRN },
	{ "date",  smp_fetch_date,  { ARGT_SINT, ARGT_STR }, 0, check_date, SMP_T_SINT, SMP_USE_INTRN },
	{ "rand",  smp_fetch_rand,  { ARGT_SINT }, 0, NULL, SMP_T_SINT, SMP_USE_INTRN },
	{ "uuid",  smp_fetch_uuid,  { ARGT_SINT }, 0, check_uuid, SMP_T_STR, SMP_USE_INTRN },
	{ "thread", smp_fetch_thread, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_INTRN },
	{ "proc",  smp_fetch_proc,  { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_INTRN },
	{ "stopping", smp_fetch_stopping, { 0 }, 0, NULL, SMP_T_BOOL, SMP_USE_INTRN },
	{ "hostname", smp_fetch_hostname, { 0 }, 0, NULL, SMP_T_STR, SMP_USE_INTRN },
	{ "wait_end", smp_fetch_wait_end, { 0 }, 0, NULL, SMP_T_BOOL, SMP_USE_INTRN },
	{ "nbsrv", smp_fetch_nbsrv, { ARGT_BE }, 0, NULL, SMP_T_SINT, SMP_USE_INTRN },
	{ "be_conn", smp_fetch_be_conn, { ARGT_BE }, 0, NULL, SMP_T_SINT, SMP_USE_INTRN },
	{ "queue", smp_fetch_queue, { ARGT_BE }, 0, NULL, SMP_T_SINT, SMP_USE_INTRN },
	{ "avg_queue", smp_fetch_avg_queue, { ARGT_BE }, 0, NULL, SMP_T_SINT, SMP_USE_INTRN },
	{ "connslots", smp_fetch_connslots, { ARGT_BE }, 0, NULL, SMP_T_SINT, SMP_USE_INTRN },
	{ "srv_conn", smp_fetch_srv_conn, { ARGT_SRV }, 1, check_srv, SMP_T_SINT, SMP_USE_INTRN },
	{ "srv_queue", smp_fetch_srv_queue, { ARGT_SRV }, 1, check_srv, SMP_T_SINT, SMP_USE_INTRN },
	{ "srv_is_up", smp_fetch_srv_is_up, { ARGT_SRV }, 1, check_srv, SMP_T_BOOL, SMP_USE_INTRN },
	/* accepted everywhere, as in HAProxy: no value before a transaction */
	{ "unique-id", smp_fetch_unique_id, { 0 }, 0, NULL, SMP_T_STR, SMP_USE_INTRN },
	{ "txn.id", smp_fetch_txn_id, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_TXN },
	/* layer 4 (7.3.3) */
	{ "src",      smp_fetch_src,      { 0 }, 0, NULL, SMP_T_ADDR, SMP_USE_L4CLI },
	{ "dst",      smp_fetch_dst,      { 0 }, 0, NULL, SMP_T_ADDR, SMP_USE_L4CLI },
	{ "src_port", smp_fetch_src_port, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_L4CLI },
	{ "dst_port", smp_fetch_dst_port, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_L4CLI },
	{ "fc_err",   smp_fetch_fc_err,   { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_L4CLI },
	{ "fc_err_str", smp_fetch_fc_err_str, { 0 }, 0, NULL, SMP_T_STR, SMP_USE_L4CLI },
	{ "fe_name",  smp_fetch_fe_name,  { 0 }, 0, NULL, SMP_T_STR, SMP_USE_L5 },
	{ "fe_id",    smp_fetch_fe_id,    { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_L5 },
	{ "so_name",  smp_fetch_so_name,  { 0 }, 0, NULL, SMP_T_STR, SMP_USE_L5 },
	{ "so_id",    smp_fetch_so_id,    { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_L5 },
	{ "be_name",  smp_fetch_be_name,  { 0 }, 0, NULL, SMP_T_STR, SMP_USE_BE },
	{ "be_id",    smp_fetch_be_id,    { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_BE },
	{ "srv_name", smp_fetch_srv_name, { 0 }, 0, NULL, SMP_T_STR, SMP_USE_SRV },
	{ "srv_id",   smp_fetch_srv_id,   { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_SRV },
	/* layer 6 (7.3.5) */
	{ "req.len",  smp_fetch_req_len,  { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_L6REQ },
	{ "req_len",  smp_fetch_req_len,  { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_L6REQ },
	{ "req.payload", smp_fetch_payload, { ARGT_SINT, ARGT_SINT }, 2, check_payload, SMP_T_BIN, SMP_USE_L6REQ },
	{ "req.rdp_cookie", smp_fetch_rdp_cookie, { ARGT_STR }, 0, NULL, SMP_T_STR, SMP_USE_L6REQ },
	{ "req.rdp_cookie_cnt", smp_fetch_rdp_cookie_cnt, { ARGT_STR }, 0, NULL, SMP_T_SINT, SMP_USE_L6REQ },
	{ NULL }
};
SMP_REGISTER_FETCHES(internal_fetches)

static int smp_fetch_addr_kw(const struct smp_args *, struct sample *, struct smp_ctx *);
static int smp_fetch_port_kw(const struct smp_args *, struct sample *, struct smp_ctx *);
static int smp_fetch_is_local(const struct smp_args *, struct sample *, struct smp_ctx *);
static int smp_fetch_be_conn_free(const struct smp_args *, struct sample *, struct smp_ctx *);
static int smp_fetch_srv_kw(const struct smp_args *, struct sample *, struct smp_ctx *);
static int smp_fetch_be_kw(const struct smp_args *, struct sample *, struct smp_ctx *);
static int smp_fetch_fe_kw(const struct smp_args *, struct sample *, struct smp_ctx *);
static int smp_fetch_stream_int(const struct smp_args *, struct sample *, struct smp_ctx *);
static int smp_fetch_date_us(const struct smp_args *, struct sample *, struct smp_ctx *);
static int smp_fetch_fe_defbe(const struct smp_args *, struct sample *, struct smp_ctx *);

#define P(v) ((const void *)(intptr_t)(v))

/* Connection addresses under their HAProxy 2.6 names (fc_*: the client
 * connection, bc_*: the server connection), server figures, and integer
 * facts of the stream; <priv> says which. */
static const struct smp_fetch_kw conn_fetches[] = {
	{ "fc_src",      smp_fetch_addr_kw, { 0 }, 0, NULL, SMP_T_ADDR, SMP_USE_L4CLI, P(SMP_ADDR_CLI_SRC) },
	{ "fc_dst",      smp_fetch_addr_kw, { 0 }, 0, NULL, SMP_T_ADDR, SMP_USE_L4CLI, P(SMP_ADDR_CLI_DST) },
	{ "fc_src_port", smp_fetch_port_kw, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_L4CLI, P(SMP_ADDR_CLI_SRC) },
	{ "fc_dst_port", smp_fetch_port_kw, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_L4CLI, P(SMP_ADDR_CLI_DST) },
	{ "bc_src",      smp_fetch_addr_kw, { 0 }, 0, NULL, SMP_T_ADDR, SMP_USE_SRV, P(SMP_ADDR_SRV_SRC) },
	{ "bc_dst",      smp_fetch_addr_kw, { 0 }, 0, NULL, SMP_T_ADDR, SMP_USE_SRV, P(SMP_ADDR_SRV_DST) },
	{ "bc_src_port", smp_fetch_port_kw, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_SRV, P(SMP_ADDR_SRV_SRC) },
	{ "bc_dst_port", smp_fetch_port_kw, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_SRV, P(SMP_ADDR_SRV_DST) },
	{ "src_is_local",    smp_fetch_is_local, { 0 }, 0, NULL, SMP_T_BOOL, SMP_USE_L4CLI, P(SMP_ADDR_CLI_SRC) },
	{ "fc_src_is_local", smp_fetch_is_local, { 0 }, 0, NULL, SMP_T_BOOL, SMP_USE_L4CLI, P(SMP_ADDR_CLI_SRC) },
	{ "dst_is_local",    smp_fetch_is_local, { 0 }, 0, NULL, SMP_T_BOOL, SMP_USE_L4CLI, P(SMP_ADDR_CLI_DST) },
	{ "fc_dst_is_local", smp_fetch_is_local, { 0 }, 0, NULL, SMP_T_BOOL, SMP_USE_L4CLI, P(SMP_ADDR_CLI_DST) },
	{ "be_conn_free", smp_fetch_be_conn_free, { ARGT_BE }, 0, NULL, SMP_T_SINT, SMP_USE_INTRN },
	{ "be_sess_rate", smp_fetch_be_kw, { ARGT_BE }, 0, NULL, SMP_T_SINT, SMP_USE_INTRN, P(SMP_BE_SESS_RATE) },
	{ "fe_conn",      smp_fetch_fe_kw, { ARGT_FE }, 0, NULL, SMP_T_SINT, SMP_USE_INTRN, P(SMP_FE_CONN) },
	{ "fe_req_rate",  smp_fetch_fe_kw, { ARGT_FE }, 0, NULL, SMP_T_SINT, SMP_USE_INTRN, P(SMP_FE_REQ_RATE) },
	{ "fe_sess_rate", smp_fetch_fe_kw, { ARGT_FE }, 0, NULL, SMP_T_SINT, SMP_USE_INTRN, P(SMP_FE_SESS_RATE) },
	{ "srv_sess_rate", smp_fetch_srv_kw, { ARGT_SRV }, 1, check_srv, SMP_T_SINT, SMP_USE_INTRN, P(SMP_SRV_SESS_RATE) },
	{ "srv_conn_free", smp_fetch_srv_kw, { ARGT_SRV }, 1, check_srv, SMP_T_SINT, SMP_USE_INTRN, P(SMP_SRV_CONN_FREE) },
	{ "srv_weight",  smp_fetch_srv_kw, { ARGT_SRV }, 1, check_srv, SMP_T_SINT, SMP_USE_INTRN, P(SMP_SRV_WEIGHT) },
	{ "srv_iweight", smp_fetch_srv_kw, { ARGT_SRV }, 1, check_srv, SMP_T_SINT, SMP_USE_INTRN, P(SMP_SRV_IWEIGHT) },
	{ "srv_uweight", smp_fetch_srv_kw, { ARGT_SRV }, 1, check_srv, SMP_T_SINT, SMP_USE_INTRN, P(SMP_SRV_UWEIGHT) },
	{ "dst_conn",    smp_fetch_stream_int, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_L4CLI, P(SMP_SI_DST_CONN) },
	{ "fe_client_timeout", smp_fetch_stream_int, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_L5, P(SMP_SI_FE_CLIENT_TIMEOUT) },
	{ "be_server_timeout", smp_fetch_stream_int, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_BE, P(SMP_SI_BE_SERVER_TIMEOUT) },
	{ "be_tunnel_timeout", smp_fetch_stream_int, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_BE, P(SMP_SI_BE_TUNNEL_TIMEOUT) },
	{ "cur_server_timeout", smp_fetch_stream_int, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_BE, P(SMP_SI_CUR_SERVER_TIMEOUT) },
	{ "cur_tunnel_timeout", smp_fetch_stream_int, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_BE, P(SMP_SI_CUR_TUNNEL_TIMEOUT) },
	{ "prio_class",  smp_fetch_stream_int, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_INTRN, P(SMP_SI_PRIO_CLASS) },
	{ "prio_offset", smp_fetch_stream_int, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_INTRN, P(SMP_SI_PRIO_OFFSET) },
	{ "fc_http_major", smp_fetch_stream_int, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_L4CLI, P(SMP_SI_FC_HTTP_MAJOR) },
	{ "bc_http_major", smp_fetch_stream_int, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_SRV, P(SMP_SI_BC_HTTP_MAJOR) },
	{ "date_us",     smp_fetch_date_us, { 0 }, 0, NULL, SMP_T_SINT, SMP_USE_INTRN },
	{ "fe_defbe",    smp_fetch_fe_defbe, { 0 }, 0, NULL, SMP_T_STR, SMP_USE_L5 },
	{ NULL }
};
SMP_REGISTER_FETCHES(conn_fetches)

static int smp_conv_nbsrv(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx);
static int smp_conv_srv_queue(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx);

/* converters that look proxies and servers up by a dynamic name */
static const struct smp_conv_kw internal_convs[] = {
	{ "nbsrv",     smp_conv_nbsrv,     { 0 }, 0, NULL, SMP_T_STR, SMP_T_SINT },
	{ "srv_queue", smp_conv_srv_queue, { 0 }, 0, NULL, SMP_T_STR, SMP_T_SINT },
	{ NULL }
};
SMP_REGISTER_CONVS(internal_convs)

/* ------------------------------------------------------------------ constants */

static int smp_fetch_str(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_const_str(smp, SMP_T_STR, args->a[0].data.str.ptr, args->a[0].data.str.len);
	return 1;
}

static int smp_fetch_int(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_sint(smp, args->a[0].data.sint);
	return 1;
}

static int check_bool(struct smp_args *args, char *err, size_t errlen)
{
	const char *s = args->a[0].text;

	if (strcmp(s, "true") == 0 || strcmp(s, "1") == 0)
		args->priv = (void *)1;
	else if (strcmp(s, "false") == 0 || strcmp(s, "0") == 0)
		args->priv = NULL;
	else
		return errmsg_set(err, errlen, "'%s' is not a boolean (true, false, 1, 0)", s);
	return 0;
}

static int smp_fetch_bool(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_bool(smp, args->priv != NULL);
	return 1;
}

static int smp_fetch_ipv4(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp->type = SMP_T_IPV4;
	smp->data.ipv4 = args->a[0].data.ipv4;
	return 1;
}

static int smp_fetch_ipv6(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp->type = SMP_T_IPV6;
	smp->data.ipv6 = args->a[0].data.ipv6;
	return 1;
}

struct bin_const {
	size_t len;
	unsigned char data[];
};

static int check_bin(struct smp_args *args, char *err, size_t errlen)
{
	const char *s = args->a[0].text;
	size_t len = strlen(s);
	struct bin_const *b;

	if (len % 2)
		return errmsg_set(err, errlen, "'%s': an even number of hex digits is expected", s);
	b = malloc(sizeof(*b) + len / 2 + 1);
	if (!b)
		return errmsg_set(err, errlen, "out of memory");
	for (size_t i = 0; i < len; i += 2) {
		int h = hex_digit_value(s[i]), l = hex_digit_value(s[i + 1]);

		if (h < 0 || l < 0) {
			free(b);
			return errmsg_set(err, errlen, "'%s': invalid hex digit at position %zu",
			                  s, (h < 0 ? i : i + 1) + 1);
		}
		b->data[i / 2] = (unsigned char)(h << 4 | l);
	}
	b->len = len / 2;
	args->priv = b;
	args->free_priv = free;
	return 0;
}

static int smp_fetch_bin(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct bin_const *b = args->priv;

	smp_set_const_str(smp, SMP_T_BIN, (const char *)b->data, b->len);
	return 1;
}

static int check_meth(struct smp_args *args, char *err, size_t errlen)
{
	if (!args->a[0].data.str.len)
		return errmsg_set(err, errlen, "empty method");
	return 0;
}

static int smp_fetch_meth(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct smp_arg *a = &args->a[0];

	smp->type = SMP_T_METH;
	smp->flags |= SMP_F_CONST;
	smp->data.meth.meth = (enum http_meth)smp_meth_from_str(a->data.str.ptr, a->data.str.len);
	smp->data.meth.str.ptr = a->data.str.ptr;
	smp->data.meth.str.len = a->data.str.len;
	smp->data.meth.str.size = 0;
	return 1;
}

static int smp_fetch_true(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_bool(smp, 1);
	return 1;
}

static int smp_fetch_false(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_bool(smp, 0);
	return 1;
}

/* ------------------------------------------------------------------ environment */

static int smp_fetch_env(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const char *v = getenv(args->a[0].data.str.ptr);

	if (!v)
		return 0;
	smp_set_const_str(smp, SMP_T_STR, v, strlen(v));
	return 1;
}

static int64_t now_us(const struct smp_ctx *ctx)
{
	struct timeval tv;

	if (ctx->now_us)
		return ctx->now_us;
	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

/* priv: 1 (s), 1000 (ms) or 1000000 (us) units per second */
static int check_date(struct smp_args *args, char *err, size_t errlen)
{
	intptr_t unit = 1;

	if (args->n > 1 && args->a[1].type != ARGT_STOP) {
		if (smp_parse_time_unit(args->a[1].text, &unit, err, errlen) < 0)
			return -1;
	}
	args->priv = (void *)unit;
	return 0;
}

static int smp_fetch_date(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	int64_t unit = (intptr_t)args->priv, us = now_us(ctx), v;

	if (!unit)
		unit = 1;
	v = unit == 1 ? us / 1000000 : unit == 1000 ? us / 1000 : us;
	if (args->n > 0 && args->a[0].type == ARGT_SINT)
		v += args->a[0].data.sint;
	smp_set_sint(smp, v);
	return 1;
}

static int smp_fetch_rand(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	uint64_t r = smp_random64() & 0xffffffffu;

	/* <range> values from 0: scale a 32-bit random number */
	if (args->n > 0 && args->a[0].type == ARGT_SINT)
		r = (uint64_t)(((unsigned __int128)r * (uint64_t)args->a[0].data.sint) >> 32);
	smp_set_sint(smp, (int64_t)r);
	return 1;
}

static int check_uuid(struct smp_args *args, char *err, size_t errlen)
{
	if (args->n > 0 && args->a[0].type == ARGT_SINT && args->a[0].data.sint != 4)
		return errmsg_set(err, errlen, "unsupported UUID version %lld (only 4)",
		                  (long long)args->a[0].data.sint);
	return 0;
}

static int smp_fetch_uuid(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	uint64_t a = smp_random64(), b = smp_random64();
	unsigned char u[16];

	for (int i = 0; i < 8; i++) {
		u[i] = (unsigned char)(a >> (8 * i));
		u[8 + i] = (unsigned char)(b >> (8 * i));
	}
	u[6] = (u[6] & 0x0f) | 0x40;      /* version 4 (RFC 4122 section 4.4) */
	u[8] = (u[8] & 0x3f) | 0x80;      /* variant 10 */
	smp_set_trash(smp, SMP_T_STR);
	smp->data.str.len = (size_t)snprintf(smp->data.str.ptr, smp->data.str.size,
		"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
		u[12], u[13], u[14], u[15]);
	return 1;
}

static int smp_fetch_thread(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_sint(smp, ctx->thread);
	return 1;
}

static int smp_fetch_proc(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_sint(smp, 1);
	return 1;
}

static int smp_fetch_stopping(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_bool(smp, atomic_load(&global.stopping));
	return 1;
}

static int smp_fetch_hostname(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_trash(smp, SMP_T_STR);
	if (gethostname(smp->data.str.ptr, smp->data.str.size - 1) < 0)
		return 0;
	smp->data.str.ptr[smp->data.str.size - 1] = '\0';
	smp->data.str.len = strlen(smp->data.str.ptr);
	return 1;
}

/* True only once no more data will come: makes an ACL wait (miss) until the
 * end of the inspection delay. */
static int smp_fetch_wait_end(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	if (!(smp->opt & SMP_OPT_FINAL)) {
		smp->flags |= SMP_F_MAY_CHANGE;
		return 0;
	}
	smp_set_bool(smp, 1);
	return 1;
}

/* ------------------------------------------------------------------ layer 4 */

static int fetch_addr(struct sample *smp, struct smp_ctx *ctx, enum smp_addr_kind k)
{
	struct sockaddr_storage ss;

	if (!ctx->ops || !ctx->ops->addr || !ctx->ops->addr(ctx, k, &ss))
		return 0;
	if (ss.ss_family == AF_INET) {
		smp->type = SMP_T_IPV4;
		smp->data.ipv4 = ((struct sockaddr_in *)&ss)->sin_addr;
	} else if (ss.ss_family == AF_INET6) {
		smp->type = SMP_T_IPV6;
		smp->data.ipv6 = ((struct sockaddr_in6 *)&ss)->sin6_addr;
	} else
		return 0;
	return 1;
}

static int fetch_port(struct sample *smp, struct smp_ctx *ctx, enum smp_addr_kind k)
{
	struct sockaddr_storage ss;

	if (!ctx->ops || !ctx->ops->addr || !ctx->ops->addr(ctx, k, &ss))
		return 0;
	if (ss.ss_family == AF_INET)
		smp_set_sint(smp, ntohs(((struct sockaddr_in *)&ss)->sin_port));
	else if (ss.ss_family == AF_INET6)
		smp_set_sint(smp, ntohs(((struct sockaddr_in6 *)&ss)->sin6_port));
	else
		return 0;
	return 1;
}

static int smp_fetch_src(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_addr(smp, ctx, SMP_ADDR_CLI_SRC);
}

static int smp_fetch_dst(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_addr(smp, ctx, SMP_ADDR_CLI_DST);
}

static int smp_fetch_src_port(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_port(smp, ctx, SMP_ADDR_CLI_SRC);
}

static int smp_fetch_dst_port(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_port(smp, ctx, SMP_ADDR_CLI_DST);
}

/* fc_err, fc_err_str: HAProxy's code of a connection that failed before a
 * session existed (PROXY header, TLS handshake...). sluice makes no stream
 * (no sample context) for those: a stream's connection has none, 0,
 * "Success" (CO_ER_NONE's text). */
/* The error of the client connection (HAProxy's codes, conn_err.h): set
 * when its PROXY header or its TLS handshake failed, seen by the error log
 * (error-log-format); 0 otherwise. */
static int fc_err_code(struct smp_ctx *ctx, int64_t *code)
{
	*code = 0;
	if (ctx->ops && ctx->ops->stream_int && !ctx->ops->stream_int(ctx, SMP_SI_FC_ERR, code))
		*code = 0;
	return 1;
}

static int smp_fetch_fc_err(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	int64_t code;

	fc_err_code(ctx, &code);
	smp_set_sint(smp, code);
	return 1;
}

static int smp_fetch_fc_err_str(const struct smp_args *args, struct sample *smp,
                                struct smp_ctx *ctx)
{
	int64_t code;
	const char *m;

	fc_err_code(ctx, &code);
	m = conn_err_str((int)code);
	if (!m)
		return 0;
	smp_set_const_str(smp, SMP_T_STR, m, strlen(m));
	return 1;
}

static int fetch_name(struct sample *smp, struct smp_ctx *ctx, enum smp_name_kind k)
{
	const char *n;

	if (!ctx->ops || !ctx->ops->name || !ctx->ops->name(ctx, k, &n) || !n)
		return 0;
	smp_set_const_str(smp, SMP_T_STR, n, strlen(n));
	return 1;
}

static int fetch_id(struct sample *smp, struct smp_ctx *ctx, enum smp_id_kind k)
{
	int64_t v;

	if (!ctx->ops || !ctx->ops->id || !ctx->ops->id(ctx, k, &v))
		return 0;
	smp_set_sint(smp, v);
	return 1;
}

static int smp_fetch_fe_name(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_name(smp, ctx, SMP_NAME_FE);
}

static int smp_fetch_be_name(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_name(smp, ctx, SMP_NAME_BE);
}

static int smp_fetch_srv_name(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_name(smp, ctx, SMP_NAME_SRV);
}

static int smp_fetch_so_name(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_name(smp, ctx, SMP_NAME_LISTENER);
}

static int smp_fetch_fe_id(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_id(smp, ctx, SMP_ID_FE);
}

static int smp_fetch_be_id(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_id(smp, ctx, SMP_ID_BE);
}

static int smp_fetch_srv_id(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_id(smp, ctx, SMP_ID_SRV);
}

static int smp_fetch_so_id(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_id(smp, ctx, SMP_ID_LISTENER);
}

/* ------------------------------------------------------------------ backends */

static int fetch_be(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx,
                    enum smp_be_metric m)
{
	const struct smp_arg *be = args->n > 0 && args->a[0].type == ARGT_BE ? &args->a[0] : NULL;
	int64_t v;

	/* omitted, and not resolved to the expression's proxy at start-up
	 * (smp_resolve_names()): the stream's backend of the moment */
	if (be && !be->resolved && (!be->text || !*be->text))
		be = NULL;

	if (!ctx->ops || !ctx->ops->be_metric || !ctx->ops->be_metric(ctx, be, m, &v))
		return 0;
	smp_set_sint(smp, v);
	return 1;
}

static int smp_fetch_nbsrv(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_be(args, smp, ctx, SMP_BE_NBSRV);
}

static int smp_fetch_be_conn(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_be(args, smp, ctx, SMP_BE_CONN);
}

static int smp_fetch_queue(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_be(args, smp, ctx, SMP_BE_QUEUE);
}

static int smp_fetch_avg_queue(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_be(args, smp, ctx, SMP_BE_AVG_QUEUE);
}

static int smp_fetch_connslots(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_be(args, smp, ctx, SMP_BE_CONNSLOTS);
}

/* "[backend/]server": priv holds the two parts as arguments */
struct srv_ref {
	struct smp_arg be;         /* type ARGT_STOP when omitted */
	struct smp_arg srv;
};

static void free_srv_ref(void *p)
{
	struct srv_ref *r = p;

	free(r->be.text);
	free(r->srv.text);
	free(r);
}

static int check_srv(struct smp_args *args, char *err, size_t errlen)
{
	const char *s = args->a[0].text, *slash = strchr(s, '/');
	struct srv_ref *r = calloc(1, sizeof(*r));

	if (!r)
		return errmsg_set(err, errlen, "out of memory");
	if (slash) {
		r->be.type = ARGT_BE;
		r->be.text = strndup(s, (size_t)(slash - s));
		s = slash + 1;
	}
	r->srv.type = ARGT_SRV;
	r->srv.text = strdup(s);
	if ((slash && !r->be.text) || !r->srv.text || !*r->srv.text ||
	    (slash && !*r->be.text)) {
		free_srv_ref(r);
		return errmsg_set(err, errlen, "'%s': expects [<backend>/]<server>",
		                  args->a[0].text);
	}
	if (r->be.text) {
		r->be.data.str.ptr = r->be.text;
		r->be.data.str.len = strlen(r->be.text);
	}
	r->srv.data.str.ptr = r->srv.text;
	r->srv.data.str.len = strlen(r->srv.text);
	args->priv = r;
	args->free_priv = free_srv_ref;
	return 0;
}

static int fetch_srv(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx,
                     enum smp_srv_metric m)
{
	const struct srv_ref *r = args->priv;
	/* the server found at start-up (smp_resolve_names()), else by name */
	const struct smp_arg *srv = args->a[0].resolved ? &args->a[0] : &r->srv;
	int64_t v;

	if (!ctx->ops || !ctx->ops->srv_metric ||
	    !ctx->ops->srv_metric(ctx, r->be.type ? &r->be : NULL, srv, m, &v))
		return 0;
	if (m == SMP_SRV_IS_UP)
		smp_set_bool(smp, v != 0);
	else
		smp_set_sint(smp, v);
	return 1;
}

static int smp_fetch_srv_conn(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_srv(args, smp, ctx, SMP_SRV_CONN);
}

static int smp_fetch_srv_queue(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_srv(args, smp, ctx, SMP_SRV_QUEUE);
}

static int smp_fetch_srv_is_up(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_srv(args, smp, ctx, SMP_SRV_IS_UP);
}

static int smp_fetch_unique_id(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct ist id;

	/* accepted everywhere, but before a transaction (tcp-request
	 * connection and session rules) there is no id yet, as in HAProxy */
	if (ctx->avail && !(ctx->avail & SMP_USE_TXN))
		return 0;
	if (!ctx->ops || !ctx->ops->unique_id || !ctx->ops->unique_id(ctx, &id))
		return 0;
	smp_set_const_str(smp, SMP_T_STR, id.ptr, id.len);
	return 1;
}

static int smp_fetch_txn_id(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_sint(smp, (int64_t)ctx->txn_id);
	return 1;
}

/* ------------------------------------------------------------------ layer 6 */

static int smp_fetch_req_len(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	smp_set_sint(smp, (int64_t)(ctx->req_data.ptr ? ctx->req_data.len : ctx->req_len));
	/* more may come: "does not return false as long as the buffer is changing" */
	smp->flags |= SMP_F_MAY_CHANGE;
	return 1;
}

static int check_payload(struct smp_args *args, char *err, size_t errlen)
{
	if (args->a[0].data.sint < 0 || args->a[1].data.sint < 0)
		return errmsg_set(err, errlen, "offset and length must be positive");
	return 0;
}

static int smp_fetch_payload(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	uint64_t off = (uint64_t)args->a[0].data.sint, len = (uint64_t)args->a[1].data.sint;
	struct ist d = ctx->req_data;

	if (!d.ptr)
		return 0;
	if (!len) {                       /* 0: everything from <off> */
		if (off > d.len)
			goto wait;
		len = d.len - off;
	}
	if (off + len > d.len)
		goto wait;
	smp_set_const_str(smp, SMP_T_BIN, d.ptr + off, (size_t)len);
	if (!args->a[1].data.sint)
		smp->flags |= SMP_F_MAY_CHANGE;
	return 1;
wait:
	smp->flags |= SMP_F_MAY_CHANGE;
	return 0;
}

/* The RDP cookie of an RDP connection request: after the 4-byte TPKT
 * header and the 7-byte X.224 connection request, a line
 * "Cookie: <name>=<value>\r\n". Returns 1 with the name and value, 0 if
 * there is none, -1 if the data are incomplete. */
static int rdp_cookie(struct ist d, struct ist *name, struct ist *value)
{
	static const char hdr[] = "Cookie: ";
	const char *p, *end, *eq;

	if (d.len < 11 + sizeof(hdr) - 1)
		return d.len < 11 || memcmp(d.ptr + 11, hdr, d.len - 11) == 0 ? -1 : 0;
	if ((unsigned char)d.ptr[0] != 3 || d.ptr[1] != 0)
		return 0;
	if (strncasecmp(d.ptr + 11, hdr, sizeof(hdr) - 1) != 0)
		return 0;
	p = d.ptr + 11 + sizeof(hdr) - 1;
	end = memmem(p, (size_t)(d.ptr + d.len - p), "\r\n", 2);
	if (!end)
		return -1;
	eq = memchr(p, '=', (size_t)(end - p));
	if (!eq)
		return 0;
	*name = (struct ist){ p, (size_t)(eq - p) };
	*value = (struct ist){ eq + 1, (size_t)(end - eq - 1) };
	return 1;
}

static int smp_fetch_rdp_cookie(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct ist name, value;
	/* no raw view of a parsed HTTP request: no cookie will ever be found */
	int r = ctx->req_data.ptr ? rdp_cookie(ctx->req_data, &name, &value) : ctx->req ? 0 : -1;

	if (r < 0)
		smp->flags |= SMP_F_MAY_CHANGE;
	if (r <= 0)
		return 0;
	if (args->n > 0 && args->a[0].data.str.len &&
	    (name.len != args->a[0].data.str.len ||
	     strncasecmp(name.ptr, args->a[0].data.str.ptr, name.len) != 0))
		return 0;
	smp_set_const_str(smp, SMP_T_STR, value.ptr, value.len);
	return 1;
}

static int smp_fetch_rdp_cookie_cnt(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct sample tmp = { .opt = smp->opt };
	int found = smp_fetch_rdp_cookie(args, &tmp, ctx);

	if (!found && (tmp.flags & SMP_F_MAY_CHANGE)) {
		smp->flags |= SMP_F_MAY_CHANGE;
		return 0;
	}
	smp_set_sint(smp, found ? 1 : 0);
	return 1;
}

/* ------------------------------------------------------------------ dynamic names */

/* An argument made from a name taken at run time (not resolved). */
static int name_arg(const struct smp_str *s, struct smp_arg *a, enum smp_arg_type t, char *buf,
                    size_t size)
{
	if (!s->len || s->len >= size)
		return 0;
	memcpy(buf, s->ptr, s->len);
	buf[s->len] = '\0';
	memset(a, 0, sizeof(*a));
	a->type = t;
	a->text = buf;
	a->data.str.ptr = buf;
	a->data.str.len = s->len;
	return 1;
}

static int smp_conv_nbsrv(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	char buf[256];
	struct smp_arg be;
	int64_t v;

	if (!name_arg(&smp->data.str, &be, ARGT_BE, buf, sizeof(buf)) || !ctx->ops ||
	    !ctx->ops->be_metric || !ctx->ops->be_metric(ctx, &be, SMP_BE_NBSRV, &v))
		return 0;
	smp_set_sint(smp, v);
	return 1;
}

/* "server" (current backend) or "backend/server" */
static int smp_conv_srv_queue(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	char bbuf[256], sbuf[256];
	struct smp_arg be, srv;
	struct smp_str b = smp->data.str, sv = smp->data.str;
	const char *slash = memchr(b.ptr, '/', b.len);
	int64_t v;

	if (slash) {
		b.len = (size_t)(slash - b.ptr);
		sv.ptr = (char *)slash + 1;
		sv.len = smp->data.str.len - b.len - 1;
		if (!name_arg(&b, &be, ARGT_BE, bbuf, sizeof(bbuf)))
			return 0;
	}
	if (!name_arg(&sv, &srv, ARGT_SRV, sbuf, sizeof(sbuf)) || !ctx->ops ||
	    !ctx->ops->srv_metric ||
	    !ctx->ops->srv_metric(ctx, slash ? &be : NULL, &srv, SMP_SRV_QUEUE, &v))
		return 0;
	smp_set_sint(smp, v);
	return 1;
}

/* ---- conn_fetches ---- */

static int smp_fetch_addr_kw(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_addr(smp, ctx, (enum smp_addr_kind)(intptr_t)args->kw_priv);
}

static int smp_fetch_port_kw(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_port(smp, ctx, (enum smp_addr_kind)(intptr_t)args->kw_priv);
}

/* Whether the address is one of this host's: it can be bound (port 0),
 * as HAProxy decides. A socket per evaluation: a rare, operator-chosen
 * test, not one for every request of a busy frontend. */
static int smp_fetch_is_local(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, ok;

	if (!ctx->ops || !ctx->ops->addr ||
	    !ctx->ops->addr(ctx, (enum smp_addr_kind)(intptr_t)args->kw_priv, &ss))
		return 0;
	if (ss.ss_family == AF_INET) {
		((struct sockaddr_in *)&ss)->sin_port = 0;
		len = sizeof(struct sockaddr_in);
	} else if (ss.ss_family == AF_INET6) {
		((struct sockaddr_in6 *)&ss)->sin6_port = 0;
		len = sizeof(struct sockaddr_in6);
	} else
		return 0;
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	ok = bind(fd, (struct sockaddr *)&ss, len) == 0;
	close(fd);
	smp_set_bool(smp, ok);
	return 1;
}

static int smp_fetch_be_conn_free(const struct smp_args *args, struct sample *smp,
                                  struct smp_ctx *ctx)
{
	return fetch_be(args, smp, ctx, SMP_BE_CONN_FREE);
}

static int smp_fetch_be_kw(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_be(args, smp, ctx, (enum smp_be_metric)(intptr_t)args->kw_priv);
}

/* fe_conn, fe_req_rate, fe_sess_rate: of the frontend named, or the
 * stream's */
static int smp_fetch_fe_kw(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const struct smp_arg *fe = args->n > 0 && args->a[0].type == ARGT_FE ? &args->a[0] : NULL;
	int64_t v;

	if (fe && !fe->resolved && (!fe->text || !*fe->text))
		fe = NULL;
	if (!ctx->ops || !ctx->ops->fe_metric ||
	    !ctx->ops->fe_metric(ctx, fe, (enum smp_fe_metric)(intptr_t)args->kw_priv, &v))
		return 0;
	smp_set_sint(smp, v);
	return 1;
}

static int smp_fetch_srv_kw(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	return fetch_srv(args, smp, ctx, (enum smp_srv_metric)(intptr_t)args->kw_priv);
}

static int smp_fetch_stream_int(const struct smp_args *args, struct sample *smp,
                                struct smp_ctx *ctx)
{
	int64_t v;

	if (!ctx->ops || !ctx->ops->stream_int ||
	    !ctx->ops->stream_int(ctx, (enum smp_stream_int)(intptr_t)args->kw_priv, &v))
		return 0;
	smp_set_sint(smp, v);
	return 1;
}

static int smp_fetch_date_us(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct timespec ts;
	int64_t us = ctx->now_us;

	if (!us) {
		clock_gettime(CLOCK_REALTIME, &ts);
		us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	}
	smp_set_sint(smp, us % 1000000);
	return 1;
}

static int smp_fetch_fe_defbe(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	const char *n;

	if (!ctx->ops || !ctx->ops->name || !ctx->ops->name(ctx, SMP_NAME_FE_DEFBE, &n) || !n)
		return 0;
	smp_set_const_str(smp, SMP_T_STR, n, strlen(n));
	return 1;
}

