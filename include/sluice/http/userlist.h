/* Userlists (HAProxy 2.6 manual, section 3.4): users with passwords and
 * groups, checked against HTTP Basic credentials by http_auth(),
 * http_auth_group() and the stats page's `stats auth`.
 *
 * A userlist is built at configuration time (a `userlist` section, or the
 * anonymous list of a proxy's `stats auth` lines) and read-only after;
 * lookups run on any worker thread without a lock. Checking a hashed
 * password calls crypt(3), which costs up to milliseconds by design; each
 * thread remembers the last credentials it verified (a SHA-256 of the
 * password, never the password) so that a client repeating the same
 * Authorization header costs one hash, not one crypt, per request.
 */
#ifndef SLUICE_HTTP_USERLIST_H
#define SLUICE_HTTP_USERLIST_H

#include <stddef.h>
#include <stdint.h>

#define UL_MAX_GROUPS 64          /* groups per userlist (a bit per group) */

struct ul_user {
	char *name;
	char *pass;                   /* crypt(3) hash or clear text; NULL: none */
	int insecure;                 /* pass is clear text */
	uint64_t groups;              /* bit i: member of groups[i] */
	char *group_names;            /* "groups a,b" as written, resolved after parsing */
};

struct ul_group {
	char *name;
	char *user_names;             /* "users a,b" as written, resolved after parsing */
};

struct userlist {
	struct userlist *next;
	char *name;                   /* NULL for a proxy's `stats auth` list */
	char *file;
	int line;
	struct ul_user *users;
	int nusers;
	struct ul_group groups[UL_MAX_GROUPS];
	int ngroups;
};

/* The userlist section named <name>, or NULL. */
struct userlist *userlist_find(const char *name);

/* Adds a user to <ul> (the anonymous list of `stats auth`): 0, or -1 out
 * of memory. A user already there is left as it is. */
int userlist_add_user(struct userlist *ul, const char *name, size_t nlen, const char *pass,
                      int insecure);
struct userlist *userlist_new(const char *name, const char *file, int line);
void userlist_free(struct userlist *ul);

/* The user of <ul> whose name and password are <user>/<pass>, or NULL.
 * Any thread. */
const struct ul_user *userlist_check(const struct userlist *ul, const char *user,
                                     size_t ulen, const char *pass, size_t plen);

/* Whether <u> of <ul> belongs to the group named <group>. */
int userlist_in_group(const struct userlist *ul, const struct ul_user *u, const char *group,
                      size_t glen);

/* Frees every userlist section (at exit). */
void userlists_free_all(void);

#endif
