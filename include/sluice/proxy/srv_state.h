/* Server state changes (src/proxy/srv_state.c): check results and admin
 * changes, what they do to the queues, and the log lines HAProxy prints. */
#ifndef SLUICE_PROXY_SRV_STATE_H
#define SLUICE_PROXY_SRV_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <sluice/proxy/check.h>

struct server;
struct proxy;

/* A check of <s> starts: its last code and info are cleared, as HAProxy's
 * `show stat` shows them while a check runs ("* L7OK" with code 0). */
void srv_check_started(struct server *s);

/* A check of <s> ended with <status> (enum chk_status), the HTTP <code>
 * (0 if none), the info text <desc> (may be NULL) and its duration. Runs
 * on the check's thread: records the result, moves the health, changes
 * the server's state when it crosses rise or fall, then moves or serves
 * its queue and logs. Ignored while the server is in maintenance. */
void srv_check_done(struct server *s, int status, int code, const char *desc,
                    int duration_ms);

/* The CLI changes the admin state of <s> (enum srv_admin): a server set to
 * maint gives its waiters to the backend queue under `option redispatch`,
 * one leaving it takes waiters at once and, if checked, starts again "UP,
 * going down" and is checked at once. Logged as HAProxy does. */
void srv_set_admin(struct server *s, int admin);
/* The same, <agent> saying the agent check asked for it (`show stat`
 * then shows "DRAIN (agent)"). */
void srv_set_admin_by(struct server *s, int admin, int agent);

/* An agent check's result: <status> and <desc> as for srv_check_done(),
 * <r> the reply when one was read (its weight, maxconn and admin state
 * applied after the state), NULL otherwise. The agent's "up" (L7OK) and
 * "down" (L7STS) set its health; other failures leave it. A server is DOWN
 * while its agent says down, whatever its health checks say. Any thread. */
struct agent_reply;
void srv_agent_done(struct server *s, int status, int code, const char *desc,
                    int duration_ms, const struct agent_reply *r);
void srv_agent_started(struct server *s);
void srv_agent_snapshot(struct server *s, struct check_state *out);
/* The state a previous process saved for <s> (line <v> of <file>), at
 * start-up: its admin state when forced, its weight when its initial
 * weight did not change, its operational state, its checks and agent
 * disabled or not, the time of its last change; HAProxy's warnings on
 * stderr. Before the threads run. */
struct srv_saved;
void srv_state_restore(struct server *s, const struct srv_saved *v, const char *file);

/* `show servers state`'s srv_admin_state: HAProxy's bits, 0x01 forced
 * maintenance, 0x08 forced drain, 0x02 and 0x10 the same inherited. */
int srv_admin_bits(struct server *s);

/* 1 when <s>'s admin state comes from the server it tracks (display). */
int srv_admin_inherited(struct server *s);

/* After the tracks are resolved (check.c): tracking servers start in the
 * admin state of the servers they track. */
void srv_track_init(void);

/* `set server <b>/<s> agent up|down`. */
void srv_set_agent_health(struct server *s, int up);

/* The CLI forces the operational state of <s> (`set server health`,
 * enum srv_op): UP fills its health, DOWN empties it, NOLB (stopping)
 * leaves it; then the queue moves and the change is logged ("changed from
 * CLI"), as a check's change would. */
void srv_set_health(struct server *s, int op);

/* A copy of s->chk_st taken under the lock, for display. */
void srv_check_snapshot(struct server *s, struct check_state *out);

/* After parsing: every server's history starts now, checked servers at
 * health <rise>, each backend up if it has a usable server. */
void srv_state_init(struct proxy *be);
/* The same for one server (added at run time). */
void srv_state_init_one(struct server *s);
/* Counts <be>'s usable servers again (a server added or deleted). */
void srv_state_recount(struct proxy *be);

/* Seconds since the last change of <s> / of the backend, and seconds spent
 * stopped (DOWN or MAINT) / without a usable server, as `show stat`'s
 * lastchg and downtime count them (whole seconds of the process clock). */
int64_t srv_lastchg_sec(const struct server *s, uint64_t now_ms);
int64_t srv_downtime_sec(const struct server *s, uint64_t now_ms);
int64_t be_lastchg_sec(const struct proxy *be, uint64_t now_ms);
int64_t be_downtime_sec(const struct proxy *be, uint64_t now_ms);

/* ", reason: Layer4 connection problem, info: \"Connection refused\",
 * check duration: 0ms": how HAProxy appends a check result to a message.
 * Appends to <buf> (NUL-terminated, <len> its capacity, truncated). */
void srv_msg_check_info(char *buf, size_t len, const struct check_state *st);

#endif
