/* Pattern sets: what ACLs and maps match samples against (HAProxy 2.6
 * manual, sections 7.1.1 to 7.1.6 and the "map" converter).
 *
 * Two levels:
 *
 * - a reference (`struct pat_ref`) is the list of entries as the user wrote
 *   them: one per line of a pattern or map file, or the values written on
 *   an `acl` line. Each entry has a key and, for maps, a value. A reference
 *   is named by its file path, or is anonymous with a unique id (`-u`, or
 *   allocated). The CLI edits references (add/del/set/clear/show acl|map);
 *   every edit is applied at once to all the indexes built from it.
 *
 * - an index (`struct pat_expr`) is one reference compiled for one match
 *   method, one case policy and one value type. ACLs and maps that use the
 *   same file the same way share the index.
 *
 * Structures per match method:
 *   str                      hash table (exact, and case-folded for -i)
 *   beg                      byte trie: longest matching prefix wins
 *   ip                       per-family hash of (prefix length, masked
 *                            address): longest prefix wins; IPv4 samples
 *                            also match IPv6 patterns as ::ffff:a.b.c.d and
 *                            IPv6 samples holding an IPv4 address (::ffff:,
 *                            ::, 2002:) match IPv4 patterns (manual 7.1.6)
 *   int, len, sub, end, dir, dom, reg, bin, meth
 *                            a list in insertion order: first match wins
 * For maps: with equal keys the first inserted wins.
 *
 * Concurrency: each reference has a pthread rwlock (writer-preferring)
 * protecting its entry list and every index built from it. Lookups run on
 * all worker threads and take the read lock for the lookup only (a map
 * value is copied out under it); the CLI takes the write lock for an edit.
 * Edits are rare and short; readers never wait for each other. An RCU-like
 * scheme (build a new index, swap a pointer, free after a grace period)
 * would spare readers the shared lock word, but needs quiescent-state
 * tracking from the scheduler; the lock is simple and obviously correct,
 * and its cost is one uncontended atomic pair per lookup.
 */
#ifndef SLUICE_EXPR_PATTERN_H
#define SLUICE_EXPR_PATTERN_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sluice/core/list.h>
#include <sluice/expr/sample.h>

enum pat_match {
	PAT_MATCH_FOUND = 0,   /* the sample exists */
	PAT_MATCH_BOOL,        /* the sample is true / non-zero */
	PAT_MATCH_INT,         /* integer ranges */
	PAT_MATCH_IP,          /* address / network */
	PAT_MATCH_BIN,         /* exact binary, patterns in hex */
	PAT_MATCH_LEN,         /* length against integer ranges */
	PAT_MATCH_STR,         /* exact string */
	PAT_MATCH_BEG,         /* prefix */
	PAT_MATCH_SUB,         /* substring */
	PAT_MATCH_DIR,         /* slash-delimited part */
	PAT_MATCH_DOM,         /* dot-delimited part */
	PAT_MATCH_END,         /* suffix */
	PAT_MATCH_REG,         /* regex */
	PAT_MATCH_METH,        /* HTTP method (internal: "method" ACL) */
	PAT_MATCH_NUM
};

const char *pat_match_name(enum pat_match m);
/* The method named <name> ("str", "beg"...), or -1. */
int pat_match_by_name(const char *name);
/* Whether a sample of <type> may be matched with <m>: when it casts to
 * the type the method works on (as HAProxy decides). */
int pat_match_accepts(enum pat_match m, enum smp_type type);
/* The implicit method for a sample type, or -1 when "-m" is required. */
int pat_match_default(enum smp_type type);

/* Reference flags */
#define PAT_REF_MAP    0x01    /* entries have values (map, or acl -M) */
#define PAT_REF_ACL    0x02    /* used by an ACL */
#define PAT_REF_FILE   0x04    /* loaded from a file */
#define PAT_REF_AUTO_ID 0x08   /* unique id allocated (no -u): a later -u may
                                * take it, the reference then gets another */

struct pat_entry;

struct pat_ref_elt {
	struct list list;          /* in ref->elts, insertion order */
	char *key;
	char *value;               /* NULL for ACL patterns */
	int line;                  /* line in the file, 0 if added at runtime */
	struct pat_entry *entries; /* its entries in every index (->elt_next) */
};

struct pat_ref {
	struct list list;          /* in the global list of references */
	char *name;                /* file path, or NULL for inline patterns */
	char *display;             /* what "show acl/map" prints */
	int unique_id;             /* -u id, or allocated */
	unsigned int flags;        /* PAT_REF_* */
	pthread_rwlock_t lock;     /* protects elts, count and all exprs' indexes */
	struct list elts;          /* struct pat_ref_elt */
	unsigned int count;
	struct list exprs;         /* struct pat_expr built from this reference */
	unsigned int refcnt;       /* users (ACL terms, maps); config time only */
};

/* Per-index flags */
#define PAT_F_ICASE    0x01    /* -i: case-insensitive */
#define PAT_F_NO_DNS   0x02    /* -n: no name resolution for ip patterns */
#define PAT_F_DOTTED_VER 0x04  /* int patterns are versions "MAJOR[.MINOR]"
                                * (MAJOR << 16 | MINOR): req.ssl_ver's ACL */

struct pat_index;              /* private to pattern.c */

struct pat_expr {
	struct list ref_list;      /* in ref->exprs */
	struct pat_ref *ref;
	enum pat_match match;
	unsigned int flags;        /* PAT_F_* */
	enum smp_type val_type;    /* maps: STR, SINT, IPV4/IPV6 (ADDR); ANY: no value */
	struct pat_index *idx;
	unsigned int refcnt;
};

/* -------------------------------------------------------------- references */

/* Finds a reference by file name, or by "#<id>" (unique id). */
struct pat_ref *pat_ref_lookup(const char *name);
struct pat_ref *pat_ref_lookup_id(int unique_id);
/* Creates a reference; <name> NULL for inline patterns; <unique_id> -1 to
 * allocate one. Fails (NULL + message) if another -u took the id; an
 * allocated id is given up instead, so that allocated ids end up as
 * HAProxy numbers them (configuration time only). */
struct pat_ref *pat_ref_new(const char *name, const char *display,
                            int unique_id, unsigned int flags,
                            char *err, size_t errlen);

/* Loads a file into <ref>: blank lines and lines starting with '#' are
 * skipped (" #x" is the pattern "#x"), leading blanks are stripped. With PAT_REF_MAP the key is the
 * first word and the value the rest of the line without its trailing
 * blanks; otherwise the pattern is the rest of the line (up to CR/LF).
 * Returns 0 or -1 ("failed to open pattern file <path>: <errno text>"). */
int pat_ref_load_file(struct pat_ref *ref, const char *path, char *err,
                      size_t errlen);

/* Appends an entry at configuration time (host names in ip patterns are
 * resolved unless <nodns>); <line> 0 if not from a file. Same result as
 * pat_ref_add() otherwise. */
int pat_ref_append(struct pat_ref *ref, const char *key, const char *value, int line,
                   int nodns, char *err, size_t errlen);

/* The reference of map file <path> (map.c): the one already loaded, or a
 * new one read from the file. NULL with a message if it cannot be read. */
struct pat_ref *map_ref_get(const char *path, char *err, size_t errlen);

/* Iteration for "show acl/map" (under the read lock): calls <fn> for each
 * entry, in order, until it returns non-zero. */
void pat_ref_foreach(struct pat_ref *ref,
                     int (*fn)(const struct pat_ref_elt *e, void *arg), void *arg);
/* Visits every reference, in creation order (the list is built at
 * configuration time and only read afterwards). */
void pat_refs_foreach(int (*fn)(struct pat_ref *ref, void *arg), void *arg);

/* Runtime edits (CLI). Each takes the write lock. The new entry is parsed
 * for every index (a value that does not parse for one of them, or a bad
 * pattern, fails the whole add with a message and changes nothing). */
int pat_ref_add(struct pat_ref *ref, const char *key, const char *value,
                char *err, size_t errlen);
/* Deletes every entry whose key is <key>. Returns the number deleted. */
int pat_ref_delete(struct pat_ref *ref, const char *key);
/* Changes the value of every entry with key <key>. Returns the number
 * changed, or -1 with a message (value not valid for an index). */
int pat_ref_set(struct pat_ref *ref, const char *key, const char *value,
                char *err, size_t errlen);
void pat_ref_clear(struct pat_ref *ref);
/* Replaces every entry of <ref> with the <n> given (values ignored for a
 * reference without values), as one edit: under one hold of the write
 * lock, so that a lookup sees the old entries or the new, never a mix. If
 * one does not parse for an index, the old entries are put back and -1
 * returned with a message (`commit map`). */
int pat_ref_replace(struct pat_ref *ref, size_t n, const char *const *keys,
                    const char *const *values, char *err, size_t errlen);

/* The same edits on one entry, named by the address "show acl/map" prints
 * for it (the CLI's "#<ref>"): <id> is only compared with the entries of
 * <ref>, never dereferenced, so a stale or made-up one is harmless.
 * Return 1 if the entry was found (deleted or changed), 0 if not, and for
 * pat_ref_set_elt() -1 with a message if <value> is not valid. */
int pat_ref_delete_elt(struct pat_ref *ref, const void *id);
int pat_ref_set_elt(struct pat_ref *ref, const void *id, const char *value,
                    char *err, size_t errlen);

/* Number of entries (under the read lock). */
unsigned int pat_ref_entries(struct pat_ref *ref);

/* Visits the indexes built from <ref> until <fn> returns non-zero. They
 * are only added and removed at configuration time: no lock is needed to
 * walk them at run time. */
void pat_ref_foreach_expr(struct pat_ref *ref, int (*fn)(struct pat_expr *x, void *arg),
                          void *arg);

/* Frees <ref> if no index uses it any more (pat_expr_put() does it when
 * the last index of a reference goes; config-time error paths call it).
 * Like pat_expr_put(), for configuration time and shutdown only: a freed
 * reference must not be in the hands of a CLI command. */
void pat_ref_release(struct pat_ref *ref);

/* Frees every reference and index (end of process, tests). */
void pat_refs_free_all(void);

/* Allows (default) or forbids name resolution for ip patterns at
 * configuration time, for every ACL (fuzzing, "-n" everywhere). */
void pat_set_dns(int enabled);

/* -------------------------------------------------------------- indexes */

/* Gets (or creates) the index of <ref> for this method, flags and value
 * type, indexing the entries already in <ref>. Returns NULL with a message
 * if one of them does not parse ("<file>:<line>: ..." for files). */
struct pat_expr *pat_expr_get(struct pat_ref *ref, enum pat_match match,
                              unsigned int flags, enum smp_type val_type,
                              char *err, size_t errlen);
void pat_expr_put(struct pat_expr *expr);

/* Checks that <key> is a valid pattern for <match> (and <value> for
 * <val_type>), without storing it. Returns 0 or -1 with a message. */
int pat_check(enum pat_match match, unsigned int flags, enum smp_type val_type,
              const char *key, const char *value, char *err, size_t errlen);

/* Integer operators of ACLs (manual 7.1.2). An operator and a value become
 * the range the reference stores: "gt 5" is "6:", "le 5" is ":5". */
enum pat_int_op { PAT_OP_NONE = 0, PAT_OP_EQ, PAT_OP_GE, PAT_OP_GT, PAT_OP_LE,
                  PAT_OP_LT };
int pat_int_op_by_name(const char *word);   /* PAT_OP_*, 0 if not one */
/* Writes the range for <op> applied to integer <val> into <out>. Returns 0,
 * or -1 with a message if <val> is not an integer. */
int pat_int_op_key(enum pat_int_op op, const char *val, char *out, size_t outlen,
                   char *err, size_t errlen);
/* The same for versions (PAT_F_DOTTED_VER): "gt 3.1" is "3.2:", "lt 3.0"
 * is ":2.65535". */
int pat_dotted_op_key(enum pat_int_op op, const char *val, char *out, size_t outlen,
                      char *err, size_t errlen);

/* Looks <smp> up in <expr>. Returns 1 on a match, 0 otherwise. If <value>
 * is not NULL and the index has values, the matched entry's value is copied
 * into it (strings into a scratch buffer). For map_regm, <regm_subst>
 * non-zero expands \1..\9 of the value with the regex groups. */
int pat_expr_match(struct pat_expr *expr, const struct sample *smp,
                   struct sample *value, int regm_subst);

/* Looks <smp> up in <expr> as pat_expr_match() does and, on a match,
 * calls <fn> under the read lock with the matching entry and its value as
 * parsed for the index (NULL when the index has no values). For "get
 * acl/map". Returns 1 on a match (found and bool: without calling <fn>),
 * 0 otherwise. */
int pat_expr_lookup(struct pat_expr *expr, const struct sample *smp,
                    void (*fn)(const struct pat_ref_elt *elt, const struct sample *value,
                               void *arg), void *arg);

/* Whether <expr> looks keys up in an index (hash table, trie: str, beg,
 * ip) rather than walking a list. */
int pat_expr_indexed(const struct pat_expr *expr);

/* Matches without any lookup: FOUND and BOOL methods. */
int pat_match_novalue(enum pat_match m, const struct sample *smp);

/* Number of entries indexed (for tests and "show"). */
unsigned int pat_expr_count(const struct pat_expr *expr);

#endif
