/* h1-case-adjust: the table (adds, duplicates, lookups in any case, growth)
 * and the serialiser writing adjusted names, its own fields included. */
#include <stdio.h>
#include <string.h>
#include <sluice/http/h1_case.h>
#include <sluice/http/h1_out.h>
#include "t.h"

static int ist_is(struct ist s, const char *want)
{
	return s.len == strlen(want) && !memcmp(s.ptr, want, s.len);
}

static void test_table(void)
{
	char err[256], from[32], to[32];

	CHECK(ist_is(h1_case_adjust(IST("content-length")), "content-length"));
	CHECK(h1_case_add("content-length", "Content-LENGTH", err, sizeof(err)) == 0);
	CHECK(h1_case_add("Content-Length", "x", err, sizeof(err)) < 0);
	CHECK(strstr(err, "must not differ") != NULL);
	CHECK(h1_case_add("CONTENT-length", "content-length", err, sizeof(err)) < 0);
	CHECK(strstr(err, "duplicate entry") != NULL);
	CHECK(ist_is(h1_case_adjust(IST("Content-Length")), "Content-LENGTH"));
	CHECK(ist_is(h1_case_adjust(IST("content-lengt")), "content-lengt"));
	/* many entries: the table grows, every one is still found */
	for (int i = 0; i < 200; i++) {
		snprintf(from, sizeof(from), "x-h%d", i);
		snprintf(to, sizeof(to), "X-H%d", i);
		CHECK(h1_case_add(from, to, err, sizeof(err)) == 0);
	}
	for (int i = 0; i < 200; i++) {
		snprintf(from, sizeof(from), "x-H%d", i);
		snprintf(to, sizeof(to), "X-H%d", i);
		CHECK(ist_is(h1_case_adjust((struct ist){ from, strlen(from) }), to));
	}
}

static void test_out(void)
{
	struct http_hdr hdrs[2] = {
		{ IST("x-h7"), IST("1") }, { IST("content-length"), IST("0") },
	};
	struct http_msg m = { .is_request = 1, .meth = HTTP_METH_GET, .method = IST("GET"),
	                      .uri = IST("/"), .version = IST("HTTP/1.1"),
	                      .nhdrs = 2, .maxhdrs = 2, .hdrs = hdrs };
	char out[256];
	ssize_t n;

	n = h1_out_head(&m, H1O_F_CASE_ADJUST | H1O_F_CONN_CLOSE, out, sizeof(out) - 1);
	CHECK(n > 0);
	out[n > 0 ? n : 0] = 0;
	CHECK(strstr(out, "\r\nX-H7: 1\r\nContent-LENGTH: 0\r\nConnection: close\r\n") != NULL);
	n = h1_out_head(&m, H1O_F_CONN_CLOSE, out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = 0;
	CHECK(strstr(out, "\r\nx-h7: 1\r\ncontent-length: 0\r\n") != NULL);
}

int main(void)
{
	test_table();
	test_out();
	h1_case_free();
	CHECK(ist_is(h1_case_adjust(IST("x-h7")), "x-h7"));
	return t_done("h1_case");
}
