/* HTTP proxy keywords through the real parser: what each keyword stores in
 * struct proxy, the inheritance from a defaults section (deep copies, error
 * pages shared by reference), the http-errors section and its imports,
 * the post-parse fallbacks of a TCP proxy, and freeing the module's own
 * state. Error messages are covered by reg-tests/config/bad_http_keywords*.vtc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sluice/cfg/cfg.h>
#include <sluice/core/log.h>
#include <sluice/http/errors.h>
#include <sluice/http/http_cfg.h>
#include <sluice/proxy/lb_hash.h>
#include <sluice/proxy/proxy.h>
#include <sluice/proxy/server.h>
#include "t.h"

static char dir[] = "/tmp/sluice-test-http-cfg-XXXXXX";
static char path_cfg[256], path_503[256];

static const char cfg_text[] =
	"http-errors site\n"
	"    errorfile 503 %s\n"
	"defaults d\n"
	"    mode http\n"
	"    timeout connect 1s\n"
	"    timeout client 5s\n"
	"    timeout server 5s\n"
	"    timeout http-request 5s\n"
	"    timeout http-keep-alive 2s\n"
	"    timeout tarpit 3s\n"
	"    option http-server-close\n"
	"    option forwardfor except 10.0.0.0/8 header X-Client if-none\n"
	"    option originalto except 2001:db8::/32\n"
	"    option httplog clf\n"
	"    option logasap\n"
	"    cookie SRV insert indirect nocache domain .a.com domain .b.com maxidle 30m maxlife 8h\n"
	"    balance uri len 10 depth 2 whole path-only\n"
	"    hash-type consistent djb2\n"
	"    http-reuse always\n"
	"    monitor-uri /mon\n"
	"    unique-id-format %%rt\n"
	"    unique-id-header X-ID\n"
	"    errorfiles site\n"
	"    http-error status 429 content-type text/plain string slow\n"
	"listen li from d\n"
	"    bind 127.0.0.1:18999\n"
	"    capture request header Host len 12\n"
	"    capture response header Server len 8\n"
	"    option httpclose\n"
	"    no option logasap\n"
	"    server s1 127.0.0.1:9 cookie a\n"
	"backend be2 from d\n"
	"    balance url_param sid\n"
	"    hash-type map-based crc32 avalanche\n"
	"    no option http-server-close\n"
	"    http-error status 503 default-errorfiles\n"
	"    server s1 127.0.0.1:9 cookie a\n"
	"backend be3 from d\n"
	"    mode tcp\n"
	"    balance hdr(Host) use_domain_only\n"
	"    server s1 127.0.0.1:9 cookie a\n"
	"backend be4 from d\n"
	"    cookie JS prefix\n"
	"    hash-type consistent\n"
	"    balance hdr(X-User)\n"
	"    server s1 127.0.0.1:9\n";

static int write_files(void)
{
	FILE *f;

	if (!mkdtemp(dir))
		return -1;
	snprintf(path_503, sizeof(path_503), "%s/503.http", dir);
	snprintf(path_cfg, sizeof(path_cfg), "%s/t.cfg", dir);
	f = fopen(path_503, "w");
	if (!f)
		return -1;
	fputs("HTTP/1.1 503 Busy\r\nContent-Length: 4\r\n\r\nbusy", f);
	fclose(f);
	f = fopen(path_cfg, "w");
	if (!f)
		return -1;
	fprintf(f, cfg_text, path_503);
	fclose(f);
	return 0;
}

static void test_listen(void)
{
	struct proxy *li = proxy_find("li", PX_CAP_FE);
	const struct http_reply *r;
	struct lb_hash_conf hc;

	CHECK(li != NULL);
	if (!li)
		return;
	CHECK(li->mode == PX_MODE_HTTP);
	CHECK(li->timeout_http_request == 5000);
	CHECK(li->timeout_http_keep_alive == 2000);
	CHECK(li->timeout_tarpit == 3000);
	CHECK(li->http_conn == PX_HTTP_CLO);           /* its own line wins */
	CHECK((li->options & (PX_O_FORWARDFOR | PX_O_ORIGINALTO | PX_O_HTTPLOG |
	                      PX_O_HTTPLOG_CLF)) ==
	      (PX_O_FORWARDFOR | PX_O_ORIGINALTO | PX_O_HTTPLOG | PX_O_HTTPLOG_CLF));
	CHECK(!(li->options & (PX_O_LOGASAP | PX_O_TCPLOG)));
	CHECK_STR(li->fwdfor.hdr, "X-Client");
	CHECK(li->fwdfor.hdr != li->defaults->fwdfor.hdr);   /* a copy */
	CHECK(li->fwdfor.has_except && li->fwdfor.except_plen == 8 && li->fwdfor.if_none);
	CHECK(li->fwdfor.except_net.ss_family == AF_INET);
	CHECK(li->origto.has_except && li->origto.except_plen == 32 && !li->origto.hdr);
	CHECK(li->origto.except_net.ss_family == AF_INET6);
	CHECK_STR(li->cookie_name, "SRV");
	CHECK(li->cookie_name != li->defaults->cookie_name);
	CHECK(li->cookie_opts == (PX_CK_INSERT | PX_CK_INDIRECT | PX_CK_NOCACHE));
	CHECK_STR(li->cookie_domain, ".a.com; domain=.b.com");
	CHECK(li->cookie_maxidle == 1800 && li->cookie_maxlife == 8 * 3600);
	CHECK(li->lb_algo == LB_URI && li->lb_uri_len == 10 && li->lb_uri_depth == 2 &&
	      li->lb_uri_whole && li->lb_uri_path_only);
	CHECK(li->hash_type == LB_HASH_CONSISTENT);
	lb_hash_conf_get(li, &hc);
	CHECK(hc.fn == LB_HFN_DJB2 && !hc.avalanche);
	CHECK(lb_hash_ent(li, 0) && lb_hash_ent(li, 0)->ring);   /* built after parsing */
	CHECK(li->http_reuse == PX_REUSE_ALWAYS);
	CHECK_STR(li->monitor_uri, "/mon");
	CHECK_STR(li->unique_id_fmt_str, "%rt");
	CHECK(li->unique_id_fmt && li->unique_id_fmt->count > 0);
	CHECK_STR(li->unique_id_hdr, "X-ID");
	CHECK(li->nreq_cap == 1 && li->nres_cap == 1);
	CHECK_STR(li->req_cap[0].name, "Host");
	CHECK(li->req_cap[0].len == 12 && li->res_cap[0].len == 8);
	/* error pages: the section's 503 through the inherited import, the
	 * defaults' own 429, built-in pages otherwise */
	CHECK(li->errors != NULL);
	r = http_errors_find(li->errors, NULL, 503);
	CHECK(r && !(r->flags & HTTP_REPLY_F_BUILTIN) && r->status == 503);
	CHECK(r && r->raw_len > 4 && memcmp(r->raw + r->raw_len - 4, "busy", 4) == 0);
	r = http_errors_find(li->errors, NULL, 429);
	CHECK(r && !(r->flags & HTTP_REPLY_F_BUILTIN));
	r = http_errors_find(li->errors, NULL, 404);
	CHECK(r && (r->flags & HTTP_REPLY_F_BUILTIN));
}

static void test_backends(void)
{
	struct proxy *be2 = proxy_find("be2", PX_CAP_BE);
	struct proxy *be3 = proxy_find("be3", PX_CAP_BE);
	struct proxy *be4 = proxy_find("be4", PX_CAP_BE);
	const struct http_reply *r;
	struct lb_hash_conf hc;

	CHECK(be2 && be3 && be4);
	if (!be2 || !be3 || !be4)
		return;
	CHECK(be2->lb_algo == LB_URL_PARAM);
	CHECK_STR(be2->lb_arg, "sid");
	CHECK(be2->hash_type == LB_HASH_MAP);
	lb_hash_conf_get(be2, &hc);
	CHECK(hc.fn == LB_HFN_CRC32 && hc.avalanche);
	CHECK(be2->http_conn == PX_HTTP_KAL);          /* "no option" of the mode in force */
	CHECK(!be2->monitor_uri && !be2->unique_id_fmt_str);   /* frontend settings */
	r = http_errors_find(be2->errors, NULL, 503);
	CHECK(r && (r->flags & HTTP_REPLY_F_BUILTIN));  /* default-errorfiles */
	/* TCP: layer-7 hashing falls back to round robin, the cookie is dropped */
	CHECK(be3->mode == PX_MODE_TCP);
	CHECK(be3->lb_algo == LB_ROUNDROBIN);
	CHECK(!be3->cookie_name);
	CHECK(!(be3->options & (PX_O_FORWARDFOR | PX_O_ORIGINALTO)));
	/* a cookie line replaces everything of the inherited one */
	CHECK_STR(be4->cookie_name, "JS");
	CHECK(be4->cookie_opts == PX_CK_PREFIX && !be4->cookie_domain && !be4->cookie_maxidle);
	CHECK(be4->lb_algo == LB_HDR && !be4->lb_hdr_domain);
	CHECK_STR(be4->lb_arg, "X-User");
	lb_hash_conf_get(be4, &hc);
	CHECK(hc.fn == LB_HFN_SDBM && hc.avalanche);    /* consistent's default */
}

int main(void)
{
	int errors;

	if (write_files() < 0) {
		perror("test files");
		return 1;
	}
	errors = cfg_parse_path(path_cfg);
	CHECK(errors == 0);
	errors = cfg_postparse();
	CHECK(errors == 0);
	test_listen();
	test_backends();
	/* the module's own state goes, and a proxy's hash entry with it */
	lb_hash_forget(proxy_find("be4", PX_CAP_BE));
	CHECK(lb_hash_ent(proxy_find("be4", PX_CAP_BE), 0) == NULL);
	http_cfg_free();
	lb_hash_free_all();
	CHECK(lb_hash_ent(proxy_find("li", PX_CAP_FE), 0) == NULL);
	unlink(path_503);
	unlink(path_cfg);
	rmdir(dir);
	return t_done("http_cfg");
}
