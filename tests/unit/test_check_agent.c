/* Agent check replies, read as HAProxy 2.6 reads them (the texts are those
 * its `show stat` gave for the same replies: last_agt, the weight, maxconn
 * and admin state that followed). */
#include <stdio.h>
#include <string.h>
#include <sluice/proxy/check_agent.h>
#include "t.h"

static struct agent_reply parse(const char *s, int *rc)
{
	struct agent_reply r;

	*rc = agent_reply_parse(s, strlen(s), &r);
	return r;
}

static void test_words(void)
{
	struct agent_reply r;
	int rc;

	r = parse("50%\n", &rc);
	CHECK(rc == 0 && r.weight_pct == 50 && r.op == AGENT_OP_NONE && r.maxconn == -1);
	CHECK(r.admin == AGENT_ADMIN_NONE && !r.info[0] && !r.error[0]);
	r = parse("maxconn:30 75%,ready up\n", &rc);
	CHECK(r.maxconn == 30 && r.weight_pct == 75 && r.admin == AGENT_ADMIN_READY);
	CHECK(r.op == AGENT_OP_UP);
	CHECK_STR(r.info, "via agent : up");
	r = parse("MAXCONN:30,Up\r\n", &rc);
	CHECK(r.maxconn == 30 && r.op == AGENT_OP_UP);
	CHECK_STR(r.info, "via agent : Up");
	r = parse("drain", &rc);          /* no end of line: the close ends it */
	CHECK(rc == 0 && r.admin == AGENT_ADMIN_DRAIN);
	r = parse("maint\n", &rc);
	CHECK(r.admin == AGENT_ADMIN_MAINT);
	r = parse("100% drain up\n", &rc);
	CHECK(r.weight_pct == 100 && r.admin == AGENT_ADMIN_DRAIN && r.op == AGENT_OP_UP);
	r = parse("0%\n", &rc);
	CHECK(r.weight_pct == 0);
	r = parse("200%\n", &rc);
	CHECK(r.weight_pct == 200);
}

static void test_down(void)
{
	struct agent_reply r;
	int rc;

	r = parse("down #maint window\n", &rc);
	CHECK(r.op == AGENT_OP_DOWN);
	CHECK_STR(r.info, "via agent : down (maint window)");
	r = parse("fail\n", &rc);
	CHECK_STR(r.info, "via agent : fail");
	r = parse("stopped\t#  spaced\n", &rc);
	CHECK_STR(r.info, "via agent : stopped (spaced)");
	r = parse("DOWN\n", &rc);
	CHECK(r.op == AGENT_OP_DOWN);
	CHECK_STR(r.info, "via agent : DOWN");
	/* the sharp must start a word: "down#x" is one unknown word */
	r = parse("down#maintenance window\n", &rc);
	CHECK(r.op == AGENT_OP_NONE);
	CHECK_STR(r.error, "agent reports an error : down#maintenance");
	/* only the first line counts */
	r = parse("up\ndown\n", &rc);
	CHECK(r.op == AGENT_OP_UP);
}

static void test_errors(void)
{
	struct agent_reply r;
	int rc;

	r = parse("garbage words\n", &rc);
	CHECK(rc == 0);
	CHECK_STR(r.error, "agent reports an error : garbage");
	r = parse("maxconn:0 50\n", &rc);
	CHECK(r.maxconn == 0);
	CHECK_STR(r.error, "agent reports an error : 50");
	r = parse("maxconn:x\n", &rc);
	CHECK_STR(r.error, "agent reports an error : maxconn:x");
	r = parse("%\n", &rc);
	CHECK_STR(r.error, "agent reports an error : %");
	r = parse("-5%\n", &rc);
	CHECK(r.weight_pct == -1 && r.error[0]);
	r = parse("\n", &rc);
	CHECK(rc == -1);
	r = parse("", &rc);
	CHECK(rc == -1);
	CHECK(agent_reply_complete("up\r", 3) && !agent_reply_complete("up", 2));
}

int main(void)
{
	test_words();
	test_down();
	test_errors();
	return t_done("test_check_agent");
}
