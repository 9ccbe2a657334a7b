/* Certificate fields as HAProxy's TLS sample fetches print them
 * (ssl_c_s_dn, ssl_c_notbefore...): pure functions of OpenSSL objects,
 * no connection, no allocation but OpenSSL's own (src/net/ssl_x509.c).
 *
 * Each writes into <out> (at most <size> bytes, no NUL added) and returns
 * the length written, 0 when there is nothing to print, or -1 when the
 * result does not fit. */
#ifndef SLUICE_NET_SSL_X509_H
#define SLUICE_NET_SSL_X509_H

#include <stddef.h>
#include <openssl/x509.h>

/* "/O=Example/CN=www.example.com": every entry of the name in order, as
 * '/' short-name '=' value, the value's bytes as they are. An attribute
 * OpenSSL has no short name for is named by its dotted OID. */
int ssl_x509_dn_oneline(const X509_NAME *name, char *out, size_t size);

/* The value of the <pos>th entry named <entry> (short name or dotted
 * OID, compared without case): from the start when <pos> > 0, from the
 * end when <pos> < 0 (-1 is the last one); 0 (none) when there are fewer,
 * or when <pos> is 0. */
int ssl_x509_dn_entry(const X509_NAME *name, const char *entry, size_t entry_len, int pos,
                      char *out, size_t size);

/* RFC 2253 form, "CN=www.example.com,O=Example" (OpenSSL's
 * XN_FLAG_RFC2253 printing: last entry first, special characters
 * escaped). */
int ssl_x509_dn_rfc2253(const X509_NAME *name, char *out, size_t size);

/* A validity date as "YYMMDDhhmmss[Z]": a UTCTime as written, a
 * GeneralizedTime without its century. Dates HAProxy 2.6 does not print
 * give 0: a GeneralizedTime outside 2000-2099 (a certificate valid past
 * 2099), a UTCTime from 1950-1999. */
int ssl_x509_time(const ASN1_TIME *t, char *out, size_t size);

#endif
