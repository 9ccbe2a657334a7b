/* HAProxy's connection error codes: every code has its message, each
 * message gives its code back, out of range codes have none. */
#include <string.h>
#include <sluice/net/conn_err.h>
#include "t.h"

int main(void)
{
	CHECK(!strcmp(conn_err_str(0), "Success"));
	CHECK(!strcmp(conn_err_str(CO_ER_SSL_HANDSHAKE), "SSL handshake failure"));
	CHECK(!strcmp(conn_err_str(CO_ER_SSL_FATAL), "SSL fatal error"));
	CHECK(conn_err_str(-1) == NULL && conn_err_str(CO_ER_COUNT) == NULL);
	for (int i = 1; i < CO_ER_COUNT; i++)
		CHECK(conn_err_code(conn_err_str(i)) == i);
	CHECK(conn_err_code("Timeout during SSL handshake") == CO_ER_SSL_TIMEOUT);
	CHECK(conn_err_code("SSL client certificate not trusted") == CO_ER_SSL_CRT_FAIL);
	CHECK(conn_err_code("nope") == 0 && conn_err_code(NULL) == 0);
	return t_done("conn_err");
}
