/* Configuration keywords of HTTP proxies (src/http/http_cfg.c): they
 * register themselves; other modules only need the http-errors sections
 * and a way to free what the module keeps outside the proxies. */
#ifndef SLUICE_HTTP_HTTP_CFG_H
#define SLUICE_HTTP_HTTP_CFG_H

struct http_errors_sets;

/* The http-errors sections read so far: complete once every file was
 * parsed, so a post-parse hook (any order) may resolve names in it with
 * http_errors_set_find() (rules' "errorfiles <name>"). */
const struct http_errors_sets *http_cfg_errors_sets(void);

/* Frees the http-errors sections and the formats of http-error replies.
 * The replies of the proxies borrow those formats: call it after the
 * proxies (and defaults sections) were freed. The next parse starts
 * afresh. */
void http_cfg_free(void);

#endif
