/* ACLs and conditions (HAProxy 2.6 manual, sections 7.1, 7.2 and 7.4).
 *
 *   acl <name> <criterion>[,conv...] [flags] [operator] [<value>] ...
 *
 * <criterion> is an ACL keyword (hdr_beg(host), path_end, method...) or any
 * sample fetch followed by converters. An ACL keyword implies a match
 * method unless converters follow (then the output type decides) or "-m"
 * is given. Flags, before any value: -i (ignore case for the following
 * patterns), -f <file> (patterns from a file; repeatable), -m <method>,
 * -M (the files are maps: first column), -n (no DNS for ip patterns),
 * -u <id> (unique id of the inline patterns, for the CLI), -- (end of
 * flags). Several lines with the same name make one ACL matching when any
 * of its lines matches.
 *
 * A condition is `if|unless` then terms: [!]name or [!]{ <anonymous acl> },
 * implicitly ANDed, with `or` / `||` between groups (disjunctive form).
 * Unknown names are searched among the predefined ACLs (TRUE, METH_GET...).
 *
 * Evaluation is three-valued: pass, fail, or miss when a fetch could not
 * conclude yet (SMP_F_MAY_CHANGE, e.g. body not complete) and the context is
 * not final; the caller then waits for more data and evaluates again.
 * "!" keeps a miss a miss. AND: fail if any term fails, else miss if any
 * missed, else pass; OR: pass if any group passes, else miss if any missed.
 *
 * Parsing is configuration-time only; compiled ACLs and conditions are
 * read-only and evaluated concurrently by any number of threads (pattern
 * indexes take their own read locks, see pattern.h).
 */
#ifndef SLUICE_EXPR_ACL_H
#define SLUICE_EXPR_ACL_H

#include <stddef.h>
#include <sluice/core/list.h>
#include <sluice/expr/pattern.h>
#include <sluice/expr/sample.h>

enum acl_test_res {
	ACL_TEST_FAIL = 0,
	ACL_TEST_MISS = 1,
	ACL_TEST_PASS = 3,
};

/* A set of named ACLs: a proxy's, owned by the caller. */
struct acl_list {
	struct list acls;          /* struct acl */
};

struct acl;
struct acl_cond;

void acl_list_init(struct acl_list *l);
void acl_list_free(struct acl_list *l);

/* Parses an "acl" line: <args>[0] is the ACL name, then the criterion,
 * flags and values. <file>/<line> name the inline patterns for "show acl".
 * Returns 0; 1 when the ACL was added but deserves a warning (message in
 * <err>: no pattern, so it never matches); or -1 with a message (the
 * caller prefixes file:line). */
int acl_parse(struct acl_list *l, char **args, int nargs, const char *file,
              int line, char *err, size_t errlen);

/* Finds a named ACL of <l> (NULL if none). */
struct acl *acl_find(struct acl_list *l, const char *name);

/* Parses a condition: <args>[0] is "if" or "unless", the terms follow up to
 * <nargs>. ACL names are looked up in <l> (may be NULL) then among the
 * predefined ACLs. Returns NULL with a message on error (no such ACL,
 * unbalanced braces, empty condition, "or" at a wrong place...). */
struct acl_cond *acl_cond_parse(char **args, int nargs, struct acl_list *l,
                                const char *file, int line, char *err,
                                size_t errlen);
void acl_cond_free(struct acl_cond *cond);

/* Evaluates the condition, "unless" included: ACL_TEST_PASS means the rule
 * applies, ACL_TEST_FAIL that it does not, ACL_TEST_MISS that more data are
 * needed to tell. */
enum acl_test_res acl_cond_eval(const struct acl_cond *cond, struct smp_ctx *ctx);

/* SMP_USE_* of every fetch the condition may call, so that the caller can
 * refuse or warn about a condition used where its data never exist
 * (response headers in an http-request rule...). */
unsigned int acl_cond_use(const struct acl_cond *cond);

/* Evaluates one named ACL (tests, debugging). */
enum acl_test_res acl_eval(const struct acl *acl, struct smp_ctx *ctx);

/* The predefined ACL named <name>, or NULL. */
struct acl *acl_find_predefined(const char *name);

#endif
