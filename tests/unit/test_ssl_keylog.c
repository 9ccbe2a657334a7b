/* tune.ssl.keylog: the key log lines OpenSSL hands over, parsed into the
 * kind of secret and its text; labels not kept and malformed lines. */
#include <string.h>
#include <sluice/net/ssl_keylog.h>
#include "t.h"

int main(void)
{
	const char *s;
	size_t n;

	CHECK(ssl_keylog_parse("CLIENT_TRAFFIC_SECRET_0 00ab cafe01", &s, &n) ==
	      KEYLOG_CLIENT_TRAFFIC);
	CHECK(n == 6 && !strncmp(s, "cafe01", 6));
	CHECK(ssl_keylog_parse("EXPORTER_SECRET 01 ff\n", &s, &n) == KEYLOG_EXPORTER);
	CHECK(n == 2 && !strncmp(s, "ff", 2));
	CHECK(ssl_keylog_parse("EARLY_EXPORTER_SECRET 01 aa", &s, &n) == KEYLOG_EARLY_EXPORTER);
	CHECK(ssl_keylog_parse("SERVER_HANDSHAKE_TRAFFIC_SECRET 01 aa", &s, &n) ==
	      KEYLOG_SERVER_HS);
	/* TLS 1.2's line is not a TLS 1.3 secret (ssl_fc_session_key has it) */
	CHECK(ssl_keylog_parse("CLIENT_RANDOM 01 aa", &s, &n) == -1);
	CHECK(ssl_keylog_parse("CLIENT_TRAFFIC_SECRET_0 01", &s, &n) == -1);
	CHECK(ssl_keylog_parse("CLIENT_TRAFFIC_SECRET_0 01 ", &s, &n) == -1);
	CHECK(ssl_keylog_parse("CLIENT_TRAFFIC_SECRET_01 01 aa", &s, &n) == -1);
	CHECK(ssl_keylog_parse("", &s, &n) == -1);
	return t_done("ssl_keylog");
}
