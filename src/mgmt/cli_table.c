/* Stick tables on the CLI (HAProxy 2.6 management guide, section 9.3):
 * `show table [<name> [data.<type> <op> <value>]... | [key <key>]]`,
 * `clear table <name> [data.<type> <op> <value>]... | [key <key>]`,
 * `set table <name> key <key> [data.<type> <value>]...`, with HAProxy's
 * output and messages.
 *
 * A dump walks the table one shard at a time under that shard's lock
 * (stktable_walk()): it never holds two locks, and a lookup by the traffic
 * waits at most for one shard's worth of lines to be formatted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/mgmt/cli.h>
#include <sluice/proxy/stktable.h>

#define MAX_FILTERS 4

struct tbl_filter {
	int n;
	enum stkt_dt dt[MAX_FILTERS];
	int op[MAX_FILTERS];       /* index in ops[] */
	long long value[MAX_FILTERS];
};

static const char *const ops[] = { "eq", "ne", "le", "ge", "lt", "gt" };

static int cli_show_table(char **args, int nargs, struct cli_out *out, int level);
static int cli_clear_table(char **args, int nargs, struct cli_out *out, int level);
static int cli_set_table(char **args, int nargs, struct cli_out *out, int level);

static const struct cli_kw table_kws[] = {
	{ { "show", "table" }, CLI_LEVEL_OPERATOR, cli_show_table,
	  "show table [<table>]                    : report table usage stats or dump this table's contents" },
	{ { "clear", "table" }, CLI_LEVEL_OPERATOR, cli_clear_table,
	  "clear table <table> [<filter>]*         : remove an entry from a table (filter: data/key)" },
	{ { "set", "table" }, CLI_LEVEL_ADMIN, cli_set_table,
	  "set table <table> key <k> [data.* <v>]* : update or create a table entry's data" },
	{ { NULL } }
};
CLI_REGISTER(table_kws)

static const char *type_name(enum stkt_type t)
{
	switch (t) {
	case STKT_T_IP: return "ip";
	case STKT_T_IPV6: return "ipv6";
	case STKT_T_INTEGER: return "integer";
	case STKT_T_STRING: return "string";
	case STKT_T_BINARY: return "binary";
	}
	return "?";
}

static void print_header(struct cli_out *out, struct stktable *t)
{
	cli_printf(out, "# table: %s, type: %s, size:%ld, used:%ld\n", t->name, type_name(t->type),
	           t->size, atomic_load_explicit(&t->used, memory_order_relaxed));
}

/* One entry as HAProxy prints it. Under the entry's shard lock. */
static void print_entry(struct cli_out *out, struct stktable *t, struct stksess *ts)
{
	char key[512];
	uint64_t exp = atomic_load_explicit(&ts->expire, memory_order_relaxed);
	uint64_t now = stkt_now_ms();

	stktable_key_text(t, ts, key, sizeof(key));
	cli_printf(out, "%p: key=%s use=%u exp=%u", (void *)ts, key,
	           atomic_load_explicit(&ts->ref, memory_order_relaxed),
	           exp > now ? (unsigned int)(exp - now) : 0);
	for (int i = 0; i < STKT_DT_COUNT; i++) {
		int64_t v;

		if (stkt_dt_defs[i].kind == STKT_K_NAME) {
			const char *name = stkt_get_name(t, ts, (enum stkt_dt)i);

			if (stkt_stores(t, (enum stkt_dt)i) && name)
				cli_printf(out, " %s=%s", stkt_dt_defs[i].name, name);
			continue;
		}
		if (stkt_dt_defs[i].array) {
			/* gpt0=.. gpt1=.., gpc0_rate(<period>)=.., as HAProxy names them */
			for (uint32_t e = 0; t->data_ofs[i] >= 0 && e < t->data_nbelem[i]; e++) {
				stkt_get_idx(t, ts, (enum stkt_dt)i, e, &v);
				if (i == STKT_DT_GPC_RATE)
					cli_printf(out, " gpc%u_rate(%u)=%lld", e, t->data_period[i],
					           (long long)v);
				else
					cli_printf(out, " %s%u=%lld", stkt_dt_defs[i].name, e, (long long)v);
			}
			continue;
		}
		if (t->data_ofs[i] < 0 || !stkt_get(t, ts, (enum stkt_dt)i, &v))
			continue;
		if (stkt_dt_defs[i].kind == STKT_K_FRQ)
			cli_printf(out, " %s(%u)=%lld", stkt_dt_defs[i].name, t->data_period[i],
			           (long long)v);
		else
			cli_printf(out, " %s=%lld", stkt_dt_defs[i].name, (long long)v);
	}
	cli_printf(out, "\n");
}

static int filter_match(struct stktable *t, struct stksess *ts, const struct tbl_filter *f)
{
	for (int i = 0; i < f->n; i++) {
		int64_t v = 0;
		long long w = f->value[i];
		int ok;

		stkt_get(t, ts, f->dt[i], &v);
		switch (f->op[i]) {
		case 0: ok = v == w; break;
		case 1: ok = v != w; break;
		case 2: ok = v <= w; break;
		case 3: ok = v >= w; break;
		case 4: ok = v < w; break;
		default: ok = v > w; break;
		}
		if (!ok)
			return 0;
	}
	return 1;
}

/* The table named args[2] ("No such table" otherwise). */
static struct stktable *table_arg(char **args, int nargs, struct cli_out *out)
{
	struct stktable *t = nargs > 2 ? stktable_find(args[2]) : NULL;

	if (!t)
		cli_printf(out, "No such table\n");
	return t;
}

/* Options after the table name: a key, or data filters. Returns 1 for a
 * key (in *keyword), 0 for filters (maybe none), -1 on error (printed). */
static int parse_options(struct stktable *t, char **args, int nargs, const char **keyword,
                         struct tbl_filter *f, struct cli_out *out)
{
	int i = 3;

	f->n = 0;
	if (i < nargs && !strcmp(args[i], "key")) {
		if (i + 1 >= nargs || !*args[i + 1]) {
			cli_printf(out, "Key value expected\n");
			return -1;
		}
		*keyword = args[i + 1];
		return 1;
	}
	for (; i < nargs; i += 3) {
		int dt = -1, n = f->n;

		if (strncmp(args[i], "data.", 5)) {
			cli_printf(out, "Optional argument only supports \"data.<store_data_type>\" "
			           "<operator> <value> and key <key>\n");
			return -1;
		}
		if (n >= MAX_FILTERS) {
			cli_printf(out, "Too many filters (at most %d)\n", MAX_FILTERS);
			return -1;
		}
		dt = stkt_dt_lookup(args[i] + 5, strlen(args[i] + 5));
		if (dt < 0) {
			cli_printf(out, "Filter entry #%d: Unknown data type\n", n + 1);
			return -1;
		}
		if (!stkt_stores(t, (enum stkt_dt)dt)) {
			cli_printf(out, "Filter entry #%d: Data type not stored in this table\n", n + 1);
			return -1;
		}
		f->dt[n] = (enum stkt_dt)dt;
		f->op[n] = -1;
		for (int o = 0; i + 1 < nargs && o < 6; o++)
			if (!strcmp(args[i + 1], ops[o]))
				f->op[n] = o;
		if (f->op[n] < 0) {
			cli_printf(out, "Filter entry #%d: Require and operator among \"eq\", \"ne\", "
			           "\"le\", \"ge\", \"lt\", \"gt\"\n", n + 1);
			return -1;
		}
		{
			char *end;

			if (i + 2 >= nargs || !*args[i + 2] ||
			    (f->value[n] = strtoll(args[i + 2], &end, 10), *end)) {
				cli_printf(out, "Filter entry #%d: Require a valid integer value to "
				           "compare against\n", n + 1);
				return -1;
			}
		}
		f->n++;
	}
	return 0;
}

/* The key of a CLI command; binary keys are refused, as HAProxy 2.6 does.
 * 1, 0 (invalid: nothing to do), -1 (refused, printed). */
static int cli_key(struct stktable *t, const char *text, struct stkt_key *k, struct cli_out *out)
{
	if (t->type == STKT_T_BINARY) {
		cli_printf(out, "Inserting keys into tables of type other than ip, ipv6, string "
		           "and integer is not supported\n");
		return -1;
	}
	return stktable_key_from_text(t, text, k) ? 1 : 0;
}

struct dump_ctx {
	struct cli_out *out;
	const struct tbl_filter *f;
};

static int dump_one(struct stktable *t, struct stksess *ts, void *arg)
{
	struct dump_ctx *d = arg;

	if (filter_match(t, ts, d->f))
		print_entry(d->out, t, ts);
	return d->out->failed;
}

static int cli_show_table(char **args, int nargs, struct cli_out *out, int level)
{
	struct tbl_filter f;
	struct dump_ctx d = { out, &f };
	const char *keytext = NULL;
	struct stktable *t;
	struct stksess *ts;
	struct stkt_key k;
	int rc;

	if (nargs <= 2) {
		/* HAProxy lists the most recently declared table first (the
		 * list is walked again for each: tables are few) */
		int n = 0;

		for (t = stktable_first(); t; t = stktable_next(t))
			n++;
		while (n--) {
			t = stktable_first();
			for (int i = 0; i < n; i++)
				t = stktable_next(t);
			print_header(out, t);
		}
		return 0;
	}
	if (!(t = table_arg(args, nargs, out)))
		return -1;
	rc = parse_options(t, args, nargs, &keytext, &f, out);
	if (rc < 0)
		return -1;
	if (rc == 1) {
		/* a key: the header and its entry, or nothing at all */
		rc = cli_key(t, keytext, &k, out);
		if (rc <= 0)
			return rc;
		ts = stktable_lookup_lock(t, &k);
		if (!ts)
			return 0;
		print_header(out, t);
		print_entry(out, t, ts);
		stktable_unlock(t, ts);
		return 0;
	}
	print_header(out, t);
	stktable_walk(t, dump_one, &d);
	return 0;
}

static int clear_match(struct stktable *t, struct stksess *ts, void *arg)
{
	return filter_match(t, ts, arg);
}

static int cli_clear_table(char **args, int nargs, struct cli_out *out, int level)
{
	struct tbl_filter f;
	const char *keytext = NULL;
	struct stktable *t;
	struct stkt_key k;
	int rc;

	if (!(t = table_arg(args, nargs, out)))
		return -1;
	rc = parse_options(t, args, nargs, &keytext, &f, out);
	if (rc < 0)
		return -1;
	if (rc == 1) {
		rc = cli_key(t, keytext, &k, out);
		if (rc <= 0)
			return rc;
		/* an entry in use stays, as in HAProxy */
		stktable_remove(t, &k);
		return 0;
	}
	stktable_purge(t, f.n ? clear_match : NULL, &f);
	return 0;
}

static int cli_set_table(char **args, int nargs, struct cli_out *out, int level)
{
	struct stktable *t;
	struct stksess *ts;
	struct stkt_key k;
	int dts[16], n = 0, rc;
	long long vals[16];

	if (!(t = table_arg(args, nargs, out)))
		return -1;
	if (nargs < 4 || strcmp(args[3], "key"))
		return 0;
	if (nargs < 5 || !*args[4]) {
		cli_printf(out, "Key value expected\n");
		return -1;
	}
	/* every data argument is checked before anything is written */
	for (int i = 5; i < nargs; i += 2) {
		char *end;
		int dt;

		if (strncmp(args[i], "data.", 5) ||
		    (dt = stkt_dt_lookup(args[i] + 5, strlen(args[i] + 5))) < 0) {
			cli_printf(out, "Unknown data type\n");
			return -1;
		}
		if (!stkt_stores(t, (enum stkt_dt)dt)) {
			cli_printf(out, "Data type not stored in this table\n");
			return -1;
		}
		if (i + 1 >= nargs || !*args[i + 1] ||
		    (vals[n] = strtoll(args[i + 1], &end, 10), *end)) {
			cli_printf(out, "Require a valid integer value to store\n");
			return -1;
		}
		if (n == 16) {
			cli_printf(out, "Too many data values\n");
			return -1;
		}
		dts[n++] = dt;
	}
	rc = cli_key(t, args[4], &k, out);
	if (rc <= 0)
		return rc;
	ts = stktable_get_ref(t, &k);
	if (!ts) {
		cli_printf(out, "Unable to allocate a new entry\n");
		return -1;
	}
	for (int i = 0; i < n; i++)
		stkt_set(t, ts, (enum stkt_dt)dts[i], vals[i]);
	stktable_release(t, ts);
	return 0;
}
