/* Cookie-based persistence (`cookie <name> ...` in a backend, `cookie
 * <value>` on its servers), as HAProxy 2.6 does it.
 *
 * Request side: the first cookie named <name> in the Cookie fields chooses
 * the server whose `cookie` value it carries (after dropping "|dates" and,
 * in prefix mode, everything from the first '~'). A server in maintenance
 * is not chosen ('D'); with maxidle/maxlife an old cookie is ignored ('E',
 * 'O'); a value matching no server is invalid ('I'). Then the request is
 * cleaned: prefix mode strips "<srv>~" so that the application finds its
 * own cookie; insert + indirect deletes the cookie so that the server never
 * sees it. A Cookie field left empty is deleted.
 *
 * Response side, with the server that served:
 *   - a Set-Cookie named <name> from the server is left alone with
 *     `preserve` ('P'); deleted in insert mode, or with indirect when the
 *     request already chose this server ('D'); its value replaced by the
 *     server's cookie in rewrite mode, or prefixed with "<srv>~" in prefix
 *     mode ('R'); passed as is otherwise ('P');
 *   - insert mode adds "Set-Cookie: <name>=<srv>[|last[|first]]; path=/
 *     [; domain=..][; HttpOnly][; Secure]" when the request did not come
 *     with a valid cookie for this server, or when maxidle/maxlife require
 *     a fresh date ('I', or 'U' for a date update); not for non-POST
 *     requests with postonly; with nocache, a response a shared cache
 *     could store also gets "Cache-control: private". A server without a cookie value gets an
 *     expired cookie (the client forgets a stale one).
 * Dates are HAProxy's: seconds / 4 as 5 base64 characters after a '|'.
 *
 * cookie_term receives the third and fourth characters of the log's
 * termination state (%tsc): the request cookie (N I D V E O U) and the
 * response cookie (N P D I R U); "--" when the backend has no cookie.
 *
 * Pure functions: they read the configuration and the messages and edit
 * the messages through msgedit.h; the stream's owner thread calls them.
 */
#ifndef SLUICE_HTTP_HTTP_COOKIE_H
#define SLUICE_HTTP_HTTP_COOKIE_H

#include <stdint.h>

struct proxy;
struct server;
struct http_msg;
struct http_edit;

/* What the request's cookie said, for the response: keep it in the
 * transaction between both calls when maxidle or maxlife are used
 * (without it, a valid cookie is re-dated on every response and maxlife
 * restarts). */
struct http_cookie_state {
	uint32_t now;          /* in: wall clock (s) of the transaction; 0: read it */
	uint32_t first_date;   /* the request cookie's first date (s), 0 none */
	uint32_t last_date;    /* its last-seen date (s), 0 none */
	int force;             /* in: persistence forced (force-persist, option
	                        * persist): a DOWN or maintenance server is chosen */
};

/* Request: the server the cookie designates (NULL if none or unusable);
 * cookie_term[0] set, cookie_term[1] 'N' (or "--" without a cookie
 * setting). <e> may be NULL: then the request is not cleaned. */
struct server *http_cookie_server(const struct proxy *be, struct http_msg *req,
                                  struct http_edit *e, char cookie_term[2]);
struct server *http_cookie_server_ex(const struct proxy *be, struct http_msg *req,
                                     struct http_edit *e, char cookie_term[2],
                                     struct http_cookie_state *st);

/* capture cookie: the first cookie of <m> (Cookie fields of a request,
 * Set-Cookie of a response) whose name starts with <prefix>, as
 * "name=value" cut to <len> bytes, in a malloc'ed string; NULL if none. */
char *http_cookie_capture(const struct http_msg *m, int response, const char *prefix, int len);

/* Response from <srv> (NULL: none), edited through <e> (bound to <res>).
 * <srv_from_cookie>: the request's cookie chose <srv>. Updates
 * cookie_term[1]. Returns 0, or a negative HTTP_EDIT_* code when an edit
 * failed (HAProxy then answers 502). res->meth must be the request's
 * method (postonly, caching). */
int http_cookie_response(const struct proxy *be, const struct server *srv, int srv_from_cookie,
                         struct http_msg *res, struct http_edit *e, char cookie_term[2]);
int http_cookie_response_ex(const struct proxy *be, const struct server *srv,
                            int srv_from_cookie, struct http_msg *res, struct http_edit *e,
                            char cookie_term[2], const struct http_cookie_state *st);

/* HAProxy's cookie date text: the low 30 bits of <v> as 5 characters of
 * the base64 alphabet, most significant first (<out> gets 5 bytes, no NUL),
 * and back (-1 for a character outside the alphabet). */
void http_cookie_date_enc(uint32_t v, char out[5]);
int  http_cookie_date_dec(const char in[5]);

#endif
