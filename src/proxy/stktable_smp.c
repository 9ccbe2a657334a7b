/* Stick-table sample fetches and converters (HAProxy 2.6 manual, section
 * 7.3.2 and 7.3.1): sc_<data>(<ctr>[,<table>]) and sc0_/sc1_/sc2_<data>
 * ([<table>]) read what a stream tracks; src_<data>([<table>]) looks the
 * client's address up; the table_<data>(<table>) converters look their
 * input up; table_cnt and table_avl describe a table.
 *
 * A tracked entry is read without lock (the stream holds a reference, the
 * data are atomics); an entry found by lookup is read under its shard's
 * lock (stktable_lookup_lock()). Owner thread of the stream.
 */
#include <stdint.h>
#include <string.h>
#include <sluice/expr/sample.h>
#include <sluice/proxy/stktable.h>
#include <sluice/proxy/stream.h>
#include <sluice/proxy/stream_int.h>

enum stk_op {
	OP_GET = 1,      /* the value of <dt> */
	OP_KB,           /* <dt> / 1024 (kbytes_in/out) */
	OP_INC,          /* gpc0/1 and its rate + 1, the new gpc value */
	OP_CLR,          /* gpc0/1 set to 0, the previous value */
	OP_TRACKED,      /* sc_tracked */
	OP_TRACKERS,     /* references */
	OP_EXPIRE,       /* ms before expiry (table_expire) */
	OP_IDLE,         /* ms since the last touch (table_idle) */
	OP_IN_TABLE,     /* in_table */
	OP_SERVER_ID,
	OP_UPDT_CONN,    /* src_updt_conn_cnt: conn_cnt + 1, the new value */
};

/* kw->priv: op << 8 | data type, and (counter + 1) << 16 for scN_ */
#define PRIV(op, dt, ctr) ((const void *)(uintptr_t)((op) << 8 | (dt) | ((ctr) + 1) << 16))
#define PRIV_OP(p)   ((int)(((uintptr_t)(p) >> 8) & 0xff))
#define PRIV_DT(p)   ((int)((uintptr_t)(p) & 0xff))
#define PRIV_CTR(p)  ((int)(((uintptr_t)(p) >> 16) & 0xff) - 1)
/* the gpc/gpt array forms: their first argument is the element */
#define PRIV_IDX     ((uintptr_t)1 << 24)
#define PRIV_HAS_IDX(p) (((uintptr_t)(p) & PRIV_IDX) != 0)

static enum stkt_dt gpc_rate_of(enum stkt_dt dt)
{
	return dt == STKT_DT_GPC ? STKT_DT_GPC_RATE :
	       dt == STKT_DT_GPC1 ? STKT_DT_GPC1_RATE : STKT_DT_GPC0_RATE;
}

/* Applies <op> to <ts> of <t>; 1 with a result, 0 without (data not
 * stored). The caller holds a reference on <ts> or its shard's lock. */
static int entry_op(struct stktable *t, struct stksess *ts, int op, enum stkt_dt dt,
                    unsigned int idx, struct sample *smp)
{
	int64_t v = 0;

	switch (op) {
	case OP_GET:
		if (!stkt_get_idx(t, ts, dt, idx, &v))
			return 0;
		break;
	case OP_KB:
		if (!stkt_get(t, ts, dt, &v))
			return 0;
		v >>= 10;
		break;
	case OP_INC:
		if (!stkt_stores_elem(t, dt, idx) && !stkt_stores_elem(t, gpc_rate_of(dt), idx))
			return 0;
		stkt_add_idx(t, ts, gpc_rate_of(dt), idx, 1);
		if (stkt_stores_elem(t, dt, idx)) {
			_Atomic uint32_t *p = stkt_elem_ptr(t, ts, dt, idx, NULL);

			v = (uint32_t)(atomic_fetch_add_explicit(p, 1, memory_order_relaxed) + 1);
		} else {
			stkt_get_idx(t, ts, gpc_rate_of(dt), idx, &v);
		}
		break;
	case OP_CLR: {
		_Atomic uint32_t *p = stkt_elem_ptr(t, ts, dt, idx, NULL);

		if (!p)
			return 0;
		v = atomic_exchange_explicit(p, 0, memory_order_relaxed);
		break;
	}
	case OP_TRACKERS:
		v = atomic_load_explicit(&ts->ref, memory_order_relaxed);
		break;
	case OP_EXPIRE:
	case OP_IDLE: {
		uint64_t exp = atomic_load_explicit(&ts->expire, memory_order_relaxed);
		uint64_t now = stkt_now_ms();

		if (!t->expire_ms || !exp)
			return 0;
		if (op == OP_EXPIRE)
			v = exp > now ? (int64_t)(exp - now) : 0;
		else
			v = now + (uint64_t)t->expire_ms > exp ?
			    (int64_t)(now + (uint64_t)t->expire_ms - exp) : 0;
		break;
	}
	case OP_IN_TABLE:
		smp_set_bool(smp, 1);
		return 1;
	case OP_SERVER_ID:
		if (!stkt_get(t, ts, STKT_DT_SERVER_ID, &v))
			return 0;
		break;
	case OP_UPDT_CONN: {
		_Atomic uint32_t *p = stkt_data_ptr(t, ts, STKT_DT_CONN_CNT);

		if (!p)
			return 0;
		v = (uint32_t)(atomic_fetch_add_explicit(p, 1, memory_order_relaxed) + 1);
		break;
	}
	default:
		return 0;
	}
	smp_set_sint(smp, v);
	return 1;
}

/* Looks <k> up in <t>: the result of <op>, or what a missing key gives
 * (0, or false for in_table). <create>: the src_inc/src_clr forms, which
 * create the entry. */
static int lookup_op(struct stktable *t, const struct stkt_key *k, int op, enum stkt_dt dt,
                     unsigned int idx, int create, struct sample *smp)
{
	struct stksess *ts;
	int ret;

	if (create) {
		ts = stktable_get_ref(t, k);
		if (!ts)
			return 0;
		ret = entry_op(t, ts, op, dt, idx, smp);
		stktable_release(t, ts);
		return ret;
	}
	ts = stktable_lookup_lock(t, k);
	if (!ts) {
		if (op == OP_IN_TABLE)
			smp_set_bool(smp, 0);
		else if (op == OP_EXPIRE || op == OP_IDLE)
			return 0;
		else
			smp_set_sint(smp, 0);
		return 1;
	}
	ret = entry_op(t, ts, op, dt, idx, smp);
	stktable_unlock(t, ts);
	return ret;
}

/* ---- sc_*, scN_* ---- */

static int fetch_sc(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	struct stream *s = stream_of_smp(ctx);
	int op = PRIV_OP(args->kw_priv), ctr = PRIV_CTR(args->kw_priv), ai = 0;
	enum stkt_dt dt = (enum stkt_dt)PRIV_DT(args->kw_priv);
	struct stktable *other = NULL;
	unsigned int idx = 0;
	struct stkctr *c;

	if (PRIV_HAS_IDX(args->kw_priv)) {
		if (args->a[ai].data.sint < 0 || args->a[ai].data.sint >= STKT_MAX_ELEMS)
			return 0;
		idx = (unsigned int)args->a[ai++].data.sint;
	}
	if (ctr < 0) {
		ctr = (int)args->a[ai].data.sint;
		ai++;
	}
	if (args->n > ai && args->a[ai].type == ARGT_TAB)
		other = args->a[ai].resolved;
	if (!s || ctr < 0 || ctr >= STKT_MAX_CTR)
		return 0;
	c = &s->stkctr[ctr];
	if (op == OP_TRACKED) {
		smp_set_bool(smp, c->entry != NULL);
		return 1;
	}
	if (!c->entry)
		return 0;
	if (other && other != c->table) {
		/* the tracked key, looked up in another table of its type */
		struct stkt_key k;

		if (other->type != c->table->type)
			return 0;
		k.ptr = c->entry->data + c->table->data_size;
		k.len = c->entry->key_len;
		if (k.len > other->key_size)
			k.len = other->key_size;
		return lookup_op(other, &k, op, dt, idx, 0, smp);
	}
	return entry_op(c->table, c->entry, op, dt, idx, smp);
}

/* ---- src_* ---- */

static int src_key(struct smp_ctx *ctx, struct stktable *t, struct stkt_key *k)
{
	struct sockaddr_storage ss;
	struct sample smp;

	if (!ctx->ops || !ctx->ops->addr || !ctx->ops->addr(ctx, SMP_ADDR_CLI_SRC, &ss))
		return 0;
	memset(&smp, 0, sizeof(smp));
	if (ss.ss_family == AF_INET) {
		smp.type = SMP_T_IPV4;
		smp.data.ipv4 = ((struct sockaddr_in *)&ss)->sin_addr;
	} else if (ss.ss_family == AF_INET6) {
		smp.type = SMP_T_IPV6;
		smp.data.ipv6 = ((struct sockaddr_in6 *)&ss)->sin6_addr;
	} else {
		return 0;
	}
	return stktable_key_from_smp(t, &smp, k);
}

static int fetch_src(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	int op = PRIV_OP(args->kw_priv), ai = 0;
	enum stkt_dt dt = (enum stkt_dt)PRIV_DT(args->kw_priv);
	unsigned int idx = 0;
	struct stktable *t;
	struct stkt_key k;

	if (PRIV_HAS_IDX(args->kw_priv)) {
		if (args->a[0].data.sint < 0 || args->a[0].data.sint >= STKT_MAX_ELEMS)
			return 0;
		idx = (unsigned int)args->a[ai++].data.sint;
	}
	t = args->n > ai ? args->a[ai].resolved : NULL;
	if (!t || !src_key(ctx, t, &k))
		return 0;
	return lookup_op(t, &k, op, dt, idx, op == OP_INC || op == OP_CLR || op == OP_UPDT_CONN,
	                 smp);
}

/* ---- table_cnt, table_avl ---- */

static int fetch_table_cnt(const struct smp_args *args, struct sample *smp,
                           struct smp_ctx *ctx)
{
	struct stktable *t = args->n ? args->a[0].resolved : NULL;
	long used;

	if (!t)
		return 0;
	used = atomic_load_explicit(&t->used, memory_order_relaxed);
	smp_set_sint(smp, args->kw_priv ? t->size - used : used);
	return 1;
}

/* ---- table_* converters ---- */

static int conv_table(const struct smp_args *args, struct sample *smp, struct smp_ctx *ctx)
{
	int op = PRIV_OP(args->kw_priv), ai = 0;
	enum stkt_dt dt = (enum stkt_dt)PRIV_DT(args->kw_priv);
	unsigned int idx = 0;
	struct stktable *t;
	struct stkt_key k;

	if (PRIV_HAS_IDX(args->kw_priv)) {
		if (args->a[0].data.sint < 0 || args->a[0].data.sint >= STKT_MAX_ELEMS)
			return 0;
		idx = (unsigned int)args->a[ai++].data.sint;
	}
	t = args->n > ai ? args->a[ai].resolved : NULL;
	if (!t || !stktable_key_from_smp(t, smp, &k))
		return 0;
	if (lookup_op(t, &k, op, dt, idx, 0, smp))
		return 1;
	/* table_expire and table_idle: the default value, if any */
	if ((op == OP_EXPIRE || op == OP_IDLE) && args->n > 1 && args->a[1].type == ARGT_SINT) {
		smp_set_sint(smp, args->a[1].data.sint);
		return 1;
	}
	return 0;
}

/* ---- keyword tables ---- */

#define SC_ARGS  { ARGT_SINT, ARGT_TAB }
#define T_ARGS   { ARGT_TAB }

/* One data fetch in its five forms: sc_, sc0_, sc1_, sc2_, src_. */
#define SC_FETCHES(name, op, dt) \
	{ "sc_" name, fetch_sc, SC_ARGS, 1, NULL, SMP_T_SINT, SMP_USE_INTRN, PRIV(op, dt, -1) }, \
	{ "sc0_" name, fetch_sc, T_ARGS, 0, NULL, SMP_T_SINT, SMP_USE_INTRN, PRIV(op, dt, 0) }, \
	{ "sc1_" name, fetch_sc, T_ARGS, 0, NULL, SMP_T_SINT, SMP_USE_INTRN, PRIV(op, dt, 1) }, \
	{ "sc2_" name, fetch_sc, T_ARGS, 0, NULL, SMP_T_SINT, SMP_USE_INTRN, PRIV(op, dt, 2) }, \
	{ "src_" name, fetch_src, T_ARGS, 0, NULL, SMP_T_SINT, SMP_USE_L4CLI, PRIV(op, dt, -1) }

#define SC_ARRAY(name, op, dt) \
	{ "sc_" name, fetch_sc, { ARGT_SINT, ARGT_SINT, ARGT_TAB }, 2, NULL, SMP_T_SINT, \
	  SMP_USE_INTRN, PRIV_A(op, dt, -1) }, \
	{ "src_" name, fetch_src, { ARGT_SINT, ARGT_TAB }, 2, NULL, SMP_T_SINT, SMP_USE_L4CLI, \
	  PRIV_A(op, dt, -1) }
#define PRIV_A(op, dt, ctr) ((const void *)((uintptr_t)PRIV(op, dt, ctr) | PRIV_IDX))

#define SC_ONLY(name, op, type) \
	{ "sc_" name, fetch_sc, SC_ARGS, 1, NULL, type, SMP_USE_INTRN, PRIV(op, 0, -1) }, \
	{ "sc0_" name, fetch_sc, T_ARGS, 0, NULL, type, SMP_USE_INTRN, PRIV(op, 0, 0) }, \
	{ "sc1_" name, fetch_sc, T_ARGS, 0, NULL, type, SMP_USE_INTRN, PRIV(op, 0, 1) }, \
	{ "sc2_" name, fetch_sc, T_ARGS, 0, NULL, type, SMP_USE_INTRN, PRIV(op, 0, 2) }

static const struct smp_fetch_kw stk_fetches[] = {
	SC_FETCHES("conn_cnt", OP_GET, STKT_DT_CONN_CNT),
	SC_FETCHES("conn_cur", OP_GET, STKT_DT_CONN_CUR),
	SC_FETCHES("conn_rate", OP_GET, STKT_DT_CONN_RATE),
	SC_FETCHES("sess_cnt", OP_GET, STKT_DT_SESS_CNT),
	SC_FETCHES("sess_rate", OP_GET, STKT_DT_SESS_RATE),
	SC_FETCHES("http_req_cnt", OP_GET, STKT_DT_HTTP_REQ_CNT),
	SC_FETCHES("http_req_rate", OP_GET, STKT_DT_HTTP_REQ_RATE),
	SC_FETCHES("http_err_cnt", OP_GET, STKT_DT_HTTP_ERR_CNT),
	SC_FETCHES("http_err_rate", OP_GET, STKT_DT_HTTP_ERR_RATE),
	SC_FETCHES("http_fail_cnt", OP_GET, STKT_DT_HTTP_FAIL_CNT),
	SC_FETCHES("http_fail_rate", OP_GET, STKT_DT_HTTP_FAIL_RATE),
	SC_FETCHES("bytes_in_rate", OP_GET, STKT_DT_BYTES_IN_RATE),
	SC_FETCHES("bytes_out_rate", OP_GET, STKT_DT_BYTES_OUT_RATE),
	SC_FETCHES("kbytes_in", OP_KB, STKT_DT_BYTES_IN_CNT),
	SC_FETCHES("kbytes_out", OP_KB, STKT_DT_BYTES_OUT_CNT),
	SC_FETCHES("get_gpc0", OP_GET, STKT_DT_GPC0),
	SC_FETCHES("get_gpc1", OP_GET, STKT_DT_GPC1),
	SC_FETCHES("gpc0_rate", OP_GET, STKT_DT_GPC0_RATE),
	SC_FETCHES("gpc1_rate", OP_GET, STKT_DT_GPC1_RATE),
	SC_FETCHES("get_gpt0", OP_GET, STKT_DT_GPT0),
	SC_FETCHES("inc_gpc0", OP_INC, STKT_DT_GPC0),
	SC_FETCHES("inc_gpc1", OP_INC, STKT_DT_GPC1),
	SC_FETCHES("clr_gpc0", OP_CLR, STKT_DT_GPC0),
	SC_FETCHES("clr_gpc1", OP_CLR, STKT_DT_GPC1),
	/* the gpc/gpt arrays: sc_<data>(<idx>,<ctr>[,<table>]),
	 * src_<data>(<idx>,<table>) */
	SC_ARRAY("get_gpc", OP_GET, STKT_DT_GPC),
	SC_ARRAY("gpc_rate", OP_GET, STKT_DT_GPC_RATE),
	SC_ARRAY("inc_gpc", OP_INC, STKT_DT_GPC),
	SC_ARRAY("clr_gpc", OP_CLR, STKT_DT_GPC),
	SC_ARRAY("get_gpt", OP_GET, STKT_DT_GPT),
	SC_ONLY("tracked", OP_TRACKED, SMP_T_BOOL),
	SC_ONLY("trackers", OP_TRACKERS, SMP_T_SINT),
	{ "src_updt_conn_cnt", fetch_src, T_ARGS, 0, NULL, SMP_T_SINT, SMP_USE_L4CLI,
	  PRIV(OP_UPDT_CONN, STKT_DT_CONN_CNT, -1) },
	{ "table_cnt", fetch_table_cnt, T_ARGS, 0, NULL, SMP_T_SINT, SMP_USE_INTRN, NULL },
	{ "table_avl", fetch_table_cnt, T_ARGS, 0, NULL, SMP_T_SINT, SMP_USE_INTRN, (void *)1 },
	{ NULL }
};
SMP_REGISTER_FETCHES(stk_fetches)

#define TBL_CONV(name, op, dt) \
	{ "table_" name, conv_table, T_ARGS, 0, NULL, SMP_T_ANY, SMP_T_SINT, PRIV(op, dt, -1) }

static const struct smp_conv_kw stk_convs[] = {
	TBL_CONV("conn_cnt", OP_GET, STKT_DT_CONN_CNT),
	TBL_CONV("conn_cur", OP_GET, STKT_DT_CONN_CUR),
	TBL_CONV("conn_rate", OP_GET, STKT_DT_CONN_RATE),
	TBL_CONV("sess_cnt", OP_GET, STKT_DT_SESS_CNT),
	TBL_CONV("sess_rate", OP_GET, STKT_DT_SESS_RATE),
	TBL_CONV("http_req_cnt", OP_GET, STKT_DT_HTTP_REQ_CNT),
	TBL_CONV("http_req_rate", OP_GET, STKT_DT_HTTP_REQ_RATE),
	TBL_CONV("http_err_cnt", OP_GET, STKT_DT_HTTP_ERR_CNT),
	TBL_CONV("http_err_rate", OP_GET, STKT_DT_HTTP_ERR_RATE),
	TBL_CONV("http_fail_cnt", OP_GET, STKT_DT_HTTP_FAIL_CNT),
	TBL_CONV("http_fail_rate", OP_GET, STKT_DT_HTTP_FAIL_RATE),
	TBL_CONV("bytes_in_rate", OP_GET, STKT_DT_BYTES_IN_RATE),
	TBL_CONV("bytes_out_rate", OP_GET, STKT_DT_BYTES_OUT_RATE),
	TBL_CONV("kbytes_in", OP_KB, STKT_DT_BYTES_IN_CNT),
	TBL_CONV("kbytes_out", OP_KB, STKT_DT_BYTES_OUT_CNT),
	TBL_CONV("gpc0", OP_GET, STKT_DT_GPC0),
	TBL_CONV("gpc1", OP_GET, STKT_DT_GPC1),
	TBL_CONV("gpc0_rate", OP_GET, STKT_DT_GPC0_RATE),
	TBL_CONV("gpc1_rate", OP_GET, STKT_DT_GPC1_RATE),
	TBL_CONV("gpt0", OP_GET, STKT_DT_GPT0),
	TBL_CONV("server_id", OP_SERVER_ID, STKT_DT_SERVER_ID),
	TBL_CONV("trackers", OP_TRACKERS, 0),
	{ "table_expire", conv_table, { ARGT_TAB, ARGT_SINT }, 0, NULL, SMP_T_ANY, SMP_T_SINT,
	  PRIV(OP_EXPIRE, 0, -1) },
	{ "table_idle", conv_table, { ARGT_TAB, ARGT_SINT }, 0, NULL, SMP_T_ANY, SMP_T_SINT,
	  PRIV(OP_IDLE, 0, -1) },
	{ "table_gpc", conv_table, { ARGT_SINT, ARGT_TAB }, 2, NULL, SMP_T_ANY, SMP_T_SINT,
	  PRIV_A(OP_GET, STKT_DT_GPC, -1) },
	{ "table_gpc_rate", conv_table, { ARGT_SINT, ARGT_TAB }, 2, NULL, SMP_T_ANY, SMP_T_SINT,
	  PRIV_A(OP_GET, STKT_DT_GPC_RATE, -1) },
	{ "table_gpt", conv_table, { ARGT_SINT, ARGT_TAB }, 2, NULL, SMP_T_ANY, SMP_T_SINT,
	  PRIV_A(OP_GET, STKT_DT_GPT, -1) },
	{ "in_table", conv_table, T_ARGS, 0, NULL, SMP_T_ANY, SMP_T_BOOL, PRIV(OP_IN_TABLE, 0, -1) },
	{ NULL }
};
SMP_REGISTER_CONVS(stk_convs)
