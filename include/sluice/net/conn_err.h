/* HAProxy 2.6's connection error codes (fc_err, bc_err) and their
 * messages (fc_err_str, bc_err_str), as its manual lists them
 * (src/net/conn_err.c). */
#ifndef SLUICE_NET_CONN_ERR_H
#define SLUICE_NET_CONN_ERR_H

enum conn_err {
	CO_ER_NONE = 0,
	CO_ER_PRX_EMPTY = 11,      /* closed while waiting for a PROXY header */
	CO_ER_PRX_ABORT = 12,      /* connection error while waiting for it */
	CO_ER_PRX_TIMEOUT = 13,
	CO_ER_PRX_TRUNCATED = 14,
	CO_ER_PRX_NOT_HDR = 15,    /* not a PROXY header */
	CO_ER_PRX_BAD_HDR = 16,
	CO_ER_PRX_BAD_PROTO = 17,
	CO_ER_SSL_EMPTY = 24,      /* closed during the handshake */
	CO_ER_SSL_ABORT = 25,      /* connection error during it */
	CO_ER_SSL_TIMEOUT = 26,
	CO_ER_SSL_TOO_MANY = 27,
	CO_ER_SSL_NO_MEM = 28,
	CO_ER_SSL_RENEG = 29,
	CO_ER_SSL_CA_FAIL = 30,    /* client CA chain cannot be verified */
	CO_ER_SSL_CRT_FAIL = 31,   /* client certificate not trusted */
	CO_ER_SSL_MISMATCH = 32,
	CO_ER_SSL_MISMATCH_SNI = 33,
	CO_ER_SSL_HANDSHAKE = 34,
	CO_ER_SSL_FATAL = 43,
	CO_ER_COUNT = 44
};

/* The message of <code> ("Success" for 0), NULL for an unknown code. */
const char *conn_err_str(int code);

/* The code of one of the messages, 0 if none. */
int conn_err_code(const char *msg);

#endif
