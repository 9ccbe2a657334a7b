/* Master CLI parsers (src/mgmt/mcli_parse.c): the -S argument, a command
 * line split at ';', the @ prefixes, and `show proc`'s layout as HAProxy
 * 2.6 prints it. */
#include <sluice/mgmt/cli.h>
#include <sluice/mgmt/mworker.h>
#include "t.h"

static void test_bind(void)
{
	struct mcli_bind b;
	char err[256];

	CHECK(mcli_bind_parse("fd@3", &b, err, sizeof(err)) == 0);
	CHECK_STR(b.addr, "fd@3");
	CHECK(b.mode == -1 && b.uid == -1 && b.gid == -1 && b.level == CLI_LEVEL_ADMIN);

	CHECK(mcli_bind_parse("/tmp/m.sock,uid,1000,gid,100,mode,600", &b, err, sizeof(err)) == 0);
	CHECK_STR(b.addr, "/tmp/m.sock");
	CHECK(b.uid == 1000 && b.gid == 100 && b.mode == 0600);

	CHECK(mcli_bind_parse("127.0.0.1:1234,level,user", &b, err, sizeof(err)) == 0);
	CHECK_STR(b.addr, "127.0.0.1:1234");
	CHECK(b.level == CLI_LEVEL_USER);
	CHECK(mcli_bind_parse("/s,level,operator,user,haproxy,group,adm", &b, err, sizeof(err)) == 0);
	CHECK(b.level == CLI_LEVEL_OPERATOR);
	CHECK_STR(b.user, "haproxy");
	CHECK_STR(b.group, "adm");

	CHECK(mcli_bind_parse("", &b, err, sizeof(err)) < 0);
	CHECK(mcli_bind_parse(",mode,600", &b, err, sizeof(err)) < 0);
	CHECK(mcli_bind_parse("/s,mode", &b, err, sizeof(err)) < 0);
	CHECK(strstr(err, "expects a value") != NULL);
	CHECK(mcli_bind_parse("/s,mode,999", &b, err, sizeof(err)) < 0);
	CHECK(mcli_bind_parse("/s,uid,-1", &b, err, sizeof(err)) < 0);
	CHECK(mcli_bind_parse("/s,level,root", &b, err, sizeof(err)) < 0);
	CHECK(mcli_bind_parse("/s,accept-proxy,1", &b, err, sizeof(err)) < 0);
	CHECK(strstr(err, "unknown option 'accept-proxy'") != NULL);
}

static void test_split(void)
{
	char line[] = "@1 show info;  @2 show info ;show proc;;x\\;y";
	char *c[8];
	int n = mcli_split_line(line, c, 8);

	CHECK(n == 5);
	CHECK_STR(c[0], "@1 show info");
	CHECK_STR(c[1], "@2 show info");
	CHECK_STR(c[2], "show proc");
	CHECK_STR(c[3], "");
	CHECK_STR(c[4], "x\\;y");

	char one[] = "show proc";
	CHECK(mcli_split_line(one, c, 8) == 1);
	CHECK_STR(c[0], "show proc");

	char many[] = "a;b;c;d";
	CHECK(mcli_split_line(many, c, 2) == 2);
	CHECK(mcli_split_line(many, c, 0) == 0);
}

static void test_prefix(void)
{
	struct mcli_cmd c;
	char s1[] = "@1 show info", s2[] = "@!1271 show  stat", s3[] = "@",
	     s4[] = "@master show proc", s5[] = "show proc", s6[] = "@x show info",
	     s7[] = "@!", s8[] = "@1", s9[] = "@!12a";

	CHECK(mcli_parse_cmd(s1, &c) == 0);
	CHECK(c.target == MCLI_T_RELATIVE && c.num == 1);
	CHECK_STR(c.cmd, "show info");
	CHECK_STR(c.prefix, "@1");
	CHECK(mcli_parse_cmd(s2, &c) == 0);
	CHECK(c.target == MCLI_T_PID && c.num == 1271);
	CHECK_STR(c.cmd, "show  stat");
	CHECK(mcli_parse_cmd(s3, &c) == 0 && c.target == MCLI_T_MASTER);
	CHECK_STR(c.cmd, "");
	CHECK(mcli_parse_cmd(s4, &c) == 0 && c.target == MCLI_T_MASTER);
	CHECK_STR(c.cmd, "show proc");
	CHECK(mcli_parse_cmd(s5, &c) == 0 && c.target == MCLI_T_NONE && !c.prefix);
	CHECK_STR(c.cmd, "show proc");
	CHECK(mcli_parse_cmd(s6, &c) < 0);
	CHECK_STR(c.prefix, "@x");
	CHECK(mcli_parse_cmd(s7, &c) < 0);
	CHECK(mcli_parse_cmd(s8, &c) == 0 && c.target == MCLI_T_RELATIVE);
	CHECK_STR(c.cmd, "");
	CHECK(mcli_parse_cmd(s9, &c) < 0);
}

static void test_show_proc(void)
{
	char buf[256];

	mcli_fmt_uptime(buf, sizeof(buf), 0);
	CHECK_STR(buf, "0d00h00m00s");
	mcli_fmt_uptime(buf, sizeof(buf), 2 * 86400 + 3 * 3600 + 4 * 60 + 5);
	CHECK_STR(buf, "2d03h04m05s");
	/* the exact text of HAProxy 2.6.12's `show proc` */
	mcli_fmt_proc_line(buf, sizeof(buf), "#<PID>", "<type>", "<reloads>", "<uptime>",
	                   "<version>");
	CHECK_STR(buf, "#<PID>          <type>          <reloads>       <uptime>        "
	          "<version>      \n");
	mcli_fmt_proc_line(buf, sizeof(buf), "20636", "master", "0 [failed: 0]", "0d00h00m01s",
	                   "2.6.12-1+deb12u4");
	CHECK_STR(buf, "20636           master          0 [failed: 0]   0d00h00m01s     "
	          "2.6.12-1+deb12u4\n");
}

static void test_socks(void)
{
	char text[] = "cli|unix@/tmp/a.sock|v6only=0|v4v6=0\nfe|127.0.0.1:80|v6only=0|v4v6=0\n"
	              "fe|127.0.0.1:80|v6only=0|v4v6=0\n\n";
	char err_text[] = "Permission denied: no.\n\n";
	char *k[8];

	CHECK(mcli_socks_split(text, k, 8) == 3);
	CHECK_STR(k[0], "cli|unix@/tmp/a.sock|v6only=0|v4v6=0");
	CHECK_STR(k[2], "fe|127.0.0.1:80|v6only=0|v4v6=0");
	CHECK(mcli_socks_split(err_text, k, 8) == 1);
	char two[] = "a\nb\nc";
	CHECK(mcli_socks_split(two, k, 2) == 2);
	char none[] = "\n\n";
	CHECK(mcli_socks_split(none, k, 8) == 0);
}

int main(void)
{
	test_socks();
	test_bind();
	test_split();
	test_prefix();
	test_show_proc();
	return t_done("mcli");
}
