/* PCRE2 regular expressions with JIT (see regex.h).
 *
 * Compiled patterns are read-only and shared. Each thread owns one match
 * data block (thread-local, created on first use, sized for the largest
 * number of groups we report), so matching allocates nothing.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sluice/core/errmsg.h>
#include <sluice/expr/regex.h>

struct regex {
	pcre2_code *code;
	int jit;                   /* JIT compilation succeeded */
	char *src;
};

static __thread pcre2_match_data *thread_md;
static pthread_key_t md_key;
static pthread_once_t md_once = PTHREAD_ONCE_INIT;

static void md_free(void *md)
{
	pcre2_match_data_free(md);
}

static void md_key_init(void)
{
	pthread_key_create(&md_key, md_free);
}

/* The thread's match data, freed when the thread exits. */
static pcre2_match_data *match_data(void)
{
	if (!thread_md) {
		thread_md = pcre2_match_data_create(REGEX_MAX_GROUPS, NULL);
		if (!thread_md)
			abort();
		pthread_once(&md_once, md_key_init);
		pthread_setspecific(md_key, thread_md);
	}
	return thread_md;
}

struct regex *regex_compile(const char *str, int icase, char *err, size_t errlen)
{
	struct regex *re;
	int errcode;
	PCRE2_SIZE erroff;
	PCRE2_UCHAR msg[256];

	re = calloc(1, sizeof(*re));
	if (!re || !(re->src = strdup(str))) {
		free(re);
		errmsg_set(err, errlen, "out of memory");
		return NULL;
	}
	re->code = pcre2_compile((PCRE2_SPTR)str, PCRE2_ZERO_TERMINATED,
	                         icase ? PCRE2_CASELESS : 0, &errcode, &erroff, NULL);
	if (!re->code) {
		pcre2_get_error_message(errcode, msg, sizeof(msg));
		errmsg_set(err, errlen, "invalid regex '%s': %s at offset %zu", str,
		           (char *)msg, (size_t)erroff);
		free(re->src);
		free(re);
		return NULL;
	}
	/* JIT is an optimisation: without it (no executable memory, SELinux)
	 * the interpreter gives the same results */
	re->jit = pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE) == 0;
	return re;
}

void regex_free(struct regex *re)
{
	if (!re)
		return;
	pcre2_code_free(re->code);
	free(re->src);
	free(re);
}

const char *regex_source(const struct regex *re)
{
	return re->src;
}

static int run(const struct regex *re, const char *s, size_t len, size_t start,
               pcre2_match_data *md)
{
	/* an empty subject may come with a NULL pointer */
	PCRE2_SPTR subj = (PCRE2_SPTR)(s ? s : "");

	if (re->jit)
		return pcre2_jit_match(re->code, subj, len, start, 0, md, NULL);
	return pcre2_match(re->code, subj, len, start, 0, md, NULL);
}

int regex_match(const struct regex *re, const char *s, size_t len)
{
	return run(re, s, len, 0, match_data()) >= 0;
}

int regex_match_groups(const struct regex *re, const char *s, size_t len,
                       size_t start, long *ovec, int ngroups)
{
	pcre2_match_data *md = match_data();
	PCRE2_SIZE *ov;
	int rc, n;

	if (start > len)
		return 0;
	rc = run(re, s, len, start, md);
	if (rc < 0)
		return 0;
	if (rc == 0)              /* ovector too small: all we could keep */
		rc = REGEX_MAX_GROUPS;
	ov = pcre2_get_ovector_pointer(md);
	n = rc < ngroups ? rc : ngroups;
	for (int i = 0; i < ngroups; i++) {
		if (i < n && ov[2 * i] != PCRE2_UNSET) {
			ovec[2 * i] = (long)ov[2 * i];
			ovec[2 * i + 1] = (long)ov[2 * i + 1];
		} else {
			ovec[2 * i] = ovec[2 * i + 1] = -1;
		}
	}
	return n;
}

long regex_expand(const char *subst, size_t subst_len, const char *s,
                  const long *ovec, int ngroups, char *out, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < subst_len; i++) {
		const char *add = subst + i;
		size_t addlen = 1;

		if (subst[i] == '\\' && i + 1 < subst_len &&
		    subst[i + 1] >= '0' && subst[i + 1] <= '9') {
			int g = subst[i + 1] - '0';

			i++;
			if (g >= ngroups || ovec[2 * g] < 0)
				continue;          /* unset group: nothing */
			add = s + ovec[2 * g];
			addlen = (size_t)(ovec[2 * g + 1] - ovec[2 * g]);
		}
		if (n + addlen > cap)
			return -1;
		memcpy(out + n, add, addlen);
		n += addlen;
	}
	return (long)n;
}
