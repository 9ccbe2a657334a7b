/* Unit tests of cfg_free.c: a configuration using most of what a proxy,
 * a server, the global section and the stats sockets can own is parsed,
 * checked, freed, and parsed again in the same process. Under SAN=1,
 * LeakSanitizer checks at exit that freeing left nothing behind. */
#include <stdlib.h>
#include <unistd.h>
#include <sluice/cfg/cfg.h>
#include <sluice/cfg/cfg_free.h>
#include <sluice/core/global.h>
#include <sluice/expr/pattern.h>
#include <sluice/mgmt/cli.h>
#include <sluice/proxy/proxy.h>
#include "t.h"

static char dir[] = "/tmp/sluice-cfgfree-XXXXXX";
static char path_cfg[128], path_lst[128], path_map[128], path_503[128];

/* No defaults section: proxy.c keeps those to itself (cfg_free.h). */
static const char cfg_text[] =
	"global\n"
	"    stats socket 127.0.0.1:9001 level admin\n"
	"    stats socket 127.0.0.1:9002,127.0.0.2:9002 level user\n"
	"    log 127.0.0.1:514 local0 info\n"
	"    log stdout format raw local1\n"
	"http-errors site\n"
	"    errorfile 503 %s\n"
	"frontend fe\n"
	"    mode http\n"
	"    bind 127.0.0.1:9003 name a\n"
	"    bind 127.0.0.1:9004,127.0.0.3:9004\n"
	"    log global\n"
	"    log 127.0.0.1:515 len 200 local2\n"
	"    log-format \"%%ci %%[src,lower] %%r\"\n"
	"    option forwardfor header X-Client except 10.0.0.0/8\n"
	"    option originalto header X-Orig\n"
	"    monitor-uri /health\n"
	"    unique-id-format \"%%{+X}o %%ci:%%cp\"\n"
	"    unique-id-header X-Id\n"
	"    capture request header Host len 32\n"
	"    capture response header Server len 32\n"
	"    declare capture request len 16\n"
	"    errorfiles site\n"
	"    http-error status 429 content-type text/plain lf-string \"slow %%[src]\"\n"
	"    errorloc302 502 /err\n"
	"    acl local src -n 127.0.0.1\n"
	"    acl listed src -f %s\n"
	"    acl api path_beg -i /api /v2\n"
	"    acl api req.hdr(host),lower -m end .example.com\n"
	"    tcp-request inspect-delay 1s\n"
	"    tcp-request connection accept if local\n"
	"    tcp-request content reject if { src 10.9.9.9 }\n"
	"    http-request set-header X-A %%[src] if api || { path /x }\n"
	"    http-request set-var(txn.k) req.hdr(x),map_str(%s,none)\n"
	"    http-request capture req.hdr(ua) len 10\n"
	"    http-request return status 200 content-type text/plain string ok if { path /ok }\n"
	"    http-request deny deny_status 403 hdr X-Why %%[src] if !local listed\n"
	"    http-request add-acl(%s) %%[src] if { path /add }\n"
	"    http-response set-header X-B b\n"
	"    http-after-response del-header X-C\n"
	"    redirect prefix /new if { path_beg /old }\n"
	"    use_backend be_%%[req.hdr(host),lower] if api\n"
	"    use_backend be if { path /be }\n"
	"    default_backend be\n"
	"backend be\n"
	"    mode http\n"
	"    balance uri depth 2\n"
	"    hash-type consistent sdbm avalanche\n"
	"    cookie SRV insert indirect nocache domain .example.com\n"
	"    default-server maxconn 10 cookie dflt\n"
	"    server s1 127.0.0.1:8001 cookie a weight 2\n"
	"    server s2 127.0.0.1:8002 backup\n"
	"    tcp-response content accept\n"
	"    http-response set-status 200 if { status 404 }\n"
	"listen li\n"
	"    mode http\n"
	"    bind 127.0.0.1:9005\n"
	"    balance url_param sid\n"
	"    server s3 127.0.0.1:8003\n";

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int write_files(void)
{
	char *cfg = NULL;
	int rc;

	if (!mkdtemp(dir))
		return -1;
	snprintf(path_cfg, sizeof(path_cfg), "%s/t.cfg", dir);
	snprintf(path_lst, sizeof(path_lst), "%s/ips.lst", dir);
	snprintf(path_map, sizeof(path_map), "%s/hosts.map", dir);
	snprintf(path_503, sizeof(path_503), "%s/503.http", dir);
	if (write_file(path_lst, "10.1.0.0/16\n192.168.1.1\n") < 0 ||
	    write_file(path_map, "a.example.com 1\nb.example.com 2\n") < 0 ||
	    write_file(path_503, "HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n") < 0 ||
	    asprintf(&cfg, cfg_text, path_503, path_lst, path_map, path_lst) < 0)
		return -1;
	rc = write_file(path_cfg, cfg);
	free(cfg);
	return rc;
}

static int count(const struct list *l)
{
	int n = 0;

	for (const struct list *p = l->next; p != l; p = p->next)
		n++;
	return n;
}

static int count_ref(struct pat_ref *ref, void *arg)
{
	(*(int *)arg)++;
	return 0;
}

static int nb_refs(void)
{
	int n = 0;

	pat_refs_foreach(count_ref, &n);
	return n;
}

static void test_built_then_freed(void)
{
	struct proxy *fe = proxy_find("fe", PX_CAP_FE), *be = proxy_find("be", PX_CAP_BE);

	CHECK(count(&proxies) == 3 && count(&cli_binds) == 3 && count(&global.logs) == 2);
	CHECK(fe && be);
	if (fe && be) {
		CHECK(count(&fe->binds) == 3 && count(&fe->use_backends) == 2);
		CHECK(count(&fe->http_req_rules) == 7 && fe->acls && fe->errors);   /* redirect too */
		CHECK(be->nsrv == 2 && be->cookie_name);
	}
	CHECK(nb_refs() > 0);
	cfg_free_all();
	CHECK(list_empty(&proxies) && list_empty(&cli_binds) && list_empty(&global.logs));
	CHECK(nb_refs() == 0);
	CHECK(!proxy_find("fe", PX_CAP_FE));
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
	test_built_then_freed();
	/* the same names again: nothing of the first parse is left to clash
	 * with (proxies, http-errors sections, ACL unique ids); postparse is
	 * not run again, its connect-log formats are compiled once */
	errors = cfg_parse_path(path_cfg);
	CHECK(errors == 0);
	test_built_then_freed();
	unlink(path_cfg);
	unlink(path_lst);
	unlink(path_map);
	unlink(path_503);
	rmdir(dir);
	return t_done("test_cfg_free");
}
