/* Hash-based balancing: the key of a request for `balance uri`, `balance
 * url_param` and `balance hdr(<name>)`, the `hash-type` settings, and the
 * consistent-hash ring lb_pick() uses with `hash-type consistent`.
 *
 * Keys follow HAProxy 2.6 (backend.c, get_server_uh/ph/hh), so that a
 * map-based backend with the same servers and weights sends a request to the
 * same server as HAProxy does:
 *   uri        the request-target as received (with `path-only`, from the
 *              first '/' of the path), at most `len` bytes, up to the '/'
 *              that starts level `depth` + 1, up to the '?' unless `whole`;
 *   url_param  the value after "<param>=" in the query ('&'-separated,
 *              name case-sensitive; an empty value is a key);
 *   hdr        the first comma-separated value of the header, not empty;
 *              with `use_domain_only`, the label before the last dot
 *              ("www.example.com" -> "example").
 * The bytes go through the hash function of `hash-type` (sdbm by default),
 * then through the avalanche mix when configured.
 *
 * Configuration-time functions run on the parser's thread. At run time
 * everything here is read-only except the rings, which lb.c changes under
 * the backend's lb_lock.
 */
#ifndef SLUICE_PROXY_LB_HASH_H
#define SLUICE_PROXY_LB_HASH_H

#include <stddef.h>
#include <stdint.h>

struct cfg_ctx;
struct proxy;
struct http_msg;
struct lb_chash;

enum lb_hash_fn { LB_HFN_SDBM = 0, LB_HFN_DJB2, LB_HFN_WT6, LB_HFN_CRC32 };

/* `hash-type <method> [<function> [avalanche]]` beyond the method, which is
 * proxy->hash_type. struct proxy has no field for these yet: they live in a
 * table of this module keyed by proxy (configuration time) and are read
 * without lock at run time. */
struct lb_hash_conf {
	enum lb_hash_fn fn;
	int avalanche;
};

struct lb_hash_ent {
	const struct proxy *px;
	struct lb_hash_conf conf;
	struct lb_chash *ring;      /* hash-type consistent: lb.c, under px->lb_lock */
};

/* --- configuration time ------------------------------------------------- */

/* Records the settings of <px> (a defaults section too). Returns 0 or -1
 * (out of memory). */
int lb_hash_conf_set(const struct proxy *px, enum lb_hash_fn fn, int avalanche);
/* <px> takes <def>'s settings (proxy_inherit()). */
int lb_hash_conf_inherit(const struct proxy *px, const struct proxy *def);
/* The entry of <px>, created if <create>; NULL when there is none. Entries
 * never move once created. */
struct lb_hash_ent *lb_hash_ent(const struct proxy *px, int create);

/* `balance uri|url_param|hdr(<name>)` and their options, from args[1], for
 * ctx->px (kw_balance()). Returns 1 when handled, 0 when args[1] is none of
 * them, -1 with a message in <err>. An option accepted but not implemented
 * is reported with cfg_warning(). */
int lb_hash_cfg_balance(struct cfg_ctx *ctx, char **args, int nargs, char *err, size_t errlen);

/* Builds the ring of a `hash-type consistent` backend (post-parse; lb.c).
 * Returns 0 or -1 (out of memory). */
int lb_chash_init(struct proxy *be);
void lb_chash_free(struct lb_chash *r);

/* Freeing (no thread running): the entry of <px>, to call when <px> is
 * freed (a new proxy at the same address must not find it), or all of
 * them. */
void lb_hash_forget(const struct proxy *px);
void lb_hash_free_all(void);

/* --- run time, any thread ----------------------------------------------- */

void lb_hash_conf_get(const struct proxy *px, struct lb_hash_conf *out);
/* <len> bytes through the backend's hash function and modifier. */
uint32_t lb_hash_bytes(const struct proxy *be, const void *p, size_t len);
/* A key computed elsewhere (source address) through the modifier only. */
uint32_t lb_hash_finish(const struct proxy *be, uint32_t h);

/* The hash of the balance key of <req> for <be>'s algorithm: 1 with *key
 * set, 0 when the request has no such key (or the algorithm hashes no
 * request data): the caller then balances round robin, as HAProxy does. */
int lb_hash_request(const struct proxy *be, const struct http_msg *req, uint32_t *key);

#endif
