/* Agent checks (`agent-check`): the reply of an agent, read as HAProxy 2.6
 * reads it. A pure parser (tests/unit/test_check_agent.c,
 * fuzz/fuzz_check_agent.c); src/proxy/check.c runs the agent checks and
 * src/proxy/srv_state.c applies what a reply says.
 */
#ifndef SLUICE_PROXY_CHECK_AGENT_H
#define SLUICE_PROXY_CHECK_AGENT_H

#include <stddef.h>

#define AGENT_TEXT_LEN  128   /* the info texts below, NUL included */

enum { AGENT_OP_NONE = 0, AGENT_OP_UP, AGENT_OP_DOWN };
enum { AGENT_ADMIN_NONE = 0, AGENT_ADMIN_READY, AGENT_ADMIN_DRAIN, AGENT_ADMIN_MAINT };

/* What one reply says; each field stays at "none" when the agent did not
 * say it ("parameters which are not advertised by the agent are not
 * changed"). */
struct agent_reply {
	int weight_pct;              /* "75%": percent of the initial weight; -1 */
	int maxconn;                 /* "maxconn:30"; -1 */
	int admin;                   /* AGENT_ADMIN_* */
	int op;                      /* AGENT_OP_*: up, or down/fail/stopped */
	char info[AGENT_TEXT_LEN];   /* "via agent : down (the #description)" */
	char error[AGENT_TEXT_LEN];  /* "agent reports an error : <word>", or "" */
};

/* Reads the first line of an agent's reply in <p>/<len> (up to the first
 * CR or LF, or all of it): words separated by spaces, tabs or commas, in
 * any order and any case, a word beginning with '#' making the rest of the
 * line the description of a down/fail/stopped. An unknown word stops the
 * reading with an error; what came before it stays. Returns 0, or -1 when
 * the reply is empty (before its end of line). */
int agent_reply_parse(const char *p, size_t len, struct agent_reply *r);

/* The end of the first line in <p>/<len>: 1 when a CR or LF is there. */
int agent_reply_complete(const char *p, size_t len);

#endif
