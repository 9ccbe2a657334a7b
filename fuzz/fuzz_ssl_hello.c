/* libFuzzer target: the ClientHello parser (ssl_hs_first_msg(),
 * ssl_client_hello_parse(), ssl_hello_version()) and the req.ssl_* fetches
 * on arbitrary bytes.
 *
 * Checked on every input, beyond the sanitizers' own checks (the input is
 * copied to a buffer of exactly its size, so a read past it is caught):
 * - every status is one of the three;
 * - the verdict is monotonic in the bytes received: the input minus its
 *   last byte is incomplete if the input is, "invalid" stays invalid when
 *   a byte is added, and a complete answer stays the same;
 * - what a complete hello gives points into the input or into the scratch
 *   buffer, inside the message; its ALPN walk ends inside the list;
 * - a hello gathered from several records parses the same as its body
 *   alone, and as the same body put back into a single record;
 * - the fetches: a value or not, and never "may change" once the context
 *   says no more data will come.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/expr/sample.h>
#include <sluice/net/ssl_hello.h>

static unsigned char scratch[1 << 16];
static unsigned char rewrap[(1 << 16) + 9];

static int within(const unsigned char *p, size_t len, const unsigned char *base, size_t size)
{
	return p >= base && p + len <= base + size;
}

/* Same answer for two parses of the same hello. */
static void same_hello(const struct ssl_client_hello *a, const struct ssl_client_hello *b)
{
	assert(a->version == b->version && a->flags == b->flags);
	assert(a->nextensions == b->nextensions && a->ticket_len == b->ticket_len);
	assert(a->max_version == b->max_version);
	assert(a->sni_len == b->sni_len && !a->sni == !b->sni);
	assert(!a->sni || memcmp(a->sni, b->sni, a->sni_len) == 0);
	assert(a->alpn_len == b->alpn_len && !a->alpn == !b->alpn);
	assert(!a->alpn || memcmp(a->alpn, b->alpn, a->alpn_len) == 0);
}

static void check_hello(const struct ssl_client_hello *ch, const unsigned char *body, size_t len)
{
	const unsigned char *name;
	size_t pos = 0, n, names = 0;

	assert(within(ch->random, 32, body, len));
	assert(ch->session_id_len <= 32 && within(ch->session_id, ch->session_id_len, body, len));
	assert(ch->ciphers_len >= 2 && ch->ciphers_len % 2 == 0);
	assert(within(ch->ciphers, ch->ciphers_len, body, len));
	assert(ch->compression_len >= 1);
	if (ch->flags & SSL_CH_F_EXTENSIONS)
		assert(ch->extensions + ch->extensions_len == body + len);
	if (ch->sni)
		assert((ch->flags & SSL_CH_F_SNI) && ch->sni_len &&
		       within(ch->sni, ch->sni_len, body, len));
	if (ch->alpn) {
		assert(within(ch->alpn, ch->alpn_len, body, len));
		while (ssl_alpn_next(ch, &pos, &name, &n)) {
			assert(n && within(name, n, ch->alpn, ch->alpn_len));
			names++;
		}
		assert(names && pos == ch->alpn_len);
	}
}

static const char *const fetches[] = {
	"req.ssl_hello_type", "req.ssl_ver", "req.ssl_sni", "req.ssl_alpn", "req.ssl_ec_ext",
	"req.ssl_st_ext",
};
static struct sample_expr *exprs[sizeof(fetches) / sizeof(fetches[0])];

static void check_fetches(const unsigned char *data, size_t size)
{
	struct smp_ctx ctx;
	char err[256];

	if (!exprs[0])
		for (size_t i = 0; i < sizeof(fetches) / sizeof(fetches[0]); i++)
			assert((exprs[i] = sample_expr_parse(fetches[i], NULL, err, sizeof(err))));
	memset(&ctx, 0, sizeof(ctx));
	ctx.req_data = (struct ist){ (const char *)data, size };
	for (int final = 0; final < 2; final++) {
		ctx.final = final;
		for (size_t i = 0; i < sizeof(fetches) / sizeof(fetches[0]); i++) {
			struct sample smp;
			int ok;

			memset(&smp, 0, sizeof(smp));
			smp.opt = SMP_OPT_ITERATE;
			do {
				ok = sample_expr_eval(exprs[i], &ctx, &smp);
				if (final)
					assert(!(smp.flags & SMP_F_MAY_CHANGE));
				if (ok && (smp.type == SMP_T_STR))
					assert(smp.data.str.len && smp.data.str.len <= size);
			} while (ok && (smp.flags & SMP_F_NOT_LAST));
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	unsigned char *data = malloc(size ? size : 1);
	struct ssl_client_hello ch, ch2;
	struct ssl_hs_msg msg, msg2;
	enum ssl_hello_status st, st2, sc;
	unsigned int v, v2;

	memcpy(data, in, size);

	/* the first handshake message */
	st = ssl_hs_first_msg(data, size, scratch, sizeof(scratch), &msg);
	assert(st <= SSL_HELLO_INVALID);
	if (size) {
		st2 = ssl_hs_first_msg(data, size - 1, scratch, sizeof(scratch), &msg2);
		if (st == SSL_HELLO_INCOMPLETE)
			assert(st2 == SSL_HELLO_INCOMPLETE);
		if (st2 == SSL_HELLO_INVALID)
			assert(st == SSL_HELLO_INVALID);
		if (st2 == SSL_HELLO_OK)
			assert(st == SSL_HELLO_OK && msg.type == msg2.type && msg.len == msg2.len &&
			       msg.nrecords == msg2.nrecords);
	}
	if (st == SSL_HELLO_OK) {
		assert(msg.nrecords >= 1 && msg.body);
		if (msg.nrecords == 1)
			assert(msg.body == data + 9 && within(msg.body, msg.len, data, size));
		else
			assert(msg.body == scratch);
		/* without a scratch buffer: the same message, unreadable if split */
		assert(ssl_hs_first_msg(data, size, NULL, 0, &msg2) == SSL_HELLO_OK);
		assert(msg2.type == msg.type && msg2.len == msg.len);
		assert(msg.nrecords == 1 ? msg2.body == msg.body : msg2.body == NULL);
	}

	/* the ClientHello */
	sc = ssl_client_hello_parse(data, size, scratch, sizeof(scratch), &ch);
	assert(sc <= SSL_HELLO_INVALID);
	if (st != SSL_HELLO_OK)
		assert(sc == st);
	if (sc == SSL_HELLO_OK) {
		const unsigned char *body = msg.nrecords == 1 ? data + 9 : scratch;

		/* the scratch buffer was written again: the same contents */
		check_hello(&ch, body, msg.len);
		assert(ssl_client_hello_parse_body(body, msg.len, &ch2) == SSL_HELLO_OK);
		same_hello(&ch, &ch2);
		if (msg.nrecords > 1 && msg.len <= 0xffff - 4) {
			/* the same body in one record */
			memcpy(rewrap, "\x16\x03\x01", 3);
			rewrap[3] = (unsigned char)((msg.len + 4) >> 8);
			rewrap[4] = (unsigned char)(msg.len + 4);
			rewrap[5] = 1;
			rewrap[6] = (unsigned char)(msg.len >> 16);
			rewrap[7] = (unsigned char)(msg.len >> 8);
			rewrap[8] = (unsigned char)msg.len;
			memcpy(rewrap + 9, scratch, msg.len);
			assert(ssl_client_hello_parse(rewrap, msg.len + 9, NULL, 0, &ch2) ==
			       SSL_HELLO_OK);
			same_hello(&ch, &ch2);
		}
	}
	if (size && sc != SSL_HELLO_INVALID) {
		st2 = ssl_client_hello_parse(data, size - 1, scratch, sizeof(scratch), &ch2);
		if (sc == SSL_HELLO_INCOMPLETE)
			assert(st2 == SSL_HELLO_INCOMPLETE);
	}

	/* the version, either format */
	st = ssl_hello_version(data, size, scratch, sizeof(scratch), &v);
	assert(st <= SSL_HELLO_INVALID);
	if (size) {
		st2 = ssl_hello_version(data, size - 1, scratch, sizeof(scratch), &v2);
		if (st == SSL_HELLO_INCOMPLETE)
			assert(st2 == SSL_HELLO_INCOMPLETE);
		if (st2 == SSL_HELLO_INVALID)
			assert(st == SSL_HELLO_INVALID);
		if (st2 == SSL_HELLO_OK)
			assert(st == SSL_HELLO_OK && v == v2);
	}
	if (st == SSL_HELLO_OK)
		assert(v <= 0xffff);

	check_fetches(data, size);
	free(data);
	return 0;
}
