/* stick match|on|store-request|store-response: persistence through stick
 * tables (HAProxy 2.6 manual, section 4.2, "stick match" and following).
 *
 * A backend's rules run once per request, when the stream looks for a
 * server: the first "match" rule (or "on") whose key is in its table with
 * a server id of a usable server of the backend names that server, after
 * use-server and cookie persistence. The "store-request" (and "on") rules
 * take their key then, and the entry (created, referenced) gets the id of
 * the server that served the request once its response came (TCP: once
 * the connection is established); "store-response" rules take their key
 * from the response. One store per table and per request, eight at most.
 * Owner thread of the stream; tables are shared (stktable.h).
 */
#ifndef SLUICE_PROXY_STICK_RULES_H
#define SLUICE_PROXY_STICK_RULES_H

#include <sluice/core/list.h>

#define STICK_MAX_STORE 8

struct stktable;
struct stksess;
struct stream;
struct server;

/* A key taken by a store-request rule, its entry referenced until the
 * store (or the end of the request). */
struct stick_store {
	struct stktable *table;
	struct stksess *entry;
};

/* Once per request: the server the match rules name (or NULL), and the
 * store-request keys taken. */
struct server *stick_rules_request(struct stream *s);
/* The server of the stream is known for good: the stored keys get its id. */
void stick_rules_commit(struct stream *s);
/* An HTTP response from the stream's server: store-response rules. */
void stick_rules_response(struct stream *s);
/* End of the request: what was not stored is dropped. */
void stick_rules_release(struct stream *s);
/* Frees a proxy's rules (configuration). */
void stick_rules_free(struct list *rules);

#endif
