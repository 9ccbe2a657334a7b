/* error-log-format: the log line of a connection error on a frontend (a
 * failed TLS handshake) in the proxy's own format (src/proxy/px_logfmt.c). */
#ifndef SLUICE_PROXY_PX_LOGFMT_H
#define SLUICE_PROXY_PX_LOGFMT_H

struct proxy;

/* A proxy created from a defaults section takes its error-log-format. */
void px_error_log_format_inherit(struct proxy *px, const struct proxy *def);

void px_error_log_format_free(struct proxy *px);

#endif
