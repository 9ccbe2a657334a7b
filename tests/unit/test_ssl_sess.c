/* The shared TLS session cache (src/net/ssl_sess.c), through the callbacks
 * it gives OpenSSL: sessions found by ID, the bound (FIFO replacement when
 * a shard is full), removal, a re-stored ID replacing its entry, TLS 1.3
 * stateless sessions not kept (an SSL not yet connected says TLS 1.3), and reference counts (an entry holds one
 * reference, a look-up hands one to the caller). */
#include <openssl/ssl.h>
#include <sluice/net/ssl_sess.h>
#include "t.h"

#define N 1000

static SSL_SESSION *make_session(unsigned int k)
{
	SSL_SESSION *s = SSL_SESSION_new();
	unsigned char id[32];

	for (int i = 0; i < 32; i++)
		id[i] = (unsigned char)(k * 2654435761u >> (i % 4 * 8)) ^ (unsigned char)i;
	SSL_SESSION_set1_id(s, id, sizeof(id));
	return s;
}

static SSL_SESSION *lookup(SSL_CTX *ctx, SSL *ssl, SSL_SESSION *like)
{
	SSL_SESSION *(*get)(SSL *, const unsigned char *, int, int *) = SSL_CTX_sess_get_get_cb(ctx);
	unsigned int len;
	const unsigned char *id = SSL_SESSION_get_id(like, &len);
	int copy = 1;
	SSL_SESSION *r = get(ssl, id, (int)len, &copy);

	CHECK(copy == 0);
	return r;
}

int main(void)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	SSL *ssl;
	int (*put)(SSL *, SSL_SESSION *);
	void (*del)(SSL_CTX *, SSL_SESSION *);
	SSL_SESSION *s[N], *r;
	int found = 0;

	SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION);
	CHECK(ssl_sess_cache_init(64) == 0);   /* 2 entries in each of 32 shards */
	ssl_sess_cache_attach(ctx);
	ssl = SSL_new(ctx);
	/* stateful sessions (TLS 1.2, or no-tls-tickets): the ones kept */
	SSL_set_options(ssl, SSL_OP_NO_TICKET);
	put = SSL_CTX_sess_get_new_cb(ctx);
	del = SSL_CTX_sess_get_remove_cb(ctx);
	CHECK(put && del && SSL_CTX_sess_get_get_cb(ctx));

	for (int i = 0; i < N; i++) {
		s[i] = make_session((unsigned int)i);
		SSL_SESSION_up_ref(s[i]);          /* ours; the cache takes the other */
		CHECK(put(ssl, s[i]) == 1);
	}
	/* the last one is there, the same object, with a reference for us */
	r = lookup(ctx, ssl, s[N - 1]);
	CHECK(r == s[N - 1]);
	SSL_SESSION_free(r);
	for (int i = 0; i < N; i++) {
		if ((r = lookup(ctx, ssl, s[i]))) {
			found++;
			SSL_SESSION_free(r);
		}
	}
	/* bounded: at most 64 kept, and each shard keeps its last ones */
	CHECK(found > 0 && found <= 64);
	/* removed, it is not found any more */
	del(ctx, s[N - 1]);
	CHECK(lookup(ctx, ssl, s[N - 1]) == NULL);
	/* the same ID stored again replaces the entry */
	{
		SSL_SESSION *again = make_session(N - 2);

		CHECK(put(ssl, again) == 1);
		r = lookup(ctx, ssl, s[N - 2]);
		CHECK(r == again);
		SSL_SESSION_free(r);
	}
	/* a TLS 1.3 session sent as a stateless ticket is not kept */
	{
		SSL_SESSION *t13 = make_session(N + 1);

		SSL_clear_options(ssl, SSL_OP_NO_TICKET);
		if (SSL_version(ssl) == TLS1_3_VERSION) {
			CHECK(put(ssl, t13) == 0);
			CHECK(lookup(ctx, ssl, t13) == NULL);
		}
		SSL_set_options(ssl, SSL_OP_NO_TICKET);
		SSL_SESSION_free(t13);
	}
	/* an ID of no length is not kept */
	{
		SSL_SESSION *empty = SSL_SESSION_new();

		CHECK(put(ssl, empty) == 0);
		SSL_SESSION_free(empty);
	}
	for (int i = 0; i < N; i++)
		SSL_SESSION_free(s[i]);
	SSL_free(ssl);
	ssl_sess_cache_free();   /* drops the cache's references */
	SSL_CTX_free(ctx);
	return t_done("test_ssl_sess");
}
