/* libFuzzer target: HTTP health checks, the `http-check expect` parser and
 * the verdict on a server's reply (src/proxy/check_http.c).
 *
 * Input: byte 0 chooses the buffer's size (64 or 2048 bytes), whether the
 * server closes after the reply, and whether a 404 soft-stops the server
 * (disable-on-404); byte 1 where the reply is cut in two;
 * then a line of `http-check expect` words (an invalid one leaves the
 * default rule: 2xx and 3xx pass); the rest is the reply.
 *
 * Checked on every input, beyond the sanitizers' own checks (the buffer is
 * allocated with its exact size, so a read past it is caught):
 * - a reply that ends with the server's close is always decided, and a
 *   decision is one of L7OK, L7STS (with a status code), L7RSP, or L7OKC
 *   (a 404, only when a 404 soft-stops);
 * - the evaluation never makes the reply longer (a chunked body is decoded
 *   in place, what follows the message is dropped);
 * - without a regex rule, cutting the reply in two gives the verdict of the
 *   whole: the result depends on the bytes, not on how they arrived (a
 *   regex may match a prefix and not the whole, as in HAProxy, which also
 *   decides as the reply arrives). Compared for replies smaller than the
 *   buffer: a longer one is cut at a buffer full, and decoding a chunked
 *   body in place makes room for more of it depending on when it ran.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/proxy/check.h>
#include <sluice/proxy/check_http.h>

#define MAX_WORDS 8

/* Parses the rule line; returns the number of rules (0 or 1). */
static int parse_rule(const uint8_t *p, size_t len, struct hchk_expect *e)
{
	char line[256], *args[MAX_WORDS], err[512];
	int n = 0;

	if (len >= sizeof(line))
		len = sizeof(line) - 1;
	memcpy(line, p, len);
	line[len] = '\0';
	for (char *t = strtok(line, " "); t && n < MAX_WORDS; t = strtok(NULL, " "))
		args[n++] = t;
	if (hchk_parse_expect(args, n, e, err, sizeof(err)) < 0) {
		hchk_expect_free(e);
		return 0;
	}
	return 1;
}

/* Feeds reply[0..len) cut at <cut> (0: whole) into a buffer of <cap>
 * bytes. Returns the verdict's status, 0 if undecided. */
static int run(const struct hchk_rules *r, const uint8_t *reply, size_t len, size_t cut,
               size_t cap, int eof, int stop_on_404, struct hchk_verdict *v)
{
	char *buf = malloc(cap);
	struct hchk_reply st;
	size_t have = 0, off = 0;
	int status = 0;

	assert(buf);
	hchk_reply_init(&st);
	st.stop_on_404 = stop_on_404;
	memset(v, 0, sizeof(*v));
	for (int piece = 0; piece < 2 && !status; piece++) {
		size_t end = piece == 0 && cut ? cut : len;
		size_t n = end - off, before;

		if (n > cap - have)
			n = cap - have;
		memcpy(buf + have, reply + off, n);
		have += n;
		off = end;
		if (piece == 0 && cut && have < cap && off < len) {
			before = have;
			if (hchk_reply_eval(r, &st, buf, &have, cap, 0, v))
				status = v->status;
			assert(have <= before);
			continue;
		}
		before = have;
		if (hchk_reply_eval(r, &st, buf, &have, cap, eof, v))
			status = v->status;
		assert(have <= before);
		break;
	}
	free(buf);
	return status;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hchk_rules r;
	struct hchk_expect e;
	struct hchk_verdict whole, parts;
	const uint8_t *nl;
	size_t cap, cut, rlen;
	int eof, st, has_regex = 0, stop404;
	char err[256];

	if (size < 3)
		return 0;
	cap = (data[0] & 1) ? 2048 : 64;
	eof = !(data[0] & 2);
	stop404 = !!(data[0] & 4);
	nl = memchr(data + 2, '\n', size - 2);
	if (!nl)
		return 0;
	memset(&r, 0, sizeof(r));
	r.has_send = 1;
	if (parse_rule(data + 2, (size_t)(nl - (data + 2)), &e)) {
		r.expects = &e;
		r.nexpects = 1;
		has_regex = e.re != NULL;
	}
	if (hchk_prepare(&r, 16384, err, sizeof(err)) < 0)
		goto out;
	rlen = size - (size_t)(nl + 1 - data);
	cut = rlen ? data[1] % (rlen + 1) : 0;

	st = run(&r, nl + 1, rlen, 0, cap, eof, stop404, &whole);
	if (eof)
		assert(st);
	if (st) {
		assert(st == CHK_ST_L7OK || st == CHK_ST_L7STS || st == CHK_ST_L7RSP ||
		       (st == CHK_ST_L7OKC && stop404 && whole.code == 404));
		if (st != CHK_ST_L7RSP)
			assert(whole.code >= 100 && whole.code <= 599);
	}
	if (!has_regex && cut && rlen < cap) {
		int st2 = run(&r, nl + 1, rlen, cut, cap, eof, stop404, &parts);

		assert(st2 == st);
		if (st)
			assert(parts.code == whole.code && !strcmp(parts.desc, whole.desc));
	}
out:
	free(r.req);
	if (r.nexpects)
		hchk_expect_free(&e);
	return 0;
}
