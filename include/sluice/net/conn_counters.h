/* What a connection counts for its owner as it goes (see conn.h): the
 * owner points a connection at one of these (a proxy's HTTP/1 figures)
 * and the connection layer keeps it up to date, whatever path the bytes
 * take, until the connection closes. Shared: relaxed atomics, any thread,
 * read racily (display). */
#ifndef SLUICE_NET_CONN_COUNTERS_H
#define SLUICE_NET_CONN_COUNTERS_H

#include <stdatomic.h>
#include <stdint.h>

struct conn_counters {
	_Atomic int64_t open;        /* connections counted here now (gauge) */
	_Atomic uint64_t bytes_in;   /* received, after TLS */
	_Atomic uint64_t bytes_out;  /* sent, before TLS */
};

#endif
