/* Variables: var(), set-var, unset-var (HAProxy 2.6 manual, "set-var" in
 * sections 4.2 and 7.3.1, "var" in 7.3.2).
 *
 * A variable is written "scope.name": scope is proc, sess, txn, req or res;
 * the name is made of a-z A-Z 0-9 '.' '_'. Names are interned once at
 * configuration time (vars_parse_ref()) so that a store looks a variable up
 * by a small integer.
 *
 * Stores and ownership:
 * - proc: one process-wide store, shared by every thread, protected by its
 *   own rwlock (readers copy the value out under the read lock, so a sample
 *   never points into memory another thread may free);
 * - sess, txn, req, res: a `struct var_store` that the caller owns and hands
 *   to the engine in smp_ctx->vars[] (a session's, a stream's). Such a store
 *   belongs to one thread (the one that owns the connection) and takes no
 *   lock. The caller empties it with vars_prune() (end of request for req,
 *   of response for res, of transaction for txn, of session for sess).
 *
 * A variable keeps the type of the sample stored. Strings and binary blocks
 * are copied into a buffer owned by the variable, reused by the next set
 * when large enough.
 */
#ifndef SLUICE_EXPR_VARS_H
#define SLUICE_EXPR_VARS_H

#include <stddef.h>
#include <stdint.h>
#include <sluice/expr/sample.h>

struct var;

struct var_store {
	enum var_scope scope;
	struct var *head;          /* few variables per store: a list */
	size_t bytes;              /* memory held by values */
};

void vars_init(struct var_store *s, enum var_scope scope);
/* Frees every variable of the store. */
void vars_prune(struct var_store *s);

/* Parses "scope.name" (the <len> bytes at <text>) into <ref>, interning the
 * name. Returns 0 or -1 with a message. */
int vars_parse_ref(const char *text, size_t len, struct var_ref *ref,
                   char *err, size_t errlen);
const char *vars_scope_name(enum var_scope s);
/* The same for a name that must be interned already (any thread, at run
 * time: it reads the table of names and never adds to it). Returns 0, or
 * -1 if the text is no "scope.name" or the name is unknown. */
int vars_find_ref(const char *text, struct var_ref *ref);
/* The same, interning the name if it is new (any thread, at run time:
 * Lua's txn:set_var() with a name it built). At most a thousand names are
 * added that way, so that a script cannot grow the table without end.
 * Returns 0, or -1 (invalid name, or too many). */
int vars_intern_runtime(const char *text, struct var_ref *ref);
/* The interned name (without its scope) of <id>. */
const char *vars_name(uint32_t id);

/* Conditions of vars_set_cond() (set-var converter, set-var action) */
#define VAR_C_IFEXISTS     0x001
#define VAR_C_IFNOTEXISTS  0x002
#define VAR_C_IFEMPTY      0x004
#define VAR_C_IFNOTEMPTY   0x008
#define VAR_C_IFSET        0x010
#define VAR_C_IFNOTSET     0x020
#define VAR_C_IFGT         0x040
#define VAR_C_IFLT         0x080
/* Parses one condition word; returns its bit, or 0 if unknown. */
unsigned int vars_cond_parse(const char *word);

/* Sets the variable to a copy of <smp> if every condition holds. Returns 1
 * if set, 0 if a condition failed or the store is missing (no session...),
 * -1 on memory shortage. */
int vars_set(struct smp_ctx *ctx, const struct var_ref *ref,
             const struct sample *smp, unsigned int conds);
/* Unsets (the variable still exists, not set). Returns 1 if it was set. */
int vars_unset(struct smp_ctx *ctx, const struct var_ref *ref);
/* Reads the variable into <out>: 1, or 0 when not set. A proc variable is
 * copied into a scratch buffer; any other points into the store
 * (read-only, valid until the variable changes). */
int vars_get(struct smp_ctx *ctx, const struct var_ref *ref, struct sample *out);

/* The process-wide store, for the CLI ("set var", "get var") and for
 * creating proc variables at configuration time. */
extern struct var_store vars_proc;
void vars_proc_lock(int write);
void vars_proc_unlock(void);

#endif
