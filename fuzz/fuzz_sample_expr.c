/* libFuzzer target: the expression engine's configuration parsers, then
 * evaluation of what they accept.
 *
 * The input (NUL-terminated copy) is:
 * 1. parsed as a sample expression; when accepted, evaluated against a
 *    fixed fake context, once as a plain sample and once iterating as an
 *    ACL does (at most 64 values), and rendered as text;
 * 2. split on blanks into words and parsed as an "acl" line (name and
 *    criterion...) into a list, then as a condition "if <words>" using that
 *    list; accepted conditions are evaluated against the context in its
 *    normal, final and "no headers yet" states.
 *
 * Checked beyond the sanitizers: a parse either succeeds or leaves a
 * message; evaluation results are of a valid type and a string result
 * stays within its buffer; a condition evaluates to pass, fail or miss,
 * and never to miss when the context is final (unless a term's fetch
 * needs data the final context still lacks: headers).
 *
 * Name resolution of ip patterns is disabled (pat_set_dns(0)); pattern and
 * map files named by the input may be read, but only regular files.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/expr/acl.h>
#include <sluice/expr/pattern.h>
#include <sluice/expr/sample.h>
#include <sluice/expr/vars.h>

#define FUZZ_MAX_INPUT 4096
#define FUZZ_MAX_WORDS 64

static struct http_hdr req_hdrs[] = {
	{ IST("Host"), IST("www.example.com:8080") },
	{ IST("User-Agent"), IST("Mozilla/5.0 (X11; Linux)") },
	{ IST("X-Forwarded-For"), IST("10.0.0.1, [2001:db8::1]:80, 192.168.1.1:8080") },
	{ IST("Cookie"), IST("a=1; SESSIONID=\"x,y\"; b=") },
	{ IST("Content-Length"), IST("18") },
	{ IST("Authorization"), IST("Basic dXNlcjpwYXNz") },
	{ IST("X-List"), IST("a, \"b,\\\"c\", ,d") },
};
static struct http_hdr res_hdrs[] = {
	{ IST("Set-Cookie"), IST("SRV=s1; path=/") },
	{ IST("Content-Type"), IST("application/json") },
};
static struct http_msg req, res;
static struct var_store vars[VAR_SCOPES];
static struct smp_ctx ctx;

static int ops_addr(const struct smp_ctx *c, enum smp_addr_kind k, struct sockaddr_storage *out)
{
	memset(out, 0, sizeof(*out));
	if (k == SMP_ADDR_CLI_SRC) {
		struct sockaddr_in *s = (struct sockaddr_in *)out;

		s->sin_family = AF_INET;
		s->sin_port = htons(40000);
		inet_pton(AF_INET, "192.168.1.10", &s->sin_addr);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)out;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(443);
		inet_pton(AF_INET6, "::ffff:10.0.0.2", &s->sin6_addr);
	}
	return 1;
}

static int ops_name(const struct smp_ctx *c, enum smp_name_kind k, const char **out)
{
	*out = k == SMP_NAME_SRV ? NULL : "px";
	return k != SMP_NAME_SRV;
}

static int ops_id(const struct smp_ctx *c, enum smp_id_kind k, int64_t *out)
{
	*out = k;
	return 1;
}

static int ops_be(const struct smp_ctx *c, const struct smp_arg *be, enum smp_be_metric m,
                  int64_t *out)
{
	*out = be ? (int64_t)strlen(be->text) : 3;
	return 1;
}

static int ops_srv(const struct smp_ctx *c, const struct smp_arg *be, const struct smp_arg *srv,
                   enum smp_srv_metric m, int64_t *out)
{
	*out = m;
	return srv->text[0] != 'x';
}

static int ops_uid(struct smp_ctx *c, struct ist *out)
{
	*out = IST("uid");
	return 1;
}

static const struct smp_ops ops = { ops_addr, ops_name, ops_id, ops_be, ops_srv, ops_uid };
static const char body[] = "{\"a\":[1,\"two\",{\"b\":true}],\"k\":\"v\"}";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	pat_set_dns(0);
	req.is_request = 1;
	req.meth = HTTP_METH_POST;
	req.method = IST("POST");
	req.uri = IST("/static/a.png?x=1&y=%41;z=2");
	req.version = IST("HTTP/1.1");
	req.hdrs = req_hdrs;
	req.nhdrs = (int)(sizeof(req_hdrs) / sizeof(req_hdrs[0]));
	req.flags = HTTP_F_VER_11 | HTTP_F_HAS_CL;
	req.content_length = 18;
	res.status = 200;
	res.version = IST("HTTP/1.1");
	res.hdrs = res_hdrs;
	res.nhdrs = (int)(sizeof(res_hdrs) / sizeof(res_hdrs[0]));
	for (int i = 1; i < VAR_SCOPES; i++) {
		vars_init(&vars[i], (enum var_scope)i);
		ctx.vars[i] = &vars[i];
	}
	ctx.ops = &ops;
	ctx.req = &req;
	ctx.res = &res;
	ctx.req_body = (struct ist){ body, sizeof(body) - 1 };
	ctx.req_data = IST("GET / HTTP/1.0\r\n\r\n");
	ctx.now_us = 1700000000000000LL;
	ctx.txn_id = 1;
	return 0;
}

static void check_sample(const struct sample *s)
{
	char text[256];

	assert(s->type > SMP_T_ANY && s->type < SMP_TYPES && s->type != SMP_T_ADDR);
	if (s->type == SMP_T_STR || s->type == SMP_T_BIN) {
		assert(s->data.str.len == 0 || s->data.str.ptr);
		assert(!s->data.str.size || s->data.str.len <= s->data.str.size);
		if (s->data.str.len) {
			/* touch every byte: ASan tells if it is out of bounds */
			volatile unsigned char sum = 0;

			for (size_t i = 0; i < s->data.str.len; i++)
				sum += (unsigned char)s->data.str.ptr[i];
			(void)sum;
		}
	}
	assert(smp_to_text(s, text, sizeof(text)) < sizeof(text));
}

static void fuzz_expr(const char *text)
{
	char err[512] = "";
	struct sample_expr *e = sample_expr_parse(text, NULL, err, sizeof(err));
	struct sample s;
	int n = 0;

	if (!e) {
		assert(err[0]);
		return;
	}
	memset(&s, 0, sizeof(s));
	if (sample_expr_eval(e, &ctx, &s))
		check_sample(&s);
	memset(&s, 0, sizeof(s));
	s.opt = SMP_OPT_ITERATE;
	do {
		if (sample_expr_eval(e, &ctx, &s))
			check_sample(&s);
		s.opt = SMP_OPT_ITERATE;
	} while ((s.flags & SMP_F_NOT_LAST) && ++n < 64);
	sample_expr_free(e);
}

static void eval_cond(const struct acl_cond *c)
{
	enum acl_test_res r = acl_cond_eval(c, &ctx);

	assert(r == ACL_TEST_PASS || r == ACL_TEST_FAIL || r == ACL_TEST_MISS);
	ctx.final = 1;
	r = acl_cond_eval(c, &ctx);
	assert(r == ACL_TEST_PASS || r == ACL_TEST_FAIL || r == ACL_TEST_MISS);
	ctx.final = 0;
	ctx.req = NULL;
	ctx.res = NULL;
	r = acl_cond_eval(c, &ctx);
	assert(r == ACL_TEST_PASS || r == ACL_TEST_FAIL || r == ACL_TEST_MISS);
	ctx.req = &req;
	ctx.res = &res;
}

static void fuzz_acl(char *text)
{
	char *words[FUZZ_MAX_WORDS + 1], err[512] = "";
	struct acl_list l;
	struct acl_cond *c;
	int n = 1;

	words[0] = "if";
	for (char *save = NULL, *w = strtok_r(text, " \t\r\n", &save);
	     w && n <= FUZZ_MAX_WORDS; w = strtok_r(NULL, " \t\r\n", &save))
		words[n++] = w;
	acl_list_init(&l);
	if (n > 2 && acl_parse(&l, words + 1, n - 1, "fuzz", 1, err, sizeof(err)) < 0)
		assert(err[0]);
	err[0] = '\0';
	c = acl_cond_parse(words, n, &l, "fuzz", 1, err, sizeof(err));
	if (!c)
		assert(err[0]);
	else {
		eval_cond(c);
		acl_cond_free(c);
	}
	/* the ACL just declared, by its name ("or" is a valid name that a
	 * condition can only read as the operator) */
	if (n > 2 && acl_find(&l, words[1]) && strcmp(words[1], "or") != 0) {
		char *w2[2] = { "unless", words[1] };

		c = acl_cond_parse(w2, 2, &l, "fuzz", 1, err, sizeof(err));
		assert(c);
		eval_cond(c);
		acl_cond_free(c);
	}
	acl_list_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[FUZZ_MAX_INPUT + 1];

	if (size > FUZZ_MAX_INPUT)
		size = FUZZ_MAX_INPUT;
	memcpy(text, data, size);
	text[size] = '\0';
	fuzz_expr(text);
	fuzz_acl(text);
	/* what the input stored must not outlive it */
	for (int i = 1; i < VAR_SCOPES; i++)
		vars_prune(&vars[i]);
	return 0;
}
