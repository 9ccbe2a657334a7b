/* HAProxy 2.6's connection error messages, by code (see conn_err.h; the
 * list is the one of its manual, fc_err_str). */
#include <string.h>
#include <sluice/net/conn_err.h>

static const char *const msgs[CO_ER_COUNT] = {
	"Success",
	"Reached configured maxconn value",
	"Too many sockets on the process",
	"Too many sockets on the system",
	"Out of system buffers",
	"Protocol or address family not supported",
	"General socket error",
	"Source port range exhausted",
	"Can't bind to source address",
	"Out of local source ports on the system",
	"Local source address already in use",
	"Connection closed while waiting for PROXY protocol header",
	"Connection error while waiting for PROXY protocol header",
	"Timeout while waiting for PROXY protocol header",
	"Truncated PROXY protocol header received",
	"Received something which does not look like a PROXY protocol header",
	"Received an invalid PROXY protocol header",
	"Received an unhandled protocol in the PROXY protocol header",
	"Connection closed while waiting for NetScaler Client IP header",
	"Connection error while waiting for NetScaler Client IP header",
	"Timeout while waiting for a NetScaler Client IP header",
	"Truncated NetScaler Client IP header received",
	"Received an invalid NetScaler Client IP magic number",
	"Received an unhandled protocol in the NetScaler Client IP header",
	"Connection closed during SSL handshake",
	"Connection error during SSL handshake",
	"Timeout during SSL handshake",
	"Too many SSL connections",
	"Out of memory when initializing an SSL connection",
	"Rejected a client-initiated SSL renegotiation attempt",
	"SSL client CA chain cannot be verified",
	"SSL client certificate not trusted",
	"Server presented an SSL certificate different from the configured one",
	"Server presented an SSL certificate different from the expected one",
	"SSL handshake failure",
	"SSL handshake failure after heartbeat",
	"Stopped a TLSv1 heartbeat attack (CVE-2014-0160)",
	"Attempt to use SSL on an unknown target (internal error)",
	"Server refused early data",
	"SOCKS4 Proxy write error during handshake",
	"SOCKS4 Proxy read error during handshake",
	"SOCKS4 Proxy deny the request",
	"SOCKS4 Proxy handshake aborted by server",
	"SSL fatal error",
};

const char *conn_err_str(int code)
{
	return code >= 0 && code < CO_ER_COUNT ? msgs[code] : NULL;
}

int conn_err_code(const char *msg)
{
	for (int i = 1; msg && i < CO_ER_COUNT; i++)
		if (!strcmp(msgs[i], msg))
			return i;
	return 0;
}
