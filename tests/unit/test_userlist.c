/* Userlists: clear and hashed passwords, the per-thread cache of verified
 * credentials (a success is remembered, never a failure, and never for
 * another password or user), groups; and the stats page's admin form. */
#include <stdlib.h>
#include <string.h>
#include <sluice/http/userlist.h>
#include <sluice/mgmt/stats_page.h>
#include "t.h"

/* crypt(3) hashes of "hashpw" */
#define SHA512_HASHPW "$6$sluicesalt$T3dVFjBq0zZ1CynJpMnLiFiaxAWQ2.vC6AVz45mElQpujLSkePpPDkKjJ881SMZSR5Xh0Ug7JP3M2qX6R2NqX0"
#define SHA256_HASHPW "$5$abc$6PGhWJ2v8WkzDE3A73yQzro52rACyLTnWaUp1pkh3h9"

static const struct ul_user *check(const struct userlist *ul, const char *u, const char *p)
{
	return userlist_check(ul, u, strlen(u), p, strlen(p));
}

static void test_passwords(void)
{
	struct userlist *ul = userlist_new("L", "f", 1);

	CHECK(ul != NULL);
	CHECK(userlist_add_user(ul, "alice", 5, "secret", 1) == 0);
	CHECK(userlist_add_user(ul, "bob", 3, SHA512_HASHPW, 0) == 0);
	CHECK(userlist_add_user(ul, "carol", 5, SHA256_HASHPW, 0) == 0);
	CHECK(userlist_add_user(ul, "dave", 4, NULL, 0) == 0);
	/* a second user of the same name is ignored */
	CHECK(userlist_add_user(ul, "alice", 5, "other", 1) == 0);
	CHECK(ul->nusers == 4);

	CHECK(check(ul, "alice", "secret") == &ul->users[0]);
	CHECK(check(ul, "alice", "other") == NULL);
	CHECK(check(ul, "alice", "secre") == NULL);
	CHECK(check(ul, "alice", "secret2") == NULL);
	CHECK(check(ul, "alic", "secret") == NULL);
	/* a password in clear is compared, never hashed */
	CHECK(userlist_check(ul, "alice", 5, "secret\0", 7) == NULL);

	/* hashed: right, then right again (from the cache), then wrong: the
	 * cache holds the password's digest, not the user alone */
	CHECK(check(ul, "bob", "hashpw") == &ul->users[1]);
	CHECK(check(ul, "bob", "hashpw") == &ul->users[1]);
	CHECK(check(ul, "bob", "hashpW") == NULL);
	CHECK(check(ul, "bob", "") == NULL);
	CHECK(check(ul, "carol", "hashpw") == &ul->users[2]);
	/* bob's cached success says nothing of carol's or of another hash */
	CHECK(check(ul, "carol", "hashpW") == NULL);
	/* no password: never */
	CHECK(check(ul, "dave", "") == NULL);
	CHECK(check(ul, "nobody", "hashpw") == NULL);
	userlist_free(ul);
}

static void test_groups(void)
{
	struct userlist *ul = userlist_new("L", "f", 1);

	ul->groups[0].name = strdup("admins");
	ul->groups[1].name = strdup("ops");
	ul->ngroups = 2;
	userlist_add_user(ul, "alice", 5, "x", 1);
	ul->users[0].groups = 1ull << 1;
	CHECK(userlist_in_group(ul, &ul->users[0], "ops", 3));
	CHECK(!userlist_in_group(ul, &ul->users[0], "admins", 6));
	CHECK(!userlist_in_group(ul, &ul->users[0], "op", 2));
	CHECK(!userlist_in_group(ul, &ul->users[0], "nosuch", 6));
	userlist_free(ul);
}

/* ---- the admin form ---- */

static int be_token;
static char applied[8][32];
static int napplied;

static void *find_be(void *ctx, const char *name)
{
	return !strcmp(name, "be") || !strcmp(name, "#3") ? &be_token : NULL;
}

static int apply(void *ctx, void *be, int action, const char *name)
{
	if (napplied < 8)
		snprintf(applied[napplied++], sizeof(applied[0]), "%d:%s", action, name);
	return !strcmp(name, "s1") || !strcmp(name, "s 2");
}

static const char *walk(const char *body)
{
	static const struct stats_form_ops ops = { find_be, apply };

	napplied = 0;
	return stats_form_walk(body, strlen(body), &ops, NULL);
}

static void test_form(void)
{
	CHECK_STR(walk("s=s1&action=maint&b=be"), "DONE");
	CHECK(napplied == 1);
	CHECK_STR(applied[0], "2:s1");
	/* read from the end: servers after the backend and action are not
	 * reached, as in HAProxy */
	CHECK_STR(walk("b=be&action=ready&s=s1"), "ERRP");
	CHECK(napplied == 0);
	CHECK_STR(walk("s=s1&s=zz&action=drain&b=%233"), "PART");
	CHECK(napplied == 2);
	CHECK_STR(applied[0], "1:zz");
	CHECK_STR(applied[1], "1:s1");
	CHECK_STR(walk("s=zz&action=drain&b=be"), "ERRP");
	CHECK_STR(walk("action=drain&b=be"), "NONE");
	CHECK_STR(walk(""), "NONE");
	CHECK_STR(walk("s=s1&action=explode&b=be"), "ERRP");
	CHECK_STR(walk("s=s1&action=ready&b=nosuch"), "ERRP");
	/* escapes and '+' */
	CHECK_STR(walk("s=s+2&action=re%61dy&b=b%65"), "DONE");
	CHECK_STR(applied[0], "0:s 2");
	/* a broken escape: the pair is skipped (here a server, there the
	 * backend, without which a server cannot be acted on) */
	CHECK_STR(walk("s=s%2&action=ready&b=be"), "NONE");
	CHECK_STR(walk("s=s1&action=ready&b=be%"), "ERRP");
}

int main(void)
{
	test_passwords();
	test_groups();
	test_form();
	return t_done("test_userlist");
}
