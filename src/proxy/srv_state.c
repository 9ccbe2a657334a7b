/* Server state changes: health check results and admin changes, and what
 * follows them, as HAProxy 2.6 does it: the queue redispatched or served,
 * the log lines, the server's and the backend's up/down history.
 *
 * Locking and ownership
 * ---------------------
 * - A server has two states: admin (ready, drain, maint: the CLI's) and
 *   op (UP, DOWN, NOLB: its checks'; NOLB is the soft stop of a 404
 *   under `http-check disable-on-404`). Both are atomics, written under the
 *   backend's state_lock (kind srv_state), read without any lock by the
 *   request path (srv_is_usable(), srv_is_stopped()): a balancer may act
 *   on a state a moment old, never on a torn one.
 * - state_lock serialises every state change of the backend's servers:
 *   checks conclude on several threads (one per server, see check.c), the
 *   CLI on its own. Under it: s->chk_st (result and health), the history
 *   atomics of servers and backend, be->be_up. Work under it is O(servers
 *   of the backend) at most (the recount of usable servers), once per
 *   check or CLI command, never per request.
 * - Queue work (queue_redistribute(), queue_kick()) and logging happen
 *   after the lock is released: they take the queue locks, and a log line
 *   is a system call. The state they act on was published before, so a
 *   waiter entering the queue meanwhile is seen by one side or the other
 *   (queue_add() looks at the state after becoming visible).
 * - Counts in a log line ("1 active and 0 backup servers left") are taken
 *   under the lock, right after the change; queue figures after the queue
 *   work. Two changes of one backend racing on two threads may log in
 *   either order; each line is true of its own change.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sluice/core/clock.h>
#include <sluice/core/global.h>
#include <sluice/core/log.h>
#include <sluice/core/sched.h>
#include <sluice/proxy/check_agent.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/queue.h>
#include <sluice/proxy/server.h>
#include <sluice/proxy/srv_state.h>
#include <sluice/proxy/srv_statefile.h>
#include <sluice/cfg/cfg.h>
#include <sluice/proxy/stream.h>

/* syslog levels */
#define LVL_EMERG   0
#define LVL_ALERT   1
#define LVL_NOTICE  5

static uint64_t state_now_ms(void)
{
	return th_ctx ? th_ctx->now_ms : clock_mono_ms();
}

/* ---- history ---- */

static int64_t since_start(int64_t ms)
{
	return ms ? ms : (int64_t)global.start_ms;
}

/* HAProxy counts these in whole seconds of its clock: the difference of
 * two second stamps, not a rounded duration. */
static int64_t sec_diff(uint64_t now_ms, int64_t then_ms)
{
	int64_t d = (int64_t)(now_ms / 1000) - then_ms / 1000;

	return d > 0 ? d : 0;
}

int64_t srv_lastchg_sec(const struct server *s, uint64_t now_ms)
{
	return sec_diff(now_ms, since_start(atomic_load(&((struct server *)s)->last_change_ms)));
}

int64_t srv_downtime_sec(const struct server *s, uint64_t now_ms)
{
	struct server *w = (struct server *)s;
	int64_t down = atomic_load(&w->down_ms) / 1000;

	if (srv_is_stopped(s))
		down += sec_diff(now_ms, since_start(atomic_load(&w->last_change_ms)));
	return down;
}

int64_t be_lastchg_sec(const struct proxy *be, uint64_t now_ms)
{
	return sec_diff(now_ms, since_start(atomic_load(&((struct proxy *)be)->be_last_change_ms)));
}

int64_t be_downtime_sec(const struct proxy *be, uint64_t now_ms)
{
	struct proxy *w = (struct proxy *)be;
	int64_t down = atomic_load(&w->be_down_ms) / 1000;
	int up = 0;

	for (int i = 0; i < be->nsrv && !up; i++)
		up = srv_is_usable(be->srv[i]);
	if (!up)
		down += sec_diff(now_ms, since_start(atomic_load(&w->be_last_change_ms)));
	return down;
}

/* A change of <s> from stopped <was> to stopped <now> (each 0 or 1), at
 * <now_ms>. Under state_lock. */
static void srv_note_change(struct server *s, int was, int now, uint64_t now_ms)
{
	int64_t last = since_start(atomic_load(&s->last_change_ms));

	if (was && !now) {
		atomic_fetch_add(&s->down_ms, sec_diff(now_ms, last) * 1000);
		/* back after a failure or maintenance: slowstart from now */
		if (s->slowstart)
			atomic_store(&s->warm_since_ms, (int64_t)(now_ms ? now_ms : 1));
	}
	else if (!was && now)
		atomic_fetch_add(&s->down_trans, 1);
	atomic_store(&s->last_change_ms, (int64_t)now_ms);
}

/* What a change leaves, for its log line. */
struct be_count {
	int act, bck;       /* usable active and backup servers */
	int went_down;      /* the backend lost its last usable server */
};

static void be_count(const struct proxy *be, struct be_count *c)
{
	c->act = c->bck = c->went_down = 0;
	for (int i = 0; i < be->nsrv; i++) {
		if (!srv_is_usable(be->srv[i]))
			continue;
		if (be->srv[i]->backup)
			c->bck++;
		else
			c->act++;
	}
}

/* Counts the usable servers of <be> and keeps its history. Under
 * state_lock. */
static void be_recount(struct proxy *be, uint64_t now_ms, struct be_count *c)
{
	int up;

	be_count(be, c);
	up = c->act + c->bck > 0;
	if (up == be->be_up)
		return;
	if (up) {
		atomic_fetch_add(&be->be_down_ms,
		                 sec_diff(now_ms, since_start(atomic_load(&be->be_last_change_ms))) * 1000);
	} else {
		atomic_fetch_add(&be->be_down_trans, 1);
		c->went_down = 1;
	}
	atomic_store(&be->be_last_change_ms, (int64_t)now_ms);
	be->be_up = up;
}

void srv_state_init_one(struct server *s)
{
	atomic_store(&s->op_state, SRV_OP_UP);
	s->chk_op = SRV_OP_UP;
	s->fadmin = atomic_load(&s->admin);
	s->iadmin = SRV_ADMIN_READY;
	chk_health_init(&s->chk_st.h, s->chk.rise, s->chk.fall);
	s->chk_st.status = CHK_ST_INI;
	s->chk_st.duration_ms = -1;
	/* an agent starts up: only its "down" takes a server down */
	chk_health_init(&s->agent_st.h, 1, 1);
	s->agent_st.status = CHK_ST_INI;
	s->agent_st.duration_ms = -1;
}

void srv_state_init(struct proxy *be)
{
	struct be_count c;

	for (int i = 0; i < be->nsrv; i++)
		srv_state_init_one(be->srv[i]);
	/* the history starts now (last change 0), up or not */
	be_count(be, &c);
	be->be_up = c.act + c.bck > 0;
	atomic_store(&be->be_last_change_ms, 0);
	atomic_store(&be->be_down_ms, 0);
	atomic_store(&be->be_down_trans, 0);
}

/* ---- messages ---- */

/* Appends to <buf> as snprintf would, never past <len>. */
static void msg_add(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void msg_add(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strnlen(buf, len);
	va_list ap;

	if (n + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/* HAProxy quotes the info text with its non-printable bytes, backslash
 * and quote as \xHH, so that a log line stays one line. */
static void msg_add_quoted(char *buf, size_t len, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c >= 0x7f || c == '\\' || c == '"')
			msg_add(buf, len, "\\x%02x", c);
		else
			msg_add(buf, len, "%c", c);
	}
}

void srv_msg_check_info(char *buf, size_t len, const struct check_state *st)
{
	msg_add(buf, len, ", reason: %s", chk_status_desc(st->status));
	if (st->status >= CHK_ST_L57DATA)
		msg_add(buf, len, ", code: %d", st->code);
	if (st->desc[0]) {
		msg_add(buf, len, ", info: \"");
		msg_add_quoted(buf, len, st->desc);
		msg_add(buf, len, "\"");
	}
	if (st->duration_ms >= 0)
		msg_add(buf, len, ", check duration: %dms", st->duration_ms);
}

/* ". 1 active and 0 backup servers left. 0 sessions active, 0 requeued,
 * 0 remaining in queue" (the server stopped) or "... online. 0 sessions
 * requeued, 0 total in queue" (it did not). */
static void msg_add_counts(char *buf, size_t len, const struct server *s, int stopped,
                           const struct be_count *c, int xferred)
{
	msg_add(buf, len, ". %d active and %d backup servers %s.", c->act, c->bck,
	        stopped ? "left" : "online");
	if (c->bck && !c->act)
		msg_add(buf, len, " Running on backup.");
	if (stopped)
		msg_add(buf, len, " %d sessions active, %d requeued, %d remaining in queue",
		        atomic_load(&((struct server *)s)->served), xferred,
		        atomic_load(&((struct server *)s)->queue.len));
	else
		msg_add(buf, len, " %d sessions requeued, %d total in queue", xferred,
		        atomic_load(&((struct server *)s)->queue.len));
}

/* Sends <msg> at syslog <level> to the backend's log targets, and prints
 * it on stderr as HAProxy's ha_warning() / ha_alert() do ("[WARNING]
 * (pid) : msg"), unless quiet. <stderr_msg>, if not NULL, is printed
 * instead of <msg> (HAProxy words a few alerts differently there). */
static void state_log(struct proxy *be, int level, const char *tag, const char *msg,
                      const char *stderr_msg)
{
	size_t len = strlen(msg);

	if (!global.quiet) {
		char head[24];

		snprintf(head, sizeof(head), "[%s]", tag);
		fprintf(stderr, "%-10s (%d) : %s\n", head, global.pid, stderr_msg ? stderr_msg : msg);
	}
	if (!list_empty(&be->logs))
		log_send(&be->logs, level, NULL, global.pid, msg, len);
	if (be->options & PX_O_LOG_GLOBAL)
		log_send(&global.logs, level, NULL, global.pid, msg, len);
}

static void log_backend_down(struct proxy *be)
{
	char msg[300], err[300];

	/* "proxy" for a listen section, as HAProxy names it */
	const char *kind = (be->cap & PX_CAP_FE) ? "proxy" : "backend";

	snprintf(msg, sizeof(msg), "%s %s has no server available!", kind, be->name);
	snprintf(err, sizeof(err), "%s '%s' has no server available!", kind, be->name);
	state_log(be, LVL_EMERG, "ALERT", msg, err);
}

static const char *srv_prefix(const struct server *s)
{
	return s->backup ? "Backup " : "";
}

/* on-marked-down shutdown-sessions, on-marked-up shutdown-backup-sessions,
 * after <s> went from stopped <was> to <is> (DOWN or in maintenance):
 * its own streams end 'D', or those of the backend's backup servers 'U'
 * when an active one with a weight comes back. After the lock: the streams
 * end on their own threads (stream_shutdown_server()). */
static void srv_marked_actions(struct server *s, int was, int is)
{
	struct proxy *be = s->be;

	if (!was && is && s->on_marked_down_kill)
		stream_shutdown_server(s, 'D');
	if (was && !is && s->on_marked_up_kill_backups && !s->backup &&
	    atomic_load(&s->uweight) > 0)
		for (int i = 0; i < be->nsrv; i++)
			if (be->srv[i]->backup)
				stream_shutdown_server(be->srv[i], 'U');
}

/* ---- check results ---- */

static int srv_agent_says_down(const struct server *s);
static void srv_propagate_op(const struct server *s);

/* What a check result changed, for what happens after the lock. */
struct check_outcome {
	int report;              /* the result or the health changed */
	int prev_op, op;         /* enum srv_op, before and after */
	struct check_state st;   /* as recorded */
	int uweight;
	struct be_count c;
};

/* Records the result and applies the health counter. Under state_lock. */
static void check_record(struct server *s, int status, int code, const char *desc,
                         int duration_ms, struct check_outcome *o)
{
	struct check_state *st = &s->chk_st;
	int prev_status = st->status, result = chk_status_result(status);

	st->status = status;
	st->code = code;
	st->duration_ms = duration_ms;
	snprintf(st->desc, sizeof(st->desc), "%s", desc ? desc : "");
	if (result == CHK_RES_FAILED && st->h.health > 0)
		atomic_fetch_add(&s->chk_fail, 1);
	o->report = chk_health_apply(&st->h, result) || status != prev_status;
}

/* The operational state the health and the last result call for, from
 * <op>: DOWN below rise; at or above it, UP after a pass, NOLB after a
 * conditional pass (a 404 under disable-on-404), unchanged after a failure
 * that left it there. */
static int check_next_op(int op, const struct chk_health *h, int result)
{
	if (!chk_health_up(h))
		return SRV_OP_DOWN;
	if (result == CHK_RES_CONDPASS)
		return SRV_OP_NOLB;
	if (result == CHK_RES_PASSED)
		return SRV_OP_UP;
	return op;
}

/* The log line of a check's result (option log-health-checks). */
static void log_check_line(struct server *s, const struct check_outcome *o, const char *kind)
{
	const struct chk_health *h = &o->st.h;
	int up = chk_health_up(h), res = chk_status_result(o->st.status);
	char msg[1024];

	snprintf(msg, sizeof(msg), "%s check for %sserver %s/%s %s%s", kind, s->backup ? "backup " : "",
	         s->be->name, s->name, res == CHK_RES_CONDPASS ? "conditionally " : "",
	         res >= CHK_RES_PASSED ? "succeeded" : "failed");
	srv_msg_check_info(msg, sizeof(msg), &o->st);
	msg_add(msg, sizeof(msg), ", status: %d/%d %s.", up ? h->health - h->rise + 1 : h->health,
	        up ? h->fall : h->rise, up ? (o->uweight ? "UP" : "DRAIN") : "DOWN");
	state_log(s->be, LVL_NOTICE, "WARNING", msg, NULL);
}

/* The state change a check made, then the queue: a server gone DOWN gives
 * its waiters away (option redispatch), one come UP takes the backend's;
 * one soft-stopped keeps its own, as a drained one. */
static void log_state_change(struct server *s, const struct check_outcome *o)
{
	struct proxy *be = s->be;
	int down = o->op == SRV_OP_DOWN, xferred;
	char msg[1024];

	xferred = down ? queue_redistribute(s) : o->op == SRV_OP_UP ? queue_kick(s) : 0;
	snprintf(msg, sizeof(msg), "%sServer %s/%s is %s", srv_prefix(s), be->name, s->name,
	         down ? "DOWN" : o->op == SRV_OP_UP ? "UP" : "stopping");
	/* the reason, unless the check's own line just told it */
	if (!(be->options & PX_O_LOG_HCHK))
		srv_msg_check_info(msg, sizeof(msg), &o->st);
	msg_add_counts(msg, sizeof(msg), s, down, &o->c, xferred);
	msg_add(msg, sizeof(msg), ".");
	/* an alert when it took traffic until then; a soft-stopped server
	 * going down is a notice (HAProxy) */
	state_log(be, down && o->prev_op == SRV_OP_UP ? LVL_ALERT : LVL_NOTICE, "WARNING", msg,
	          NULL);
	if (o->c.went_down)
		log_backend_down(be);
	srv_marked_actions(s, o->prev_op == SRV_OP_DOWN, down);
	srv_propagate_op(s);
}

void srv_check_done(struct server *s, int status, int code, const char *desc,
                    int duration_ms)
{
	struct proxy *be = s->be;
	struct check_outcome o;
	uint64_t now = state_now_ms();

	memset(&o, 0, sizeof(o));
	lock_take(&be->state_lock);
	if (atomic_load(&s->admin) == SRV_ADMIN_MAINT || atomic_load(&s->chk_disabled)) {
		/* paused: a result that was in flight when maintenance began
		 * or the checks were disabled */
		lock_release(&be->state_lock);
		return;
	}
	check_record(s, status, code, desc, duration_ms, &o);
	o.prev_op = atomic_load(&s->op_state);
	s->chk_op = check_next_op(s->chk_op, &s->chk_st.h, chk_status_result(status));
	o.op = srv_agent_says_down(s) ? SRV_OP_DOWN : s->chk_op;
	if (o.op != o.prev_op) {
		atomic_store(&s->op_state, o.op);
		srv_note_change(s, o.prev_op == SRV_OP_DOWN, o.op == SRV_OP_DOWN, now);
		be_recount(be, now, &o.c);
	}
	o.st = s->chk_st;
	o.uweight = atomic_load(&s->uweight);
	lock_release(&be->state_lock);

	if (o.report && (be->options & PX_O_LOG_HCHK))
		log_check_line(s, &o, "Health");
	if (o.op != o.prev_op)
		log_state_change(s, &o);
}

/* ---- observe: what the traffic tells ---- */

/* HAProxy's table: for each status, its words and what it is under
 * observe layer4 and layer7 (0 nothing, 1 a success, 2 an error). */
static const struct {
	const char *desc;
	signed char lr[2];
} hana_tab[] = {
	/* a connection that opens says nothing of the responses to come */
	[HANA_L4_OK]             = { "L4 successful connection", { 1, 0 } },
	[HANA_L4_ERR]            = { "L4 unsuccessful connection", { 2, 2 } },
	[HANA_HTTP_OK]           = { "Correct http response", { 0, 1 } },
	[HANA_HTTP_STS]          = { "Wrong http response", { 0, 2 } },
	[HANA_HTTP_HDRRSP]       = { "Invalid http response (headers)", { 0, 2 } },
	[HANA_HTTP_RSP]          = { "Invalid http response", { 0, 2 } },
	[HANA_HTTP_READ_ERROR]   = { "Read error (http)", { 0, 2 } },
	[HANA_HTTP_READ_TIMEOUT] = { "Read timeout (http)", { 0, 2 } },
	[HANA_HTTP_BROKEN_PIPE]  = { "Connection closed (http)", { 0, 2 } },
};

/* error-limit errors in a row: on-error, as a check result "Health
 * analyze" (HANA) with its own words, then the checks at once. */
static void srv_health_analyze(struct server *s, enum hana_status st, int n)
{
	char desc[CHK_DESC_LEN];

	atomic_fetch_add(&s->hana_fail, 1);
	if (s->on_error == SRV_ONERR_FASTINTER) {
		check_fastinter_now(s);
		return;
	}
	if (s->on_error == SRV_ONERR_SUDDTH || s->on_error == SRV_ONERR_MARKDWN) {
		struct chk_health *h = &s->chk_st.h;

		lock_take(&s->be->state_lock);
		/* sudden death: one failure from down after this one;
		 * mark-down: down with this one */
		if (s->on_error == SRV_ONERR_MARKDWN)
			h->health = 0;
		else if (h->health > h->rise)
			h->health = h->rise + 1;
		lock_release(&s->be->state_lock);
	}
	snprintf(desc, sizeof(desc), "Detected %d consecutive errors, last one was: %s", n,
	         hana_tab[st].desc);
	srv_check_done(s, CHK_ST_HANA, 0, desc, -1);
	check_fastinter_now(s);
}

void srv_observe(struct server *s, enum hana_status st)
{
	int what, n;

	if (!s->observe || !s->check)
		return;
	what = hana_tab[st].lr[s->observe - 1];
	if (!what)
		return;
	if (what == 1) {
		if (atomic_load_explicit(&s->consec_errors, memory_order_relaxed))
			atomic_store_explicit(&s->consec_errors, 0, memory_order_relaxed);
		return;
	}
	n = atomic_fetch_add_explicit(&s->consec_errors, 1, memory_order_relaxed) + 1;
	/* the error that reaches the limit acts, once, and starts it over */
	if (n != s->error_limit)
		return;
	atomic_store_explicit(&s->consec_errors, 0, memory_order_relaxed);
	srv_health_analyze(s, st, n);
}

/* ---- agent results ---- */

static int srv_agent_says_down(const struct server *s)
{
	return s->agent && !atomic_load(&((struct server *)s)->agent_disabled) &&
	       s->agent_st.h.health == 0;
}

/* The weight, maxconn and admin state an agent's reply asked for. */
static void agent_apply(struct server *s, const struct agent_reply *r)
{
	struct proxy *be = s->be;

	if (r->maxconn >= 0) {
		atomic_store(&s->maxconn, r->maxconn);
		queue_kick(s);
	}
	if (r->weight_pct >= 0) {
		long w = (long)s->iweight * r->weight_pct / 100;

		if (w > SRV_WEIGHT_MAX)
			w = SRV_WEIGHT_MAX;
		/* a static algorithm takes only 0% and 100% (HAProxy) */
		if (be->lb_algo != LB_STATIC_RR || w == 0 || w == s->iweight) {
			atomic_store(&s->uweight, (int)w);
			if (w)
				queue_kick(s);
		}
	}
	if (r->admin != AGENT_ADMIN_NONE) {
		int admin = r->admin == AGENT_ADMIN_READY ? SRV_ADMIN_READY :
		            r->admin == AGENT_ADMIN_DRAIN ? SRV_ADMIN_DRAIN : SRV_ADMIN_MAINT;

		srv_set_admin_by(s, admin, 1);
	}
}

void srv_agent_done(struct server *s, int status, int code, const char *desc,
                    int duration_ms, const struct agent_reply *r)
{
	struct proxy *be = s->be;
	struct check_state *st = &s->agent_st;
	struct check_outcome o;
	uint64_t now = state_now_ms();
	int prev_status, prev_health, changed;
	char prev_desc[CHK_DESC_LEN];

	memset(&o, 0, sizeof(o));
	if (r && !atomic_load(&s->agent_disabled))
		agent_apply(s, r);
	lock_take(&be->state_lock);
	if (atomic_load(&s->agent_disabled)) {
		lock_release(&be->state_lock);
		return;
	}
	prev_status = st->status;
	prev_health = st->h.health;
	memcpy(prev_desc, st->desc, sizeof(prev_desc));
	st->status = status;
	st->code = code;
	st->duration_ms = duration_ms;
	snprintf(st->desc, sizeof(st->desc), "%s", desc ? desc : "");
	/* only what the agent says moves its health: "up" or "down"; not
	 * reaching it is no error (the health checks test the service) */
	if (status == CHK_ST_L7OK)
		st->h.health = 1;
	else if (status == CHK_ST_L7STS)
		st->h.health = 0;
	changed = status != prev_status || st->h.health != prev_health ||
	          strcmp(prev_desc, st->desc) != 0;
	o.report = changed && status != CHK_ST_CHECKED;
	o.prev_op = atomic_load(&s->op_state);
	o.op = srv_agent_says_down(s) ? SRV_OP_DOWN : s->chk_op;
	if (o.op != o.prev_op) {
		atomic_store(&s->op_state, o.op);
		srv_note_change(s, o.prev_op == SRV_OP_DOWN, o.op == SRV_OP_DOWN, now);
		be_recount(be, now, &o.c);
	}
	o.st = *st;
	o.uweight = atomic_load(&s->uweight);
	lock_release(&be->state_lock);

	if (o.report && (be->options & PX_O_LOG_HCHK))
		log_check_line(s, &o, "Agent");
	if (o.op != o.prev_op)
		log_state_change(s, &o);
}

/* ---- admin changes ---- */

void srv_set_admin(struct server *s, int admin)
{
	srv_set_admin_by(s, admin, 0);
}

static void srv_admin_change(struct server *s, int fad, int iad, int agent,
                             const struct server *via);

void srv_set_admin_by(struct server *s, int admin, int agent)
{
	srv_admin_change(s, admin, -1, agent, NULL);
}

/* An admin change of <s>: its forced state becomes <fad>, or (<fad> -1)
 * the state it inherits from <via>, the server it tracks, becomes <iad>.
 * The state it is in is the higher of both. Then the servers that track
 * it inherit its new state, down the chain (bounded: loops are refused at
 * start-up). */
static void srv_admin_change(struct server *s, int fad, int iad, int agent,
                             const struct server *via)
{
	struct proxy *be = s->be;
	struct be_count c;
	uint64_t now = state_now_ms();
	int prev, admin, was_stopped, is_stopped, was_down = 0, xferred;
	char msg[1024], vianame[300] = "";

	lock_take(&be->state_lock);
	if (fad >= 0)
		s->fadmin = fad;
	else
		s->iadmin = iad;
	admin = s->fadmin > s->iadmin ? s->fadmin : s->iadmin;
	prev = atomic_load(&s->admin);
	if (prev == admin) {
		lock_release(&be->state_lock);
		return;
	}
	if (fad >= 0)
		atomic_store(&s->admin_by_agent, agent && admin != SRV_ADMIN_READY);
	else
		snprintf(vianame, sizeof(vianame), " via %s/%s", via->be->name, via->name);
	was_stopped = srv_is_stopped(s);
	if (admin == SRV_ADMIN_MAINT) {
		was_down = atomic_load(&s->op_state) == SRV_OP_DOWN;
	} else if (prev == SRV_ADMIN_MAINT && s->check) {
		/* leaving maintenance: up but one failure from down, as a
		 * server starts, and checked at once */
		s->chk_st.h.health = s->chk_st.h.rise;
		s->chk_op = SRV_OP_UP;
		atomic_store(&s->op_state, srv_agent_says_down(s) ? SRV_OP_DOWN : SRV_OP_UP);
	}
	atomic_store(&s->admin, admin);
	is_stopped = srv_is_stopped(s);
	srv_note_change(s, was_stopped, is_stopped, now);
	be_recount(be, now, &c);
	lock_release(&be->state_lock);

	if (admin == SRV_ADMIN_MAINT) {
		xferred = queue_redistribute(s);
		if (was_down)
			snprintf(msg, sizeof(msg), "%sServer %s/%s was DOWN and now enters maintenance%s",
			         srv_prefix(s), be->name, s->name, vianame);
		else
			snprintf(msg, sizeof(msg), "%sServer %s/%s is going DOWN for maintenance%s",
			         srv_prefix(s), be->name, s->name, vianame);
		msg_add_counts(msg, sizeof(msg), s, 1, &c, xferred);
		msg_add(msg, sizeof(msg), ".");
		/* an alert when it took traffic until now (HAProxy) */
		state_log(be, was_down || prev == SRV_ADMIN_DRAIN ? LVL_NOTICE : LVL_ALERT, "WARNING",
		          msg, NULL);
		if (c.went_down)
			log_backend_down(be);
	} else {
		/* a drained server takes nothing from the backend queue */
		xferred = admin == SRV_ADMIN_READY ? queue_kick(s) : 0;
		if (prev == SRV_ADMIN_MAINT) {
			/* HAProxy's words, the second line included */
			snprintf(msg, sizeof(msg), "%sServer %s/%s is UP/%s (leaving %smaintenance).",
			         srv_prefix(s), be->name, s->name,
			         admin == SRV_ADMIN_DRAIN ? "DRAIN" : "READY", via ? "" : "forced ");
			state_log(be, LVL_NOTICE, "WARNING", msg, NULL);
			if (admin == SRV_ADMIN_DRAIN && s->fadmin == SRV_ADMIN_DRAIN) {
				snprintf(msg, sizeof(msg), "%sServer %s/%s remains in forced drain mode.",
				         srv_prefix(s), be->name, s->name);
				state_log(be, LVL_NOTICE, "WARNING", msg, NULL);
			}
			/* checked at once, after these lines: its own come after them */
			if (s->check)
				check_wake_now(s);
		} else if (admin == SRV_ADMIN_DRAIN) {
			snprintf(msg, sizeof(msg), "%sServer %s/%s enters drain state%s", srv_prefix(s),
			         be->name, s->name, vianame);
			msg_add_counts(msg, sizeof(msg), s, 0, &c, xferred);
			msg_add(msg, sizeof(msg), ".");
			state_log(be, LVL_NOTICE, "WARNING", msg, NULL);
		} else {
			snprintf(msg, sizeof(msg), "%sServer %s/%s is %s (leaving %sdrain).",
			         srv_prefix(s), be->name, s->name, is_stopped ? "DOWN" : "UP",
			         via ? "" : "forced ");
			state_log(be, LVL_NOTICE, "WARNING", msg, NULL);
		}
		if (c.went_down)
			log_backend_down(be);
	}
	srv_marked_actions(s, was_stopped, is_stopped);
	for (struct server *t = s->trackers; t; t = t->track_next)
		srv_admin_change(t, -1, admin, 0, s);
}

/* ---- track: a server's op state follows the one it tracks ---- */

/* <t> tracks <via>, whose op state just changed: it takes it (unless its
 * agent holds it down), with HAProxy's "via" log line, then passes it on. */
static void srv_op_follow(struct server *t, const struct server *via)
{
	struct proxy *be = t->be;
	struct be_count c;
	uint64_t now = state_now_ms();
	int prev, op, down, was, xferred;
	char msg[1024];

	lock_take(&be->state_lock);
	t->chk_op = atomic_load(&((struct server *)via)->op_state);
	prev = atomic_load(&t->op_state);
	op = srv_agent_says_down(t) ? SRV_OP_DOWN : t->chk_op;
	if (op == prev) {
		lock_release(&be->state_lock);
		return;
	}
	was = srv_is_stopped(t);
	atomic_store(&t->op_state, op);
	srv_note_change(t, was, srv_is_stopped(t), now);
	be_recount(be, now, &c);
	lock_release(&be->state_lock);
	down = op == SRV_OP_DOWN;
	xferred = down ? queue_redistribute(t) : op == SRV_OP_UP ? queue_kick(t) : 0;
	snprintf(msg, sizeof(msg), "%sServer %s/%s is %s via %s/%s", srv_prefix(t), be->name,
	         t->name, down ? "DOWN" : op == SRV_OP_UP ? "UP" : "stopping", via->be->name,
	         via->name);
	msg_add_counts(msg, sizeof(msg), t, down, &c, xferred);
	msg_add(msg, sizeof(msg), ".");
	state_log(be, down && prev == SRV_OP_UP ? LVL_ALERT : LVL_NOTICE, "WARNING", msg, NULL);
	if (c.went_down)
		log_backend_down(be);
	srv_marked_actions(t, prev == SRV_OP_DOWN, down);
	srv_propagate_op(t);
}

static void srv_propagate_op(const struct server *s)
{
	for (struct server *t = s->trackers; t; t = t->track_next)
		srv_op_follow(t, s);
}

/* ---- forced health (set server health) ---- */

void srv_set_health(struct server *s, int op)
{
	struct proxy *be = s->be;
	struct check_outcome o;
	uint64_t now = state_now_ms();
	char msg[1024];
	int down, xferred;

	/* a tracking server's state is its tracked server's (HAProxy) */
	if (s->track)
		return;
	memset(&o, 0, sizeof(o));
	lock_take(&be->state_lock);
	if (op == SRV_OP_UP)
		s->chk_st.h.health = s->chk_st.h.rise + s->chk_st.h.fall - 1;
	else if (op == SRV_OP_DOWN)
		s->chk_st.h.health = 0;
	o.prev_op = atomic_load(&s->op_state);
	s->chk_op = op;
	o.op = op;
	if (o.op != o.prev_op) {
		int was = srv_is_stopped(s);

		atomic_store(&s->op_state, op);
		srv_note_change(s, was, srv_is_stopped(s), now);
		be_recount(be, now, &o.c);
	}
	lock_release(&be->state_lock);
	if (o.op == o.prev_op)
		return;
	down = op == SRV_OP_DOWN;
	xferred = down ? queue_redistribute(s) : op == SRV_OP_UP ? queue_kick(s) : 0;
	snprintf(msg, sizeof(msg), "%sServer %s/%s is %s, changed from CLI", srv_prefix(s),
	         be->name, s->name, down ? "DOWN" : op == SRV_OP_UP ? "UP" : "stopping");
	msg_add_counts(msg, sizeof(msg), s, down, &o.c, xferred);
	msg_add(msg, sizeof(msg), ".");
	state_log(be, down && o.prev_op == SRV_OP_UP ? LVL_ALERT : LVL_NOTICE, "WARNING", msg,
	          NULL);
	if (o.c.went_down)
		log_backend_down(be);
	srv_marked_actions(s, o.prev_op == SRV_OP_DOWN, down);
	srv_propagate_op(s);
}

void srv_check_started(struct server *s)
{
	lock_take(&s->be->state_lock);
	s->chk_st.code = 0;
	s->chk_st.desc[0] = '\0';
	lock_release(&s->be->state_lock);
}

void srv_check_snapshot(struct server *s, struct check_state *out)
{
	lock_take(&s->be->state_lock);
	*out = s->chk_st;
	lock_release(&s->be->state_lock);
}

void srv_agent_snapshot(struct server *s, struct check_state *out)
{
	lock_take(&s->be->state_lock);
	*out = s->agent_st;
	lock_release(&s->be->state_lock);
}

void srv_agent_started(struct server *s)
{
	lock_take(&s->be->state_lock);
	s->agent_st.code = 0;
	lock_release(&s->be->state_lock);
}

void srv_set_agent_health(struct server *s, int up)
{
	struct proxy *be = s->be;
	struct be_count c;
	uint64_t now = state_now_ms();
	int prev, op, down, xferred;
	char msg[1024];

	lock_take(&be->state_lock);
	s->agent_st.h.health = up ? 1 : 0;
	prev = atomic_load(&s->op_state);
	op = srv_agent_says_down(s) ? SRV_OP_DOWN : s->chk_op;
	if (op != prev) {
		atomic_store(&s->op_state, op);
		srv_note_change(s, prev == SRV_OP_DOWN, op == SRV_OP_DOWN, now);
		be_recount(be, now, &c);
	}
	lock_release(&be->state_lock);
	if (op == prev)
		return;
	down = op == SRV_OP_DOWN;
	xferred = down ? queue_redistribute(s) : op == SRV_OP_UP ? queue_kick(s) : 0;
	snprintf(msg, sizeof(msg), "%sServer %s/%s is %s, changed from CLI", srv_prefix(s),
	         be->name, s->name, down ? "DOWN" : op == SRV_OP_UP ? "UP" : "stopping");
	msg_add_counts(msg, sizeof(msg), s, down, &c, xferred);
	msg_add(msg, sizeof(msg), ".");
	state_log(be, down && prev == SRV_OP_UP ? LVL_ALERT : LVL_NOTICE, "WARNING", msg, NULL);
	if (c.went_down)
		log_backend_down(be);
	srv_marked_actions(s, prev == SRV_OP_DOWN, down);
	srv_propagate_op(s);
}

/* ---- states saved by a previous process ---- */

void srv_state_restore(struct server *s, const struct srv_saved *v, const char *file)
{
	struct proxy *be = s->be;
	struct chk_health *h = &s->chk_st.h;
	struct be_count c;
	uint64_t now = state_now_ms();
	int was = srv_is_stopped(s), op;
	char msg[512];

	lock_take(&be->state_lock);
	/* the weight, unless the configuration changed it meanwhile */
	if (v->iweight == s->iweight)
		atomic_store(&s->uweight, v->uweight > SRV_WEIGHT_MAX ? SRV_WEIGHT_MAX : v->uweight);
	if (v->admin & SRV_SAVED_FMAINT)
		s->fadmin = SRV_ADMIN_MAINT;
	else if (v->admin & SRV_SAVED_FDRAIN)
		s->fadmin = SRV_ADMIN_DRAIN;
	atomic_store(&s->admin, s->fadmin > s->iadmin ? s->fadmin : s->iadmin);
	op = v->op == 0 ? SRV_OP_DOWN : v->op == 3 ? SRV_OP_NOLB : SRV_OP_UP;
	h->health = op == SRV_OP_DOWN || (v->admin & SRV_SAVED_FMAINT) ? 0 : h->rise + h->fall - 1;
	if (s->check && v->check_status < CHK_ST_COUNT)
		s->chk_st.status = v->check_status;
	s->chk_op = op;
	atomic_store(&s->op_state, op);
	/* checks or agent disabled on the CLI stay so (configured, not enabled) */
	if (s->check && (v->check_state & 0x06) == 0x02)
		atomic_store(&s->chk_disabled, 1);
	if (s->agent && (v->agent_state & 0x06) == 0x02)
		atomic_store(&s->agent_disabled, 1);
	if (v->since_s >= 0 && (uint64_t)v->since_s * 1000 < now)
		atomic_store(&s->last_change_ms, (int64_t)(now - (uint64_t)v->since_s * 1000));
	if (!was && srv_is_stopped(s))
		atomic_fetch_add(&s->down_trans, 1);
	be_recount(be, now, &c);
	lock_release(&be->state_lock);

	if (op == SRV_OP_DOWN) {
		snprintf(msg, sizeof(msg), "%sServer %s/%s is DOWN, changed from server-state after a "
		         "reload", srv_prefix(s), be->name, s->name);
		msg_add_counts(msg, sizeof(msg), s, 1, &c, 0);
		cfg_warning(file, v->line, "%s.", msg);
	}
	if ((v->admin & SRV_SAVED_FDRAIN) && !(v->admin & SRV_SAVED_FMAINT))
		cfg_warning(file, v->line, "%sServer %s/%s remains in forced drain mode.",
		            srv_prefix(s), be->name, s->name);
	/* the servers tracking it follow */
	for (struct server *t = s->trackers; t; t = t->track_next)
		srv_admin_change(t, -1, atomic_load(&s->admin), 0, s);
	srv_propagate_op(s);
}

/* ---- track at start-up ---- */

/* Each tracking server inherits the admin state of the one it tracks,
 * down the chains (they have no loop): repeated until nothing changes, a
 * chain being at most as long as there are servers. Before the threads. */
void srv_track_init(void)
{
	struct list *pos, *tmp;
	int changed = 1;

	while (changed) {
		changed = 0;
		list_for_each_safe(pos, tmp, &proxies) {
			struct proxy *px = list_elem(pos, struct proxy, list);

			for (int i = 0; (px->cap & PX_CAP_BE) && i < px->nsrv; i++) {
				struct server *s = px->srv[i];
				int ia = s->track ? atomic_load(&s->track->admin) : SRV_ADMIN_READY, a;

				if (!s->track || s->iadmin == ia)
					continue;
				s->iadmin = ia;
				a = s->fadmin > ia ? s->fadmin : ia;
				atomic_store(&s->admin, a);
				changed = 1;
			}
		}
	}
}

int srv_admin_inherited(struct server *s)
{
	int r;

	lock_take(&s->be->state_lock);
	r = s->iadmin > s->fadmin;
	lock_release(&s->be->state_lock);
	return r;
}

int srv_admin_bits(struct server *s)
{
	int r;

	lock_take(&s->be->state_lock);
	r = (s->fadmin == SRV_ADMIN_MAINT ? 0x01 : s->fadmin == SRV_ADMIN_DRAIN ? 0x08 : 0) |
	    (s->iadmin == SRV_ADMIN_MAINT ? 0x02 : s->iadmin == SRV_ADMIN_DRAIN ? 0x10 : 0);
	lock_release(&s->be->state_lock);
	return r;
}

void srv_state_recount(struct proxy *be)
{
	struct be_count c;
	uint64_t now = state_now_ms();

	lock_take(&be->state_lock);
	be_recount(be, now, &c);
	lock_release(&be->state_lock);
}
